"""Puzzle suites of the endgame profile: what a puzzle is and its file format.

A suite file is JSON (see docs/GRADER.md, "Endgame profile"):

    {"format": "arena-endgame-puzzles", "version": 1,
     "puzzles": [{"name": "puzzle 1", "plies": 3, "public": true,
                  "board": ["........", "...b....", ...8 rows, row 0 at the top...],
                  "material": "3v5",
                  "difficulty": {"branching": 4.2, "best": 1, "nodes": 5120}}, ...]}

`board` is a course-format board (red to move), `plies` the length of red's fastest forced win
as certified by Arena's solver, `public` whether students may see the puzzle and its result
before the grades are published. `material` and `difficulty` are optional and informative
(the generator, autograder.endgame_puzzles, writes them; the grader does not read them): red's
pieces against black's, and how hard the puzzle is (`Difficulty`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from autograder.course import read_states
from autograder.suite_file import read_suite_json, write_suite_json

SUITE_FORMAT: Final = "arena-endgame-puzzles"
SUITE_VERSION: Final = 1


class PuzzleError(ValueError):
    """A puzzle that the grader cannot use (not a board, or no forced win for red)."""


@dataclass(frozen=True, slots=True)
class Difficulty:
    """How hard a puzzle is beyond the length of its win (`Puzzle.plies`).

    `branching` is the mean number of legal moves per ply along the main line (both sides, the
    winner hurrying and the loser resisting): a plain search must grow about branching**plies
    positions to see the win. `best` is the number of red's first moves that keep the fastest
    win (1: a single right move). `nodes` is what Arena's proof search spent certifying the win
    and deciding each of red's other first moves as the judge does (autograder.endgame): the cost
    of judging the first move of a student's line.
    """

    branching: float
    best: int
    nodes: int


@dataclass(frozen=True, slots=True)
class Puzzle:
    """One graded puzzle: a course board (red to move) and its fastest forced win in plies.

    `material` ("3v5": red's pieces against black's) and `difficulty` are what the generator
    recorded; None for a puzzle written by hand.
    """

    name: str
    board: str
    plies: int
    public: bool = True
    material: str | None = None
    difficulty: Difficulty | None = None


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
    material = entry.get("material")
    if material is not None and not isinstance(material, str):
        raise PuzzleError(f'{where}: "material" must be a string such as "3v5"')
    return Puzzle(
        name=name,
        board=states[0].text,
        plies=plies,
        public=public,
        material=material,
        difficulty=_read_difficulty(where, entry.get("difficulty")),
    )


def _read_difficulty(where: str, data: Any) -> Difficulty | None:
    if data is None:
        return None
    problem = f'{where}: "difficulty" must be an object with branching, best and nodes'
    if not isinstance(data, dict):
        raise PuzzleError(problem)
    branching, best, nodes = (data.get(k) for k in ("branching", "best", "nodes"))
    if not isinstance(branching, int | float) or isinstance(branching, bool):
        raise PuzzleError(problem)
    if not isinstance(best, int) or not isinstance(nodes, int):
        raise PuzzleError(problem)
    return Difficulty(branching=float(branching), best=best, nodes=nodes)


def save_puzzles(path: Path | str, puzzles: Sequence[Puzzle]) -> None:
    """Write a suite file; a suite with any private puzzle is created readable by its owner only."""
    data = {
        "format": SUITE_FORMAT,
        "version": SUITE_VERSION,
        "puzzles": [_puzzle_json(p) for p in puzzles],
    }
    write_suite_json(path, data, public=all(p.public for p in puzzles))


def _puzzle_json(puzzle: Puzzle) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": puzzle.name,
        "plies": puzzle.plies,
        "public": puzzle.public,
        "board": puzzle.board.splitlines(),
    }
    if puzzle.material is not None:
        entry["material"] = puzzle.material
    if puzzle.difficulty is not None:
        d = puzzle.difficulty
        entry["difficulty"] = {"branching": d.branching, "best": d.best, "nodes": d.nodes}
    return entry
