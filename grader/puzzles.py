"""Puzzle suites of the endgame profile: what a puzzle is, its file format, and how to make one.

A suite file is JSON (see docs/GRADER.md, "Endgame profile"):

    {"format": "arena-endgame-puzzles", "version": 1,
     "puzzles": [{"name": "puzzle 1", "plies": 3, "public": true,
                  "board": ["........", "...b....", ...8 rows, row 0 at the top...]}, ...]}

`board` is a course-format board (red to move), `plies` the length of red's fastest forced win
as certified by Arena's solver, `public` whether students may see the puzzle and its result
before the grades are published.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from bots.solve import Solver
from grader.course import read_states
from grader.endgame import PuzzleError, make_puzzles
from grader.suite_file import read_suite_json, write_suite_json

SUITE_FORMAT: Final = "arena-endgame-puzzles"
SUITE_VERSION: Final = 1


@dataclass(frozen=True, slots=True)
class Puzzle:
    """One graded puzzle: a course board (red to move) and its fastest forced win in plies."""

    name: str
    board: str
    plies: int
    public: bool = True


def load_puzzles(path: Path | str) -> list[Puzzle]:
    """Read a suite file; raise PuzzleError naming the file and the problem if it is not one."""
    source = Path(path)
    data = read_suite_json(
        source,
        format_name=SUITE_FORMAT,
        version=SUITE_VERSION,
        kind="puzzle suite",
        error=PuzzleError,
    )
    entries = data.get("puzzles")
    if not isinstance(entries, list) or not entries:
        raise PuzzleError(f'{source}: "puzzles" must be a non-empty list')
    return [_read_puzzle(source, index, entry) for index, entry in enumerate(entries, 1)]


def _read_puzzle(source: Path, index: int, entry: Any) -> Puzzle:
    where = f"{source}: puzzle {index}"
    if not isinstance(entry, dict):
        raise PuzzleError(f"{where}: expected an object with name, board, plies, public")
    name, board, plies, public = (entry.get(k) for k in ("name", "board", "plies", "public"))
    if not isinstance(name, str) or not name.strip():
        raise PuzzleError(f'{where}: "name" must be a non-empty string')
    if not isinstance(board, list) or not all(isinstance(row, str) for row in board):
        raise PuzzleError(f'{where}: "board" must be a list of 8 row strings')
    if not isinstance(plies, int) or isinstance(plies, bool) or plies < 1:
        raise PuzzleError(f'{where}: "plies" must be a positive integer')
    if not isinstance(public, bool):
        raise PuzzleError(f'{where}: "public" must be true or false')
    text = "\n".join(board)
    try:
        states = read_states(text)
    except ValueError as error:
        raise PuzzleError(f"{where}: the board is not a course board: {error}") from error
    if len(states) != 1:
        raise PuzzleError(f'{where}: "board" holds {len(states)} boards, expected one')
    return Puzzle(name=name, board=states[0].text, plies=plies, public=public)


def save_puzzles(path: Path | str, puzzles: Sequence[Puzzle]) -> None:
    """Write a suite file; a suite with any private puzzle is created readable by its owner only."""
    data = {
        "format": SUITE_FORMAT,
        "version": SUITE_VERSION,
        "puzzles": [
            {
                "name": p.name,
                "plies": p.plies,
                "public": p.public,
                "board": p.board.splitlines(),
            }
            for p in puzzles
        ],
    }
    write_suite_json(path, data, public=all(p.public for p in puzzles))


def make_puzzle_suite(
    seed: int,
    count: int,
    *,
    min_plies: int = 1,
    max_plies: int = 9,
    public: bool = False,
    solver: Solver | None = None,
) -> list[Puzzle]:
    """Return `count` puzzles drawn from `seed`, each certified by the solver, easiest first.

    Each puzzle is a red win in `min_plies` to `max_plies` plies (see
    `grader.endgame.make_puzzles`); puzzles are named "puzzle 1", "puzzle 2", ... in order of
    their length. Raises PuzzleError if not enough puzzles are found.
    """
    if count < 1:
        raise PuzzleError(f"a suite needs at least one puzzle, asked for {count}")
    if not 1 <= min_plies <= max_plies:
        raise PuzzleError(f"need 1 <= min plies <= max plies, got {min_plies} and {max_plies}")
    found = make_puzzles(
        random.Random(seed), count, min_plies=min_plies, max_plies=max_plies, solver=solver
    )
    ordered = sorted(found, key=lambda puzzle: puzzle[1])
    return [
        Puzzle(name=f"puzzle {index}", board=board, plies=plies, public=public)
        for index, (board, plies) in enumerate(ordered, 1)
    ]
