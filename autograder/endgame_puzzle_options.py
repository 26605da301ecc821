"""What a puzzle generation is asked for: material mixes, piece counts and the options, and
what it reports: the puzzles found and its progress (autograder/endgame_puzzles.py makes them)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from autograder.endgame_suite import Difficulty, PuzzleError
from autograder.endgame_verdict import DEFAULT_MAX_PLIES

MIN_PIECES: Final = 2
MAX_PIECES: Final = 12
"""The piece counts a puzzle may have: the proof search refuses more (bots.solvers.solve)."""
RED_MAN_SQUARES: Final = tuple(range(5, 33))
"""Where a red man may stand: anywhere but red's crown row, row 0 (PDN squares 1-4)."""
BLACK_MAN_SQUARES: Final = tuple(range(1, 29))
"""Where a black man may stand: anywhere but black's crown row, row 7 (PDN squares 29-32)."""

GROW_POSITIONS: Final = 200
"""The most positions one walk of `grow_position` tries before it is given up for a new one."""
GROW_NODES: Final = 5_000
"""The node budget (at most `PuzzleOptions.max_nodes`) for the positions a walk passes through:
they are no puzzles, only a way to the last one, which is certified in full; a small budget
drops costly branches early."""

_MATERIAL_RE: Final = re.compile(r"^\s*(\d+)\s*v\s*(\d+)\s*$", re.IGNORECASE)
_PIECES_RE: Final = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")


@dataclass(frozen=True, slots=True, order=True)
class Material:
    """How many pieces each side has: red (to move) against black; written "3v5"."""

    red: int
    black: int

    def __str__(self) -> str:
        return f"{self.red}v{self.black}"

    @property
    def pieces(self) -> int:
        """Both sides' pieces."""
        return self.red + self.black


def parse_material(text: str) -> Material:
    """Read "RvB" (red's pieces against black's, e.g. "3v5"); PuzzleError says what is wrong."""
    match = _MATERIAL_RE.match(text)
    if match is None:
        raise PuzzleError(
            f"material {text!r} is not RED v BLACK, red's pieces against black's, such as 3v5"
        )
    material = Material(int(match[1]), int(match[2]))
    if material.red < 1 or material.black < 1:
        raise PuzzleError(f"material {text!r}: each side needs at least one piece")
    if not MIN_PIECES <= material.pieces <= MAX_PIECES:
        raise PuzzleError(
            f"material {text!r} has {material.pieces} pieces; a puzzle has {MIN_PIECES} to "
            f"{MAX_PIECES}"
        )
    return material


def parse_pieces(text: str) -> tuple[int, int]:
    """Read a count of pieces, "5", or a range, "3-8"; PuzzleError says what is wrong."""
    match = _PIECES_RE.match(text)
    if match is None:
        raise PuzzleError(f"pieces {text!r} is not a count such as 5 or a range such as 3-8")
    low = int(match[1])
    high = low if match[2] is None else int(match[2])
    if not MIN_PIECES <= low <= high <= MAX_PIECES:
        raise PuzzleError(
            f"pieces {text!r}: need {MIN_PIECES} <= fewest <= most <= {MAX_PIECES} "
            f"(the proof search decides endgames of at most {MAX_PIECES} pieces)"
        )
    return low, high


@dataclass(frozen=True, slots=True)
class PuzzleOptions:
    """What puzzles to make (see the module docstring); `check` says what is wrong with them.

    `materials` are the mixes to draw from; when empty, every split of a total in `pieces`
    where neither side is more than two pieces ahead (`mixes`). The suite is spread evenly:
    over the given mixes, else over the totals of pieces, no share holding more than its part
    of `count` (rounded up); positions are drawn from the shares not yet full.
    """

    materials: tuple[Material, ...] = ()
    pieces: tuple[int, int] = (3, 8)
    kings: float = 0.25
    min_plies: int = 3
    max_plies: int = 11
    min_choices: int = 2
    max_best: int | None = None
    min_branching: float = 0.0
    max_nodes: int = 20_000
    max_tries: int = 50_000

    def check(self) -> None:
        """Raise PuzzleError naming the first option out of range, and its range."""
        low, high = self.pieces
        if not MIN_PIECES <= low <= high <= MAX_PIECES:
            raise PuzzleError(f"pieces must be a range within {MIN_PIECES}-{MAX_PIECES}")
        if not 0.0 <= self.kings <= 1.0:
            raise PuzzleError(f"kings is a probability from 0 to 1, not {self.kings:g}")
        if not 1 <= self.min_plies <= self.max_plies <= DEFAULT_MAX_PLIES:
            raise PuzzleError(
                f"need 1 <= min plies <= max plies <= {DEFAULT_MAX_PLIES} (the judge's "
                f"horizon), got {self.min_plies} and {self.max_plies}"
            )
        if self.min_plies % 2 == 0 and self.min_plies == self.max_plies:
            raise PuzzleError(
                f"a red win (red to move) takes an odd number of plies: {self.min_plies} to "
                f"{self.max_plies} holds none"
            )
        if self.min_choices < 1:
            raise PuzzleError(f"min choices must be at least 1, not {self.min_choices}")
        if self.max_best is not None and self.max_best < 1:
            raise PuzzleError(f"max best must be at least 1, not {self.max_best}")
        if self.min_branching < 0:
            raise PuzzleError(f"min branching must be at least 0, not {self.min_branching:g}")
        if self.max_nodes < 1:
            raise PuzzleError(f"max nodes must be at least 1, not {self.max_nodes}")
        if self.max_tries < 1:
            raise PuzzleError(f"tries must be at least 1, not {self.max_tries}")

    def describe(self) -> str:
        """The options in a few words, for messages."""
        mixes = (
            ", ".join(str(m) for m in self.materials)
            if self.materials
            else f"{self.pieces[0]}-{self.pieces[1]} pieces"
        )
        parts = [
            mixes,
            f"kings {self.kings:g}",
            f"{self.min_plies}-{self.max_plies} plies",
            f"at least {self.min_choices} first moves",
            f"{self.max_nodes:,} nodes",
        ]
        if self.max_best is not None:
            parts.append(f"at most {self.max_best} best first moves")
        if self.min_branching:
            parts.append(f"branching at least {self.min_branching:g}")
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class Found:
    """A puzzle made by `make_puzzles`: its board, win, material, difficulty, certification.

    `egdb` is True when the endgame database held the position and agreed with the proof
    search.
    """

    board: str
    plies: int
    material: Material
    difficulty: Difficulty
    egdb: bool


@dataclass(frozen=True, slots=True)
class Progress:
    """How far a generation is: puzzles found of those asked for, positions drawn so far."""

    found: int
    count: int
    tries: int
    max_tries: int
