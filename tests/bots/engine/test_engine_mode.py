"""The compiled engine's engine mode: each technique against the node-for-node search.

Principal variation search and aspiration windows change the order of work, never the value:
at the same depth they return the plain search's score (table on and off). Late move
reductions change the value, so their test is the rule that chooses what is reduced. An
iteration cut short gives a move only when a searched move beat the first one. With every
technique off, `id` is the Python engine's iterative deepening, node for node.
"""

from __future__ import annotations

import random
from types import ModuleType

import pytest

from bots.engine.compiled import SearchFeatures, compiled_engine
from bots.engine.players import AlphaBetaPlayer, IterativeDeepeningPlayer
from bots.engine.search import AlphaBetaEngine
from bots.engine.timing import SCORE_DROP, STABLE_ITERATIONS, start_iteration
from bots.evaluation import checkers_endings
from bots.evaluation.knowledge import knowledge_for
from bots.scoring import WIN
from bots.spec import BotSpecError, create_bot
from games import get_game
from games.checkers import BLACK_CROWN, WHITE_CROWN, CheckersState

GAME = get_game("checkers")
KNOWLEDGE = knowledge_for(GAME)
ENDINGS = checkers_endings.ENDINGS.function
PVS = SearchFeatures(pvs=True)


@pytest.fixture(scope="module")
def core() -> ModuleType:
    from bots.core import load

    load("checkers_search")
    import bots.core.checkers_search

    return bots.core.checkers_search


def positions(count: int, seed: int) -> list[CheckersState]:
    """Positions from random games, from the opening to the ending."""
    rng = random.Random(seed)
    found: list[CheckersState] = []
    while len(found) < count:
        state = GAME.initial_state()
        for _ in range(rng.randrange(2, 90)):
            moves = state.legal_moves()
            if not moves:
                break
            state = state.apply_unchecked(rng.choice(moves))
        if state.legal_moves():
            assert isinstance(state, CheckersState)
            found.append(state)
    return found


def assert_pvs_keeps_the_value(states: list[CheckersState], depths: tuple[int, ...]) -> None:
    for state in states:
        for depth in depths:
            for tt in (False, True):
                plain = compiled_engine(KNOWLEDGE, ENDINGS, tt=tt)
                pvs = compiled_engine(KNOWLEDGE, ENDINGS, tt=tt, features=PVS)
                assert plain is not None and pvs is not None
                fen = GAME.format_position(state)
                assert pvs.search(state, depth).score == plain.search(state, depth).score, fen
                # Iterative deepening: aspiration windows from depth 3 on.
                plain = compiled_engine(KNOWLEDGE, ENDINGS, tt=tt)
                pvs = compiled_engine(KNOWLEDGE, ENDINGS, tt=tt, features=PVS)
                assert plain is not None and pvs is not None
                want = plain.iterative_deepening(state, max_depth=depth)
                got = pvs.iterative_deepening(state, max_depth=depth)
                assert got.score == want.score, fen
                assert got.stats.depth == want.stats.depth  # a proven result ends both early


def test_pvs_and_aspiration_return_the_plain_searchs_value() -> None:
    assert_pvs_keeps_the_value(positions(12, seed=3), (1, 3, 5))


@pytest.mark.slow
def test_pvs_and_aspiration_return_the_plain_searchs_value_on_many_positions() -> None:
    assert_pvs_keeps_the_value(positions(200, seed=11), (2, 4, 6, 7))


def test_pvs_visits_fewer_nodes_from_the_start() -> None:
    plain = compiled_engine(KNOWLEDGE, ENDINGS)
    pvs = compiled_engine(KNOWLEDGE, ENDINGS, features=PVS)
    assert plain is not None and pvs is not None
    state = GAME.initial_state()
    want = plain.iterative_deepening(state, max_depth=12)
    got = pvs.iterative_deepening(state, max_depth=12)
    assert got.score == want.score
    assert got.stats.nodes < want.stats.nodes


def test_late_moves_reduced_are_quiet_ones(core: ModuleType) -> None:
    """A move is reducible exactly when it captures nothing, crowns no man, and leaves the
    opponent no capture (the killers empty)."""
    buf = core.new_buffer(1)
    checked = reducible = 0
    for state in positions(60, seed=5):
        n = core.generate(buf, core.MOVES, state.black, state.white, state.kings, state.turn)
        moves = state.legal_moves()
        assert n == len(moves)
        crown = BLACK_CROWN if state.turn == 0 else WHITE_CROWN
        for i, move in enumerate(moves):
            child = state.apply_unchecked(move)
            assert isinstance(child, CheckersState)
            captures = bool(KNOWLEDGE.is_capture and KNOWLEDGE.is_capture(state, move))
            crowns = child.kings.bit_count() > state.kings.bit_count()
            pending = KNOWLEDGE.is_quiet is not None and not KNOWLEDGE.is_quiet(child)
            record = core.MOVES + core.MAX_LANDINGS + i * core.REC
            got = core._is_quiet_move(
                buf, record, child.black, child.white, child.kings, child.turn, state.kings,
                crown, 0,
            )  # fmt: skip
            assert got == (not captures and not crowns and not pending), GAME.format_position(state)
            checked += 1
            reducible += got
    assert 0 < reducible < checked


def test_late_move_reductions_keep_the_value_where_none_apply() -> None:
    """Below LMR_DEPTH plies nothing is reduced: the value is the plain one."""
    for state in positions(10, seed=7):
        plain = compiled_engine(KNOWLEDGE, ENDINGS)
        lmr = compiled_engine(KNOWLEDGE, ENDINGS, features=SearchFeatures(pvs=True, lmr=True))
        assert plain is not None and lmr is not None
        assert lmr.search(state, 2).score == plain.search(state, 2).score


def test_late_move_reductions_search_fewer_nodes_and_find_the_same_move() -> None:
    state = GAME.initial_state()
    pvs = compiled_engine(KNOWLEDGE, ENDINGS, features=PVS)
    lmr = compiled_engine(KNOWLEDGE, ENDINGS, features=SearchFeatures(pvs=True, lmr=True))
    assert pvs is not None and lmr is not None
    want = pvs.iterative_deepening(state, max_depth=12)
    got = lmr.iterative_deepening(state, max_depth=12)
    assert got.stats.nodes < want.stats.nodes
    assert got.move in state.legal_moves()


def test_an_iteration_cut_short_gives_a_move_only_when_it_beat_the_first() -> None:
    """With a node limit inside an iteration, `partial` returns the previous iteration's move
    or a move the cut iteration searched to a better score than the first move's."""
    changed = 0
    for state in positions(30, seed=13):
        for limit in (3_000, 20_000):
            whole = compiled_engine(KNOWLEDGE, ENDINGS, features=PVS)
            cut = compiled_engine(
                KNOWLEDGE, ENDINGS, features=SearchFeatures(pvs=True, partial=True)
            )
            assert whole is not None and cut is not None
            want = whole.iterative_deepening(state, max_nodes=limit)
            got = cut.iterative_deepening(state, max_nodes=limit)
            assert got.stats.depth == want.stats.depth
            if got.move == want.move:
                continue
            changed += 1
            # The cut iteration is one deeper: the new move is better there than the old.
            depth = want.stats.depth + 1
            judge = compiled_engine(KNOWLEDGE, ENDINGS, tt=False)
            assert judge is not None
            new = -judge.search(state.apply(got.move), depth - 1).score
            judge = compiled_engine(KNOWLEDGE, ENDINGS, tt=False)
            assert judge is not None
            old = -judge.search(state.apply(want.move), depth - 1).score
            assert new > old, GAME.format_position(state)
    assert changed > 0


@pytest.mark.parametrize("nodes", [2_000, 30_000])
def test_id_with_every_technique_off_is_the_python_engine(nodes: int) -> None:
    spec = f"id:time=0,nodes={nodes},pvs=off,lmr=off,partial=off,truncate=off,deeper=off"
    for state in positions(4, seed=17):
        bot = create_bot(spec, GAME)
        python = AlphaBetaEngine(KNOWLEDGE, ENDINGS)
        want = python.iterative_deepening(state, max_nodes=nodes)
        got = bot.choose(state)
        assert got.move == want.move
        assert got.score == want.score
        assert got.stats.nodes == want.stats.nodes
        assert got.stats.depth == want.stats.depth


def test_alphabeta_has_no_engine_mode() -> None:
    for option in ("pvs", "lmr", "partial", "extend", "truncate", "single", "qextend", "deeper"):
        assert option not in AlphaBetaPlayer.options
        assert option in IterativeDeepeningPlayer.options
        with pytest.raises(BotSpecError):
            create_bot(f"alphabeta:depth=4,{option}=on", GAME)


@pytest.mark.parametrize(
    ("elapsed", "stable", "drop", "starts"),
    [
        (0.49, 0, 0, True),  # before the soft limit
        (0.50, 0, 0, False),  # at it
        (0.24, 4, 0, True),  # the move holds: a quarter of the time
        (0.30, 4, 0, False),
        (0.30, 3, 0, True),  # three iterations are not yet enough
        (0.90, 0, 30, True),  # the score fell: the whole time
        (0.90, 4, 30, True),
        (1.00, 0, 30, False),
        (0.60, 0, 29, False),  # a smaller fall is not enough
    ],
)
def test_time_management_decisions(elapsed: float, stable: int, drop: int, starts: bool) -> None:
    assert start_iteration(elapsed, 1.0, stable_iterations=stable, score_drop=drop) is starts


class FakeClock:
    """A clock at `now` that the test moves; the engine only reads it."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_time_management_stops_at_the_soft_limit_on_an_injected_clock() -> None:
    """The clock stands at 60% of the move's time: with `tm` the engine starts no second
    iteration; without it the engine deepens to its maximum (the deadline never comes)."""
    state = positions(1, seed=19)[0]
    for tm, depth in ((True, 1), (False, 6)):
        clock = FakeClock()
        engine = compiled_engine(
            KNOWLEDGE, ENDINGS, clock=clock, features=SearchFeatures(pvs=True, tm=tm)
        )
        assert engine is not None
        clock.now = 0.0

        def moved(clock: FakeClock = clock) -> bool:
            clock.now = 0.6  # from the first look on, the clock reads 0.6 of 1 s
            return False

        result = engine.iterative_deepening(state, deadline=1.0, max_depth=6, stop=moved)
        assert result.stats.depth == depth


def test_time_management_uses_less_of_the_time_once_the_move_holds() -> None:
    """At 30% of the time a move that held four iterations ends the search; one that did
    not goes on."""
    assert not start_iteration(0.3, 1.0, stable_iterations=STABLE_ITERATIONS, score_drop=0)
    assert start_iteration(0.3, 1.0, stable_iterations=STABLE_ITERATIONS - 1, score_drop=0)
    assert start_iteration(0.3, 1.0, stable_iterations=STABLE_ITERATIONS, score_drop=SCORE_DROP)


def _extended_minimax(state: CheckersState, left: int, ply: int, root: int) -> int:
    """The value of the tree `extend` searches, by plain minimax on games.checkers: captures
    pending extend as the quiescence does, and a quiet position at the horizon where the side
    not to move could capture is searched one ply more, below ply 2 x the root's depth."""
    moves = state.legal_moves()
    if not moves:
        return ply - WIN
    if left <= 0:
        if not moves[0].is_capture:
            turned = CheckersState(GAME, state.black, state.white, state.kings, 1 - state.turn)
            hangs = any(m.is_capture for m in turned.legal_moves())
            if not (hangs and ply < 2 * root):
                return int(checkers_endings.ENGINE.function(state))
            left = 1
        else:
            left = 0
    child = left - 1 if left > 0 else 0
    return max(-_extended_minimax(state.apply(m), child, ply + 1, root) for m in moves)


def test_extend_searches_hanging_pieces_one_ply_more() -> None:
    """With `extend`, the root's value is the minimax value of the extended tree (order,
    table and windows change the work, not the value); plain search differs somewhere."""
    engine = checkers_endings.ENGINE.function
    differs = 0
    states = [s for s in positions(60, seed=23) if not s.kings and s.quiet < 40][:25]
    assert len(states) >= 15
    for state in states:
        for depth in (1, 2, 3):
            want = _extended_minimax(state, depth, 0, depth)
            for tt in (False, True):
                extended = compiled_engine(
                    KNOWLEDGE, engine, tt=tt, features=SearchFeatures(extend=True)
                )
                plain = compiled_engine(KNOWLEDGE, engine, tt=tt)
                assert extended is not None and plain is not None
                got = extended.search(state, depth)
                assert got.score == want, (GAME.format_position(state), depth, tt)
                differs += plain.search(state, depth).score != want
    assert differs > 0


def _single_reply_minimax(state: CheckersState, left: int, ply: int, root: int) -> int:
    """The value of the tree `single` searches, by plain minimax on games.checkers: a node
    below the root with plies left and one legal move searches it at the same depth (below
    ply 2 x the root's depth); captures pending at the horizon extend as the quiescence does."""
    moves = state.legal_moves()
    if not moves:
        return ply - WIN
    if left <= 0:
        if not moves[0].is_capture:
            return int(checkers_endings.ENGINE.function(state))
        left = 0
    child = left - 1 if left > 0 else 0
    if len(moves) == 1 and left > 0 and 0 < ply < 2 * root:
        child = left
    return max(-_single_reply_minimax(state.apply(m), child, ply + 1, root) for m in moves)


def test_single_searches_a_forced_move_without_spending_a_ply() -> None:
    """With `single`, the root's value is the minimax value of the tree with single replies
    extended; plain search differs somewhere."""
    engine = checkers_endings.ENGINE.function
    differs = 0
    states = [s for s in positions(60, seed=29) if s.quiet < 40][:25]
    assert len(states) >= 15
    for state in states:
        for depth in (1, 2, 3):
            want = _single_reply_minimax(state, depth, 0, depth)
            for tt in (False, True):
                single = compiled_engine(
                    KNOWLEDGE, engine, tt=tt, features=SearchFeatures(single=True)
                )
                plain = compiled_engine(KNOWLEDGE, engine, tt=tt)
                assert single is not None and plain is not None
                got = single.search(state, depth)
                assert got.score == want, (GAME.format_position(state), depth, tt)
                differs += plain.search(state, depth).score != want
    assert differs > 0


def _truncated_alphabeta(
    state: CheckersState, left: int, alpha: int, beta: int, ply: int, counter: list[int]
) -> int:
    """bots.engine.search's fail-soft alpha-beta in generation order (no table, no ordering) with
    the truncation rule of `truncate`, on games.checkers; counts its nodes in `counter`."""
    counter[0] += 1
    moves = state.legal_moves()
    if not moves:
        return ply - WIN
    capture = moves[0].is_capture
    if left <= 0:
        if not capture:
            return int(checkers_endings.ENGINE.function(state))
        left = 0
    elif ply > 0 and not capture and left >= 2 and (state.black | state.white).bit_count() > 8:
        mine, theirs = (state.black, state.white) if state.turn == 0 else (state.white, state.black)
        material = 100 * (mine.bit_count() - theirs.bit_count()) + 30 * (
            (mine & state.kings).bit_count() - (theirs & state.kings).bit_count()
        )
        if material < alpha - 110 or material > beta + 110:
            left -= 1
    best = -(1 << 50)
    child = left - 1 if left > 0 else 0
    for move in moves:
        score = -_truncated_alphabeta(state.apply(move), child, -beta, -alpha, ply + 1, counter)
        if score > best:
            best = score
            if score > alpha:
                alpha = score
                if alpha >= beta:
                    break
    return best


def test_truncate_searches_lopsided_nodes_one_ply_less() -> None:
    """With `truncate` (no table, no ordering) the compiled search is the reference alpha-beta
    with the truncation rule, score and nodes; the rule changes the nodes somewhere."""
    engine = checkers_endings.ENGINE.function
    truncated = SearchFeatures(truncate=True)
    changed = 0
    states = [s for s in positions(80, seed=29) if not s.kings and s.quiet < 40][:20]
    assert len(states) >= 12
    for state in states:
        for depth in (2, 3, 4):
            counter = [0]
            want = _truncated_alphabeta(state, depth, -(1 << 50), 1 << 50, 0, counter)
            found = compiled_engine(KNOWLEDGE, engine, tt=False, ordering=False, features=truncated)
            plain = compiled_engine(KNOWLEDGE, engine, tt=False, ordering=False)
            assert found is not None and plain is not None
            got = found.search(state, depth)
            assert (got.score, got.stats.nodes) == (want, counter[0]), (
                GAME.format_position(state),
                depth,
            )
            changed += plain.search(state, depth).stats.nodes != counter[0]
    assert changed > 0


def _qextended_alphabeta(
    state: CheckersState, left: int, alpha: int, beta: int, ply: int, root: int, counter: list[int]
) -> int:
    """bots.engine.search's fail-soft alpha-beta in generation order (no table, no ordering) with
    the rule of `qextend`: a quiet horizon position where a piece of the side to move hangs is
    searched one ply more when its material (man 100, king 130) lies within 130 of the window,
    below ply 2 x the root's depth."""
    counter[0] += 1
    moves = state.legal_moves()
    if not moves:
        return ply - WIN
    if left <= 0:
        if not moves[0].is_capture:
            turned = CheckersState(GAME, state.black, state.white, state.kings, 1 - state.turn)
            hangs = any(m.is_capture for m in turned.legal_moves())
            mine, theirs = (
                (state.black, state.white) if state.turn == 0 else (state.white, state.black)
            )
            material = 100 * (mine.bit_count() - theirs.bit_count()) + 30 * (
                (mine & state.kings).bit_count() - (theirs & state.kings).bit_count()
            )
            near = alpha - 130 <= material <= beta + 130
            if not (hangs and near and ply < 2 * root):
                return int(checkers_endings.ENGINE.function(state))
            left = 1
        else:
            left = 0
    best = -(1 << 50)
    child = left - 1 if left > 0 else 0
    for move in moves:
        score = -_qextended_alphabeta(
            state.apply(move), child, -beta, -alpha, ply + 1, root, counter
        )
        if score > best:
            best = score
            if score > alpha:
                alpha = score
                if alpha >= beta:
                    break
    return best


def test_qextend_extends_hanging_pieces_only_near_the_window() -> None:
    """With `qextend` (no table, no ordering) the compiled search is the reference alpha-beta
    with its rule, score and nodes; it searches other nodes than `extend` somewhere."""
    engine = checkers_endings.ENGINE.function
    differs = 0
    states = [s for s in positions(80, seed=31) if not s.kings and s.quiet < 40][:20]
    assert len(states) >= 12
    for state in states:
        for depth in (1, 2, 3):
            counter = [0]
            want = _qextended_alphabeta(state, depth, -(1 << 50), 1 << 50, 0, depth, counter)
            found = compiled_engine(
                KNOWLEDGE, engine, tt=False, ordering=False, features=SearchFeatures(qextend=True)
            )
            extended = compiled_engine(
                KNOWLEDGE, engine, tt=False, ordering=False, features=SearchFeatures(extend=True)
            )
            assert found is not None and extended is not None
            got = found.search(state, depth)
            assert (got.score, got.stats.nodes) == (want, counter[0]), (
                GAME.format_position(state),
                depth,
            )
            differs += extended.search(state, depth).stats.nodes != counter[0]
    assert differs > 0


def test_deeper_lets_a_deeper_table_entry_end_a_node() -> None:
    """With `deeper`, a shallow search after a deep one on the same engine finds the deep
    search's entries below the root and returns the deep score in a few nodes; without it,
    the shallow search returns the shallow score (the table only orders its moves)."""
    engine = checkers_endings.ENGINE.function
    moved = 0
    for state in positions(12, seed=31):
        fresh = compiled_engine(KNOWLEDGE, engine, tt=True)
        assert fresh is not None
        shallow = fresh.search(state, 3)
        for deeper in (False, True):
            searcher = compiled_engine(
                KNOWLEDGE, engine, tt=True, features=SearchFeatures(deeper=deeper)
            )
            assert searcher is not None
            deep = searcher.search(state, 8)
            again = searcher.search(state, 3)
            if deeper:
                assert again.score == deep.score, GAME.format_position(state)
                assert again.stats.nodes <= 1 + len(state.legal_moves())
                moved += deep.score != shallow.score
            else:
                assert again.score == shallow.score
    assert moved > 0
