"""Grades computed when read: late days, penalties, the counted submission, what a student
sees before the due date (the assignment's `before_due` as a autograder.visibility reader), and the
gradebook's CSV.

Nothing here is stored: a change of an assignment's policy re-computes every score at the next
read. Pure functions of the rows and the time given.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

from autograder.results import GradeReport
from autograder.visibility import OWNER, Reader, is_private, shows_times, view
from server.db.models import Assignment, GradingJob

DAY: Final = timedelta(days=1)
WINDOW: Final = timedelta(hours=24)
"""The daily limit's rolling window."""
GRADED: Final = ("done", "error")
CSV_COLUMNS: Final = (
    "student_id",
    "name",
    "email",
    "score",
    "max_score",
    "late",
    "days_late",
    "attempts",
    "submitted_at",
)
_FORMULA_STARTS: Final = ("=", "+", "-", "@", "\t", "\r")


def aware(moment: datetime) -> datetime:
    """Return a stored time with its UTC zone (SQLite hands back naive UTC times)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def last_accepted(assignment: Assignment) -> datetime:
    """Return the last moment a student's submission is accepted (the due date, or the due
    date plus `late_days_max` days under the penalty policy)."""
    due = aware(assignment.due_at)
    if assignment.late_policy == "penalty":
        return due + assignment.late_days_max * DAY
    return due


def days_late(submitted: datetime, due: datetime) -> int:
    """Return the days late, each started day counted: ceil((submitted - due) / 24 h), or 0."""
    late = aware(submitted) - aware(due)
    if late <= timedelta(0):
        return 0
    return math.ceil(late / DAY)


def final_score(raw: float, assignment: Assignment, late_days: int) -> float:
    """Return `raw` less the late penalty: raw * max(0, 1 - per_day / 100 * days) (penalty
    policy); a hard policy takes no late submission, so it has none."""
    if late_days == 0 or assignment.late_policy != "penalty":
        return raw
    factor = max(0.0, 1.0 - assignment.late_penalty_per_day / 100.0 * late_days)
    return round(raw * factor, 4)


def is_filtered(assignment: Assignment, is_staff: bool, now: datetime) -> bool:
    """Return whether a reader sees filtered results: a student, before the due date, under a
    `before_due` other than `full`."""
    return not is_staff and now < aware(assignment.due_at) and assignment.before_due != "full"


def before_due_reader(before_due: str, due: datetime) -> Reader:
    """Return the reader a student is before the due date under `before_due`.

    `public`: the private tests left out, the summary saying how many wait for the due date;
    `score`: every test's points, each private test as its outcome (its points and reasons,
    renamed "private test N"); `full`: everything.
    """
    if before_due == "full":
        return OWNER
    when = f"after the due date ({due.astimezone(UTC):%Y-%m-%d %H:%M} UTC)"
    return Reader(hold="omit" if before_due == "public" else "outcome", until=when)


def filtered_report(report: GradeReport, before_due: str, due: datetime) -> GradeReport:
    """Return what a student sees of `report` before the due date under `before_due`."""
    return view(report, before_due_reader(before_due, due))


@dataclass(frozen=True)
class Shown:
    """A submission's scores as one reader may see them, and whether its times show."""

    score: float | None
    max_score: float | None
    final_score: float | None
    days_late: int
    filtered: bool
    hidden_tests: int
    summary: str | None
    times: bool = True


def shown(job: GradingJob, assignment: Assignment, filtered: bool) -> Shown:
    """Return `job`'s scores as seen by a reader (`filtered`: as `before_due` says).

    Under `public` only the visible tests count, under `score` every test counts but the
    summary names none; nothing before the job is graded. A filtered reader sees the job's
    start and finish times only once it is graded with nothing held back
    (autograder.visibility.shows_times).
    """
    late_days = days_late(job.created_at, assignment.due_at)
    seen = before_due_reader(assignment.before_due, aware(assignment.due_at)) if filtered else OWNER
    report = None
    if not seen.full and job.status in GRADED and job.results is not None:
        report = GradeReport.from_json(json.loads(job.results), job.profile)
    times = shows_times(seen, report)
    if job.status not in GRADED or job.score is None:
        return Shown(None, None, None, late_days, filtered, 0, None, times)
    if report is None:
        raw, top, summary, hidden = job.score, job.max_score or 0.0, job.summary, 0
    else:
        held = view(report, seen)
        raw, top, summary = held.score, held.max_score, held.output
        hidden = sum(1 for test in report.tests if is_private(test))
    raw = round(raw, 4)
    return Shown(
        raw,
        round(top, 4),
        final_score(raw, assignment, late_days),
        late_days,
        filtered,
        hidden,
        summary,
        times,
    )


@dataclass(frozen=True)
class Counted:
    """A student's standing: the submission that counts (best or last graded) and attempts."""

    job: GradingJob | None
    score: float | None
    max_score: float | None
    days_late: int
    attempts: int
    last_submitted: datetime | None


def counted(
    jobs: Sequence[GradingJob], assignment: Assignment, scores: dict[str, Shown]
) -> Counted:
    """Return which of one student's `jobs` counts, per the assignment's score policy.

    `scores` holds each graded job's scores as the reader sees them. `best`: the highest
    final score (the earliest of equals); `last`: the latest graded. An `error` job is graded
    with 0; queued and running ones are ignored.
    """
    graded = [job for job in jobs if job.status in GRADED and job.id in scores]
    last_submitted = max((aware(job.created_at) for job in jobs), default=None)
    if not graded:
        return Counted(None, None, None, 0, len(jobs), last_submitted)
    by_time = sorted(graded, key=lambda job: (aware(job.created_at), job.id))
    if assignment.score_policy == "last":
        chosen = by_time[-1]
    else:
        chosen = by_time[0]
        for job in by_time[1:]:
            if (scores[job.id].final_score or 0.0) > (scores[chosen.id].final_score or 0.0):
                chosen = job
    view = scores[chosen.id]
    top = view.max_score
    if not top:
        # A failed grading has no points to offer: the student's other gradings say the most.
        top = max((scores[job.id].max_score or 0.0 for job in graded), default=0.0) or None
    return Counted(chosen, view.final_score or 0.0, top, view.days_late, len(jobs), last_submitted)


def csv_cell(value: str) -> str:
    """Return `value` safe in a spreadsheet: a leading formula character is quoted away."""
    return "'" + value if value.startswith(_FORMULA_STARTS) else value


@dataclass(frozen=True)
class CsvRow:
    """One gradebook line."""

    student_id: str
    name: str
    email: str
    score: float | None
    max_score: float | None
    days_late: int
    attempts: int
    submitted_at: datetime | None


def gradebook_csv(rows: Sequence[CsvRow]) -> str:
    """Return the gradebook as CSV with `CSV_COLUMNS`: late is `true`/`false`, a missing score
    is empty, `submitted_at` is the counted submission's time, ISO-8601 in UTC."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        writer.writerow(
            [
                csv_cell(row.student_id),
                csv_cell(row.name),
                csv_cell(row.email),
                "" if row.score is None else f"{row.score:g}",
                "" if row.max_score is None else f"{row.max_score:g}",
                "true" if row.days_late else "false",
                row.days_late,
                row.attempts,
                ""
                if row.submitted_at is None
                else aware(row.submitted_at).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            ]
        )
    return out.getvalue()
