"""Evaluations and search knowledge: fast paths equal weighted sums, symmetries, hand values."""

from __future__ import annotations

import functools
import itertools
import random
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bots.evaluation import Evaluation, Knowledge
from bots.evaluation import checkers as checkers_eval
from bots.evaluation import connect4 as connect4_eval
from bots.evaluation import nim as nim_eval
from bots.evaluation import tictactoe as tictactoe_eval
from bots.evaluation.knowledge import KNOWLEDGE, knowledge_for
from games import State, get_game
from games.checkers import BIT_OF_SQUARE, Checkers, CheckersState
from games.connect4 import ConnectFour, ConnectFourState
from games.nim import Nim, NimState
from games.tictactoe import TicTacToe, TicTacToeState

CHECKERS = Checkers()
CONNECT4 = ConnectFour()
TICTACTOE = TicTacToe()
BOUND = 10_000  # every evaluation stays within this, far below bots.scoring.WIN


def _playouts(initial: State[Any], games: int, seed: int) -> list[State[Any]]:
    """Return every non-terminal state of `games` seeded random playouts from `initial`."""
    rng = random.Random(seed)
    states = []
    for _ in range(games):
        state = initial
        while moves := state.legal_moves():
            states.append(state)
            state = state.apply_unchecked(rng.choice(moves))
    return states


def _checkers_placement(rng: random.Random) -> CheckersState:
    """Return a random legal-looking placement with few pieces, often kings (endgames)."""
    squares = rng.sample(range(1, 33), rng.randint(2, 12))
    split = rng.randint(1, len(squares) - 1)
    black = white = kings = 0
    for index, square in enumerate(squares):
        bit = 1 << BIT_OF_SQUARE[square]
        is_black = index < split
        if is_black:
            black |= bit
        else:
            white |= bit
        crowning = square >= 29 if is_black else square <= 4
        if crowning or rng.random() < 0.5:
            kings |= bit
    return CheckersState(CHECKERS, black, white, kings, rng.randint(0, 1))


@functools.cache
def _checkers_sample() -> tuple[CheckersState, ...]:
    """Non-terminal checkers positions: random playouts plus random endgame placements."""
    played = _playouts(CHECKERS.initial_state(), 40, seed=7)
    rng = random.Random(11)
    placed = [_checkers_placement(rng) for _ in range(1500)]
    states = [s for s in played + placed if isinstance(s, CheckersState) and s.legal_moves()]
    assert len(states) > 3000
    return tuple(states)


def _rotate(mask: int) -> int:
    """Return the checkers bitboard turned 180 degrees (square s -> 33 - s)."""
    return sum(
        1 << BIT_OF_SQUARE[33 - square]
        for square in range(1, 33)
        if mask >> BIT_OF_SQUARE[square] & 1
    )


def _colours_swapped(state: CheckersState, turn: int) -> CheckersState:
    """Return the board turned 180 degrees with the colours swapped and `turn` to move."""
    return CheckersState(
        CHECKERS, _rotate(state.white), _rotate(state.black), _rotate(state.kings), turn
    )


def _assert_fast_equals_weighted(evaluation: Evaluation, states: Any) -> int:
    """Assert the fused function equals the weighted sum (and the bound); return the count."""
    assert evaluation.function != evaluation.weighted_sum  # a fast path is really installed
    count = 0
    for state in states:
        fast = evaluation(state)
        assert fast == evaluation.weighted_sum(state), (evaluation.name, state)
        assert abs(fast) < BOUND
        count += 1
    return count


# -- checkers ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["material", "positional", "positional_v1", "positional_tuned"])
def test_checkers_fast_equals_weighted_sum(name: str) -> None:
    evaluation = checkers_eval.KNOWLEDGE.evaluation(name)
    assert _assert_fast_equals_weighted(evaluation, _checkers_sample()) > 3000


def test_checkers_sample_exercises_every_feature() -> None:
    # The equality test above means something only if every feature varies in the sample.
    seen = {feature.name: 0 for feature in checkers_eval.FEATURES}
    for state in _checkers_sample():
        for name, (value, _) in checkers_eval.POSITIONAL.explain(state).items():
            seen[name] += value != 0
    assert all(count >= 20 for count in seen.values()), seen


@pytest.mark.parametrize("name", ["material", "positional", "positional_v1", "positional_tuned"])
def test_checkers_rotation_with_colours_swapped(name: str) -> None:
    evaluation = checkers_eval.KNOWLEDGE.evaluation(name)
    for state in _checkers_sample()[::3]:
        value = evaluation(state)
        same_view = _colours_swapped(state, 1 - state.turn)
        other_view = _colours_swapped(state, state.turn)
        assert evaluation(same_view) == value, state
        assert evaluation(other_view) == -value, state
        assert evaluation.explain(same_view) == evaluation.explain(state), state


@settings(max_examples=200, deadline=None)
@given(st.randoms(use_true_random=False))
def test_checkers_random_placements(rng: random.Random) -> None:
    state = _checkers_placement(rng)
    for evaluation in checkers_eval.KNOWLEDGE.evaluations.values():
        assert evaluation(state) == evaluation.weighted_sum(state)
        assert evaluation(_colours_swapped(state, 1 - state.turn)) == evaluation(state)


@pytest.mark.parametrize(
    ("fen", "material"),
    [
        ("B:W21,22:BK1,5", 100),  # Black: man 1 + king 2, White: 2 men -> +1 man
        ("W:W21,22:BK1,5", -100),
        ("B:W21-32:B1-12", 0),
        ("B:WK30:B1,2,3", 100),
        ("W:WK30:BK1,K2,3", -300),  # White: king 2; Black: kings 4 + man 1
        ("B:W5,K6,K7,8:BK1", -400),  # Black: king 2; White: men 2 + kings 4
    ],
)
def test_checkers_material_values(fen: str, material: int) -> None:
    state = CHECKERS.parse_position(fen)
    assert checkers_eval.MATERIAL(state) == material
    assert checkers_eval.MATERIAL.weighted_sum(state) == material


@pytest.mark.parametrize(
    ("fen", "features", "value"),
    [
        # Black man on 9 (row 2, 2 steps), White man on 28 (advanced 1 row, 1 step).
        ("B:W28:B9", {"advancement": 1, "mobility": 1}, 3 + 2),
        ("W:W28:B9", {"advancement": -1, "mobility": -1}, -3 - 2),
        # Black king on 4 boxed in by 8 and 11; Black leads 3-2 with 4 pieces: its king is
        # one step from the enemy (8 - 1 = 7).
        (
            "B:W8,11:BK4,9",
            {
                "men": -1,
                "kings": 1,
                "advancement": 2 - 6 - 5,
                "centre": -1,
                "trapped_kings": 1,
                "endgame_approach": 7,
            },
            -100 + 200 - 27 - 4 - 30 + 21,
        ),
        # The same king boxed in by 8 alone can jump it (4x11): not trapped.
        (
            "B:W8:BK4,9",
            {"kings": 1, "advancement": 2 - 6, "mobility": 2 - 1, "endgame_approach": 7},
            200 - 12 + 2 + 21,
        ),
        # Two Black kings against one White king in the double corner (5), White to move:
        # the Black kings are 5 and 6 steps away (3 + 2), White's refuge counts for White.
        (
            "W:WK5:BK19,K32",
            {
                "kings": -1,
                "centre": -1,
                "mobility": 2 - 6,
                "endgame_approach": -5,
                "endgame_refuge": 1,
            },
            -200 - 4 - 8 - 15 + 12,
        ),
        ("B:W21-32:B1-12", {}, 0),
    ],
)
def test_checkers_positional_features_by_hand(
    fen: str, features: dict[str, int], value: int
) -> None:
    state = CHECKERS.parse_position(fen)
    explained = checkers_eval.POSITIONAL_V1.explain(state)
    assert {name: v for name, (v, _) in explained.items() if v} == features
    assert checkers_eval.POSITIONAL_V1(state) == value
    # Any weight table gives the weighted sum of the same features.
    tuned = checkers_eval.POSITIONAL
    assert tuned(state) == sum(v * tuned.explain(state)[name][1] for name, v in features.items())


def test_checkers_weight_tables() -> None:
    # The factory builds an evaluation from any complete table; the fast function equals the
    # weighted sum under it, and a table missing or adding a feature is refused by name.
    weights = {name: 3 * i - 7 for i, name in enumerate(checkers_eval.FEATURE_NAMES)}
    evaluation = checkers_eval.positional_evaluation("odd", weights, "test weights")
    assert [f.weight for f in evaluation.features] == list(weights.values())
    assert _assert_fast_equals_weighted(evaluation, _checkers_sample()[::4]) > 500
    assert dict(checkers_eval.WEIGHTS_V1) == {
        "men": 100,
        "kings": 200,
        "advancement": 3,
        "back_rank": 8,
        "centre": 4,
        "mobility": 2,
        "trapped_kings": -30,
        "endgame_approach": 3,
        "endgame_refuge": 12,
    }
    with pytest.raises(ValueError, match="missing: centre; unknown: none"):
        checkers_eval.positional_evaluation(
            "bad", {k: v for k, v in weights.items() if k != "centre"}, ""
        )
    with pytest.raises(ValueError, match="missing: none; unknown: tempo"):
        checkers_eval.positional_evaluation("bad", {**weights, "tempo": 1}, "")


def test_checkers_move_order_captures_most_pieces_first() -> None:
    order, is_capture = checkers_eval.KNOWLEDGE.move_order, checkers_eval.KNOWLEDGE.is_capture
    assert order is not None and is_capture is not None
    state = CHECKERS.parse_position("B:W14,15,23:B9,10")
    moves = sorted(state.legal_moves(), key=lambda m: -order(state, m))
    assert [str(m) for m in moves[:2]] in (["9x18x27", "10x19x26"], ["10x19x26", "9x18x27"])
    assert str(moves[-1]) == "10x17"
    assert all(is_capture(state, m) for m in moves)
    step_state = CHECKERS.parse_position("B:W12:B9,25,26")
    steps = sorted(step_state.legal_moves(), key=lambda m: -order(step_state, m))
    assert {str(m) for m in steps[:4]} == {"25-29", "25-30", "26-30", "26-31"}
    assert not any(is_capture(step_state, m) for m in steps)
    lowest_capture = min(order(state, m) for m in state.legal_moves())
    highest_step = max(order(step_state, m) for m in step_state.legal_moves())
    assert lowest_capture > highest_step


def test_checkers_king_moving_to_the_far_row_is_not_crowning() -> None:
    knowledge = checkers_eval.KNOWLEDGE
    assert knowledge.move_order is not None
    state = CHECKERS.parse_position("B:W12:BK25")
    assert {knowledge.move_order(state, m) for m in state.legal_moves()} == {0}


def test_checkers_quiet_means_no_capture_pending() -> None:
    knowledge = checkers_eval.KNOWLEDGE
    assert knowledge.is_quiet is not None
    assert not knowledge.is_quiet(CHECKERS.parse_position("B:W14,15,23:B9,10"))
    assert knowledge.is_quiet(CHECKERS.initial_state())
    assert knowledge.canonical_key is None
    assert knowledge.default_evaluation == "positional"


# -- connect four --------------------------------------------------------------------------------


@functools.cache
def _connect4_sample() -> tuple[ConnectFourState, ...]:
    states = _playouts(CONNECT4.initial_state(), 250, seed=3)
    return tuple(s for s in states if isinstance(s, ConnectFourState))


def _mirrored(state: ConnectFourState) -> ConnectFourState:
    return CONNECT4.parse_position("".join(str(8 - int(c)) for c in state.history))


def test_connect4_fast_equals_weighted_sum() -> None:
    assert _assert_fast_equals_weighted(connect4_eval.LINES, _connect4_sample()) > 2000


def test_connect4_sample_exercises_every_feature() -> None:
    seen = {feature.name: 0 for feature in connect4_eval.LINES.features}
    for state in _connect4_sample():
        for name, (value, _) in connect4_eval.LINES.explain(state).items():
            seen[name] += value != 0
    assert all(count >= 20 for count in seen.values()), seen


def test_connect4_mirror_keeps_value_and_canonical_key() -> None:
    canonical_key = connect4_eval.KNOWLEDGE.canonical_key
    assert canonical_key is not None
    asymmetric = 0
    for state in _connect4_sample()[::4]:
        image = _mirrored(state)
        assert connect4_eval.LINES(image) == connect4_eval.LINES(state)
        assert canonical_key(image) == canonical_key(state)
        key, image_key = state.current + state.mask, image.current + image.mask
        assert key == state.key()
        assert canonical_key(state) == min(key, image_key)
        assert connect4_eval.mirror_key(image_key) == key
        asymmetric += image_key != key
    assert asymmetric > 100


@pytest.mark.parametrize(
    ("history", "features"),
    [
        # One stone in column 4: 4 windows across, 1 up, 1 on each diagonal, for the opponent.
        ("4", {"singles": -7}),
        # First player on row 1, columns 1-3 and a threat on row 1 (odd: good for the first
        # player); the second player (two stones up column 5) is to move.
        ("15253", {"threats": -1, "good_threats": -1}),
        # Second player on row 2, columns 1-3: a threat on row 2 (even: good for it).
        ("12317372", {"threats": -1, "good_threats": -1}),
        # Both have a threat under the other's, each on its bad row: no parity bonus.
        ("7112233", {"threats": 0, "good_threats": 0}),
    ],
)
def test_connect4_features_by_hand(history: str, features: dict[str, int]) -> None:
    state = CONNECT4.parse_position(history)
    explained = connect4_eval.LINES.explain(state)
    for name, value in features.items():
        assert explained[name][0] == value, name
    if history == "4":
        assert connect4_eval.LINES(state) == -7 * connect4_eval.SINGLE


def test_connect4_move_order_is_centre_first() -> None:
    move_order = connect4_eval.KNOWLEDGE.move_order
    assert move_order is not None
    state = CONNECT4.initial_state()
    ordered = sorted(state.legal_moves(), key=lambda m: -move_order(state, m))
    assert ordered == [3, 2, 4, 1, 5, 0, 6]  # columns 4, 3, 5, 2, 6, 1, 7 as in the oracle


# -- tic-tac-toe ---------------------------------------------------------------------------------


@functools.cache
def _tictactoe_positions() -> tuple[TicTacToeState, ...]:
    """Every reachable tic-tac-toe position, terminal ones included."""
    seen: dict[Any, TicTacToeState] = {}
    frontier = [TICTACTOE.initial_state()]
    while frontier:
        state = frontier.pop()
        if state.key() in seen:
            continue
        seen[state.key()] = state
        frontier.extend(state.apply_unchecked(m) for m in state.legal_moves())
    return tuple(seen.values())


def _images(state: TicTacToeState) -> Iterator[TicTacToeState]:
    for perm in tictactoe_eval.SYMMETRIES:
        x = sum(1 << perm[c] for c in range(9) if state.x >> c & 1)
        o = sum(1 << perm[c] for c in range(9) if state.o >> c & 1)
        yield TicTacToeState(TICTACTOE, x, o, state.to_move)


def test_tictactoe_fast_equals_weighted_sum() -> None:
    live = [s for s in _tictactoe_positions() if s.legal_moves()]
    assert _assert_fast_equals_weighted(tictactoe_eval.LINES_EVALUATION, live) == 5478 - 958


def test_tictactoe_symmetries_are_the_eight_of_the_square() -> None:
    perms = set(tictactoe_eval.SYMMETRIES)
    assert len(perms) == 8
    assert tictactoe_eval.SYMMETRIES[0] == tuple(range(9))
    for a, b in itertools.product(perms, repeat=2):
        assert tuple(a[b[c]] for c in range(9)) in perms  # closed under composition
    for perm in perms:
        assert perm[4] == 4
        assert {perm[c] for c in (0, 2, 6, 8)} == {0, 2, 6, 8}


def test_tictactoe_images_share_value_and_canonical_key() -> None:
    canonical_key = tictactoe_eval.KNOWLEDGE.canonical_key
    assert canonical_key is not None
    evaluation = tictactoe_eval.LINES_EVALUATION
    for state in _tictactoe_positions():
        key = canonical_key(state)
        for image in _images(state):
            assert canonical_key(image) == key
            assert evaluation(image) == evaluation(state)
        assert key == min(image.x | image.o << 9 for image in _images(state))


def test_tictactoe_canonical_keys_match_the_oracle_count() -> None:
    canonical_key = tictactoe_eval.KNOWLEDGE.canonical_key
    assert canonical_key is not None
    assert len({canonical_key(s) for s in _tictactoe_positions()}) == 765


def test_tictactoe_swapping_marks_and_mover_keeps_value() -> None:
    evaluation = tictactoe_eval.LINES_EVALUATION
    for state in _tictactoe_positions():
        swapped = TicTacToeState(TICTACTOE, state.o, state.x, 1 - state.to_move)
        assert evaluation(swapped) == evaluation(state)
        same_mover = TicTacToeState(TICTACTOE, state.o, state.x, state.to_move)
        assert evaluation(same_mover) == -evaluation(state)


@pytest.mark.parametrize(
    ("position", "value"),
    [
        (".........", 0),
        ("X...O....", 2 - 3),  # X: row 0 and column 0; O: row 1, column 1, anti-diagonal
        ("XX..O....", (2 - 1) - 4),  # O to move: O 2 singles, X 1 single and 1 double
        ("X.X.O...O", 4 * 1 + (1 - 3)),  # X to move: an open double on row 0
    ],
)
def test_tictactoe_values_by_hand(position: str, value: int) -> None:
    assert tictactoe_eval.LINES_EVALUATION(TICTACTOE.parse_position(position)) == value


def test_tictactoe_move_order() -> None:
    move_order = tictactoe_eval.KNOWLEDGE.move_order
    assert move_order is not None
    state = TICTACTOE.initial_state()
    ordered = sorted(state.legal_moves(), key=lambda m: -move_order(state, m))
    assert ordered[0] == 4
    assert set(ordered[1:5]) == {0, 2, 6, 8}
    assert set(ordered[5:]) == {1, 3, 5, 7}


# -- nim -----------------------------------------------------------------------------------------


def _brute_force_mover_wins(game: Nim, heaps: tuple[int, ...]) -> bool:
    @functools.cache
    def solve(heaps: tuple[int, ...]) -> bool:
        node = NimState(game, heaps, 0)
        outcome = node.outcome()
        if outcome is not None:
            return outcome.winner == 0
        return any(not solve(node.apply_unchecked(m).heaps) for m in node.legal_moves())

    return solve(heaps)


def _small_heaps() -> Iterator[tuple[int, ...]]:
    for count in (1, 2, 3):
        yield from itertools.product(range(5), repeat=count)


@pytest.mark.parametrize("misere", ["true", "false"])
def test_nim_evaluation_is_the_game_value(misere: str) -> None:
    game = Nim({"misere": misere})
    evaluation = nim_eval.KNOWLEDGE.evaluation()
    checked = 0
    for heaps in _small_heaps():
        if not any(heaps):
            continue
        wins = _brute_force_mover_wins(game, heaps)
        for to_move in (0, 1):
            value = evaluation(NimState(game, heaps, to_move))
            assert value == (nim_eval.WIN_VALUE if wins else -nim_eval.WIN_VALUE), heaps
            checked += 1
    assert checked == 2 * (4 + 24 + 124)


def test_nim_oracle_values() -> None:
    evaluation = nim_eval.NIMSUM
    assert evaluation(Nim().initial_state()) == -1000  # misère 1,3,5,7: a loss
    assert evaluation(Nim({"misere": "false"}).initial_state()) == -1000  # XOR is 0 too
    assert evaluation(Nim().parse_position("1,1")) == 1000  # misère: take one, leave the last
    assert evaluation(Nim({"misere": "false"}).parse_position("1,1")) == -1000


def test_nim_permuting_heaps_keeps_value_and_key() -> None:
    canonical_key = nim_eval.KNOWLEDGE.canonical_key
    assert canonical_key is not None
    for misere in ("true", "false"):
        game = Nim({"misere": misere})
        for heaps in itertools.product(range(4), repeat=3):
            if not any(heaps):
                continue
            state = NimState(game, heaps, 0)
            for perm in itertools.permutations(heaps):
                for to_move in (0, 1):
                    image = NimState(game, perm, to_move)
                    assert canonical_key(image) == canonical_key(state)
                    assert nim_eval.NIMSUM(image) == nim_eval.NIMSUM(state)
    assert canonical_key(NimState(Nim(), (3, 0, 1, 0), 1)) == (1, 3)
    assert canonical_key(NimState(Nim(), (1, 3), 0)) != canonical_key(NimState(Nim(), (1, 2), 0))


@pytest.mark.parametrize("misere", ["true", "false"])
def test_nim_move_order_puts_winning_moves_first(misere: str) -> None:
    game = Nim({"misere": misere})
    move_order = nim_eval.KNOWLEDGE.move_order
    assert move_order is not None
    for heaps in _small_heaps():
        if not any(heaps):
            continue
        state = NimState(game, heaps, 0)
        for move in state.legal_moves():
            child = state.apply_unchecked(move).heaps
            leaves_a_loss = not _brute_force_mover_wins(game, child)
            assert move_order(state, move) == (1 if leaves_a_loss else 0), (heaps, move)


# -- knowledge -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["checkers", "connect4", "nim", "tictactoe"])
def test_knowledge_for_each_game(name: str) -> None:
    knowledge = knowledge_for(name)
    assert isinstance(knowledge, Knowledge)
    assert knowledge.game == name
    assert knowledge_for(get_game(name)) is knowledge
    assert knowledge.evaluation() is knowledge.evaluations[knowledge.default_evaluation]


def test_knowledge_for_aliases_and_options() -> None:
    assert knowledge_for("Connect-Four") is KNOWLEDGE["connect4"]
    assert knowledge_for("draughts") is KNOWLEDGE["checkers"]
    assert knowledge_for(Nim({"misere": "false"})) is KNOWLEDGE["nim"]


@pytest.mark.parametrize("name", ["chess", "", "tic tac toe"])
def test_knowledge_for_unknown_game_lists_the_games(name: str) -> None:
    with pytest.raises(ValueError, match="games: checkers, connect4, nim, tictactoe") as info:
        knowledge_for(name)
    assert repr(name.strip().lower()) in str(info.value)


def test_evaluation_names() -> None:
    assert {name: sorted(k.evaluations) for name, k in KNOWLEDGE.items()} == {
        "checkers": [
            "endings",
            "engine",
            "material",
            "positional",
            "positional_tuned",
            "positional_v1",
        ],
        "connect4": ["lines", "threats"],
        "nim": ["nimsum"],
        "tictactoe": ["lines"],
    }
    with pytest.raises(
        ValueError,
        match="evaluations: endings, engine, material, positional, positional_tuned, positional_v1",
    ):
        KNOWLEDGE["checkers"].evaluation("mobility")
