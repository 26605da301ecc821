"""What a reader sees of a grade report: the one policy every surface applies.

A report (autograder.results) holds everything the grader found. Its tests whose `visibility` is
not "visible" are private: their inputs are the suite's secret, and anything the submission
did on them (what it printed, its exceptions and exit codes, its output file, how long it
took) and anything the judge said of them (the expected length, the right moves, the test's
own name) may be derived from those inputs. So a reader who may not see them yet gets, from
`view`, only each private test's points and reasons (`autograder.results.Reason`: "crashed",
"too slow", ...), or nothing of it; the report's top-level `output` is written again from what
the view shows. `shows_times` says whether that reader may see when the grading started and
finished (a program can make its running time depend on a private input).

Who reads decides (`Reader`): the suite's owner and course staff see the report as graded
(`OWNER`); the uploader of the hosted grader's own suite never sees more than the outcome of a
private test (`UPLOADER`); a course student sees what the assignment's `before_due` policy
says until the due date (server.courses.grades maps it), and everything after it. Gradescope
hides each test as its visibility says, but shows the top-level output to students at once:
`gradescope_json` writes that one from the uploader's view.

Private tests also run in an order the uploader cannot predict (`run_order`), so nothing a
submission does on one run tells which private input came before it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, Literal

from autograder.results import GradeReport, TestResult

Hold = Literal["omit", "outcome"]
"""How a held private test is shown: left out, or as its outcome only."""

PRIVATE_NAME: Final = "private test"
"""What a held private test is called ("private test 3"): its own name may carry its answer."""


@dataclass(frozen=True)
class Reader:
    """Who reads a report, and what its private tests show them.

    `full`: the report as graded. Otherwise each private test is held: left out (`hold`
    "omit", the summary counting them) or shown as its outcome (`hold` "outcome": renamed
    "private test N", with its points and reasons and nothing else). `until` says when the
    details show ("after the due date (2026-12-01 12:00 UTC)"), None when they never do.
    """

    full: bool = False
    hold: Hold = "outcome"
    until: str | None = None


OWNER: Final = Reader(full=True)
"""The suite's owner or course staff: the report as graded."""
UPLOADER: Final = Reader()
"""The uploader of a hosted grading on the server's own suite: its private tests are never
published to them, so they see each one's outcome only."""
GRADESCOPE_STUDENT: Final = Reader(hold="omit", until="once the grades are published")
"""A Gradescope student before publication: Gradescope hides `after_published` tests."""


def is_private(test: TestResult) -> bool:
    """Return whether `test` is private: students see it only once results are published."""
    return test.visibility != "visible"


def holds_back(report: GradeReport, reader: Reader) -> bool:
    """Return whether `reader` sees less of `report` than was graded."""
    return not reader.full and any(is_private(test) for test in report.tests)


def shows_times(reader: Reader, report: GradeReport | None) -> bool:
    """Return whether `reader` may see when a grading started and finished.

    `report` is the finished grading's (None while it waits or runs). The times show to a
    reader who sees everything, and once the grading is finished, to one whose view of it holds
    nothing back: a program's running time may depend on private inputs, and the start of a
    job is the end of the one before it.
    """
    return reader.full or (report is not None and not holds_back(report, reader))


def view(report: GradeReport, reader: Reader) -> GradeReport:
    """Return what `reader` sees of `report` (see the module docstring); `report` itself when
    nothing is held back."""
    if not holds_back(report, reader):
        return report
    private = sum(1 for test in report.tests if is_private(test))
    if reader.hold == "omit":
        # As Gradescope leaves out hidden tests: the summary says how many there are and when
        # they show.
        shown = GradeReport(
            profile=report.profile, tests=[t for t in report.tests if not is_private(t)]
        )
        results = f"results {reader.until}" if reader.until else "results not shown"
        shown.output = (
            f"score {shown.score:g} of {shown.max_score:g} on the "
            f"{_tests(len(shown.tests), 'public')}; {_tests(private, 'private')}: {results}."
        )
        return shown
    numbers = iter(range(1, private + 1))
    tests = [
        _outcome(test, next(numbers), reader.until) if is_private(test) else test
        for test in report.tests
    ]
    shown = GradeReport(profile=report.profile, tests=tests)
    details = (
        f"details of the {_tests(private, 'private')} {reader.until}"
        if reader.until
        else f"the {_tests(private, 'private')} show their points and reasons only"
    )
    shown.output = f"score {shown.score:g} of {shown.max_score:g}; {details}."
    return shown


def _outcome(test: TestResult, number: int, until: str | None) -> TestResult:
    """Return a private test as its outcome: a neutral name, its points and its reasons."""
    if test.score >= test.max_score:
        outcome = "passed"
    elif test.reasons:
        outcome = f"points lost: {', '.join(test.reasons)}"
    else:
        outcome = "points lost"
    later = f"Details {until}." if until else "The details of a private test are not shown."
    return replace(test, name=f"{PRIVATE_NAME} {number}", output=f"{outcome}. {later}")


def _tests(count: int, kind: str) -> str:
    """Return e.g. "1 private test", "3 public tests"."""
    return f"{count} {kind} test{'' if count == 1 else 's'}"


def gradescope_json(report: GradeReport) -> dict[str, Any]:
    """Return `report` as Gradescope's results.json: every test as graded, each shown to
    students as its visibility says, and the top-level output (which students see at once)
    saying nothing of the private tests but their number."""
    data = report.to_json()
    if holds_back(report, GRADESCOPE_STUDENT):
        data["output"] = view(report, GRADESCOPE_STUDENT).output
    return data


def run_order(private: Sequence[bool], rng: random.Random) -> list[int]:
    """Return the order to run tests in, as indexes: the public ones first, in order, then the
    private ones (`private[i]` true) shuffled by `rng`.

    Give a fresh `random.SystemRandom()` per grading, so the order differs between gradings
    and cannot be predicted; a seeded `random.Random` repeats one order.
    """
    public = [index for index, hidden in enumerate(private) if not hidden]
    held = [index for index, hidden in enumerate(private) if hidden]
    rng.shuffle(held)
    return public + held
