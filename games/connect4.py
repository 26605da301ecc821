"""Connect Four on 7 columns x 6 rows, on Pascal Pons' bitboard.

Each column takes 7 bits (6 cells from the bottom up and one always-empty sentinel), column 0 in
the lowest bits. A state keeps `current` (the stones of the side to move) and `mask` (all
stones). A move is the 0-based column (an int); its text is the 1-based column "1".."7". A
position is written as the columns played from the empty board, 1-based ("4455"; "" is the
empty board), so a state keeps its move string.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from games.base import (
    Ending,
    Game,
    IllegalMoveError,
    InvalidMoveError,
    InvalidPositionError,
    Outcome,
    State,
)

WIDTH = 7
HEIGHT = 6
H1 = HEIGHT + 1
CELLS = WIDTH * HEIGHT

BOTTOM_MASKS = tuple(1 << (col * H1) for col in range(WIDTH))
TOP_MASKS = tuple(1 << (col * H1 + HEIGHT - 1) for col in range(WIDTH))
COLUMN_MASKS = tuple(((1 << HEIGHT) - 1) << (col * H1) for col in range(WIDTH))
BOTTOM = sum(BOTTOM_MASKS)
TOP = sum(TOP_MASKS)
BOARD = BOTTOM * ((1 << HEIGHT) - 1)

# The playable columns depend only on which columns are full, i.e. on `mask & TOP`.
_MOVES_BY_FULL: Mapping[int, tuple[int, ...]] = {
    sum(TOP_MASKS[col] for col in range(WIDTH) if full >> col & 1): tuple(
        col for col in range(WIDTH) if not full >> col & 1
    )
    for full in range(1 << WIDTH)
}
_COLUMN_CHARS = "1234567"
_MARKS = ("X", "O")
_DRAW = Outcome(None, "board full", Ending.BOARD_FULL)
_WINS = (
    Outcome(0, "four in a row", Ending.LINE),
    Outcome(1, "four in a row", Ending.LINE),
)


def has_four(stones: int) -> bool:
    """Return True if the bitboard `stones` (one player's stones) holds four in a row."""
    # The sentinel bit atop each column keeps shifts from wrapping into the next column.
    m = stones & (stones >> H1)  # horizontal
    if m & (m >> (2 * H1)):
        return True
    m = stones & (stones >> HEIGHT)  # diagonal, up to the left
    if m & (m >> (2 * HEIGHT)):
        return True
    m = stones & (stones >> (H1 + 1))  # diagonal, up to the right
    if m & (m >> (2 * (H1 + 1))):
        return True
    m = stones & (stones >> 1)  # vertical
    return bool(m & (m >> 2))


class ConnectFourState(State[int]):
    """A Connect Four position: the side to move's stones, all stones, and the move string."""

    __slots__ = ("_current", "_game", "_history", "_legal", "_mask")

    def __init__(self, game: ConnectFour, current: int, mask: int, history: str) -> None:
        self._game = game
        self._current = current
        self._mask = mask
        self._history = history
        self._legal: tuple[int, ...] | None = None

    @property
    def game(self) -> ConnectFour:
        return self._game

    @property
    def to_move(self) -> int:
        return len(self._history) & 1

    @property
    def current(self) -> int:
        """The stones of the side to move, as a bitboard."""
        return self._current

    @property
    def mask(self) -> int:
        """Every stone on the board, as a bitboard."""
        return self._mask

    @property
    def history(self) -> str:
        """The columns played from the empty board, 1-based ("4455")."""
        return self._history

    @property
    def ply(self) -> int:
        """The number of stones on the board."""
        return len(self._history)

    def legal_moves(self) -> tuple[int, ...]:
        """Return the playable columns, 0-based, left to right; empty once the game is over."""
        legal = self._legal
        if legal is None:
            legal = () if has_four(self._current ^ self._mask) else _MOVES_BY_FULL[self._mask & TOP]
            self._legal = legal
        return legal

    def apply_unchecked(self, move: int) -> ConnectFourState:
        mask = self._mask
        return ConnectFourState(
            self._game,
            self._current ^ mask,
            mask | (mask + BOTTOM_MASKS[move]),
            self._history + _COLUMN_CHARS[move],
        )

    def outcome(self) -> Outcome | None:
        if has_four(self._current ^ self._mask):
            return _WINS[1 - (len(self._history) & 1)]
        if self._mask == BOARD:
            return _DRAW
        return None

    def key(self) -> Hashable:
        # Pons' key: adding mask sets the bit above each column's top stone, so the sum encodes
        # the column heights and the side to move's stones (and the side to move by parity).
        return self._current + self._mask

    def can_play(self, col: int) -> bool:
        """Return True if column `col` (0-based) is not full; says nothing about a finished game."""
        return not self._mask & TOP_MASKS[col]

    def is_winning_move(self, col: int) -> bool:
        """Return True if the side to move makes four in a row by playing column `col` (0-based).

        The caller must know that `col` is playable (`can_play`).
        """
        mask = self._mask
        return has_four(self._current | ((mask + BOTTOM_MASKS[col]) & COLUMN_MASKS[col]))

    def parse_move(self, text: str) -> int:
        stripped = text.strip()
        if len(stripped) != 1 or stripped not in _COLUMN_CHARS:
            raise InvalidMoveError(
                f"cannot read Connect Four move {text!r}: expected a column 1-7 (left to right)"
            )
        col = int(stripped) - 1
        legal = self.legal_moves()
        if col in legal:
            return col
        legal_text = [_COLUMN_CHARS[m] for m in legal]
        if not legal:
            raise IllegalMoveError(stripped, "the game is over", legal_text)
        raise IllegalMoveError(stripped, f"column {stripped} is full", legal_text)

    def format_move(self, move: int) -> str:
        return str(move + 1)

    def cell(self, col: int, row: int) -> int | None:
        """Return the player (0 or 1) whose stone is at (col, row), row 0 at the bottom."""
        bit = 1 << (col * H1 + row)
        if not self._mask & bit:
            return None
        mine = bool(self._current & bit)
        return self.to_move if mine else 1 - self.to_move

    def render(self) -> str:
        rows = []
        for row in reversed(range(HEIGHT)):
            marks = []
            for col in range(WIDTH):
                player = self.cell(col, row)
                marks.append("." if player is None else _MARKS[player])
            rows.append(" ".join(marks))
        rows.append(" ".join(_COLUMN_CHARS))
        names = self._game.player_names
        result = self.outcome()
        if result is None:
            status = f"{names[self.to_move]} ({_MARKS[self.to_move]}) to move"
        elif result.winner is None:
            status = f"draw ({result.reason})"
        else:
            status = f"{names[result.winner]} ({_MARKS[result.winner]}) wins ({result.reason})"
        rows.append(status)
        return "\n".join(rows)


class ConnectFour(Game):
    """Connect Four: drop stones into 7 columns of 6; four in a row wins; a full board draws."""

    name = "connect4"
    player_names = ("first", "second")
    description = (
        "Connect Four on 7 columns x 6 rows: four in a row (across, up or diagonal) wins, "
        "a full board is a draw."
    )

    __slots__ = ()

    def initial_state(self) -> ConnectFourState:
        return ConnectFourState(self, 0, 0, "")

    def parse_position(self, text: str) -> ConnectFourState:
        """Return the state after the 1-based columns in `text` are played from the empty board.

        Whitespace is ignored. Raises InvalidPositionError on a character that is not a column
        1-7, a move into a full column, or a move after the game was won.
        """
        columns = "".join(text.split())
        state = self.initial_state()
        for ply, char in enumerate(columns, start=1):
            if char not in _COLUMN_CHARS:
                raise InvalidPositionError(
                    f"Connect Four position {text!r}: move {ply} is {char!r}, expected a column 1-7"
                )
            col = ord(char) - ord("1")
            if not state.can_play(col):
                raise InvalidPositionError(
                    f"Connect Four position {text!r}: move {ply} plays column {char}, "
                    "which is already full"
                )
            if not state.legal_moves():
                raise InvalidPositionError(
                    f"Connect Four position {text!r}: move {ply} ({char}) comes after the game "
                    f"was won with four in a row at move {ply - 1}"
                )
            state = state.apply_unchecked(col)
        return state

    def format_position(self, state: State[Any]) -> str:
        if not isinstance(state, ConnectFourState):
            raise TypeError(f"not a Connect Four state: {state!r}")
        return state.history
