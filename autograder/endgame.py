"""The "Endgame solver" profile: run a student's checkers.py on each puzzle, judge its line.

A puzzle (autograder.endgame_suite) is a course-format board (docs/GAMES.md, "Course board
format"), red to move. `grade_endgame` runs the student's program once per puzzle in the
sandbox; the program writes the sequence of states from the puzzle to the end of the game,
boards separated by blank lines. `check_solution` judges that text against Arena's rules
(games.checkers) and the exact value of every position on the line; it runs no student code.

The judge (autograder/endgame_judge.py) scores each line; the verdict's components and weights
are autograder/endgame_verdict.py's.
"""

from __future__ import annotations

import random
import shutil
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Final

from autograder.budget import Budget
from autograder.endgame_judge import check_solution, exact_solver
from autograder.endgame_suite import Puzzle, PuzzleError
from autograder.errors import GradeError
from autograder.profiles import DEFAULT_PYTHON
from autograder.results import GradeReport, Reason, TestResult, Visibility, run_reason
from autograder.visibility import run_order
from bots.solvers.solve import Solver
from sandbox import MIB, Isolation, Limits, SandboxResult, Status, run_sandboxed
from sandbox.workdirs import new_workdir

PROGRAM: Final = "checkers.py"
"""The program an endgame submission must hold at its top level."""
INPUT_FILE: Final = "input.txt"
OUTPUT_FILE: Final = "output.txt"
COMMAND: Final = f"python3 {PROGRAM} --inputfile {INPUT_FILE} --outputfile {OUTPUT_FILE}"
"""How the grader runs the program, as a student reads it."""
ENDGAME_LIMITS: Final = Limits(
    cpu_seconds=10,
    wall_seconds=20.0,
    memory_bytes=512 * MIB,
    processes=32,
    file_size_bytes=1 * MIB,
    output_bytes=1 * MIB,
)
"""The limits of each endgame run (one puzzle); docs/GRADER.md states them to students."""
STDERR_LINES: Final = 8
"""Lines of the end of stderr quoted when a run fails."""


def grade_endgame(
    submission: Path,
    puzzles: Sequence[Puzzle],
    *,
    limits: Limits = ENDGAME_LIMITS,
    python: str = DEFAULT_PYTHON,
    points: float = 1.0,
    solver: Solver | None = None,
    isolation: Isolation | None = None,
    order: random.Random | None = None,
    budget: Budget | None = None,
) -> GradeReport:
    """Run checkers.py on each puzzle in the sandbox and judge its line; `points` per puzzle.

    `submission` is a directory holding checkers.py (and any modules it imports) or the
    checkers.py file itself. Each puzzle runs as `python checkers.py --inputfile input.txt
    --outputfile output.txt` in a fresh sandbox with the submission's files, then
    `check_solution` scores output.txt. A run that fails (timeout, CPU, memory,
    crash, no output file) scores 0 on that puzzle with the sandbox's reason. Public puzzles
    are "visible" tests, private ones "after_published"; every test names its reasons
    (autograder.results.Reason). The public puzzles run first, in order, then the private ones in
    an order drawn from `order` (default: a fresh `random.SystemRandom()`, so no two gradings
    can be told apart by it; autograder.visibility.run_order); the report lists the puzzles in
    the suite's order. With `budget`, each run's wall limit is cut to what is left of it, and
    once it is spent the puzzles left score 0 as not run, saying why (autograder.budget). `solver`
    judges the lines (default: `exact_solver()`, the endgame database where it is built).
    Raises GradeError only for an empty suite or a puzzle the solver cannot certify.
    """
    if not puzzles:
        raise GradeError("the puzzle suite is empty")
    report = GradeReport(profile="endgame")
    total = points * len(puzzles)
    staging = new_workdir()  # holds the puzzle's input: removed even if this process is killed
    try:
        problem = _stage(submission, staging)
        if problem is not None:
            report.tests.append(
                TestResult(
                    name="submission",
                    score=0.0,
                    max_score=total,
                    output=problem,
                    reasons=("not run",),
                )
            )
            report.output = f"Not graded: {problem}"
            return report
        solver = solver or exact_solver()
        graded: dict[int, TestResult] = {}
        hidden = [not puzzle.public for puzzle in puzzles]
        budget = budget or Budget(None)
        for index in run_order(hidden, order or random.SystemRandom()):
            puzzle = puzzles[index]
            if budget.is_spent():
                name, visibility = _identity(puzzle)
                graded[index] = TestResult(
                    name=name,
                    score=0.0,
                    max_score=points,
                    output=budget.not_run(),
                    visibility=visibility,
                    reasons=("not run",),
                )
                continue
            wall = budget.wall(limits.wall_seconds)
            cut = wall < limits.wall_seconds
            graded[index] = _grade_puzzle(
                staging,
                puzzle,
                replace(limits, wall_seconds=wall) if cut else limits,
                python,
                points,
                solver,
                isolation,
                budget.ran_out() if cut else None,
            )
        report.tests.extend(graded[index] for index in range(len(puzzles)))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    full = sum(1 for test in report.tests if test.score == test.max_score)
    report.output = (
        f"{full} of {len(puzzles)} puzzles solved with full marks; "
        f"score {report.score:g} of {report.max_score:g}."
    )
    return report


def _stage(submission: Path, staging: Path) -> str | None:
    """Copy the submission into `staging`; return why it cannot be graded, or None."""
    if submission.is_file():
        if submission.name != PROGRAM:
            return (
                f"the submission is a file named {submission.name}; the program must be named "
                f"{PROGRAM}"
            )
        shutil.copyfile(submission, staging / PROGRAM)
        return None
    if not submission.is_dir():
        return f"the submission {submission} does not exist"
    program = submission / PROGRAM
    if not program.is_file() or program.is_symlink():
        found = sorted(p.name for p in submission.iterdir() if p.suffix == ".py")
        listed = f" (found: {', '.join(found)})" if found else " (found no .py file)"
        return (
            f"no {PROGRAM} at the top of the submission{listed}: upload your program as "
            f"{PROGRAM}: the grader runs {COMMAND}"
        )
    shutil.copytree(submission, staging, symlinks=True, dirs_exist_ok=True)
    return None


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _grade_puzzle(
    staging: Path,
    puzzle: Puzzle,
    limits: Limits,
    python: str,
    points: float,
    solver: Solver,
    isolation: Isolation | None,
    cut_short: str | None = None,
) -> TestResult:
    """Run the program on one puzzle and judge it; `cut_short` says why, when the run's wall
    limit is the grading's budget's rather than the test's own (a run stopped at it)."""
    name, visibility = _identity(puzzle)
    # The submission's own input.txt/output.txt (stale files, links) must not stand in for ours.
    _remove(staging / INPUT_FILE)
    _remove(staging / OUTPUT_FILE)
    (staging / INPUT_FILE).write_text(puzzle.board + "\n", encoding="utf-8")
    argv = [python, PROGRAM, "--inputfile", INPUT_FILE, "--outputfile", OUTPUT_FILE]
    run = run_sandboxed(
        argv, files=staging, limits=limits, collect=[OUTPUT_FILE], isolation=isolation
    )

    def result(score: float, lines: Sequence[str], reason: Reason | None) -> TestResult:
        return TestResult(
            name=name,
            score=score,
            max_score=points,
            output="\n".join(lines),
            visibility=visibility,
            reasons=() if reason is None else (reason,),
        )

    if run.status is Status.SANDBOX_ERROR:
        return result(0.0, [run.reason, "Please report this to the course staff."], "grader error")
    if not run.is_ok:
        if cut_short is not None and run.status is Status.TIMEOUT:
            return result(0.0, [cut_short, *_failure(run)], run_reason(run.status))
        return result(0.0, _failure(run), run_reason(run.status))
    if OUTPUT_FILE not in run.files:
        return result(
            0.0,
            [
                f"your program finished but wrote no output file: write the states to the "
                f"path given by --outputfile (here {OUTPUT_FILE}); the grader runs {COMMAND}"
            ],
            "unreadable output",
        )
    output = run.files[OUTPUT_FILE].decode("utf-8", errors="replace")
    try:
        verdict = check_solution(puzzle.board, output, solver)
    except PuzzleError as error:
        raise GradeError(f"{puzzle.name}: {error}") from error
    lines = list(verdict.messages)
    if not verdict.is_full_marks:
        lost = [part for part, earned in verdict.components.items() if not earned]
        lines.append(f"points lost for: {', '.join(lost)}")
    return result(verdict.score * points, lines, verdict.reason)


def _identity(puzzle: Puzzle) -> tuple[str, Visibility]:
    """Return the name and visibility of a puzzle's test."""
    visibility: Visibility = "visible" if puzzle.public else "after_published"
    return f"{puzzle.name} ({puzzle.plies} plies)", visibility


def _failure(run: SandboxResult) -> list[str]:
    """Explain a run that did not end normally: the sandbox's reason, how the program was
    called when it failed, and the end of stderr."""
    lines = [run.reason]
    if run.status is Status.EXIT_ERROR or run.status is Status.KILLED:
        lines.append("score 0: the program must exit with code 0 after writing its output")
        lines.append(f"the grader ran: {COMMAND}")
        if _misread_options(run.stderr):
            lines.append(
                "your program opened an option's name as a file: read the input file's path "
                "after --inputfile and the output file's after --outputfile (argparse does "
                "it: parser.add_argument('--inputfile'), parser.add_argument('--outputfile')), "
                "not from fixed positions in sys.argv"
            )
    else:
        lines.append("score 0: the run was stopped at a limit")
    tail = run.stderr.strip().splitlines()[-STDERR_LINES:]
    if tail:
        lines.append("last lines of stderr:")
        lines.extend(f"    {line}" for line in tail)
    return lines


def _misread_options(stderr: str) -> bool:
    """True when the program failed opening `--inputfile` or `--outputfile` as a path."""
    return any(
        f"'{option}'" in stderr and ("No such file" in stderr or "Error" in stderr)
        for option in ("--inputfile", "--outputfile")
    )
