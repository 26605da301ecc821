"""An assignment's rules in words: its dates, late work, submissions allowed, the score that
counts and what students see before the due date.

One wording for every surface: the course pages (server.routes.web_courses) and `arena course`
(cli.course) say an assignment's rules with these sentences, so a student reads the same rules
on both. Times are said by the caller's `when` (an epoch-ms time in words): the pages say
them in UTC, the command line in its machine's time zone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from protocol.courses import Assignment

TimeText = Callable[[int], str]
"""Say an epoch-ms time in words."""

BEFORE_DUE: Mapping[str, str] = {
    "public": "students see the public tests' results; the private tests' results come after "
    "the due date",
    "score": "students see their total score over every test; the private tests' names and "
    "explanations come after the due date",
    "full": "students see every test's result and explanation at once",
}
"""What a student sees of their results before the due date, by the assignment's policy."""


def points(value: float | None) -> str:
    """Return a score or a percentage without needless decimals (`7.5`, `10`); "" for None."""
    return "" if value is None else f"{round(value, 4):g}"


def _days(count: int) -> str:
    return f"{count} day{'s' if count != 1 else ''}"


def late_work(assignment: Assignment, when: TimeText) -> str:
    """Say what happens to work handed in after the due date."""
    if (
        assignment.late_policy == "hard"
        or assignment.last_accepted_time_ms <= assignment.due_time_ms
    ):
        return "not accepted after the due date"
    return (
        f"accepted until {when(assignment.last_accepted_time_ms)}, losing "
        f"{points(assignment.late_penalty_per_day)}% of the score for each day (or part of "
        "one) late"
    )


def late_short(assignment: Assignment) -> str:
    """Say the late policy in a table's few words: `none accepted`, `-10% a day, up to 3 days`."""
    if assignment.late_policy == "hard" or assignment.late_days_max == 0:
        return "none accepted"
    penalty = points(assignment.late_penalty_per_day)
    return f"-{penalty}% a day, up to {_days(assignment.late_days_max)}"


def submissions_allowed(assignment: Assignment) -> str:
    """Say the daily limit: `at most 5 submissions per student in any 24 hours`."""
    count = assignment.daily_limit
    return f"at most {count} submission{'s' if count != 1 else ''} per student in any 24 hours"


def counted(assignment: Assignment) -> str:
    """Say which graded submission counts."""
    if assignment.score_policy == "best":
        return "the best score counts"
    return "the last graded submission counts"


def before_due(assignment: Assignment) -> str:
    """Say what a student sees of their results before the due date."""
    return BEFORE_DUE.get(assignment.before_due, assignment.before_due)


def tests(assignment: Assignment) -> str:
    """Say the assignment's suite: its version and tests, or that it is being generated."""
    counts = f"{assignment.public_tests} public and {assignment.private_tests} private tests"
    if assignment.suite_version == 0:
        return f"its suite of {counts} is being generated (submissions wait for it)"
    return f"suite version {assignment.suite_version}: {counts}"


def describe(assignment: Assignment, when: TimeText) -> str:
    """Return an assignment's dates and rules in one paragraph."""
    return (
        f"assignment {assignment.assignment_id} {assignment.name!r} ({assignment.profile} "
        f"profile): released {when(assignment.release_time_ms)}, due "
        f"{when(assignment.due_time_ms)}; late work {late_work(assignment, when)}; "
        f"{submissions_allowed(assignment)}; {counted(assignment)}; before the due date, "
        f"{before_due(assignment)}; {tests(assignment)}"
    )
