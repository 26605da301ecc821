"""The processes of a cluster: each one's row, its heartbeat, and the reaper of dead ones' matches.

Every clustered `arena serve` process has an id (server.cluster.bus.new_process_id: host, pid
and a random part, fresh at every start; the bus addresses the process by the same id) and a
row in `arena_processes` whose `heartbeat_at` it renews every `heartbeat_ms` with PostgreSQL's
now(): one UPDATE per process, whatever its number of matches. A process whose heartbeat is
older than `lease_ttl_ms` is dead (server.cluster.leases).

`Membership` runs two tasks in each process:

- the heartbeat: renews the row; when it could not renew it for `lease_ttl_ms` (the database
  unreachable, the process stalled), the process stops acting as the owner of its matches (it
  drops them from memory: others may have claimed them meanwhile, and the fence refuses its
  writes anyway). A row found deleted (the process was taken for dead long ago) is inserted
  again, after dropping every match.
- the reaper, every `heartbeat_ms` too: the unfinished matches without an owner or with a dead
  one are shared among the live processes (each takes those whose id hashes to its rank among
  the live ids, `leases.share`, plus any still unclaimed since its previous round, so none is
  stranded when two processes disagree for a moment on who lives) and taken over: claimed
  (epoch + 1), rebuilt from the database, ticked, house bots scheduled. Rows of processes dead
  for long (`FORGET_AFTER`) that own no unfinished match are deleted. The matches this process
  owns in the database but does not hold (dropped with its lease, then nobody claimed them
  before its heartbeat came back; or dropped after a failed write) are resumed after a drop
  and every FORGET_EVERY rounds. Then each of `also` is awaited: others' owned things taken
  over the same way (the tournaments' runners, server.tournaments.owners), within the same
  bound.

Takeover bound: a killed process's matches are played again within `lease_ttl_ms` (until it
counts as dead) plus `heartbeat_ms` (the next reaper round), plus the time to rebuild them; one
more `heartbeat_ms` if the live processes disagree on who lives. A call that reaches a dead
owner first claims the match itself once the lease has expired (server.cluster.routing).

A clean stop releases the process's matches (owner NULL: claimed at once by the others'
reapers, no time charged, as a restart) and deletes its row.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from typing import Protocol

from sqlalchemy import delete, exists, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.cluster.leases import Leases, share
from server.db.models import ArenaProcess, Match
from server.matches.store import UNFINISHED

log = logging.getLogger(__name__)

FORGET_AFTER = timedelta(minutes=10)
"""How long a dead process's row is kept (while it owns no unfinished match)."""

FORGET_EVERY = 30
"""Reaper rounds between two deletions of long-dead processes' rows."""


class ProcessTable:
    """This process's row of `arena_processes`, and who else is alive."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        process_id: str,
        role: str,
        lease_ttl_ms: int,
    ) -> None:
        self._sessions = sessions
        self.process_id = process_id
        self._role = role
        self._ttl = timedelta(milliseconds=lease_ttl_ms)

    async def register(self) -> None:
        """Insert this process's row, its heartbeat now."""
        async with self._sessions() as session, session.begin():
            await session.execute(
                insert(ArenaProcess).values(
                    id=self.process_id,
                    role=self._role,
                    host=socket.gethostname()[:255],
                    pid=os.getpid(),
                    started_at=func.now(),
                    heartbeat_at=func.now(),
                )
            )

    async def renew(self) -> bool:
        """Renew the heartbeat; return False when the row was gone (it is inserted again)."""
        async with self._sessions() as session, session.begin():
            renewed = await session.execute(
                update(ArenaProcess)
                .where(ArenaProcess.id == self.process_id)
                .values(heartbeat_at=func.now())
            )
        if renewed.rowcount == 1:  # type: ignore[attr-defined]
            return True
        await self.register()
        return False

    async def live_ids(self) -> Sequence[str]:
        """Return the ids of the live processes (this one included once it has renewed)."""
        async with self._sessions() as session:
            return (
                await session.scalars(
                    select(ArenaProcess.id)
                    .where(ArenaProcess.heartbeat_at > func.now() - self._ttl)
                    .order_by(ArenaProcess.id)
                )
            ).all()

    async def forget_dead(self) -> int:
        """Delete the rows of processes dead for FORGET_AFTER that own no unfinished match."""
        owns = exists().where(Match.owner_id == ArenaProcess.id, Match.status.in_(UNFINISHED))
        async with self._sessions() as session, session.begin():
            deleted = await session.execute(
                delete(ArenaProcess).where(
                    ArenaProcess.heartbeat_at < func.now() - FORGET_AFTER, ~owns
                )
            )
        return int(deleted.rowcount)  # type: ignore[attr-defined]

    async def unregister(self) -> None:
        """Delete this process's row (a clean stop)."""
        async with self._sessions() as session, session.begin():
            await session.execute(delete(ArenaProcess).where(ArenaProcess.id == self.process_id))


class Host(Protocol):
    """What the membership needs of the match service: its life cycle
    (server.matches.lifecycle.MatchLifecycle)."""

    async def take_over(self, match_id: str) -> bool:
        """Claim and resume a match whose owner is dead or none; False if another took it."""

    def owned_ids(self) -> list[str]:
        """Return the ids of the matches held (owned) in memory."""

    def drop_all(self) -> int:
        """Stop acting as the owner of every match held: drop them all from memory."""


class Membership:
    """Keeps this process in the cluster: heartbeat, self-eviction, reaper (see the module)."""

    def __init__(
        self,
        table: ProcessTable,
        leases: Leases,
        host: Host,
        *,
        lease_ttl_ms: int,
        heartbeat_ms: int,
    ) -> None:
        self.table = table
        self._leases = leases
        self._host = host
        self._ttl = lease_ttl_ms / 1000
        self._period = heartbeat_ms / 1000
        self._renewed_at = time.monotonic()
        self._tasks: list[asyncio.Task[None]] = []
        self._previous: set[str] = set()
        self._rounds = 0
        self._orphans = False
        self._joined = False
        self._failing = False
        self._renewing: asyncio.Future[bool] | None = None
        """The heartbeat's renewal in flight, if one is: never cancelled (a query cut off
        mid-transaction can leave its row locked on the database's side)."""
        self._renewing_since = 0.0
        self.taken_over = 0
        """Matches this process has taken over from dead (or no) owners."""
        self.also: list[Callable[[], Awaitable[object]]] = []
        """Awaited at each reaper round after the matches (a failure is logged)."""

    @property
    def process_id(self) -> str:
        """This process's id."""
        return self.table.process_id

    async def join(self) -> None:
        """Insert this process's row: from now on it counts as alive (call before it serves,
        or a match it claims would look ownerless to the others)."""
        if not self._joined:
            self._renewed_at = time.monotonic()
            await self.table.register()
            self._joined = True

    async def start(self) -> None:
        """Join (if not yet), take over this process's share of the matches without a live
        owner, and start the heartbeat and the reaper."""
        await self.join()
        await self.reap()
        self._tasks = [
            asyncio.create_task(self._beat_forever(), name="arena-heartbeat"),
            asyncio.create_task(self._reap_forever(), name="arena-reaper"),
        ]

    async def close(self) -> None:
        """Stop the tasks, release the matches still held and delete this process's row.

        Call after the match service has stopped (its writes are stored)."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._renewing is not None:
            await asyncio.wait({self._renewing}, timeout=max(self._ttl, 5.0))
        try:
            await self._leases.release(self._host.owned_ids())
        except Exception:
            log.exception("process %s could not release its matches", self.process_id)
        try:
            await self.table.unregister()
        except Exception:
            log.exception("process %s could not delete its row", self.process_id)

    async def _beat_forever(self) -> None:
        while True:
            sent = time.monotonic()
            try:
                renewed = await self._renew()
            except Exception as error:  # noqa: BLE001 -- logged once per outage, retried
                if not self._failing:
                    log.warning(
                        "cannot renew the heartbeat of %s: %s", self.process_id, repr(error)
                    )
                self._failing = True
            else:
                if self._failing:
                    log.warning("the heartbeat of %s is renewed again", self.process_id)
                self._failing = False
                if not renewed:
                    self._orphans = True
                    dropped = self._host.drop_all()
                    log.error(
                        "process %s was taken for dead: dropped its %d matches",
                        self.process_id,
                        dropped,
                    )
                # As of when the row was written: a renewal may have answered late.
                self._renewed_at = self._renewing_since
            if time.monotonic() - self._renewed_at > self._ttl and self._host.owned_ids():
                self._orphans = True
                dropped = self._host.drop_all()
                log.error(
                    "process %s could not renew its lease for %.1f s: dropped its %d matches",
                    self.process_id,
                    self._ttl,
                    dropped,
                )
            await asyncio.sleep(max(0.0, self._period - (time.monotonic() - sent)))

    async def _renew(self) -> bool:
        """Return the heartbeat's renewal, started now unless one is still in flight; raise
        TimeoutError when it has not answered within a period (it goes on meanwhile, and the
        next beat waits for it again instead of starting another)."""
        if self._renewing is None or self._renewing.done():
            self._renewing = asyncio.ensure_future(self.table.renew())
            self._renewing_since = time.monotonic()
        renewing = self._renewing
        await asyncio.wait({renewing}, timeout=self._period)
        if not renewing.done():
            raise TimeoutError(f"no answer from the database within {self._period:g} s")
        return renewing.result()

    async def _reap_forever(self) -> None:
        while True:
            await asyncio.sleep(self._period)
            try:
                await self.reap()
            except Exception:
                log.exception("the reaper of %s failed; trying again", self.process_id)

    async def _take_over(self, match_id: str) -> bool:
        """Take one match over; a match that cannot be rebuilt is logged, never stops the
        round (the others are taken over all the same)."""
        try:
            return await self._host.take_over(match_id)
        except Exception:
            log.exception("process %s could not take match %s over", self.process_id, match_id)
            return False

    async def reap(self) -> int:
        """Take over this process's share of the matches without a live owner; return how
        many were taken over."""
        if time.monotonic() - self._renewed_at > self._ttl:
            return 0  # not a live process itself: its claims would be taken back at once
        candidates = await self._leases.claimable()
        taken = 0
        if candidates:
            live = await self.table.live_ids()
            mine = set(share(candidates, live, self.process_id))
            mine |= self._previous.intersection(candidates)  # unclaimed for a whole round
            for match_id in candidates:
                if match_id in mine and await self._take_over(match_id):
                    taken += 1
        self._previous = set(candidates)
        self._rounds += 1
        if self._orphans or self._rounds % FORGET_EVERY == 0:
            taken += await self._resume_orphans()
        self.taken_over += taken
        if taken:
            log.info("process %s took over %d matches", self.process_id, taken)
        for reaper in self.also:
            try:
                await reaper()
            except Exception:
                log.exception("a reaper of %s failed; trying again", self.process_id)
        if self._rounds % FORGET_EVERY == 0:
            await self.table.forget_dead()
        return taken

    async def _resume_orphans(self) -> int:
        """Take over again the matches this process owns but does not hold: those it dropped
        when it lost its lease, if nobody claimed them meanwhile (it is alive again), and any
        dropped after a failed write. Run after a drop and every FORGET_EVERY rounds."""
        self._orphans = False
        held = set(self._host.owned_ids())
        orphans = [m for m in await self._leases.owned() if m not in held]
        return sum([await self._take_over(match_id) for match_id in orphans])
