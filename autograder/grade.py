"""Grade a submission under one assignment profile and explain every point lost.

A profile is a function `grade_<profile>(submission, ...) -> GradeReport`; `grade` selects one
by name (`PROFILES`). Nothing a submission does makes a profile raise: a missing file, a crash,
a timeout or garbage output is a test with score 0 and the reason. Profiles raise GradeError
only for the grader's own mistakes (an unusable suite, an unknown profile).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Final

from autograder.agent import MODULE, grade_agent
from autograder.agent_suite import AgentSuite, AgentSuiteError, describe_agent_suite
from autograder.agent_suite_file import load_agent_suite, save_agent_suite
from autograder.agent_suite_maker import make_agent_suite
from autograder.budget import Budget
from autograder.endgame import ENDGAME_LIMITS, PROGRAM, grade_endgame
from autograder.endgame_puzzle_options import Progress, PuzzleOptions
from autograder.endgame_puzzles import describe_puzzles, make_puzzle_suite
from autograder.endgame_suite import PuzzleError, load_puzzles, save_puzzles
from autograder.errors import GradeError
from autograder.profiles import DEFAULT_PYTHON, PROFILES
from autograder.results import GradeReport
from bots.egdb.probe import Database
from sandbox import Isolation, Limits

__all__ = ["MAIN_FILES", "GradeError", "GradeOptions", "grade", "starter", "write_suite"]

MAIN_FILES: Final = {"endgame": PROGRAM, "agent": MODULE}
"""The program each profile runs, which a submission must hold at its top level."""

DEFAULT_SUITE_COUNT: Final = 10
"""Puzzles (endgame) or legal-move positions (agent) in a suite `write_suite` makes."""


@dataclass(frozen=True)
class GradeOptions:
    """What `grade` passes on to a profile; each profile uses the fields that apply to it.

    `suite` is the profile's test suite file (endgame: a puzzle suite, see autograder.endgame_suite,
    required; agent: an agent suite, see autograder.agent_suite, default `AgentSuite()`);
    `limits` overrides the profile's default limits per run; `isolation` is the sandbox uid,
    which must differ between gradings that run at the same time (the server gives each of its
    worker slots its own). `order` draws the order the private tests run in (default: a
    fresh `random.SystemRandom()`, a new unpredictable order per grading; a seeded
    `random.Random` repeats one); `budget_s` bounds the wall time of all the runs together
    (autograder.budget; None: no bound but each run's).
    """

    suite: Path | None = None
    limits: Limits | None = None
    python: str = DEFAULT_PYTHON
    isolation: Isolation | None = None
    order: random.Random | None = None
    budget_s: float | None = None


def starter(profile: str) -> tuple[str, str]:
    """Return the starter file a course hands out for `profile`: its name and its text.

    The starters (autograder/starters/PROFILE/) read and write the assignment's formats and leave
    the search to the student. Raises GradeError for an unknown profile.
    """
    if profile not in MAIN_FILES:
        raise GradeError(f"unknown profile {profile!r}: choose one of {', '.join(PROFILES)}")
    name = MAIN_FILES[profile]
    text = files("autograder").joinpath("starters", profile, name).read_text(encoding="utf-8")
    return name, text


def grade(profile: str, submission: Path, options: GradeOptions) -> GradeReport:
    """Grade `submission` under the named profile; raise GradeError for an unknown profile.

    The budget (`options.budget_s`) starts here, once the suite is read.
    """
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
            order=options.order,
            budget=Budget(options.budget_s),
        )
    if profile == "agent":
        suite = AgentSuite()
        if options.suite is not None:
            try:
                suite = load_agent_suite(options.suite)
            except AgentSuiteError as error:
                raise GradeError(str(error)) from error
        return grade_agent(
            submission,
            python=options.python,
            limits=options.limits,
            suite=suite,
            isolation=options.isolation,
            order=options.order,
            budget=Budget(options.budget_s),
        )
    raise GradeError(f"unknown profile {profile!r}: choose one of {', '.join(PROFILES)}")


def write_suite(
    profile: str,
    path: Path,
    seed: int,
    *,
    public: bool,
    count: int | None = None,
    options: PuzzleOptions | None = None,
    database: Database | None = None,
    progress: Callable[[Progress], None] | None = None,
) -> str:
    """Make a certified suite of `profile` from `seed`, write it to `path`; return a summary line.

    endgame: `count` puzzles (default 10) chosen by `options` (default `PuzzleOptions()`),
    each certified by the proof search and, where `database` holds it, by the endgame
    database too (autograder.endgame_puzzles); `progress` follows the generation. agent: `count`
    legal-move positions (default 10) covering every category with both colours, certified by
    the rules, and a fresh exact-minimax seed (autograder.agent_suite); the puzzle options are
    ignored. A private suite (`public=False`) is written readable by its owner only (0600);
    keep it under a `private_dir`. The same seed makes the same suite. Raises GradeError for
    an unknown profile, a suite that cannot be made or a file that cannot be written.
    """
    try:
        if profile == "endgame":
            puzzles = make_puzzle_suite(
                seed,
                DEFAULT_SUITE_COUNT if count is None else count,
                options,
                public=public,
                database=database,
                progress=progress,
            )
            save_puzzles(path, puzzles)
            return f"wrote {path}: {describe_puzzles(puzzles, public=public)}"
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
