"""Grading jobs in the database: a job's row, from its upload to its stored report.

A job is stored `queued` before its upload is acknowledged, `running` (one more attempt) when a
worker takes it, and `done` or `error` with its results and HTML report; each write commits at
once, so a restart finds every job where it was.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from autograder.html import html_report
from autograder.results import GradeReport
from protocol.messages import JobStatus
from server.db.models import Assignment
from server.db.models import GradingJob as JobRow

_BATCH = 500
"""Ids asked of the database at once (an IN list stays well within every driver's limits)."""


def _now() -> datetime:
    return datetime.now(UTC)


Admission = Callable[[AsyncSession], Awaitable[None]]
"""A caller's last check of an upload, run in the transaction that stores the job's row,
before the row: a policy that counts rows (a course's daily limit) locks what it counts there
and raises to refuse, so the check and the insert are one step (server.courses.admission)."""


@dataclass(frozen=True)
class Queued:
    """A job to queue: its uploader (None: anonymous), the address it came from, whether it
    is a regrade (background work) and whether it is a course submission."""

    job_id: str
    owner: int | None
    address: str | None
    background: bool
    course: bool


@dataclass(frozen=True)
class Attempt:
    """One grading of a job: its profile, its attempt number, and its course assignment."""

    profile: str
    number: int
    assignment_id: int | None


class JobStore:
    """Reads and writes grading jobs; each call is one committed transaction."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    async def requeue_unfinished(self) -> list[Queued]:
        """Store every job left `queued` or `running` as `queued`; return them oldest first.

        A job that was running is graded again from the start.
        """
        async with self._sessions() as session:
            rows = await session.execute(
                select(*_QUEUED_COLUMNS)
                .where(JobRow.status.in_(("queued", "running")))
                .order_by(JobRow.created_at, JobRow.id)
            )
            unfinished = [_queued(row) for row in rows]
            pending = [job.job_id for job in unfinished]
            if pending:
                await session.execute(
                    update(JobRow).where(JobRow.id.in_(pending)).values(status="queued")
                )
                await session.commit()
        return unfinished

    async def add(self, row: JobRow, check: Admission | None = None) -> JobRow:
        """Store a new job's row (`new_row`); return it.

        `check` runs first in the transaction that stores the row (see `Admission`): what it
        raises is raised, and nothing is stored.
        """
        async with self._sessions() as session, session.begin():
            if check is not None:
                await check(session)
            session.add(row)
        return row

    @staticmethod
    def new_row(
        job_id: str,
        profile: str,
        files: list[str],
        player_id: int | None,
        assignment_id: int | None = None,
        member_id: int | None = None,
        address: str | None = None,
    ) -> JobRow:
        """Return a new job's row, `queued`, uploaded by `player_id` (None: anonymous), not
        stored (see `add`). A course submission names its assignment and the member who
        submitted it; `address` is the client address it was uploaded from."""
        return JobRow(
            id=job_id,
            profile=profile,
            status="queued",
            files=files,
            attempts=0,
            player_id=player_id,
            assignment_id=assignment_id,
            member_id=member_id,
            regrades=0,
            address=address,
        )

    async def existing(self, job_ids: Sequence[str]) -> set[str]:
        """Return those of `job_ids` that have a row."""
        found: set[str] = set()
        for start in range(0, len(job_ids), _BATCH):
            batch = job_ids[start : start + _BATCH]
            async with self._sessions() as session:
                rows = await session.scalars(select(JobRow.id).where(JobRow.id.in_(batch)))
                found.update(rows)
        return found

    async def get(self, job_id: str) -> JobRow | None:
        """Return the job's row; None if no job has this id."""
        async with self._sessions() as session:
            return await session.get(JobRow, job_id)

    async def start_attempt(self, job_id: str) -> Attempt | None:
        """Store the job `running` (one more attempt); return what the attempt grades.

        None, and nothing stored, when the job is gone or no longer waits to be graded (a
        restart stores every unfinished job `queued` again first).
        """
        async with self._sessions() as session:
            row = await session.get(JobRow, job_id)
            if row is None or row.status != "queued":
                return None
            row.status = "running"
            row.started_at = _now()
            row.attempts += 1
            await session.commit()
            return Attempt(row.profile, row.attempts, row.assignment_id)

    async def take_attempt(self, job_id: str) -> Attempt | None:
        """Store the job `running` (one more attempt) if it waits or was left running by a
        dead runner; return what the attempt grades. One conditional update: of two runners
        only one takes an attempt number (server.grading.shared runs one at a time anyway).

        None, and nothing stored, when the job is gone or finished.
        """
        async with self._sessions() as session:
            row = (
                await session.execute(
                    update(JobRow)
                    .where(JobRow.id == job_id, JobRow.status.in_(("queued", "running")))
                    .values(status="running", started_at=_now(), attempts=JobRow.attempts + 1)
                    .returning(JobRow.profile, JobRow.attempts, JobRow.assignment_id)
                )
            ).first()
            await session.commit()
        if row is None:
            return None
        profile, number, assignment_id = row
        return Attempt(profile, number, assignment_id)

    async def release_attempt(self, job_id: str, attempt: int) -> bool:
        """Store a job `queued` again if its `attempt` still runs (its runner is stopping)."""
        async with self._sessions() as session:
            result = await session.execute(
                update(JobRow)
                .where(JobRow.id == job_id, JobRow.status == "running", JobRow.attempts == attempt)
                .values(status="queued", started_at=None)
            )
            await session.commit()
        return bool(getattr(result, "rowcount", 0))

    async def is_current(self, job_id: str, attempt: int) -> bool:
        """Return whether the job is still `running` its `attempt` (no regrade since)."""
        async with self._sessions() as session:
            found = await session.scalar(
                select(JobRow.id).where(
                    JobRow.id == job_id, JobRow.status == "running", JobRow.attempts == attempt
                )
            )
        return found is not None

    async def requeue(self, job_ids: Sequence[str]) -> list[Queued]:
        """Store finished or running jobs `queued` again, their results cleared, one more
        regrade each; return those found, in the order given, as background work. An attempt
        still running is dropped when it ends (see `store_report`)."""
        if not job_ids:
            return []
        async with self._sessions() as session:
            rows = await session.execute(select(*_QUEUED_COLUMNS).where(JobRow.id.in_(job_ids)))
            by_id = {row.id: row for row in rows}
            owners = [
                replace(_queued(by_id[job_id]), background=True)
                for job_id in dict.fromkeys(job_ids)
                if job_id in by_id
            ]
            found = [job.job_id for job in owners]
            if found:
                await session.execute(
                    update(JobRow)
                    .where(JobRow.id.in_(found))
                    .values(
                        status="queued",
                        score=None,
                        max_score=None,
                        summary=None,
                        results=None,
                        report=None,
                        started_at=None,
                        finished_at=None,
                        regrades=JobRow.regrades + 1,
                    )
                )
                await session.commit()
        return owners

    async def course_of(self, assignment_id: int) -> int | None:
        """Return the course of an assignment (for the course job's address)."""
        async with self._sessions() as session:
            course_id: int | None = await session.scalar(
                select(Assignment.course_id).where(Assignment.id == assignment_id)
            )
            return course_id

    async def store_report(
        self, job_id: str, report: GradeReport, status: JobStatus, attempt: int
    ) -> None:
        """Store the job's final status, score, results and HTML report.

        Only while the job is still `running` its `attempt`: a job queued again meanwhile (a
        regrade) keeps waiting for its new grading.
        """
        async with self._sessions() as session:
            await session.execute(
                update(JobRow)
                .where(JobRow.id == job_id, JobRow.status == "running", JobRow.attempts == attempt)
                .values(
                    status=status,
                    score=report.score,
                    max_score=report.max_score,
                    summary=report.output,
                    results=json.dumps(report.to_json()),
                    report=html_report(report),
                    finished_at=_now(),
                )
            )
            await session.commit()


_QUEUED_COLUMNS = (
    JobRow.id,
    JobRow.player_id,
    JobRow.address,
    JobRow.regrades,
    JobRow.assignment_id,
)


def _queued(row: Any) -> Queued:
    """Return a row of `_QUEUED_COLUMNS` as the job to queue."""
    return Queued(
        job_id=row.id,
        owner=row.player_id,
        address=row.address,
        background=row.regrades > 0,
        course=row.assignment_id is not None,
    )
