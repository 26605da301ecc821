"""Iterative deepening under a clock: the budget holds and the last completed depth counts."""

from __future__ import annotations

from bots.engine.search import AlphaBetaEngine
from bots.evaluation.knowledge import knowledge_for
from games import get_game

CHECKERS = get_game("checkers")


class FakeClock:
    """A clock that moves `step` seconds every time it is read."""

    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step
        self.reads = 0

    def __call__(self) -> float:
        self.now += self.step
        self.reads += 1
        return self.now


def make_engine(clock: FakeClock) -> AlphaBetaEngine:
    knowledge = knowledge_for(CHECKERS)
    return AlphaBetaEngine(knowledge, knowledge.evaluation().function, clock=clock)


def test_budget_is_kept_under_a_fake_clock() -> None:
    for budget in (0.05, 0.2, 1.0):
        clock = FakeClock(step=0.001)
        engine = make_engine(clock)
        start = clock()
        result = engine.iterative_deepening(CHECKERS.initial_state(), deadline=start + budget)
        # Past the deadline by at most one clock read (made between two node batches).
        assert clock.now - start <= budget + 2 * clock.step
        assert result.move in CHECKERS.initial_state().legal_moves()


def test_the_last_completed_iteration_is_returned() -> None:
    clock = FakeClock(step=0.0005)
    engine = make_engine(clock)
    state = CHECKERS.initial_state()
    result = engine.iterative_deepening(state, deadline=clock() + 0.5)
    depth = result.stats.depth
    assert depth >= 2
    fresh = make_engine(FakeClock(step=0.0))
    reference = fresh.iterative_deepening(state, max_depth=depth)
    assert result.move == reference.move
    assert result.score == reference.score
    assert result.stats.nodes > 0 and result.stats.pv[0] == state.format_move(result.move)


def test_a_budget_too_small_for_depth_one_still_moves() -> None:
    clock = FakeClock(step=1.0)
    engine = make_engine(clock)
    state = CHECKERS.initial_state()
    result = engine.iterative_deepening(state, deadline=clock() + 0.5)
    assert result.move in state.legal_moves()
    assert result.stats.depth == 0


def test_max_depth_bounds_the_search() -> None:
    engine = make_engine(FakeClock(step=0.0))
    result = engine.iterative_deepening(CHECKERS.initial_state(), max_depth=3)
    assert result.stats.depth == 3


def test_a_proven_result_stops_deepening() -> None:
    # Black's man jumps and crowns; White has nothing left: a win in one ply.
    state = CHECKERS.parse_position("B:W26:B22")
    engine = make_engine(FakeClock(step=0.0))
    result = engine.iterative_deepening(state, max_depth=40)
    assert CHECKERS.parse_position("B:W26:B22").format_move(result.move) == "22x31"
    assert result.stats.depth == 1


def test_a_node_limit_is_reproducible_and_never_exceeded() -> None:
    from bots.spec import create_bot
    from games import get_game

    game = get_game("checkers")
    state = game.initial_state()
    for move in ("11-15", "23-19", "8-11", "22-17"):
        state = state.apply_unchecked(state.parse_move(move))
    small = create_bot("id:time=0,nodes=2000", game).choose(state)
    again = create_bot("id:time=0,nodes=2000", game).choose(state)
    large = create_bot("id:time=0,nodes=20000", game).choose(state)
    assert small.stats.nodes <= 2000 and large.stats.nodes <= 20000
    assert (small.move, small.stats.depth, small.stats.nodes) == (
        again.move,
        again.stats.depth,
        again.stats.nodes,
    )
    assert 1 <= small.stats.depth < large.stats.depth
