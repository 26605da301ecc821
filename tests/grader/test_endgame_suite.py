"""Puzzle suites of the endgame profile: the file format, and puzzles certified by the solver."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from bots.solve import Solver
from games.checkers import Checkers, parse_board
from grader.endgame_suite import (
    Puzzle,
    PuzzleError,
    load_puzzles,
    make_puzzle_suite,
    make_puzzles,
    save_puzzles,
)

GAME = Checkers()
PUBLIC_SUITE = Path(__file__).resolve().parents[2] / "grader" / "examples" / "endgame-puzzles.json"
BOARD = "\n".join(
    ["........", "........", "...b....", "......R.", "...R....", "........", ".....b..", "........"]
)


def test_make_puzzles_are_certified_wins() -> None:
    solver = Solver()
    puzzles = make_puzzles(random.Random(3), 3, min_plies=3, max_plies=5, solver=solver)
    assert len({text for text, _ in puzzles}) == 3
    for text, plies in puzzles:
        assert 3 <= plies <= 5
        solution = solver.solve(parse_board(GAME, text, "red"), max_plies=plies)
        assert (solution.value, solution.plies) == ("win", plies)


def test_public_suite_is_five_certified_puzzles_of_one_to_nine_plies() -> None:
    public = load_puzzles(PUBLIC_SUITE)
    assert len(public) == 5
    assert all(p.public and 1 <= p.plies <= 9 for p in public)
    assert [p.plies for p in public] == sorted(p.plies for p in public)


def test_save_then_load_round_trips_and_private_suites_are_owner_only(tmp_path: Path) -> None:
    puzzles = [Puzzle("a", BOARD, 3, public=False), Puzzle("b", BOARD, 5)]
    path = tmp_path / "suite.json"
    save_puzzles(path, puzzles)
    assert load_puzzles(path) == puzzles
    assert path.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "not a JSON puzzle suite"),
        ('{"format": "other"}', "is not a puzzle suite"),
        ('{"format": "arena-endgame-puzzles", "version": 1, "puzzles": []}', "non-empty list"),
        (
            '{"format": "arena-endgame-puzzles", "version": 1, "puzzles": '
            '[{"name": "x", "plies": 3, "public": true, "board": ["rrrrrrrr"]}]}',
            "puzzle 1: the board is not a course board",
        ),
    ],
)
def test_load_puzzles_rejects_bad_files_with_the_reason(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "suite.json"
    path.write_text(content)
    with pytest.raises(PuzzleError, match=message):
        load_puzzles(path)


def test_make_puzzle_suite_is_reproducible_and_certified() -> None:
    first = make_puzzle_suite(7, 2, min_plies=1, max_plies=3, public=True)
    assert first == make_puzzle_suite(7, 2, min_plies=1, max_plies=3, public=True)
    assert [p.name for p in first] == ["puzzle 1", "puzzle 2"]
    assert all(1 <= p.plies <= 3 for p in first)
