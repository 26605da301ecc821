"""Grading jobs in the database: a job's row, from its upload to its stored report.

A job is stored `queued` before its upload is acknowledged, `running` (one more attempt) when a
worker takes it, and `done` or `error` with its results and HTML report; each write commits at
once, so a restart finds every job where it was.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from grader.html import html_report
from grader.results import GradeReport
from protocol.messages import JobStatus
from server.db.models import GradingJob as JobRow


def _now() -> datetime:
    return datetime.now(UTC)


class JobStore:
    """Reads and writes grading jobs; each call is one committed transaction."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    async def requeue_unfinished(self) -> list[tuple[str, int | None]]:
        """Store every job left `queued` or `running` as `queued`; return them oldest first,
        each as (job id, uploader's player id or None).

        A job that was running is graded again from the start.
        """
        async with self._sessions() as session:
            rows = await session.execute(
                select(JobRow.id, JobRow.player_id)
                .where(JobRow.status.in_(("queued", "running")))
                .order_by(JobRow.created_at, JobRow.id)
            )
            unfinished = [(job_id, player_id) for job_id, player_id in rows]
            pending = [job_id for job_id, _ in unfinished]
            if pending:
                await session.execute(
                    update(JobRow).where(JobRow.id.in_(pending)).values(status="queued")
                )
                await session.commit()
        return unfinished

    async def add(
        self, job_id: str, profile: str, files: list[str], player_id: int | None
    ) -> JobRow:
        """Store a new job, `queued`, uploaded by `player_id` (None: anonymous); return its row."""
        row = JobRow(
            id=job_id,
            profile=profile,
            status="queued",
            files=files,
            attempts=0,
            player_id=player_id,
        )
        async with self._sessions() as session:
            session.add(row)
            await session.commit()
        return row

    async def get(self, job_id: str) -> JobRow | None:
        """Return the job's row; None if no job has this id."""
        async with self._sessions() as session:
            return await session.get(JobRow, job_id)

    async def start_attempt(self, job_id: str) -> str | None:
        """Store the job `running` (one more attempt); return its profile.

        None, and nothing stored, when the job is gone or no longer waits to be graded.
        """
        async with self._sessions() as session:
            row = await session.get(JobRow, job_id)
            if row is None or row.status not in ("queued", "running"):
                return None
            row.status = "running"
            row.started_at = _now()
            row.attempts += 1
            await session.commit()
            return row.profile

    async def store_report(self, job_id: str, report: GradeReport, status: JobStatus) -> None:
        """Store the job's final status, score, results and HTML report."""
        async with self._sessions() as session:
            await session.execute(
                update(JobRow)
                .where(JobRow.id == job_id)
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
