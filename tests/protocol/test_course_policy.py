"""An assignment's rules in words: the sentences the course pages and `arena course` show."""

from __future__ import annotations

from typing import Any

import pytest

from protocol.course_policy import (
    before_due,
    counted,
    describe,
    late_short,
    late_work,
    submissions_allowed,
)
from protocol.courses import Assignment

DAY_MS = 86_400_000
DUE_MS = 1_796_083_140_000


def assignment(**changes: Any) -> Assignment:
    fields: dict[str, Any] = {
        "assignment_id": 3,
        "course_id": 1,
        "name": "endgame",
        "profile": "endgame",
        "release_time_ms": DUE_MS - 7 * DAY_MS,
        "due_time_ms": DUE_MS,
        "late_policy": "hard",
        "late_penalty_per_day": 0.0,
        "late_days_max": 0,
        "last_accepted_time_ms": DUE_MS,
        "daily_limit": 10,
        "score_policy": "best",
        "before_due": "public",
        "suite_version": 1,
        "public_tests": 3,
        "private_tests": 10,
        "released": True,
    }
    return Assignment.model_validate(fields | changes)


def at(time_ms: int) -> str:
    return f"<{(time_ms - DUE_MS) // DAY_MS:+d}d>"


HARD = assignment()
PENALTY = assignment(
    late_policy="penalty",
    late_penalty_per_day=12.5,
    late_days_max=3,
    last_accepted_time_ms=DUE_MS + 3 * DAY_MS,
    daily_limit=1,
    score_policy="last",
    before_due="score",
    suite_version=0,
)
NO_LATE_DAYS = assignment(late_policy="penalty", late_penalty_per_day=10.0, before_due="full")


@pytest.mark.parametrize(
    ("rules", "late", "short"),
    [
        (HARD, "not accepted after the due date", "none accepted"),
        (
            PENALTY,
            "accepted until <+3d>, losing 12.5% of the score for each day (or part of one) late",
            "-12.5% a day, up to 3 days",
        ),
        (NO_LATE_DAYS, "not accepted after the due date", "none accepted"),
    ],
)
def test_late_work_is_said_in_full_and_in_a_table_s_few_words(
    rules: Assignment, late: str, short: str
) -> None:
    assert late_work(rules, at) == late
    assert late_short(rules) == short


def test_the_limit_the_counted_score_and_what_students_see_are_said_per_policy() -> None:
    assert submissions_allowed(HARD) == "at most 10 submissions per student in any 24 hours"
    assert submissions_allowed(PENALTY) == "at most 1 submission per student in any 24 hours"
    assert counted(HARD) == "the best score counts"
    assert counted(PENALTY) == "the last graded submission counts"
    assert before_due(HARD) == (
        "students see the public tests' results; the private tests' results come after the due date"
    )
    assert before_due(PENALTY) == (
        "students see their total score over every test; the private tests' names and "
        "explanations come after the due date"
    )
    assert before_due(NO_LATE_DAYS) == "students see every test's result and explanation at once"


def test_an_assignment_is_described_in_one_paragraph() -> None:
    assert describe(HARD, at) == (
        "assignment 3 'endgame' (endgame profile): released <-7d>, due <+0d>; late work not "
        "accepted after the due date; at most 10 submissions per student in any 24 hours; the "
        "best score counts; before the due date, students see the public tests' results; the "
        "private tests' results come after the due date; suite version 1: 3 public and 10 "
        "private tests"
    )
    assert describe(PENALTY, at) == (
        "assignment 3 'endgame' (endgame profile): released <-7d>, due <+0d>; late work "
        "accepted until <+3d>, losing 12.5% of the score for each day (or part of one) late; "
        "at most 1 submission per student in any 24 hours; the last graded submission counts; "
        "before the due date, students see their total score over every test; the private "
        "tests' names and explanations come after the due date; its suite of 3 public and 10 "
        "private tests is being generated (submissions wait for it)"
    )
