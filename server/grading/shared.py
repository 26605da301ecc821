"""Grading jobs in the shared queue (`ARENA_ROLE=server`): admission, order and places.

With several server processes, the waiting jobs are procrastinate jobs in PostgreSQL
(server.jobs), taken by `arena worker` processes; this module is the grading side of it.

- Order: procrastinate takes the highest priority first, then the oldest (the lowest id). A
  job's priority is minus its rank among its address's jobs (server.grading.queue: addresses
  in turn, then the players of an address, counted over the address's waiting and running
  rows), so the order is server.grading.queue's, arrival meaning the procrastinate job's id.
  procrastinate fixes a priority when a job is deferred; when an address queues a job, the
  ranks of its waiting jobs are counted again and their priorities updated in procrastinate's
  table (`rank`), under the advisory lock of admissions. Regrades (background) rank below
  every fresh upload (`BACKGROUND`).
- Limits: `grader_max_queued`, `grader_max_queued_per_player` and
  `grader_max_queued_per_address` count the rows stored `queued` in the database (every
  server's), checked and taken in one transaction under an advisory lock, so concurrent
  uploads to different servers cannot all pass.
- Places: a job's place is counted in procrastinate's table, in the order it takes jobs, with
  whose jobs are before it (`place`).
- Once: each deferred job carries the lock `grading:<id>`, so procrastinate runs one job of
  a grading at a time; the row's attempt number fences any stale run (server.grading.store).
- Nothing lost: a row stored `queued` or `running` with no job waiting or running for it (a
  server died between the row and the job; a worker stopped a grading) is queued again by
  `requeue_orphans`, which every worker runs every heartbeat.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

import procrastinate
from procrastinate.exceptions import AlreadyEnqueued
from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.db.models import GradingJob as JobRow
from server.grading.queue import Entry, Place, address_ranks
from server.grading.store import Admission, Queued

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
    """An upload was refused: the queue is full (`scope` "queue"), or the jobs waiting of its
    uploader ("player") or of its address ("address") are at their limit."""

    def __init__(self, scope: str) -> None:
        super().__init__(scope)
        self.scope = scope


def priority(rank: int, *, background: bool) -> int:
    """Return the procrastinate priority of a job of rank `rank` among its address's jobs."""
    return -(rank + (BACKGROUND if background else 0))


@dataclass(frozen=True)
class Waiting:
    """The jobs waiting in the shared queue: in all, of one player, and the fresh uploads
    from one address (course submissions not counted)."""

    total: int
    player: int
    address: int


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

_ME = text(
    """
    SELECT p.id, p.priority, g.player_id, g.address
      FROM procrastinate_jobs AS p JOIN grading_jobs AS g ON g.id = p.args->>'job_id'
     WHERE p.task_name = :task AND p.status = 'todo' AND p.args->>'job_id' = :job_id
     ORDER BY p.priority DESC, p.id LIMIT 1
    """
)

_AHEAD = text(
    """
    SELECT count(*),
           count(*) FILTER (WHERE CAST(:player AS integer) IS NOT NULL
                                  AND g.player_id = CAST(:player AS integer)),
           count(*) FILTER (WHERE (CAST(:player AS integer) IS NULL
                                   OR g.player_id IS DISTINCT FROM CAST(:player AS integer))
                                  AND g.id IS NOT NULL
                                  AND g.address IS NOT DISTINCT FROM CAST(:address AS text))
      FROM procrastinate_jobs AS other
      LEFT JOIN grading_jobs AS g ON g.id = other.args->>'job_id'
     WHERE other.task_name = :task AND other.status = 'todo'
       AND (other.priority > :priority OR (other.priority = :priority AND other.id < :id))
    """
)

_REPRIORITIZE = text(
    """
    UPDATE procrastinate_jobs AS p SET priority = v.priority
      FROM (SELECT unnest(CAST(:job_ids AS text[])) AS job_id,
                   unnest(CAST(:priorities AS integer[])) AS priority) AS v
     WHERE p.task_name = :task AND p.status = 'todo' AND p.args->>'job_id' = v.job_id
       AND p.priority <> v.priority
    """
)

_ORPHANS = text(
    """
    SELECT g.id, g.player_id, g.regrades, g.address FROM grading_jobs AS g
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

    async def waiting(self, player_id: int | None, address: str | None) -> Waiting:
        """Return how many jobs wait, in all, of player `player_id` (0 for None) and from
        `address` (fresh uploads other than course submissions)."""
        async with self._sessions() as session:
            return await _counts(session, player_id, address)

    async def admit(
        self,
        row: JobRow,
        *,
        max_queued: int,
        max_per_player: int,
        max_per_address: int,
        check: Admission | None = None,
    ) -> int:
        """Store the new `queued` row if the queue, its uploader's jobs and its address's
        (a course submission: not counted) are under their limits; return its rank among its
        address's jobs. Raises QueueFullError, storing nothing, when one is at its limit;
        `check` runs in the same transaction before the row (server.grading.store.Admission)."""
        async with self._sessions() as session:
            await _lock(session)
            counts = await _counts(session, row.player_id, row.address)
            if counts.total >= max_queued:
                raise QueueFullError("queue")
            if row.player_id is not None and counts.player >= max_per_player:
                raise QueueFullError("player")
            if row.assignment_id is None and counts.address >= max_per_address:
                raise QueueFullError("address")
            if check is not None:
                await check(session)
            session.add(row)
            await session.flush()
            ranks = await _ranks(session, row.address, background=False)
            await session.commit()
        return ranks.get(row.id, 0)

    async def defer(self, job_id: str, rank: int, *, background: bool = False) -> None:
        """Queue the grading of a stored job of rank `rank` among its address's jobs.

        A fresh job's grading is queued under its queueing lock: a worker that took the row
        for an orphan (`requeue_orphans`, between the row's commit and this call) has queued
        it already, and it is not queued twice.
        """
        deferrer = self._deferrer(
            job_id, priority(rank, background=background), queueing_lock=not background
        )
        with contextlib.suppress(AlreadyEnqueued):
            await deferrer.defer_async(job_id=job_id)

    async def rank(self, addresses: Iterable[tuple[str | None, bool]]) -> None:
        """Count again the ranks of the waiting jobs of each (address, background) and set
        their priorities (server.grading.queue); under the admissions' lock, so each counts
        every job admitted before it."""
        async with self._sessions() as session:
            await _lock(session)
            for address, background in set(addresses):
                ranks = await _ranks(session, address, background=background)
                if not ranks:
                    continue
                await session.execute(
                    _REPRIORITIZE,
                    {
                        "task": GRADE_TASK,
                        "job_ids": list(ranks),
                        "priorities": [priority(r, background=background) for r in ranks.values()],
                    },
                )
            await session.commit()

    async def defer_regrades(self, found: Sequence[Queued]) -> None:
        """Queue the regrades of jobs just stored `queued` again as background work, in the
        given order among each address's."""
        for job in found:
            await self.defer(job.job_id, BACKGROUND, background=True)
        await self.rank((job.address, True) for job in found)

    async def position(self, job_id: str) -> int | None:
        """Return the job's place in the shared queue, from 1; None when it waits for none."""
        async with self._sessions() as session:
            place = await session.scalar(_POSITION, {"task": GRADE_TASK, "job_id": job_id})
        return None if place is None else int(place)

    async def place(self, job_id: str) -> Place | None:
        """Return where the job stands in the shared queue and whose jobs are before it
        (server.grading.queue.Place); None when it waits for none."""
        async with self._sessions() as session:
            me = (await session.execute(_ME, {"task": GRADE_TASK, "job_id": job_id})).first()
            if me is None:
                return None
            ahead, own, address = (
                await session.execute(
                    _AHEAD,
                    {
                        "task": GRADE_TASK,
                        "priority": me.priority,
                        "id": me.id,
                        "player": me.player_id,
                        "address": me.address,
                    },
                )
            ).one()
        return Place(ahead + 1, own, address, ahead - own - address)

    async def requeue_orphans(self) -> int:
        """Queue again every unfinished job that has no grading waiting or running; return
        how many. Two workers doing it at once queue each once (a queueing lock)."""
        async with self._sessions() as session:
            orphans = (await session.execute(_ORPHANS, {"task": GRADE_TASK})).all()
        count = 0
        for job_id, _, regrades, _ in orphans:
            try:
                await self._deferrer(
                    job_id, priority(0, background=regrades > 0), queueing_lock=True
                ).defer_async(job_id=job_id)
            except AlreadyEnqueued:
                continue
            count += 1
            log.warning("grading job %s had no queued grading: queued again", job_id)
        if orphans:
            await self.rank((address, regrades > 0) for _, _, regrades, address in orphans)
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


async def _lock(session: AsyncSession) -> None:
    """Take the admissions' advisory lock until the session's transaction ends."""
    await session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _ADMIT_LOCK})


async def _counts(session: AsyncSession, player_id: int | None, address: str | None) -> Waiting:
    queued = select(func.count()).select_from(JobRow).where(JobRow.status == "queued")
    total = await session.scalar(queued)
    mine = 0
    if player_id is not None:
        mine = await session.scalar(queued.where(JobRow.player_id == player_id)) or 0
    from_address = await session.scalar(
        queued.where(
            JobRow.address.is_not_distinct_from(address),
            JobRow.assignment_id.is_(None),
            JobRow.regrades == 0,
        )
    )
    return Waiting(total or 0, mine, from_address or 0)


async def _ranks(session: AsyncSession, address: str | None, *, background: bool) -> dict[str, int]:
    """Return the rank of each waiting job from `address` in a tier (server.grading.queue),
    counted over its waiting and running rows; arrival is the time it was stored."""
    rows = await session.execute(
        select(JobRow.id, JobRow.player_id, JobRow.status, JobRow.created_at).where(
            JobRow.status.in_(("queued", "running")),
            JobRow.address.is_not_distinct_from(address),
            JobRow.regrades > 0 if background else JobRow.regrades == 0,
        )
    )
    return address_ranks(
        Entry(job_id, owner, status == "running", (created_at, job_id))
        for job_id, owner, status, created_at in rows
    )
