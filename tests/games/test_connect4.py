"""Connect Four: the bitboard rules against an independent 2D-array implementation."""

from __future__ import annotations

from collections.abc import Hashable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.base import (
    Ending,
    IllegalMoveError,
    InvalidMoveError,
    InvalidPositionError,
    Outcome,
    State,
)
from games.connect4 import ConnectFour, ConnectFourState, has_four
from games.perft import perft

GAME = ConnectFour()
DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "connect4"
# Found by random play and checked below by the array implementation: 42 plies, no four in a row.
DRAWN_GAME = "547125662261271266215743771576315353334444"


class ArrayBoard:
    """Connect Four on a list of columns, each a list of players from the bottom up."""

    def __init__(self) -> None:
        self.columns: list[list[int]] = [[] for _ in range(7)]
        self.plies = 0
        self.winner: int | None = None

    def legal(self) -> list[int]:
        if self.winner is not None:
            return []
        return [col for col in range(7) if len(self.columns[col]) < 6]

    def at(self, col: int, row: int) -> int | None:
        if 0 <= col < 7 and 0 <= row < len(self.columns[col]):
            return self.columns[col][row]
        return None

    def makes_four(self, col: int, row: int, player: int) -> bool:
        for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
            run = 1
            for sign in (1, -1):
                c, r = col + sign * dc, row + sign * dr
                while self.at(c, r) == player:
                    run += 1
                    c, r = c + sign * dc, r + sign * dr
            if run >= 4:
                return True
        return False

    def play(self, col: int) -> None:
        player = self.plies % 2
        self.columns[col].append(player)
        self.plies += 1
        if self.makes_four(col, len(self.columns[col]) - 1, player):
            self.winner = player

    def undo(self, col: int) -> None:
        self.columns[col].pop()
        self.plies -= 1
        self.winner = None

    def is_terminal(self) -> bool:
        return self.winner is not None or self.plies == 42

    def perft(self, depth: int) -> int:
        if depth == 0:
            return 1
        total = 0
        for col in self.legal():
            self.play(col)
            total += self.perft(depth - 1)
            self.undo(col)
        return total


def _array(history: str) -> ArrayBoard:
    board = ArrayBoard()
    for char in history:
        board.play(int(char) - 1)
    return board


def _outcome(state: State[Any]) -> Outcome:
    outcome = state.outcome()
    assert outcome is not None
    return outcome


@pytest.mark.parametrize(
    ("depth", "count"),
    [(1, 7), (2, 49), (3, 343), (4, 2401), (5, 16807), (6, 117649), (7, 823536)],
)
def test_perft_from_the_empty_board(depth: int, count: int) -> None:
    assert perft(GAME.initial_state(), depth) == count


def test_perft_agrees_with_the_array_implementation() -> None:
    board = ArrayBoard()
    for depth in range(1, 6):
        assert perft(GAME.initial_state(), depth) == board.perft(depth)


def test_perft_after_an_opening_agrees_with_the_array_implementation() -> None:
    history = "4444441"
    assert perft(GAME.parse_position(history), 4) == _array(history).perft(4)


@pytest.mark.slow
def test_deep_perft_agrees_with_the_array_implementation() -> None:
    assert ArrayBoard().perft(7) == 823536
    assert perft(GAME.initial_state(), 8) == _array("").perft(8) == 5673234


def test_position_4455() -> None:
    state = GAME.parse_position("4455")
    assert state.to_move == 0
    assert state.ply == 4
    assert GAME.format_position(state) == "4455"
    assert state.legal_moves() == (0, 1, 2, 3, 4, 5, 6)
    assert state.outcome() is None
    assert [state.cell(3, 0), state.cell(4, 0), state.cell(3, 1), state.cell(4, 1)] == [0, 0, 1, 1]
    assert state.cell(3, 2) is None
    assert state.render().splitlines() == [
        ". . . . . . .",
        ". . . . . . .",
        ". . . . . . .",
        ". . . . . . .",
        ". . . O O . .",
        ". . . X X . .",
        "1 2 3 4 5 6 7",
        "first (X) to move",
    ]


def test_is_winning_move() -> None:
    state = GAME.parse_position("445566")
    assert [col for col in range(7) if state.is_winning_move(col)] == [2, 6]
    assert not any(GAME.parse_position("4455").is_winning_move(col) for col in range(7))
    vertical = GAME.parse_position("121212")
    assert [col for col in range(7) if vertical.is_winning_move(col)] == [0]
    assert _outcome(vertical.apply(0)).winner == 0


@pytest.mark.parametrize(
    ("history", "winner"),
    [
        ("1212121", 0),  # vertical
        ("1122334", 0),  # horizontal along the bottom
        ("17271727", 1),  # vertical, second player
        ("12234334744", 0),  # diagonal up to the right
        ("76654554144", 0),  # diagonal up to the left
        ("123345445655", 1),  # the second player's diagonal up to the right
    ],
)
def test_wins_are_detected(history: str, winner: int) -> None:
    before = GAME.parse_position(history[:-1])
    assert before.outcome() is None
    assert before.is_winning_move(int(history[-1]) - 1)
    state = GAME.parse_position(history)
    outcome = _outcome(state)
    assert (outcome.winner, outcome.reason, outcome.ending) == (
        winner,
        "four in a row",
        Ending.LINE,
    )
    assert state.legal_moves() == ()
    assert _array(history).winner == winner
    assert state.render().endswith("wins (four in a row)")


def test_full_board_draw() -> None:
    board = _array(DRAWN_GAME)
    assert board.plies == 42
    assert board.winner is None
    state = GAME.parse_position(DRAWN_GAME)
    outcome = _outcome(state)
    assert (outcome.winner, outcome.reason) == (None, "board full")
    assert outcome.ending is Ending.BOARD_FULL
    assert state.legal_moves() == ()
    assert GAME.parse_position(DRAWN_GAME[:-1]).legal_moves() == (3,)
    assert state.render().endswith("draw (board full)")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("48", r"move 2 is '8', expected a column 1-7"),
        ("4a4", r"move 2 is 'a'"),
        ("0", r"move 1 is '0'"),
        ("1111111", r"move 7 plays column 1, which is already full"),
        ("12121213", r"move 8 \(3\) comes after the game was won with four in a row at move 7"),
        ("4,4", r"move 2 is ','"),
    ],
)
def test_malformed_positions(text: str, message: str) -> None:
    with pytest.raises(InvalidPositionError, match=message):
        GAME.parse_position(text)


def test_position_text_ignores_whitespace() -> None:
    assert GAME.format_position(GAME.parse_position(" 44 55\n")) == "4455"
    assert GAME.parse_position("") == GAME.initial_state()


@pytest.mark.parametrize("text", ["", "0", "8", "a", "44", "-1", "4.", "٤"])
def test_unparseable_moves(text: str) -> None:
    with pytest.raises(InvalidMoveError, match="expected a column 1-7"):
        GAME.initial_state().parse_move(text)


def test_parse_move() -> None:
    assert GAME.initial_state().parse_move(" 4 ") == 3
    assert GAME.initial_state().format_move(3) == "4"


def test_full_column_is_illegal_with_reason_and_legal_moves() -> None:
    state = GAME.parse_position("444444")
    with pytest.raises(IllegalMoveError) as info:
        state.parse_move("4")
    assert info.value.reason == "column 4 is full"
    assert info.value.legal_moves == ("1", "2", "3", "5", "6", "7")


def test_moving_after_a_win_is_illegal() -> None:
    with pytest.raises(IllegalMoveError) as info:
        GAME.parse_position("1212121").parse_move("3")
    assert info.value.reason == "the game is over"
    assert info.value.legal_moves == ()


def test_transpositions_are_equal_states() -> None:
    assert GAME.parse_position("4455") == GAME.parse_position("5544")
    assert hash(GAME.parse_position("4455")) == hash(GAME.parse_position("5544"))
    assert GAME.parse_position("4455") != GAME.parse_position("4545")
    assert GAME.parse_position("4455").history == "4455"
    assert GAME.parse_position("5544").history == "5544"


def test_keys_are_one_to_one_with_positions_up_to_ply_6() -> None:
    boards_by_key: dict[Hashable, tuple[tuple[int, ...], ...]] = {}
    frontier = [GAME.initial_state()]
    for _ in range(6):
        following: dict[Hashable, ConnectFourState] = {}
        for state in frontier:
            for move in state.legal_moves():
                child = state.apply_unchecked(move)
                board = tuple(map(tuple, _array(child.history).columns))
                assert boards_by_key.setdefault(child.key(), board) == board
                following[child.key()] = child
        frontier = list(following.values())
    assert len(set(boards_by_key.values())) == len(boards_by_key)
    assert len(boards_by_key) > 8_000


def test_has_four_does_not_wrap_between_columns() -> None:
    # Rows 3..5 of column 0 and row 0 of column 1 are consecutive bits, but not a line.
    assert not has_four(0b111000 | 1 << 7)
    assert has_four(0b1111)
    assert not has_four(0b0111)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 6), max_size=45))
def test_bitboard_agrees_with_the_array_implementation(choices: list[int]) -> None:
    state = GAME.initial_state()
    board = ArrayBoard()
    for choice in choices:
        legal = list(state.legal_moves())
        assert legal == board.legal()
        assert state.to_move == board.plies % 2
        assert state.is_terminal() == board.is_terminal()
        if not legal:
            break
        for col in legal:
            board.play(col)
            assert state.is_winning_move(col) == (board.winner is not None)
            board.undo(col)
        col = legal[choice % len(legal)]
        state = state.apply_unchecked(col)
        board.play(col)
    assert list(state.legal_moves()) == board.legal()
    assert state.is_terminal() == board.is_terminal()
    outcome = state.outcome()
    if board.is_terminal():
        assert outcome is not None
        assert outcome.winner == board.winner
    else:
        assert outcome is None
    for col in range(7):
        for row in range(6):
            assert state.cell(col, row) == board.at(col, row)
    assert GAME.parse_position(GAME.format_position(state)) == state


@pytest.mark.parametrize("name", ["Test_L3_R1", "Test_L2_R1", "Test_L1_R1"])
def test_benchmark_positions_parse_and_are_unfinished(name: str) -> None:
    path = DATA / name
    if not path.exists():
        pytest.skip(f"{path} is absent")
    lines = path.read_text().splitlines()
    assert len(lines) == 1000
    for line in lines:
        history, _score = line.split()
        state = GAME.parse_position(history)
        assert state.outcome() is None
        assert len(state.legal_moves()) > 0
        assert GAME.format_position(state) == history


@given(st.text(max_size=12), st.text(max_size=50))
def test_arbitrary_text_raises_only_game_errors(move_text: str, position_text: str) -> None:
    state = GAME.parse_position("111111")
    try:
        move = state.parse_move(move_text)
    except (InvalidMoveError, IllegalMoveError):
        pass
    else:
        assert move in state.legal_moves()
    try:
        parsed = GAME.parse_position(position_text)
    except InvalidPositionError:
        return
    assert GAME.parse_position(GAME.format_position(parsed)) == parsed


@given(st.text(alphabet="1234567", max_size=50))
def test_column_strings_parse_or_name_the_offending_move(history: str) -> None:
    board = ArrayBoard()
    for ply, char in enumerate(history, start=1):
        col = int(char) - 1
        if col not in board.legal():
            with pytest.raises(InvalidPositionError, match=f"move {ply} "):
                GAME.parse_position(history)
            return
        board.play(col)
    assert GAME.format_position(GAME.parse_position(history)) == history
