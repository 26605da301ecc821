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
from games.checkers import BIT_OF_SQUARE, WHITE, Checkers, CheckersState, format_board, square_row
from grader.course import read_states
from grader.suite_file import read_suite_json, write_suite_json

SUITE_FORMAT: Final = "arena-endgame-puzzles"
SUITE_VERSION: Final = 1


class PuzzleError(ValueError):
    """A puzzle that the grader cannot use (not a board, or no forced win for red)."""


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
    `make_puzzles`); puzzles are named "puzzle 1", "puzzle 2", ... in order of
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


def make_puzzles(
    rng: random.Random,
    count: int,
    *,
    min_plies: int = 3,
    max_plies: int = 9,
    red_pieces: int = 2,
    black_pieces: int = 2,
    solver: Solver | None = None,
    max_tries: int = 10_000,
) -> list[tuple[str, int]]:
    """Return `count` puzzles (course board, red to move; plies of the fastest forced win).

    Positions are drawn from `rng` (kings and men on random dark squares, no man on its crown
    row, no capture for red on the first move) and kept when the solver proves a red win in
    `min_plies` to `max_plies` plies. Raises PuzzleError if `max_tries` draws are not enough.
    """
    solver = solver or Solver()
    game = Checkers()
    puzzles: list[tuple[str, int]] = []
    seen: set[str] = set()
    for _ in range(max_tries):
        if len(puzzles) == count:
            return puzzles
        state = _random_position(rng, game, red_pieces, black_pieces)
        text = format_board(state)
        if text in seen or state.is_terminal() or state.has_capture():
            continue
        seen.add(text)
        solution = solver.solve(state, max_plies=max_plies)
        if solution.value == "win" and solution.plies is not None and solution.plies >= min_plies:
            puzzles.append((text, solution.plies))
    if len(puzzles) == count:
        return puzzles
    raise PuzzleError(f"found {len(puzzles)} of {count} puzzles in {max_tries} draws")


def _random_position(
    rng: random.Random, game: Checkers, red_pieces: int, black_pieces: int
) -> CheckersState:
    squares = rng.sample(range(1, 33), red_pieces + black_pieces)
    black = white = kings = 0
    for index, square in enumerate(squares):
        bit = 1 << BIT_OF_SQUARE[square]
        red = index < red_pieces
        row = square_row(square)
        if rng.random() < 0.5 or row == (0 if red else 7):
            kings |= bit
        if red:
            white |= bit
        else:
            black |= bit
    return CheckersState(game, black, white, kings, WHITE)
