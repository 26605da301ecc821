"""Each assignment's private suite file: generated at its creation, or given by its instructor.

The file is `grader_dir/suites/assignment-{id}.json` (0600, in a 0700 directory); the grading
workers grade the assignment's submissions with it. A generated endgame suite holds
`public_count` public puzzles (students see them before the due date) and `private_count`
private ones (`after_published`), each certified by the solver. A generated agent suite with
private positions is private, with `private_count` legal-move positions (covering every
category with both colours) and `public_count` public examples: their test is the one students
see before the due date (autograder.agent). Without private positions it is public, with
`public_count` legal-move positions covering the categories and no examples (every test is
shown anyway).

Everything here blocks (the solver, the disk). An endgame suite takes seconds per puzzle, so
the service generates it in a child process of its own (`python -m server.courses.suites
PROFILE PATH PUBLIC PRIVATE`, see `main`), which a timeout or a shutdown can kill; the rest runs
in a thread.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from autograder.agent_suite import AgentSuite, AgentSuiteError
from autograder.agent_suite_file import load_agent_suite
from autograder.agent_suite_file import save_agent_suite as _save_agent_suite
from autograder.agent_suite_maker import make_agent_suite
from autograder.endgame_judge import built_database
from autograder.endgame_puzzles import make_puzzle_suite
from autograder.endgame_suite import Puzzle, PuzzleError, load_puzzles, save_puzzles
from protocol.errors import ErrorCode, ProtocolError


@dataclass(frozen=True)
class SuiteSummary:
    """How many tests of a suite students see before the due date, and how many are private."""

    public_tests: int
    private_tests: int


def generate_suite(profile: str, path: Path, public_count: int, private_count: int) -> SuiteSummary:
    """Generate a suite of `profile` from a random seed and write it to `path` (0600).

    VALIDATION_ERROR when the grader cannot make such a suite (an agent suite needs enough
    positions to cover every category: `private_count`, or `public_count` when it is 0).
    """
    seed = secrets.randbits(32)
    try:
        if profile == "endgame":
            public = _puzzles(seed, public_count, public=True)
            private = _puzzles(seed + 1, private_count, public=False)
            return _write(path, lambda target: save_puzzles(target, [*public, *private]), profile)
        if private_count == 0:
            suite = make_agent_suite(seed, public_count, public=True)
        else:
            suite = make_agent_suite(seed, private_count, examples=public_count, public=False)
        return _write(path, lambda target: _save_agent_suite(target, suite), profile)
    except (PuzzleError, AgentSuiteError) as error:
        raise ProtocolError(
            ErrorCode.VALIDATION_ERROR,
            f"cannot generate this suite: {error}",
            {"suite": "cannot be generated"},
        ) from None


def install_suite(profile: str, path: Path, data: bytes) -> SuiteSummary:
    """Write a given suite file to `path` once the grader's loader for `profile` accepts it.

    VALIDATION_ERROR naming the problem otherwise (the previous suite stays).
    """
    try:
        text = data.decode("utf-8")
        json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise _bad_suite(f"the suite is not a JSON file: {error}") from None

    def write(target: Path) -> None:
        descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)

    return _write(path, write, profile)


def summarize(profile: str, path: Path) -> SuiteSummary:
    """Return the summary of the suite at `path`; VALIDATION_ERROR when it is not one."""
    try:
        if profile == "endgame":
            puzzles = load_puzzles(path)
            shown = sum(1 for puzzle in puzzles if puzzle.public)
            return SuiteSummary(public_tests=shown, private_tests=len(puzzles) - shown)
        suite = load_agent_suite(path)
    except (PuzzleError, AgentSuiteError) as error:
        raise _bad_suite(str(error).replace(str(path), "the suite")) from None
    examples = 1 if suite.example_positions else 0
    parts = _agent_parts(suite)
    if suite.public:
        return SuiteSummary(public_tests=examples + parts, private_tests=0)
    return SuiteSummary(public_tests=examples, private_tests=parts)


def _agent_parts(suite: AgentSuite) -> int:
    """Return the tests an agent suite's grading reports besides its examples' test
    (autograder.agent: legal moves, one per exact depth, one per opponent, time)."""
    return 1 + len(suite.exact_depths) + len(suite.opponents) + 1


def _puzzles(seed: int, count: int, *, public: bool) -> list[Puzzle]:
    """Return `count` puzzles from `seed`, named "example N" (public) or "puzzle N" (private)."""
    if count == 0:
        return []
    stem = "example" if public else "puzzle"
    return [
        replace(p, name=f"{stem} {index}")
        for index, p in enumerate(
            make_puzzle_suite(seed, count, public=public, database=built_database()), 1
        )
    ]


def _write(path: Path, writer: Callable[[Path], None], profile: str) -> SuiteSummary:
    """Write a suite through `writer(target)` next to `path`, check it, then move it in place."""
    for directory in (path.parent.parent, path.parent):
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        directory.chmod(0o700)
    partial = path.with_name(path.name + ".partial")
    try:
        writer(partial)
        partial.chmod(0o600)
        summary = summarize(profile, partial)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, path)
    return summary


def _bad_suite(message: str) -> ProtocolError:
    return ProtocolError(ErrorCode.VALIDATION_ERROR, message[:500], {"suite": "not a suite"})


def main(argv: list[str]) -> int:
    """Generate a suite: `PROFILE PATH PUBLIC_COUNT PRIVATE_COUNT`; print its summary as JSON.

    Exit status 0 when written, 1 (the reason on stderr) when the grader cannot make it, 2 for
    bad arguments.
    """
    if len(argv) != 4 or not argv[2].isdigit() or not argv[3].isdigit():
        print("usage: python -m server.courses.suites PROFILE PATH PUBLIC PRIVATE", file=sys.stderr)
        return 2
    try:
        summary = generate_suite(argv[0], Path(argv[1]), int(argv[2]), int(argv[3]))
    except ProtocolError as error:
        print(error.message, file=sys.stderr)
        return 1
    print(
        json.dumps({"public_tests": summary.public_tests, "private_tests": summary.private_tests})
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
