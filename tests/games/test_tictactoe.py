"""Tic-tac-toe: the whole game tree against the oracle numbers, notation and errors."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from games.base import (
    Ending,
    IllegalMoveError,
    InvalidMoveError,
    InvalidOptionError,
    InvalidPositionError,
    Outcome,
    State,
)
from games.tictactoe import TicTacToe, TicTacToeState

GAME = TicTacToe()


def _walk(
    state: TicTacToeState, ply: int, nodes: Counter[int], results: Counter[int | None]
) -> None:
    nodes[ply] += 1
    moves = state.legal_moves()
    if not moves:
        outcome = state.outcome()
        assert outcome is not None
        results[outcome.winner] += 1
        return
    for move in moves:
        _walk(state.apply_unchecked(move), ply + 1, nodes, results)


def _reachable() -> dict[object, TicTacToeState]:
    seen = {}
    frontier = [GAME.initial_state()]
    while frontier:
        state = frontier.pop()
        if state.key() in seen:
            continue
        seen[state.key()] = state
        frontier.extend(state.apply_unchecked(move) for move in state.legal_moves())
    return seen


def test_full_game_tree_matches_the_oracle() -> None:
    nodes: Counter[int] = Counter()
    results: Counter[int | None] = Counter()
    _walk(GAME.initial_state(), 0, nodes, results)
    per_ply = [nodes[ply] for ply in range(10)]
    assert per_ply == [1, 9, 72, 504, 3024, 15120, 54720, 148176, 200448, 127872]
    assert sum(nodes.values()) == 549_946
    assert sum(results.values()) == 255_168
    assert results == {0: 131_184, 1: 77_904, None: 46_080}


def test_distinct_reachable_positions_and_terminal_ones() -> None:
    reachable = _reachable()
    assert len(reachable) == 5_478
    terminal = [s for s in reachable.values() if s.is_terminal()]
    assert len(terminal) == 958
    for state in reachable.values():
        assert (len(state.legal_moves()) == 0) == (state.outcome() is not None)


def test_parse_position_accepts_exactly_the_reachable_positions() -> None:
    reachable = _reachable()
    accepted = {}
    for cells in itertools.product("XO.", repeat=9):
        try:
            state = GAME.parse_position("".join(cells))
        except InvalidPositionError:
            continue
        accepted[state.key()] = state
    assert accepted.keys() == reachable.keys()
    for key, state in accepted.items():
        assert state.to_move == reachable[key].to_move
        assert GAME.format_position(state) == GAME.format_position(reachable[key])


@given(st.lists(st.integers(0, 8), max_size=9))
def test_position_text_round_trips(choices: list[int]) -> None:
    state = GAME.initial_state()
    for choice in choices:
        moves = state.legal_moves()
        if not moves:
            break
        state = state.apply_unchecked(moves[choice % len(moves)])
    text = GAME.format_position(state)
    again = GAME.parse_position(text)
    assert again == state
    assert again.to_move == state.to_move
    assert again.legal_moves() == state.legal_moves()
    assert again.outcome() == state.outcome()


def test_format_position_and_side_to_move() -> None:
    state = GAME.initial_state().play("0", "4", "2")
    assert GAME.format_position(state) == "X.X.O...."
    assert state.to_move == 1
    assert state.legal_moves() == (1, 3, 5, 6, 7, 8)


def test_parse_position_is_lenient_about_case_and_separators() -> None:
    state = GAME.parse_position(" x.o / .X. | ..o ")
    assert GAME.format_position(state) == "X.O.X...O"
    assert state.to_move == 0


def _outcome(state: State[Any]) -> Outcome:
    outcome = state.outcome()
    assert outcome is not None
    return outcome


def test_outcomes_and_reasons() -> None:
    x_wins = GAME.initial_state().play("0", "3", "1", "4", "2")
    assert _outcome(x_wins) == _outcome(GAME.parse_position("XXXOO...."))
    assert (_outcome(x_wins).winner, _outcome(x_wins).reason) == (0, "three in a row")
    assert _outcome(x_wins).ending is Ending.LINE
    assert x_wins.legal_moves() == ()

    assert _outcome(GAME.parse_position("XX.OOOX..")).winner == 1

    draw = GAME.parse_position("XOXXOOOXX")
    assert (_outcome(draw).winner, _outcome(draw).reason) == (None, "board full")
    assert _outcome(draw).ending is Ending.BOARD_FULL
    assert draw.legal_moves() == ()

    assert GAME.initial_state().outcome() is None


def test_transpositions_are_equal_states() -> None:
    a = GAME.initial_state().play("0", "4", "8")
    b = GAME.initial_state().play("8", "4", "0")
    c = GAME.initial_state().play("0", "8", "4")
    assert a == b
    assert hash(a) == hash(b)
    assert a != c
    assert a.key() != c.key()


def test_a_win_on_the_last_cell_is_a_win_not_a_draw() -> None:
    state = GAME.parse_position("XOOOOXX.X")
    assert state.outcome() is None
    assert _outcome(state.apply(7)).winner == 0


@pytest.mark.parametrize("text", ["", "9", "10", "-1", "a", "4.0", "٣", "0 1", "x"])
def test_unparseable_moves(text: str) -> None:
    with pytest.raises(InvalidMoveError, match=r"expected a cell number 0-8"):
        GAME.initial_state().parse_move(text)


def test_parse_move_accepts_surrounding_whitespace() -> None:
    assert GAME.initial_state().parse_move(" 4\n") == 4


def test_taken_cell_is_illegal_with_reason_and_legal_moves() -> None:
    state = GAME.initial_state().play("4", "0")
    with pytest.raises(IllegalMoveError) as info:
        state.parse_move("4")
    assert info.value.reason == "cell 4 is taken by X"
    assert info.value.legal_moves == ("1", "2", "3", "5", "6", "7", "8")
    with pytest.raises(IllegalMoveError, match="cell 0 is taken by O"):
        state.parse_move("0")


def test_moving_after_the_end_is_illegal() -> None:
    state = GAME.parse_position("XXXOO....")
    with pytest.raises(IllegalMoveError) as info:
        state.parse_move("8")
    assert info.value.reason == "the game is over"
    assert info.value.legal_moves == ()
    with pytest.raises(IllegalMoveError, match="the game is over"):
        state.apply(8)


def test_apply_rejects_an_occupied_cell() -> None:
    with pytest.raises(IllegalMoveError, match="not a legal move"):
        GAME.initial_state().apply(4).apply(4)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("X.O", "has 3 cells, expected 9"),
        ("X.O.......", "has 10 cells, expected 9"),
        ("X.O.Z....", r"cell 4 is 'Z', expected X, O or \."),
        ("X-O......", r"cell 1 is '-'"),
        ("OO.X.....", "2 O and 1 X"),
        ("XX.......", "2 X and 0 O"),
        ("XXXOOO...", "both X and O have three in a row"),
        ("XXXOO.O..", "X has three in a row but O moved afterwards"),
        ("OOOXX.X.X", "O has three in a row but X moved afterwards"),
    ],
)
def test_malformed_positions(text: str, message: str) -> None:
    with pytest.raises(InvalidPositionError, match=message):
        GAME.parse_position(text)


def test_no_options() -> None:
    assert TicTacToe.option_defaults() == {}
    with pytest.raises(InvalidOptionError, match="tictactoe has no option size"):
        TicTacToe({"size": "4"})


def test_game_metadata() -> None:
    assert TicTacToe.name == "tictactoe"
    assert TicTacToe.player_names == ("X", "O")
    assert TicTacToe.description


def test_render_shows_the_board_and_the_status() -> None:
    assert GAME.initial_state().play("4", "0").render() == "O . .\n. X .\n. . .\nX to move"
    assert GAME.parse_position("XXXOO....").render().endswith("X wins (three in a row)")
    assert GAME.parse_position("XOXXOOOXX").render().endswith("draw (board full)")
