"""The random player and the lectures' one-level greedy search (simpleFindMax)."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from bots.lectures.simple import greedy_move, random_move
from bots.scoring import ENGINE, LECTURE, WIN
from games import State, get_game

TICTACTOE = get_game("tictactoe")
CONNECT4 = get_game("connect4")
NIM = get_game("nim")


def neutral(state: State[Any]) -> float:
    """An evaluation that sees nothing: every position is worth 0."""
    return 0.0


# random_move


def test_random_move_is_legal_and_reproducible_by_seed() -> None:
    state = CONNECT4.parse_position("4455")
    for seed in range(20):
        first = random_move(state, random.Random(seed))
        again = random_move(state, random.Random(seed))
        assert first.move in state.legal_moves()
        assert first.move == again.move
        assert first.pv == [first.move]
        assert first.best_moves == [first.move]
        assert first.stats.pv == [state.format_move(first.move)]


def test_random_move_draws_every_move() -> None:
    state = TICTACTOE.initial_state()
    drawn = {random_move(state, random.Random(seed)).move for seed in range(200)}
    assert drawn == set(state.legal_moves())


def test_random_move_on_a_finished_game_has_no_move() -> None:
    won = TICTACTOE.initial_state().play("0", "3", "1", "4", "2")  # X won; O to move
    result = random_move(won, random.Random(0))
    assert result.move is None
    assert result.score == -WIN


# greedy_move


def test_greedy_takes_an_immediate_connect4_win() -> None:
    # X has three stones in column 5; its move. A neutral evaluation rates every other column
    # 0, and ties go to the first column, so only the terminal score makes column 5 best.
    state = CONNECT4.parse_position("565656")
    result = greedy_move(state, neutral)
    assert result.move == 4
    assert result.score == ENGINE.win - 1
    assert ENGINE.is_win(result.score)
    assert result.best_moves == [4]
    assert result.stats.pv == ["5"]


def test_greedy_sees_one_ply_only_and_does_not_block_a_threat() -> None:
    # O to move while X threatens four in column 5. Greedy looks one ply ahead: no O move ends
    # the game, so with a neutral evaluation all columns tie at 0 and it plays the first,
    # leaving the threat; seeing that needs a two-ply search.
    state = CONNECT4.parse_position("56565")
    result = greedy_move(state, neutral)
    assert result.move == 0
    assert result.score == 0
    assert result.best_moves == list(state.legal_moves())
    after = state.apply_unchecked(result.move).apply_unchecked(4)
    outcome = after.outcome()
    assert outcome is not None
    assert outcome.winner == 0  # X completes the column


def test_greedy_negates_the_evaluation_of_the_opponents_position() -> None:
    # After X plays cell i, O is to move and the evaluation (for O) is -i: the higher the
    # cell, the worse for O, so the better for X. Greedy picks cell 8 with score +8.
    def worse_for_o_the_higher_the_cell(state: State[Any]) -> float:
        x_cells = [cell for cell in range(9) if TICTACTOE.format_position(state)[cell] == "X"]
        return -float(x_cells[0])

    result = greedy_move(TICTACTOE.initial_state(), worse_for_o_the_higher_the_cell)
    assert result.move == 8
    assert result.score == 8.0


def test_greedy_counts_one_evaluation_per_unfinished_child() -> None:
    # X to move with cells 0 and 1 taken: cell 2 wins at once (terminal, scored without the
    # evaluation); the other 4 free cells each cost one evaluation.
    state = TICTACTOE.parse_position("XX.OO....")
    calls: list[State[Any]] = []

    def counting(child: State[Any]) -> float:
        calls.append(child)
        return 0.0

    result = greedy_move(state, counting)
    assert result.move == 2
    assert len(calls) == len(state.legal_moves()) - 1 == 4
    assert all(not child.is_terminal() for child in calls)
    assert result.stats.evaluations == len(calls)
    assert result.stats.nodes == 1 + len(state.legal_moves())


def test_greedy_scores_terminal_children_with_the_given_scoring() -> None:
    state = TICTACTOE.parse_position("XX.OO....")
    assert greedy_move(state, neutral, scoring=LECTURE).score == 1
    # A win beats any evaluation below the terminal scale.
    assert greedy_move(state, lambda child: -1e5).move == 2


def test_greedy_avoids_a_losing_terminal_move_in_misere_nim() -> None:
    # Misère Nim, one heap of 3: taking all 3 ends the game and loses; the others are scored
    # by the evaluation. The terminal loss must rank below them.
    state = NIM.parse_position("3")
    result = greedy_move(state, neutral)
    assert result.move == (0, 1)
    assert result.best_moves == [(0, 1), (0, 2)]
    assert (0, 3) not in result.best_moves


def test_greedy_breaks_ties_with_the_generator_when_given_one() -> None:
    state = TICTACTOE.initial_state()
    assert greedy_move(state, neutral).move == 0  # first in move order
    moves = [greedy_move(state, neutral, rng=random.Random(seed)).move for seed in range(30)]
    assert len(set(moves)) > 3
    assert set(moves) <= set(state.legal_moves())
    again = [greedy_move(state, neutral, rng=random.Random(seed)).move for seed in range(30)]
    assert moves == again


def test_greedy_refuses_a_nan_evaluation() -> None:
    with pytest.raises(ValueError, match="NaN"):
        greedy_move(TICTACTOE.initial_state(), lambda child: math.nan)


def test_greedy_on_a_finished_game_has_no_move() -> None:
    drawn = TICTACTOE.parse_position("XOXXOOOXX")
    result = greedy_move(drawn, neutral)
    assert result.move is None
    assert result.score == 0
    assert result.stats.evaluations == 0
