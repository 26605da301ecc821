"""Grading results in the format course platforms read (Gradescope's `results.json`).

Every profile turns a submission into a list of `TestResult`s; `GradeReport` adds them up
and writes `results.json`:

    {"score": 7.5, "max_score": 10.0, "output": "...", "visibility": "visible",
     "tests": [{"name": "...", "score": 1.0, "max_score": 1.0, "output": "...",
                "visibility": "visible", "extra_data": {"reasons": ["crashed"]}}, ...]}

A report is written even when the submission cannot run at all (a crash, a missing file):
that is one more test with score 0 and the reason, never a missing file. A report holds
everything the grader found; what a reader may see of it is autograder.visibility's to decide.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from sandbox import Status

Visibility = Literal["visible", "hidden", "after_due_date", "after_published"]
"""When students see a test (Gradescope's values); private-suite tests are `after_published`."""

Reason = Literal[
    "wrong answer",
    "illegal move",
    "unreadable output",
    "crashed",
    "too slow",
    "memory limit",
    "output limit",
    "not run",
    "grader error",
]
"""Why a test lost points, in a word or two that say nothing of its input: what a reader who
may not see a private test's explanation is told of it (docs/GRADER.md, "What a student
sees of a private test")."""

REASONS: tuple[Reason, ...] = get_args(Reason)
"""Every reason, in the order a test lists its reasons."""

MAX_OUTPUT = 8_000
"""Characters of a test's explanation kept (Gradescope shows the text as is)."""


def run_reason(status: Status) -> Reason:
    """Return the reason of a sandboxed run that did not end normally."""
    if status in (Status.TIMEOUT, Status.CPU_LIMIT):
        return "too slow"
    if status is Status.MEMORY_LIMIT:
        return "memory limit"
    if status in (Status.OUTPUT_LIMIT, Status.FILE_SIZE_LIMIT):
        return "output limit"
    if status is Status.SANDBOX_ERROR:
        return "grader error"
    return "crashed"


def sorted_reasons(reasons: Iterable[Reason]) -> tuple[Reason, ...]:
    """Return `reasons` once each, in the order of `REASONS`."""
    found = set(reasons)
    return tuple(reason for reason in REASONS if reason in found)


@dataclass(frozen=True)
class TestResult:
    """One graded test: its points and the explanation of every point lost."""

    __test__ = False  # not a pytest test class

    name: str
    score: float
    max_score: float
    output: str = ""
    visibility: Visibility = "visible"
    reasons: tuple[Reason, ...] = ()
    """Why points were lost (empty for full marks), in `REASONS` order."""

    def __post_init__(self) -> None:
        if not 0 <= self.score <= self.max_score:
            raise ValueError(f"{self.name}: score {self.score} outside 0..{self.max_score}")

    def to_json(self) -> dict[str, Any]:
        """Return the test as a results.json entry."""
        output = self.output
        if len(output) > MAX_OUTPUT:
            output = output[:MAX_OUTPUT] + "\n... (cut)"
        data: dict[str, Any] = {
            "name": self.name,
            "score": round(self.score, 4),
            "max_score": round(self.max_score, 4),
            "output": output,
            "visibility": self.visibility,
        }
        if self.reasons:
            # Gradescope keeps a test's `extra_data` as it is.
            data["extra_data"] = {"reasons": list(self.reasons)}
        return data


@dataclass
class GradeReport:
    """A submission's grade: every test, and a summary for the student."""

    profile: str
    tests: list[TestResult] = field(default_factory=list)
    output: str = ""

    @property
    def score(self) -> float:
        """Points earned over all tests."""
        return sum(test.score for test in self.tests)

    @property
    def max_score(self) -> float:
        """Points available over all tests."""
        return sum(test.max_score for test in self.tests)

    def to_json(self) -> dict[str, Any]:
        """Return Gradescope's results.json object."""
        return {
            "score": round(self.score, 4),
            "max_score": round(self.max_score, 4),
            "output": self.output,
            "visibility": "visible",
            "stdout_visibility": "hidden",
            "tests": [test.to_json() for test in self.tests],
        }

    @classmethod
    def from_json(cls, data: Any, profile: str) -> GradeReport:
        """Return the report a results.json object describes; ValueError if it is not one."""
        try:
            tests = []
            for test in data["tests"]:
                visibility = test.get("visibility", "visible")
                if visibility not in get_args(Visibility):
                    raise ValueError(f"unknown visibility {visibility!r}")
                tests.append(
                    TestResult(
                        name=str(test["name"]),
                        score=float(test["score"]),
                        max_score=float(test["max_score"]),
                        output=str(test.get("output", "")),
                        visibility=visibility,
                        reasons=_read_reasons(test.get("extra_data")),
                    )
                )
            return cls(profile=profile, tests=tests, output=str(data.get("output", "")))
        except (KeyError, TypeError, AttributeError) as error:
            raise ValueError(f"not a results.json object: {error!r}") from error

    def write(self, path: Path | str) -> None:
        """Write results.json to `path`, the report as graded (see autograder.visibility for what a
        reader may see of it)."""
        Path(path).write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")


def _read_reasons(extra: Any) -> tuple[Reason, ...]:
    """Return the known reasons a test's `extra_data` lists (others are left out)."""
    listed = extra.get("reasons") if isinstance(extra, dict) else None
    if not isinstance(listed, list):
        return ()
    return sorted_reasons(reason for reason in REASONS if reason in listed)
