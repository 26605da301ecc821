"""The endgame rubric ranks searches as a teacher would: programs of four kinds, written as
students write them (tests/autograder/students/), graded by the real grader on realistic puzzles.

(a) the untouched starter and a program that writes nothing score 0; (b) a 1-ply greedy mover
scores more; (c) an alpha-beta without a "win faster" term more again; (d) the reference solver
full marks. The puzzles have 3 to 8 pieces, men and kings, and are certified here by Arena's
solver.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autograder.endgame import grade_endgame
from autograder.endgame_suite import Puzzle
from autograder.results import GradeReport
from bots.solvers.solve import Solver
from games.checkers import Checkers, format_board
from sandbox import MIB, Limits

REPO = Path(__file__).resolve().parents[2]
STUDENTS = Path(__file__).parent / "students"
PYTHON = "/usr/bin/python3"
# Roomy limits: the machine may be loaded, and what is ranked is the search, not its speed.
LIMITS = Limits(cpu_seconds=60, wall_seconds=180.0, memory_bytes=512 * MIB)

# PDN FEN (red is White, to move) and red's fastest forced win in plies.
PUZZLES = {
    "W:WK23,K28:B3": 7,
    "W:WK2,24,25:B10,18,21": 5,
    "W:W22,26:B8,13": 7,
    "W:W15,K22,25:B2,18,21": 11,
    "W:W8,K13,22:B3,15,23,24": 11,
    "W:WK2,7,25:B3,18,19,27": 7,
    "W:W17,26,27,30:B2,6,15,K32": 13,
    "W:W5,18,24,K26,31:B12,20,25": 11,
}

pytestmark = pytest.mark.skipif(not Path(PYTHON).exists(), reason=f"{PYTHON} is missing")


@pytest.fixture(scope="module")
def suite() -> list[Puzzle]:
    """The puzzles as a suite, each certified by the solver."""
    game = Checkers()
    solver = Solver()
    puzzles = []
    for number, (fen, plies) in enumerate(PUZZLES.items(), 1):
        state = game.parse_position(fen)
        solution = solver.solve(state)
        assert (solution.value, solution.plies) == ("win", plies), fen
        pieces = (state.black | state.white).bit_count()
        assert 3 <= pieces <= 8
        puzzles.append(Puzzle(f"puzzle {number}", format_board(state), plies))
    kinds = {"".join(sorted(set(p.board) - {".", "\n"})) for p in puzzles}
    assert any("r" in k and "R" in k for k in kinds) and any("b" in k for k in kinds)
    return puzzles


def submission(tmp_path: Path, program: Path, *modules: Path) -> Path:
    """A student's folder: `program` as checkers.py, and the modules it imports."""
    folder = tmp_path / program.stem
    folder.mkdir()
    shutil.copyfile(program, folder / "checkers.py")
    for module in modules:
        shutil.copyfile(module, folder / module.name)
    return folder


def graded(folder: Path, suite: list[Puzzle]) -> GradeReport:
    return grade_endgame(folder, suite, limits=LIMITS, python=PYTHON)


def test_the_endgame_rubric_ranks_searches_as_a_teacher_would(
    tmp_path: Path, suite: list[Puzzle]
) -> None:
    rules = STUDENTS / "rules.py"
    programs = {
        "starter": submission(
            tmp_path, REPO / "autograder" / "starters" / "endgame" / "checkers.py"
        ),
        "nothing": submission(tmp_path, STUDENTS / "nothing.py"),
        "greedy": submission(tmp_path, STUDENTS / "greedy.py", rules),
        "alphabeta": submission(tmp_path, STUDENTS / "alphabeta.py", rules),
        "reference": submission(tmp_path, REPO / "autograder" / "reference" / "endgame_solver.py"),
    }
    reports = {kind: graded(folder, suite) for kind, folder in programs.items()}
    scores = {kind: report.score for kind, report in reports.items()}
    explained = {
        kind: [f"{t.name}: {t.score:g} {t.output[:300]}" for t in report.tests]
        for kind, report in reports.items()
    }
    assert scores["starter"] == 0, explained["starter"]
    assert scores["nothing"] == 0, explained["nothing"]
    assert 0 < scores["greedy"] < scores["alphabeta"] < scores["reference"], (scores, explained)
    assert scores["reference"] == reports["reference"].max_score == len(suite)
    # What each lost, in the rubric's words: the starter's line never moves, the greedy
    # mover gives wins away, the alpha-beta without "win faster" does not hurry.
    starter = reports["starter"].tests[0].output
    assert "the line stops after 0 plies but the game is not over" in starter
    assert any("gives up the win" in t.output for t in reports["greedy"].tests)
    assert any(
        "is not a fastest win" in t.output or "black, resisting longest" in t.output
        for t in reports["alphabeta"].tests
    )
