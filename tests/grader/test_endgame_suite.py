"""Puzzle suites of the endgame profile: puzzles drawn at random are certified by the solver."""

from __future__ import annotations

import random

from bots.solve import Solver
from games.checkers import Checkers, parse_board
from grader.endgame_suite import make_puzzles

GAME = Checkers()


def test_make_puzzles_are_certified_wins() -> None:
    solver = Solver()
    puzzles = make_puzzles(random.Random(3), 3, min_plies=3, max_plies=5, solver=solver)
    assert len({text for text, _ in puzzles}) == 3
    for text, plies in puzzles:
        assert 3 <= plies <= 5
        solution = solver.solve(parse_board(GAME, text, "red"), max_plies=plies)
        assert (solution.value, solution.plies) == ("win", plies)
