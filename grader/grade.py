"""Grade a submission under one assignment profile and explain every point lost.

A profile is a function `grade_<profile>(submission, ...) -> GradeReport`; `grade` selects one
by name (`PROFILES`). Nothing a submission does makes a profile raise: a missing file, a crash,
a timeout or garbage output is a test with score 0 and the reason. Profiles raise GradeError
only for the grader's own mistakes (an unusable suite, an unknown profile).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from bots.solve import Solver
from grader.agent import MODULE, AgentSuite, grade_agent
from grader.agent_suite import (
    AgentSuiteError,
    describe_agent_suite,
    load_agent_suite,
    make_agent_suite,
    save_agent_suite,
)
from grader.endgame import PuzzleError, check_solution
from grader.profiles import DEFAULT_PYTHON, PROFILES
from grader.puzzles import Puzzle, load_puzzles, make_puzzle_suite, save_puzzles
from grader.results import GradeReport, TestResult, Visibility
from grader.sandbox import MIB, Isolation, Limits, SandboxResult, Status, run_sandboxed

PROGRAM: Final = "checkers.py"
MAIN_FILES: Final = {"endgame": PROGRAM, "agent": MODULE}
"""The program each profile runs, which a submission must hold at its top level."""
INPUT_FILE: Final = "input.txt"
OUTPUT_FILE: Final = "output.txt"

ENDGAME_LIMITS: Final = Limits(
    cpu_seconds=10,
    wall_seconds=20.0,
    memory_bytes=512 * MIB,
    processes=32,
    file_size_bytes=1 * MIB,
    output_bytes=1 * MIB,
)
"""The limits of each endgame run (one puzzle); docs/GRADER.md states them to students."""

DEFAULT_SUITE_COUNT: Final = 10
"""Puzzles (endgame) or legal-move positions (agent) in a suite `write_suite` makes."""

STDERR_LINES: Final = 8
"""Lines of the end of stderr quoted when a run fails."""


class GradeError(Exception):
    """The grader's own mistake or a usage error (never something the submission did)."""


@dataclass(frozen=True)
class GradeOptions:
    """What `grade` passes on to a profile; each profile uses the fields that apply to it.

    `suite` is the profile's test suite file (endgame: a puzzle suite, see grader.puzzles,
    required; agent: an agent suite, see grader.agent_suite, default `AgentSuite()`);
    `limits` overrides the profile's default limits per run; `isolation` is the sandbox uid,
    which must differ between gradings that run at the same time (the server gives each of its
    worker slots its own).
    """

    suite: Path | None = None
    limits: Limits | None = None
    python: str = DEFAULT_PYTHON
    isolation: Isolation | None = None


def grade(profile: str, submission: Path, options: GradeOptions) -> GradeReport:
    """Grade `submission` under the named profile; raise GradeError for an unknown profile."""
    if profile == "endgame":
        if options.suite is None:
            raise GradeError("the endgame profile needs a puzzle suite file")
        try:
            puzzles = load_puzzles(options.suite)
        except PuzzleError as error:
            raise GradeError(str(error)) from error
        return grade_endgame(
            submission,
            puzzles,
            limits=options.limits or ENDGAME_LIMITS,
            python=options.python,
            isolation=options.isolation,
        )
    if profile == "agent":
        suite = AgentSuite()
        if options.suite is not None:
            try:
                suite = load_agent_suite(options.suite)
            except AgentSuiteError as error:
                raise GradeError(str(error)) from error
        tests = grade_agent(
            submission,
            python=options.python,
            limits=options.limits,
            suite=suite,
            isolation=options.isolation,
        )
        report = GradeReport(profile="agent", tests=tests)
        lost = [test.name for test in tests if test.score < test.max_score]
        report.output = f"score {report.score:g} of {report.max_score:g}" + (
            f"; points lost on: {', '.join(lost)}." if lost else "; full marks."
        )
        return report
    raise GradeError(f"unknown profile {profile!r}: choose one of {', '.join(PROFILES)}")


def write_suite(
    profile: str,
    path: Path,
    seed: int,
    *,
    public: bool,
    count: int | None = None,
    min_plies: int = 1,
    max_plies: int = 9,
) -> str:
    """Make a certified suite of `profile` from `seed`, write it to `path`; return a summary line.

    endgame: `count` puzzles (default 10) of `min_plies` to `max_plies` plies, each certified by
    the solver (grader.puzzles). agent: `count` legal-move positions (default 10) covering every
    category with both colours, certified by the rules, and a fresh exact-minimax seed
    (grader.agent_suite); the plies are ignored. A private suite (`public=False`) is written
    readable by its owner only (0600); keep it under a `private_dir`. The same seed makes the
    same suite. Raises GradeError for an unknown profile, a suite that cannot be made or a file
    that cannot be written.
    """
    try:
        if profile == "endgame":
            puzzles = make_puzzle_suite(
                seed,
                DEFAULT_SUITE_COUNT if count is None else count,
                min_plies=min_plies,
                max_plies=max_plies,
                public=public,
            )
            save_puzzles(path, puzzles)
            kind = "public" if public else "private"
            lengths = ", ".join(str(p.plies) for p in puzzles)
            return f"wrote {path}: {len(puzzles)} {kind} endgame puzzles (plies: {lengths})"
        if profile == "agent":
            suite = make_agent_suite(
                seed, DEFAULT_SUITE_COUNT if count is None else count, public=public
            )
            save_agent_suite(path, suite)
            return f"wrote {path}: {describe_agent_suite(suite)}"
    except (PuzzleError, AgentSuiteError) as error:
        raise GradeError(str(error)) from error
    except OSError as error:
        raise GradeError(f"cannot write the suite {path}: {error.strerror}") from error
    raise GradeError(f"unknown profile {profile!r}: choose one of {', '.join(PROFILES)}")


def grade_endgame(
    submission: Path,
    puzzles: Sequence[Puzzle],
    *,
    limits: Limits = ENDGAME_LIMITS,
    python: str = DEFAULT_PYTHON,
    points: float = 1.0,
    solver: Solver | None = None,
    isolation: Isolation | None = None,
) -> GradeReport:
    """Run checkers.py on each puzzle in the sandbox and judge its line; `points` per puzzle.

    `submission` is a directory holding checkers.py (and any modules it imports) or the
    checkers.py file itself. Each puzzle runs as `python checkers.py --inputfile input.txt
    --outputfile output.txt` in a fresh sandbox with the submission's files, then
    `grader.endgame.check_solution` scores output.txt. A run that fails (timeout, CPU, memory,
    crash, no output file) scores 0 on that puzzle with the sandbox's reason. Public puzzles
    are "visible" tests, private ones "after_published". Raises GradeError only for an empty
    suite or a puzzle the solver cannot certify.
    """
    if not puzzles:
        raise GradeError("the puzzle suite is empty")
    report = GradeReport(profile="endgame")
    total = points * len(puzzles)
    staging = Path(tempfile.mkdtemp(prefix="arena-submission-"))
    try:
        problem = _stage(submission, staging)
        if problem is not None:
            report.tests.append(
                TestResult(name="submission", score=0.0, max_score=total, output=problem)
            )
            report.output = f"Not graded: {problem}"
            return report
        solver = solver or Solver()
        for puzzle in puzzles:
            report.tests.append(
                _grade_puzzle(staging, puzzle, limits, python, points, solver, isolation)
            )
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
            f"{PROGRAM}, runnable as `python3 {PROGRAM} --inputfile IN --outputfile OUT`"
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
) -> TestResult:
    name = f"{puzzle.name} ({puzzle.plies} plies)"
    visibility: Visibility = "visible" if puzzle.public else "after_published"
    # The submission's own input.txt/output.txt (stale files, links) must not stand in for ours.
    _remove(staging / INPUT_FILE)
    _remove(staging / OUTPUT_FILE)
    (staging / INPUT_FILE).write_text(puzzle.board + "\n", encoding="utf-8")
    argv = [python, PROGRAM, "--inputfile", INPUT_FILE, "--outputfile", OUTPUT_FILE]
    run = run_sandboxed(
        argv, files=staging, limits=limits, collect=[OUTPUT_FILE], isolation=isolation
    )

    def result(score: float, lines: Sequence[str]) -> TestResult:
        return TestResult(
            name=name,
            score=score,
            max_score=points,
            output="\n".join(lines),
            visibility=visibility,
        )

    if run.status is Status.SANDBOX_ERROR:
        return result(0.0, [run.reason, "Please report this to the course staff."])
    if not run.is_ok:
        return result(0.0, _failure(run))
    if OUTPUT_FILE not in run.files:
        return result(
            0.0,
            [
                f"your program finished but wrote no output file: write the states to the "
                f"path given by --outputfile (here {OUTPUT_FILE})"
            ],
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
    return result(verdict.score * points, lines)


def _failure(run: SandboxResult) -> list[str]:
    """Explain a run that did not end normally: the sandbox's reason and the end of stderr."""
    lines = [run.reason]
    if run.status is Status.EXIT_ERROR or run.status is Status.KILLED:
        lines.append("score 0: the program must exit with code 0 after writing its output")
    else:
        lines.append("score 0: the run was stopped at a limit")
    tail = run.stderr.strip().splitlines()[-STDERR_LINES:]
    if tail:
        lines.append("last lines of stderr:")
        lines.extend(f"    {line}" for line in tail)
    return lines
