"""Tic-tac-toe on a 3x3 board, as two 9-bit bitboards.

Cells are numbered 0..8 row by row from the top-left; a move is the cell number (an int) and its
text is that number ("4" is the centre). A position is written as nine characters row by row,
`X`, `O` or `.` ("X...O...." is X in the corner, O in the centre, X to move); the side to move
follows from the counts because X always moves first.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from games.base import (
    Ending,
    Game,
    IllegalMoveError,
    InvalidMoveError,
    InvalidPositionError,
    Outcome,
    State,
    perft_by_position,
)

SIZE = 9
FULL = (1 << SIZE) - 1
LINES = (
    0b000000111,
    0b000111000,
    0b111000000,
    0b001001001,
    0b010010010,
    0b100100100,
    0b100010001,
    0b001010100,
)

# Both tables are indexed by a 9-bit mask, so a node costs two list lookups, not a line scan.
_HAS_LINE = tuple(any(bits & line == line for line in LINES) for bits in range(FULL + 1))
_FREE_CELLS = tuple(
    tuple(cell for cell in range(SIZE) if not occupied >> cell & 1) for occupied in range(FULL + 1)
)
_MARKS = ("X", "O")
_X_WINS = Outcome(0, "three in a row", Ending.LINE)
_O_WINS = Outcome(1, "three in a row", Ending.LINE)
_DRAW = Outcome(None, "board full", Ending.BOARD_FULL)
_POSITION_SEPARATORS = str.maketrans("", "", "/| \t\r\n")


def has_line(bits: int) -> bool:
    """Return True if the 9-bit mask `bits` covers a row, column or diagonal."""
    return _HAS_LINE[bits & FULL]


class TicTacToeState(State[int]):
    """A tic-tac-toe position: X's and O's cells as bitboards and the side to move."""

    __slots__ = ("_game", "_legal", "_o", "_to_move", "_x")

    def __init__(self, game: TicTacToe, x: int, o: int, to_move: int) -> None:
        self._game = game
        self._x = x
        self._o = o
        self._to_move = to_move
        self._legal: tuple[int, ...] | None = None

    @property
    def game(self) -> TicTacToe:
        return self._game

    @property
    def to_move(self) -> int:
        return self._to_move

    @property
    def x(self) -> int:
        """X's cells as a 9-bit mask (bit i is cell i)."""
        return self._x

    @property
    def o(self) -> int:
        """O's cells as a 9-bit mask (bit i is cell i)."""
        return self._o

    def legal_moves(self) -> tuple[int, ...]:
        legal = self._legal
        if legal is None:
            # Only the side that just moved can have completed a line.
            last = self._o if self._to_move == 0 else self._x
            legal = () if _HAS_LINE[last] else _FREE_CELLS[self._x | self._o]
            self._legal = legal
        return legal

    def apply_unchecked(self, move: int) -> TicTacToeState:
        if self._to_move == 0:
            return TicTacToeState(self._game, self._x | 1 << move, self._o, 1)
        return TicTacToeState(self._game, self._x, self._o | 1 << move, 0)

    def outcome(self) -> Outcome | None:
        if _HAS_LINE[self._x]:
            return _X_WINS
        if _HAS_LINE[self._o]:
            return _O_WINS
        if self._x | self._o == FULL:
            return _DRAW
        return None

    def perft(self, depth: int) -> int:
        """Count the leaf nodes to `depth` plies, each position's count once (transpositions)."""
        return perft_by_position(self, depth)

    def key(self) -> Hashable:
        # The side to move follows from the counts, so the two masks identify the state.
        return self._x | self._o << SIZE

    def parse_move(self, text: str) -> int:
        stripped = text.strip()
        if len(stripped) != 1 or stripped not in "012345678":
            raise InvalidMoveError(
                f"cannot read tic-tac-toe move {text!r}: expected a cell number 0-8 "
                "(row by row from the top-left)"
            )
        cell = int(stripped)
        legal = self.legal_moves()
        if cell in legal:
            return cell
        legal_text = [str(m) for m in legal]
        if not legal:
            raise IllegalMoveError(stripped, "the game is over", legal_text)
        owner = "X" if self._x >> cell & 1 else "O"
        raise IllegalMoveError(stripped, f"cell {cell} is taken by {owner}", legal_text)

    def format_move(self, move: int) -> str:
        return str(move)

    def cell(self, index: int) -> str:
        """Return the mark in cell `index` (0..8): "X", "O" or "."."""
        if self._x >> index & 1:
            return "X"
        if self._o >> index & 1:
            return "O"
        return "."

    def render(self) -> str:
        rows = [" ".join(self.cell(3 * row + col) for col in range(3)) for row in range(3)]
        result = self.outcome()
        if result is None:
            status = f"{_MARKS[self._to_move]} to move"
        elif result.winner is None:
            status = f"draw ({result.reason})"
        else:
            status = f"{_MARKS[result.winner]} wins ({result.reason})"
        return "\n".join([*rows, status])


class TicTacToe(Game):
    """Tic-tac-toe: three in a row on a 3x3 board wins; X moves first."""

    name = "tictactoe"
    player_names = ("X", "O")
    description = "Tic-tac-toe on a 3x3 board: three in a row wins, a full board is a draw."

    __slots__ = ()

    def initial_state(self) -> TicTacToeState:
        return TicTacToeState(self, 0, 0, 0)

    def parse_position(self, text: str) -> TicTacToeState:
        """Return the state written as nine cells row by row (X, O or .).

        Case does not matter; `/`, `|` and whitespace are ignored. The side to move is X when
        both have as many stones, O when X has one more. Positions that no game can reach are
        rejected.
        """
        cells = text.translate(_POSITION_SEPARATORS).upper()
        if len(cells) != SIZE:
            raise InvalidPositionError(
                f"tic-tac-toe position {text!r} has {len(cells)} cells, expected 9 "
                "(X, O or . row by row)"
            )
        x = o = 0
        for index, char in enumerate(cells):
            if char == "X":
                x |= 1 << index
            elif char == "O":
                o |= 1 << index
            elif char != ".":
                raise InvalidPositionError(
                    f"tic-tac-toe position {text!r}: cell {index} is {char!r}, expected X, O or ."
                )
        xs, os = x.bit_count(), o.bit_count()
        if os > xs:
            raise InvalidPositionError(
                f"tic-tac-toe position {text!r} has {os} O and {xs} X: "
                "X moves first, so O never has more"
            )
        if xs > os + 1:
            raise InvalidPositionError(
                f"tic-tac-toe position {text!r} has {xs} X and {os} O: "
                "X can be at most one stone ahead"
            )
        x_line, o_line = _HAS_LINE[x], _HAS_LINE[o]
        if x_line and o_line:
            raise InvalidPositionError(
                f"tic-tac-toe position {text!r}: both X and O have three in a row"
            )
        if x_line and xs == os:
            raise InvalidPositionError(
                f"tic-tac-toe position {text!r}: X has three in a row but O moved afterwards"
            )
        if o_line and xs > os:
            raise InvalidPositionError(
                f"tic-tac-toe position {text!r}: O has three in a row but X moved afterwards"
            )
        return TicTacToeState(self, x, o, 0 if xs == os else 1)

    def format_position(self, state: State[Any]) -> str:
        if not isinstance(state, TicTacToeState):
            raise TypeError(f"not a tic-tac-toe state: {state!r}")
        return "".join(state.cell(index) for index in range(SIZE))
