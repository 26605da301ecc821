"""The lecture algorithms and the alpha-beta engine agree with plain minimax."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bots.engine.search import AlphaBetaEngine
from bots.evaluation import Knowledge
from bots.lectures.alphabeta import alphabeta
from bots.lectures.minimax import minimax
from bots.lectures.negamax import ab_node_value, negamax
from bots.result import SearchStats
from bots.scoring import ENGINE, LECTURE
from games import State, get_game

TICTACTOE = get_game("tictactoe")


def test_plain_minimax_visits_the_whole_tictactoe_tree() -> None:
    result = minimax(TICTACTOE.initial_state())
    assert result.stats.nodes == 549_946
    assert result.score == 0


def test_fail_soft_alphabeta_node_counts() -> None:
    start = TICTACTOE.initial_state()
    assert alphabeta(start, fail_soft=True).stats.nodes == 18_297
    narrow = alphabeta(start, fail_soft=True, alpha=-1, beta=1)
    assert narrow.stats.nodes == 16_811
    assert narrow.score == 0


def test_lecture_fail_hard_alphabeta_is_a_draw_with_fewer_nodes() -> None:
    result = alphabeta(TICTACTOE.initial_state())
    assert result.score == 0
    assert result.stats.nodes < 549_946
    assert result.move in TICTACTOE.initial_state().legal_moves()


def test_simple_pruning_stops_at_a_sure_win() -> None:
    # X to move can win at once on cell 2 (X on 0 and 1).
    state = TICTACTOE.parse_position("XX.OO....")
    plain = minimax(state)
    pruned = minimax(state, prune=True)
    assert plain.score == pruned.score == LECTURE.win
    assert pruned.stats.nodes < plain.stats.nodes
    assert pruned.stats.cutoffs >= 1


def test_every_tictactoe_first_move_draws() -> None:
    start = TICTACTOE.initial_state()
    for move in start.legal_moves():
        child = start.apply_unchecked(move)
        assert alphabeta(child, fail_soft=True).score == 0


def test_lecture_abnodevalue_draws_and_prunes() -> None:
    stats = SearchStats()
    assert ab_node_value(TICTACTOE.initial_state(), None, stats=stats) == 0
    assert 18_297 < stats.nodes < 549_946  # one-sided bounds prune less than full alpha-beta


def test_depth_limit_needs_an_evaluation() -> None:
    with pytest.raises(ValueError, match="needs an evaluation"):
        minimax(TICTACTOE.initial_state(), depth=2)


def test_wins_prefer_the_fastest() -> None:
    # X can win now (cell 2) or later; with distance scoring the immediate win scores best.
    state = TICTACTOE.parse_position("XX.OO....")
    result = negamax(state, scoring=ENGINE)
    assert result.move == 2
    assert result.score == ENGINE.win - 1


# -- property tests: everything agrees with plain minimax ---------------------------------------

POSITIONS = {
    "tictactoe": (get_game("tictactoe"), 4),
    "connect4": (get_game("connect4"), 3),
    "nim": (get_game("nim", {"heaps": "2,3,4"}), 3),
    "checkers": (get_game("checkers"), 3),
}


def arbitrary_eval(state: State[Any]) -> float:
    """A deterministic, position-dependent evaluation in [-10, 10] for the side to move."""
    return float(hash((state.key(), 7)) % 21 - 10)


def shuffled_order(state: State[Any], move: Any) -> float:
    return float(hash((state.key(), move)) % 97)


def knowledge(game: str) -> Knowledge:
    return Knowledge(game, {}, "none", move_order=shuffled_order)


def random_position(game_name: str, seed: int, plies: int) -> State[Any]:
    game, _ = POSITIONS[game_name]
    rng = random.Random(seed)
    state = game.initial_state()
    for _ in range(plies):
        moves = state.legal_moves()
        if not moves:
            break
        state = state.apply_unchecked(rng.choice(list(moves)))
    # Re-read the position so that no history (repetitions) is carried in.
    return game.parse_position(game.format_position(state))


@settings(max_examples=40, deadline=None)
@given(
    game_name=st.sampled_from(sorted(POSITIONS)),
    seed=st.integers(0, 2**32 - 1),
    plies=st.integers(0, 30),
    depth_choice=st.integers(1, 4),
)
def test_all_algorithms_agree_with_minimax(
    game_name: str, seed: int, plies: int, depth_choice: int
) -> None:
    state = random_position(game_name, seed, plies)
    if state.is_terminal():
        return
    depth = min(depth_choice, POSITIONS[game_name][1])
    common = {"depth": depth, "evaluate": arbitrary_eval, "scoring": ENGINE}
    reference = minimax(state, **common)
    value = reference.score
    assert minimax(state, prune=True, **common).score == value
    hard = alphabeta(state, **common)
    soft = alphabeta(state, fail_soft=True, **common)
    nega = negamax(state, **common)
    for result in (hard, soft, nega):
        assert result.score == value
        assert result.stats.nodes <= reference.stats.nodes
    lecture_value = ab_node_value(state, depth, evaluate=arbitrary_eval, scoring=ENGINE)
    assert lecture_value == value
    for tt in (False, True):
        for ordering in (False, True):
            engine = AlphaBetaEngine(knowledge(game_name), arbitrary_eval, tt=tt, ordering=ordering)
            result = engine.search(state, depth)
            assert result.score == value, (tt, ordering)
            assert result.stats.nodes <= reference.stats.nodes
            # The chosen move achieves the value.
            assert result.move in state.legal_moves()
            child = state.apply_unchecked(result.move)
            child_value = minimax(child, **{**common, "depth": depth - 1}) if depth > 1 else None
            if child_value is not None and not child.is_terminal():
                assert _shift(-child_value.score) == value


def _shift(score: float) -> float:
    if ENGINE.is_win(score):
        return score - 1
    if ENGINE.is_loss(score):
        return score + 1
    return score


def test_simple_pruning_keeps_the_fastest_win() -> None:
    # O O X / . X . / . . . with X to move: X wins now on cell 6; the first cell tried (3)
    # also wins, more slowly. Pruning at that first win would report the slower one.
    state = TICTACTOE.parse_position("OOX.X....")
    full = minimax(state, depth=3, evaluate=arbitrary_eval, scoring=ENGINE)
    pruned = minimax(state, depth=3, evaluate=arbitrary_eval, scoring=ENGINE, prune=True)
    assert full.score == pruned.score == ENGINE.win - 1
    assert pruned.move == 6
