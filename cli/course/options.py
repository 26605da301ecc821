"""The options that set an assignment's dates and policies (`assignment add` and `update`),
and the body fields they make."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

import typer

from cli.common import fail
from cli.course.common import parse_when

# The choices of the course bodies (protocol/courses.py), repeated so that `arena --help` does
# not import pydantic; tests/cli/test_course_cli.py checks that they agree.
AssignmentProfile = Literal["endgame", "agent"]
LatePolicy = Literal["hard", "penalty"]
ScorePolicy = Literal["best", "last"]
BeforeDue = Literal["public", "score", "full"]

ReleaseOpt = Annotated[
    str | None,
    typer.Option(
        "--release",
        help="When students first see it: ISO-8601 (2026-11-30T09:00+01:00; no zone = local "
        "time), or from now (+2d, +36h); default now.",
    ),
]
DueOpt = Annotated[
    str | None,
    typer.Option("--due", help="The due date: ISO-8601, or from now (+7d, +1w2d, -1d)."),
]
LatePolicyOpt = Annotated[
    LatePolicy | None,
    typer.Option(
        "--late-policy",
        help="hard: nothing after the due date; penalty: late work loses --penalty-per-day.",
    ),
]
PenaltyOpt = Annotated[
    float | None,
    typer.Option(
        "--penalty-per-day", help="Percent of the score lost per started day late (penalty)."
    ),
]
LateDaysOpt = Annotated[
    int | None,
    typer.Option("--late-days", help="Days after the due date still accepted (penalty), 0-30."),
]
DailyLimitOpt = Annotated[
    int | None,
    typer.Option("--daily-limit", help="Submissions per student in any 24 hours, 1-100."),
]
ScorePolicyOpt = Annotated[
    ScorePolicy | None,
    typer.Option("--score-policy", help="Which submission counts: the best, or the last graded."),
]
BeforeDueOpt = Annotated[
    BeforeDue | None,
    typer.Option(
        "--before-due",
        help="What students see before the due date: public (the public tests only), score "
        "(every test's score, private names and output hidden), full.",
    ),
]


def _when_option(option: str, text: str | None, now: datetime) -> str | None:
    """Return the date option's value as ISO-8601 with its zone for the server, or exit 2."""
    if text is None:
        return None
    try:
        return parse_when(text, now).isoformat()
    except ValueError as error:
        raise fail(f"{option}: {error}") from None


def policies(
    *,
    release: str | None,
    due: str | None,
    late_policy: LatePolicy | None,
    penalty: float | None,
    late_days: int | None,
    daily_limit: int | None,
    score_policy: ScorePolicy | None,
    before_due: BeforeDue | None,
) -> dict[str, Any]:
    """Return the policy fields given on the command line (`--release` and `--due` read from
    now); the server defaults the others.

    The options are named, not placed: several share a type, and a swap would pass mypy.
    """
    now = datetime.now(UTC)
    fields = {
        "release_at": _when_option("--release", release, now),
        "due_at": _when_option("--due", due, now),
        "late_policy": late_policy,
        "late_penalty_per_day": penalty,
        "late_days_max": late_days,
        "daily_limit": daily_limit,
        "score_policy": score_policy,
        "before_due": before_due,
    }
    return {key: value for key, value in fields.items() if value is not None}
