"""Checkers moves: the move value, the table of simple steps, and move text (`11-15`, `22x15`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from games.base import InvalidMoveError
from games.checkers.board import (
    ALL_DIRECTIONS,
    BIT_OF_SQUARE,
    NUM_SQUARES,
    SQUARE_OF_BIT,
    VALID,
    squares_of,
)


class CheckersMove:
    """A move: its full path of squares, and the bit masks that apply it.

    Equal moves have equal paths. `captured` is the mask of captured pieces (0 for a step).
    """

    __slots__ = ("captured", "frm", "path", "to")

    def __init__(self, path: tuple[int, ...], captured: int) -> None:
        self.path = path
        self.frm = 1 << BIT_OF_SQUARE[path[0]]
        self.to = 1 << BIT_OF_SQUARE[path[-1]]
        self.captured = captured

    @property
    def is_capture(self) -> bool:
        """True for a jump or multi-jump."""
        return self.captured != 0

    @property
    def captured_squares(self) -> tuple[int, ...]:
        """The squares of the captured pieces, in ascending order."""
        return squares_of(self.captured)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CheckersMove):
            return NotImplemented
        return self.path == other.path

    def __hash__(self) -> int:
        return hash(self.path)

    def __str__(self) -> str:
        sep = "x" if self.captured else "-"
        return sep.join(map(str, self.path))

    def __repr__(self) -> str:
        return f"<CheckersMove {self}>"


def sorted_texts(moves: Sequence[CheckersMove]) -> list[str]:
    """Return the moves' texts ordered by their paths (for messages and listings)."""
    return [str(m) for m in sorted(moves, key=lambda m: m.path)]


def _build_steps() -> dict[int, list[CheckersMove | None]]:
    """Every simple step, by direction and destination bit, so generation allocates nothing."""
    table: dict[int, list[CheckersMove | None]] = {}
    for d in ALL_DIRECTIONS:
        row: list[CheckersMove | None] = [None] * 64
        for s in range(1, 33):
            to_bit = BIT_OF_SQUARE[s] + d
            if 0 <= to_bit < 35 and (VALID >> to_bit) & 1:
                row[to_bit] = CheckersMove((s, SQUARE_OF_BIT[to_bit]), 0)
        table[d] = row
    return table


STEPS: Final = _build_steps()

_MOVE_RE: Final = re.compile(r"^\s*(\d{1,2})((?:\s*[-xX:\u00d7]\s*\d{1,2})+)\s*$")
_PART_RE: Final = re.compile(r"([-xX:\u00d7])\s*(\d{1,2})")


def parse_move_text(text: str) -> tuple[tuple[int, ...], str]:
    """Return (path of squares, "-" or "x") for move text like `11-15`, `22x15`, `11x18x25`.

    Raises InvalidMoveError naming what is wrong; legality is checked by CheckersState.
    """
    if not isinstance(text, str):
        raise InvalidMoveError(f"a checkers move must be text, not {type(text).__name__}")
    match = _MOVE_RE.match(text)
    if match is None:
        raise InvalidMoveError(
            f"cannot read checkers move {text!r}: expected squares 1-32 joined by '-' for a "
            "step or 'x' for a capture, e.g. 11-15, 22x15, 11x18x25"
        )
    squares = [int(match.group(1))]
    separators = set()
    for sep, number in _PART_RE.findall(match.group(2)):
        separators.add("x" if sep in "xX\u00d7:" else "-")
        squares.append(int(number))
    bad = [s for s in squares if not 1 <= s <= NUM_SQUARES]
    if bad:
        raise InvalidMoveError(
            f"cannot read checkers move {text!r}: square {bad[0]} is off the board (1-32)"
        )
    if len(separators) > 1:
        raise InvalidMoveError(
            f"cannot read checkers move {text!r}: mixes '-' and 'x' (use x throughout a capture)"
        )
    separator = separators.pop()
    if separator == "-" and len(squares) > 2:
        raise InvalidMoveError(
            f"cannot read checkers move {text!r}: a step joins two squares; "
            "write a multi-jump with x, e.g. 11x18x25"
        )
    return tuple(squares), separator
