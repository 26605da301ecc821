"""Grading jobs in the shared queue (`ARENA_ROLE=server`): admission, order and places.

With several server processes, the waiting jobs are procrastinate jobs in PostgreSQL
(server.jobs), taken by `arena worker` processes; this module is the grading side of it.

- Order: procrastinate takes the highest priority first, then the oldest. A job's priority
  is minus its rank in its uploader's lane when it is queued (how many of that uploader's
  jobs wait before it in its tier), so the uploaders take turns: every uploader's first
  waiting job goes before anyone's second. Regrades (background) rank below every fresh
  upload (`BACKGROUND`). It is server.grading.queue's round robin with one difference: a
  rank is fixed when the job is queued, so an uploader arriving while another's lane is half
  served is served before that lane's next job rather than at the end of the turn.
- Limits: `grader_max_queued` and `grader_max_queued_per_player` count the rows stored
  `queued` in the database (every server's), checked and taken in one transaction under an
  advisory lock, so concurrent uploads to different servers cannot all pass.
- Places: a job's place is counted in procrastinate's table, in the order it takes jobs.
- Once: each deferred job carries the lock `grading:<id>`, so procrastinate runs one job of
  a grading at a time; the row's attempt number fences any stale run (server.grading.store).
- Nothing lost: a row stored `queued` or `running` with no job waiting or running for it (a
  server died between the row and the job; a worker stopped a grading) is queued again by
  `requeue_orphans`, which every worker runs every heartbeat.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from typing import Final

import procrastinate
from procrastinate.exceptions import AlreadyEnqueued
from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.db.models import GradingJob as JobRow
from server.grading.store import Admission

log = logging.getLogger(__name__)

GRADE_TASK: Final = "arena.grade"
"""The grading task's name (server.jobs.grading registers it in workers)."""
GRADING_QUEUE: Final = "grading"
"""The procrastinate queue of grading jobs."""
BACKGROUND: Final = 1_000_000
"""How far below every fresh upload's priority a regrade's starts."""
_ADMIT_LOCK: Final = 0x41524E03
"""The advisory lock held while an upload's place is checked and taken."""


class QueueFullError(Exception):
    """An upload was refused: the queue is full (`per_player` False) or its uploader's lane."""

    def __init__(self, per_player: bool) -> None:
        super().__init__("per player" if per_player else "queue")
        self.per_player = per_player


def priority(rank: int, *, background: bool) -> int:
    """Return the procrastinate priority of a job `rank` places into its uploader's lane."""
    return -(rank + (BACKGROUND if background else 0))


_POSITION = text(
    """
    WITH me AS (
        SELECT id, priority FROM procrastinate_jobs
         WHERE task_name = :task AND status = 'todo' AND args->>'job_id' = :job_id
         ORDER BY priority DESC, id LIMIT 1
    )
    SELECT 1 + (
        SELECT count(*) FROM procrastinate_jobs AS other
         WHERE other.task_name = :task AND other.status = 'todo'
           AND (other.priority > me.priority
                OR (other.priority = me.priority AND other.id < me.id))
    ) FROM me
    """
)

_ORPHANS = text(
    """
    SELECT g.id, g.player_id, g.regrades FROM grading_jobs AS g
     WHERE g.status IN ('queued', 'running')
       AND NOT EXISTS (
           SELECT 1 FROM procrastinate_jobs AS p
            WHERE p.task_name = :task AND p.status IN ('todo', 'doing')
              AND p.args->>'job_id' = g.id
       )
     ORDER BY g.created_at, g.id
    """
)


class SharedQueue:
    """The grading jobs of the shared queue: admitted, deferred and placed."""

    def __init__(self, app: procrastinate.App, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._app = app
        self._sessions = sessions

    async def waiting(self, player_id: int | None) -> tuple[int, int]:
        """Return how many jobs wait, in all, and of player `player_id` (0 for None)."""
        async with self._sessions() as session:
            return await _counts(session, player_id)

    async def admit(
        self,
        row: JobRow,
        *,
        max_queued: int,
        max_per_player: int,
        check: Admission | None = None,
    ) -> int:
        """Store the new `queued` row if the queue and its uploader's lane have room; return
        its rank in the lane. Raises QueueFullError, storing nothing, when they have none;
        `check` runs in the same transaction before the row (server.grading.store.Admission)."""
        async with self._sessions() as session:
            await session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _ADMIT_LOCK})
            total, mine = await _counts(session, row.player_id)
            if total >= max_queued:
                raise QueueFullError(per_player=False)
            if row.player_id is not None and mine >= max_per_player:
                raise QueueFullError(per_player=True)
            if check is not None:
                await check(session)
            rank = await _lane(session, row.player_id, background=False)
            session.add(row)
            await session.commit()
        return rank

    async def defer(self, job_id: str, rank: int, *, background: bool = False) -> None:
        """Queue the grading of a stored job, `rank` places into its uploader's lane."""
        await self._deferrer(job_id, priority(rank, background=background)).defer_async(
            job_id=job_id
        )

    async def defer_regrades(self, found: Sequence[tuple[str, int | None]]) -> None:
        """Queue the regrades of jobs just stored `queued` again (job id, uploader) as
        background work, each uploader's in the given order behind its waiting regrades."""
        regraded = {job_id for job_id, _ in found}
        ahead: Counter[int | None] = Counter()
        async with self._sessions() as session:
            for owner in {owner for _, owner in found}:
                ahead[owner] = await _lane(session, owner, background=True, exclude=regraded)
        for job_id, owner in found:
            await self.defer(job_id, ahead[owner], background=True)
            ahead[owner] += 1

    async def position(self, job_id: str) -> int | None:
        """Return the job's place in the shared queue, from 1; None when it waits for none."""
        async with self._sessions() as session:
            place = await session.scalar(_POSITION, {"task": GRADE_TASK, "job_id": job_id})
        return None if place is None else int(place)

    async def requeue_orphans(self) -> int:
        """Queue again every unfinished job that has no grading waiting or running; return
        how many. Two workers doing it at once queue each once (a queueing lock)."""
        async with self._sessions() as session:
            orphans = (await session.execute(_ORPHANS, {"task": GRADE_TASK})).all()
            ranks = [
                await _lane(session, owner, background=regrades > 0, exclude={job_id})
                for job_id, owner, regrades in orphans
            ]
        count = 0
        for (job_id, _, regrades), rank in zip(orphans, ranks, strict=True):
            try:
                await self._deferrer(
                    job_id, priority(rank, background=regrades > 0), queueing_lock=True
                ).defer_async(job_id=job_id)
            except AlreadyEnqueued:
                continue
            count += 1
            log.warning("grading job %s had no queued grading: queued again", job_id)
        return count

    def _deferrer(
        self, job_id: str, job_priority: int, *, queueing_lock: bool = False
    ) -> procrastinate.jobs.JobDeferrer:
        lock = f"grading:{job_id}"
        return self._app.configure_task(
            GRADE_TASK,
            queue=GRADING_QUEUE,
            priority=job_priority,
            lock=lock,
            queueing_lock=lock if queueing_lock else None,
        )


async def _counts(session: AsyncSession, player_id: int | None) -> tuple[int, int]:
    total = await session.scalar(
        select(func.count()).select_from(JobRow).where(JobRow.status == "queued")
    )
    mine = 0
    if player_id is not None:
        mine = (
            await session.scalar(
                select(func.count())
                .select_from(JobRow)
                .where(JobRow.status == "queued", JobRow.player_id == player_id)
            )
            or 0
        )
    return total or 0, mine


async def _lane(
    session: AsyncSession,
    owner: int | None,
    *,
    background: bool,
    exclude: set[str] | frozenset[str] = frozenset(),
) -> int:
    """Return how many jobs of `owner` (None: anonymous uploads) wait in a tier."""
    query = (
        select(func.count())
        .select_from(JobRow)
        .where(
            JobRow.status == "queued",
            JobRow.player_id.is_(None) if owner is None else JobRow.player_id == owner,
            JobRow.regrades > 0 if background else JobRow.regrades == 0,
        )
    )
    if exclude:
        query = query.where(JobRow.id.not_in(exclude))
    return await session.scalar(query) or 0
