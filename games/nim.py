"""Nim: take any number of objects from one heap; misère play by default.

In misère play (the default, as in the lecture) the player who takes the last object loses; with
the option `misere=false` (normal play) that player wins. A move is a pair (heap index from 0,
count >= 1); its text is "H:K" with the heap numbered from 1 ("4:7" takes 7 objects from heap 4).
A position is written as the heap sizes, "1,3,5,7" with the first player to move, or with the
suffix "/2" when the second player is to move ("1,3,5,6/2").
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping
from typing import Any

from games.base import (
    Ending,
    Game,
    IllegalMoveError,
    InvalidMoveError,
    InvalidOptionError,
    InvalidPositionError,
    Outcome,
    State,
    parse_bool_option,
    perft_by_position,
)

MAX_HEAP = 10**6
MAX_HEAPS = 1000
# Every object is a legal move of its own, so the total bounds the size of a move list.
MAX_OBJECTS = 10**6
NimMove = tuple[int, int]

# At most 7 digits: larger numbers exceed MAX_HEAP anyway, and int() refuses very long digit runs.
_MOVE_RE = re.compile(r"\s*([0-9]{1,7})\s*:\s*([0-9]{1,7})\s*")
_HEAP_RE = re.compile(r"[0-9]{1,7}")
_WHITESPACE = str.maketrans("", "", " \t\r\n")


def parse_heaps(text: str) -> tuple[int, ...]:
    """Return the heap sizes written as comma-separated non-negative integers ("1,3,5,7").

    Raises ValueError naming the first bad entry.
    """
    parts = text.translate(_WHITESPACE).split(",")
    if len(parts) > MAX_HEAPS:
        raise ValueError(f"{len(parts)} heaps is more than the limit of {MAX_HEAPS}")
    heaps = []
    for number, part in enumerate(parts, start=1):
        if not _HEAP_RE.fullmatch(part):
            raise ValueError(
                f"heap {number} is {part!r}, expected a whole number 0-{MAX_HEAP} "
                "(heaps are comma-separated, e.g. 1,3,5,7)"
            )
        size = int(part)
        if size > MAX_HEAP:
            raise ValueError(f"heap {number} has {size} objects, more than the limit of {MAX_HEAP}")
        heaps.append(size)
    if sum(heaps) > MAX_OBJECTS:
        raise ValueError(
            f"{sum(heaps)} objects in all is more than the limit of {MAX_OBJECTS} "
            "(each object is a legal move)"
        )
    return tuple(heaps)


class NimState(State[NimMove]):
    """A Nim position: the heap sizes and the side to move."""

    __slots__ = ("_game", "_heaps", "_legal", "_to_move")

    def __init__(self, game: Nim, heaps: tuple[int, ...], to_move: int) -> None:
        self._game = game
        self._heaps = heaps
        self._to_move = to_move
        self._legal: tuple[NimMove, ...] | None = None

    @property
    def game(self) -> Nim:
        return self._game

    @property
    def to_move(self) -> int:
        return self._to_move

    @property
    def heaps(self) -> tuple[int, ...]:
        """The heap sizes, in heap order."""
        return self._heaps

    def legal_moves(self) -> tuple[NimMove, ...]:
        """Return every move, heap by heap, counts ascending."""
        legal = self._legal
        if legal is None:
            legal = tuple(
                (index, count)
                for index, size in enumerate(self._heaps)
                for count in range(1, size + 1)
            )
            self._legal = legal
        return legal

    def apply_unchecked(self, move: NimMove) -> NimState:
        index, count = move
        heaps = self._heaps
        return NimState(
            self._game,
            (*heaps[:index], heaps[index] - count, *heaps[index + 1 :]),
            1 - self._to_move,
        )

    def outcome(self) -> Outcome | None:
        if any(self._heaps):
            return None
        last = 1 - self._to_move
        name = self._game.player_names[last]
        if self._game.misere:
            return Outcome(
                self._to_move,
                f"{name} took the last object (misère: that loses)",
                Ending.LAST_OBJECT,
            )
        return Outcome(last, f"{name} took the last object", Ending.LAST_OBJECT)

    def perft(self, depth: int) -> int:
        """Count the leaf nodes to `depth` plies, each position's count once (transpositions)."""
        return perft_by_position(self, depth)

    def key(self) -> Hashable:
        return (self._heaps, self._to_move)

    def parse_move(self, text: str) -> NimMove:
        match = _MOVE_RE.fullmatch(text)
        if match is None:
            raise InvalidMoveError(
                f"cannot read Nim move {text!r}: expected H:K, taking K objects from heap H "
                "(heaps numbered from 1), e.g. 2:3"
            )
        heap, count = int(match[1]), int(match[2])
        heaps = self._heaps
        if not 1 <= heap <= len(heaps):
            raise InvalidMoveError(
                f"Nim move {text!r} names heap {heap}, but the heaps are numbered 1-{len(heaps)}"
            )
        if count < 1:
            raise InvalidMoveError(f"Nim move {text!r} takes nothing: take at least 1 object")
        move_text = f"{heap}:{count}"
        size = heaps[heap - 1]
        if count <= size:
            return (heap - 1, count)
        legal_text = [self.format_move(m) for m in self.legal_moves()]
        if not any(heaps):
            raise IllegalMoveError(move_text, "the game is over", legal_text)
        if size == 0:
            reason = f"heap {heap} is empty"
        else:
            reason = f"heap {heap} has only {size} object{'s' if size > 1 else ''}"
        raise IllegalMoveError(move_text, reason, legal_text)

    def format_move(self, move: NimMove) -> str:
        index, count = move
        return f"{index + 1}:{count}"

    def render(self) -> str:
        width = len(str(len(self._heaps)))
        lines = []
        for number, size in enumerate(self._heaps, start=1):
            # Draw small heaps as sticks; a large heap is only its number.
            sticks = " " + "|" * size if 0 < size <= 20 else ""
            lines.append(f"heap {number:>{width}}: {size}{sticks}")
        names = self._game.player_names
        result = self.outcome()
        if result is None:
            lines.append(f"{names[self._to_move]} to move")
        else:
            assert result.winner is not None
            lines.append(f"{names[result.winner]} wins ({result.reason})")
        return "\n".join(lines)


class Nim(Game):
    """Nim on any heaps; options `heaps` (e.g. "1,3,5,7") and `misere` (true/false)."""

    setup_options = frozenset({"heaps"})
    name = "nim"
    player_names = ("first", "second")
    description = (
        "Nim: take one or more objects from a single heap. Misère by default "
        "(taking the last object loses); misere=false for normal play."
    )

    __slots__ = ("heaps", "misere")

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        self.heaps: tuple[int, ...] = self.options["heaps"]
        self.misere: bool = self.options["misere"]

    @classmethod
    def option_defaults(cls) -> Mapping[str, str]:
        return {"heaps": "1,3,5,7", "misere": "true"}

    @classmethod
    def convert_option(cls, key: str, value: str) -> Any:
        if key == "misere":
            return parse_bool_option(cls.name, key, value)
        try:
            return parse_heaps(value)
        except ValueError as exc:
            raise InvalidOptionError(f"nim option heaps={value!r}: {exc}") from None

    def initial_state(self) -> NimState:
        return NimState(self, self.heaps, 0)

    def parse_position(self, text: str) -> NimState:
        """Return the state written as heap sizes, with "/2" when the second player is to move.

        "/1" (first player to move) is accepted too; whitespace is ignored.
        """
        heaps_text, slash, side = text.translate(_WHITESPACE).partition("/")
        if slash and side not in ("1", "2"):
            raise InvalidPositionError(
                f"Nim position {text!r}: the side to move after '/' is {side!r}, expected 1 or 2"
            )
        try:
            heaps = parse_heaps(heaps_text)
        except ValueError as exc:
            raise InvalidPositionError(f"Nim position {text!r}: {exc}") from None
        return NimState(self, heaps, 1 if side == "2" else 0)

    def format_position(self, state: State[Any]) -> str:
        if not isinstance(state, NimState):
            raise TypeError(f"not a Nim state: {state!r}")
        heaps = ",".join(map(str, state.heaps))
        return heaps + "/2" if state.to_move == 1 else heaps
