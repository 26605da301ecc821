"""The course computations without a server: late days and penalties, the counted submission,
the report a student sees before the due date, the gradebook's CSV and the roster CSV; and a
regrade's bookkeeping in the jobs' rows."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from autograder.results import GradeReport, TestResult
from protocol.errors import ErrorCode, ProtocolError
from server.courses import grades
from server.courses.roster import parse_roster
from server.db.engine import create_engine, migrate, session_factory
from server.db.models import Assignment, GradingJob
from server.grading.store import JobStore

DUE = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def assignment(**fields: Any) -> Assignment:
    values: dict[str, Any] = {
        "id": 1,
        "course_id": 1,
        "name": "endgame",
        "profile": "endgame",
        "release_at": DUE - timedelta(days=7),
        "due_at": DUE,
        "late_policy": "penalty",
        "late_penalty_per_day": 10.0,
        "late_days_max": 3,
        "daily_limit": 5,
        "score_policy": "best",
        "before_due": "public",
        "suite_version": 1,
        "public_tests": 1,
        "private_tests": 2,
    }
    values.update(fields)
    return Assignment(**values)


REPORT = GradeReport(
    profile="endgame",
    tests=[
        TestResult("example 1", 1.0, 1.0, "solved"),
        TestResult("puzzle 1", 0.5, 1.0, "one ply too long", "after_published"),
        TestResult("puzzle 2", 1.0, 1.0, "solved", "after_published"),
    ],
    output="2 of 3 solved",
)


def job(job_id: str, submitted: datetime, score: float | None, status: str = "done") -> GradingJob:
    graded = status in ("done", "error")
    return GradingJob(
        id=job_id,
        profile="endgame",
        status=status,
        files=["checkers.py"],
        score=score if graded else None,
        max_score=3.0 if status == "done" else (0.0 if graded else None),
        summary="2 of 3 solved" if graded else None,
        results=json.dumps(REPORT.to_json()) if status == "done" else None,
        created_at=submitted,
        regrades=0,
    )


@pytest.mark.parametrize(
    ("late", "days"),
    [
        (timedelta(0), 0),
        (-timedelta(hours=5), 0),
        (timedelta(seconds=1), 1),
        (timedelta(hours=24), 1),
        (timedelta(hours=24, seconds=1), 2),
        (timedelta(days=2, hours=3), 3),
    ],
)
def test_each_started_day_late_counts(late: timedelta, days: int) -> None:
    assert grades.days_late(DUE + late, DUE) == days


def test_the_penalty_is_per_day_and_never_below_zero() -> None:
    penalty = assignment(late_penalty_per_day=30.0)
    assert grades.final_score(10.0, penalty, 0) == 10.0
    assert grades.final_score(10.0, penalty, 2) == pytest.approx(4.0)
    assert grades.final_score(10.0, penalty, 4) == 0.0
    # A naive time from SQLite is UTC.
    assert grades.days_late(DUE.replace(tzinfo=None) + timedelta(hours=1), DUE) == 1
    assert grades.last_accepted(penalty) == DUE + timedelta(days=3)
    assert grades.last_accepted(assignment(late_policy="hard")) == DUE


def test_before_the_due_date_a_student_sees_what_before_due_says() -> None:
    public = grades.filtered_report(REPORT, "public", DUE)
    assert [t.name for t in public.tests] == ["example 1"]
    assert (public.score, public.max_score) == (1.0, 1.0)
    assert "2 private tests: results after the due date (2026-12-01 12:00 UTC)" in public.output
    score = grades.filtered_report(REPORT, "score", DUE)
    assert [t.name for t in score.tests] == ["example 1", "private test 1", "private test 2"]
    assert (score.score, score.max_score) == (2.5, 3.0)
    assert "one ply too long" not in json.dumps(score.to_json())
    assert grades.filtered_report(REPORT, "full", DUE) is REPORT
    row = assignment()
    assert grades.is_filtered(row, is_staff=False, now=DUE - timedelta(seconds=1))
    assert not grades.is_filtered(row, is_staff=True, now=DUE - timedelta(seconds=1))
    assert not grades.is_filtered(row, is_staff=False, now=DUE)
    assert not grades.is_filtered(assignment(before_due="full"), False, DUE - timedelta(days=1))
    shown = grades.shown(job("a", DUE - timedelta(days=1), 2.5), row, filtered=True)
    assert (shown.score, shown.max_score, shown.hidden_tests) == (1.0, 1.0, 2)
    assert shown.summary is not None and "2 of 3" not in shown.summary


def test_best_or_last_counts_failed_gradings_as_zero_and_ignores_waiting_ones() -> None:
    jobs = [
        job("early", DUE - timedelta(days=2), 2.0),
        job("best", DUE - timedelta(days=1), 3.0),
        job("late", DUE + timedelta(hours=30), 3.0),  # 2 days late: 3 * 0.8
        job("failed", DUE + timedelta(hours=31), 0.0, status="error"),
        job("waiting", DUE + timedelta(hours=32), None, status="queued"),
    ]
    row = assignment()
    scores = {j.id: grades.shown(j, row, filtered=False) for j in jobs}
    best = grades.counted(jobs, row, scores)
    assert best.job is not None and best.job.id == "best" and best.score == 3.0
    assert (best.attempts, best.days_late, best.max_score) == (5, 0, 3.0)
    assert best.last_submitted == DUE + timedelta(hours=32)
    last = grades.counted(jobs, assignment(score_policy="last"), scores)
    assert last.job is not None and last.job.id == "failed" and last.score == 0.0
    assert last.max_score == 3.0 and last.days_late == 2
    late = grades.counted(jobs[:3], assignment(score_policy="last"), scores)
    assert late.score == pytest.approx(2.4) and late.days_late == 2
    none = grades.counted(jobs[4:], row, scores)
    assert none.job is None and none.score is None and none.attempts == 1


def test_the_gradebook_csv_has_the_lms_columns_and_no_formulas() -> None:
    text = grades.gradebook_csv(
        [
            grades.CsvRow("s1", "=HYPERLINK(1)", "a@b.c", 2.4, 3.0, 2, 3, DUE),
            grades.CsvRow("s2", "Bob", "", None, None, 0, 0, None),
        ]
    )
    lines = list(csv.reader(io.StringIO(text)))
    assert lines == [
        list(grades.CSV_COLUMNS),
        ["s1", "'=HYPERLINK(1)", "a@b.c", "2.4", "3", "true", "2", "3", "2026-12-01T12:00:00Z"],
        ["s2", "Bob", "", "", "", "false", "0", "0", ""],
    ]


def test_a_roster_csv_is_read_or_refused_naming_line_and_column() -> None:
    rows = parse_roster(
        "\ufeffstudent_id,name,email,role\r\ns1,Ada,ada@uni.edu,\r\n\r\nt1,Tom,,TA\r\n".encode()
    )
    assert [(r.student_id, r.name, r.email, r.role) for r in rows] == [
        ("s1", "Ada", "ada@uni.edu", "student"),
        ("t1", "Tom", "", "ta"),
    ]
    assert [r.student_id for r in parse_roster(b"s1,Ada,a@b.c\n")] == ["s1"]
    cases = [
        (b"s1,Ada\n", "line 1", None),
        (b"id,name,email\ns1,Ada,ada\n", "line 2, column email", "email"),
        (b"s1,Ada,,\ns1,Bob,,\n", "line 2, column student_id", "student_id"),
        (b"s1,Ada,,teacher\n", "line 1, column role", "role"),
        (b"s1,Ada,,\n,Bob,,\n", "line 2, column student_id", "student_id"),
        (b"s1,Ada,,\ns2,\xff,,\n", "line 2", None),
        (b"student_id,name,email\n", "line 1", None),
        (("x" * 65 + ",A,,\n").encode(), "line 1, column student_id", "student_id"),
    ]
    for data, where, column in cases:
        with pytest.raises(ProtocolError) as refused:
            parse_roster(data)
        assert refused.value.code is ErrorCode.BAD_ROSTER
        assert f"roster {where}:" in refused.value.message, (data, refused.value.message)
        assert refused.value.details.get("column") == column


async def test_a_stale_grading_never_overwrites_a_regrade(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}")
    await migrate(engine)
    store = JobStore(session_factory(engine))
    try:
        await store.add(store.new_row("j1", "endgame", ["checkers.py"], None))
        first = await store.start_attempt("j1")
        assert first is not None and first.number == 1
        assert await store.start_attempt("j1") is None  # running: never started twice
        assert [job.job_id for job in await store.requeue(["j1", "not-a-job"])] == ["j1"]
        # The first grading ends after the regrade queued the job again: it is dropped.
        await store.store_report("j1", REPORT, "done", first.number)
        row = await store.get("j1")
        assert row is not None and row.status == "queued" and row.results is None
        assert row.regrades == 1
        second = await store.start_attempt("j1")
        assert second is not None and second.number == 2
        await store.store_report("j1", REPORT, "done", second.number)
        row = await store.get("j1")
        assert row is not None and row.status == "done" and row.score == REPORT.score
    finally:
        await engine.dispose()
