"""Match ownership between server processes: a PostgreSQL lease with fencing.

In a cluster (several `arena serve` processes on one PostgreSQL database), each unfinished match
is played by one process, its owner (`matches.owner_id`), in memory, as a single process plays
every match. The owner holds the match while its heartbeat (server.cluster.processes) is
younger than `lease_ttl_ms`; nothing is renewed per match.

A process *claims* a match (`Leases.claim`) when it first touches it and the match has no
owner, is its own (held no more, say after a failed write), or its owner is dead; the claim
sets `owner_id` to the process and adds one to `owner_epoch`, under the row's lock. Every
write of the match names the epoch its copy was loaded at, and the writer (server.db.writer)
refuses a write whose epoch is no longer the stored one: the fence. A process that stalled past
its lease and wakes up still holding a match can therefore never overwrite the new owner's
events; its write fails (its caller alone) and it drops its copy.

Clock rule of a takeover (`Claim.downtime_ms`): the side to move is charged for the time up to
the dead owner's last heartbeat (it was being served until then), not for the ownerless time
after it, before the claim. A match without an owner (from before the cluster, or released by
a process that stopped cleanly) is charged nothing, as a plain restart of a single process.
The time is measured between the last stored event's `at_ms` (the owner's wall clock) and the
heartbeat (PostgreSQL's now()): the hosts' clocks must agree (NTP) to well under a second.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import ClassVar

from sqlalchemy import ColumnElement, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.db.models import ArenaProcess, Match, MatchEvent, Tournament, epoch_ms
from server.matches.ownership import Claim, NotOwnerError
from server.matches.store import UNFINISHED


@dataclass(frozen=True)
class Lease:
    """Who owns a match as stored: `owner_id` (None: nobody), its epoch, whether the owner is
    alive, and the match's status."""

    owner_id: str | None
    epoch: int
    alive: bool
    status: str

    @property
    def is_over(self) -> bool:
        """True when the match is finished or aborted (nobody needs to own it)."""
        return self.status not in UNFINISHED


@dataclass(frozen=True)
class Taken:
    """What a claim found on the row it locked: the owner before it (`previous`), that
    owner's last heartbeat (None: no owner, or its process is gone), and the row's epoch:
    the new one when the claim took the row, the stored one when `held` (a live process
    other than the claimer owns it, and nothing was changed)."""

    previous: str | None
    heartbeat: datetime | None
    held: bool
    epoch: int


class RowLeases:
    """Leases with fencing on the rows of one table (`table`: its `owner_id` names a process
    of server.cluster.processes, its `owner_epoch` counts the claims), for the process
    `process_id`: a row whose status is one of `open_statuses` is owned by one live process.

    `lease_ttl_ms` is how old a heartbeat may be for its process to count as alive. PostgreSQL
    only (row locks and now()); a single process has no leases at all.
    """

    table: ClassVar[type[Match] | type[Tournament]]
    open_statuses: ClassVar[tuple[str, ...]]

    def __init__(
        self, sessions: async_sessionmaker[AsyncSession], process_id: str, lease_ttl_ms: int
    ) -> None:
        self._sessions = sessions
        self.process_id = process_id
        self._ttl = timedelta(milliseconds=lease_ttl_ms)

    def _alive(self) -> ColumnElement[bool]:
        return ArenaProcess.heartbeat_at > func.now() - self._ttl

    async def _take(self, session: AsyncSession, row_id: str) -> Taken | None:
        """Claim row `row_id` in `session`'s transaction when it is open and has no owner, a
        dead one or this process: add one to its epoch and make this process its owner, under
        the row's lock. Return what was found (`held`: left to its live owner), or None for
        no such row or one that is not open."""
        table = self.table
        row = (
            await session.execute(
                select(table.owner_id, table.owner_epoch, table.status)
                .where(table.id == row_id)
                .with_for_update()
            )
        ).one_or_none()
        if row is None or row.status not in self.open_statuses:
            return None
        previous: str | None = row.owner_id
        heartbeat = None
        if previous is not None:
            found = (
                await session.execute(
                    select(ArenaProcess.heartbeat_at, self._alive()).where(
                        ArenaProcess.id == previous
                    )
                )
            ).one_or_none()
            if found is not None:
                heartbeat, alive = found
                if alive and previous != self.process_id:
                    return Taken(previous, heartbeat, True, int(row.owner_epoch))
        epoch = int(row.owner_epoch) + 1
        await session.execute(
            update(table)
            .where(table.id == row_id)
            .values(owner_id=self.process_id, owner_epoch=epoch)
        )
        return Taken(previous, heartbeat, False, epoch)

    async def claimable(self) -> Sequence[str]:
        """Return the open rows with no owner or a dead one (not this process's), oldest first."""
        table = self.table
        query = (
            select(table.id)
            .outerjoin(ArenaProcess, ArenaProcess.id == table.owner_id)
            .where(
                table.status.in_(self.open_statuses),
                or_(table.owner_id.is_(None), ArenaProcess.id.is_(None), ~self._alive()),
                or_(table.owner_id.is_(None), table.owner_id != self.process_id),
            )
            .order_by(table.created_at, table.id)
        )
        async with self._sessions() as session:
            return (await session.scalars(query)).all()

    async def release(self, row_ids: Sequence[str]) -> None:
        """Give up the ownership of `row_ids` (a clean stop): they have no owner until a live
        process claims them (at its next reaper round, or on first touch)."""
        if not row_ids:
            return
        table = self.table
        async with self._sessions() as session, session.begin():
            await session.execute(
                update(table)
                .where(table.id.in_(row_ids), table.owner_id == self.process_id)
                .values(owner_id=None)
            )


class Leases(RowLeases):
    """Reads and claims the owners of the unfinished matches for the process `process_id`
    (the match store's `Ownership`, server.matches.ownership)."""

    table = Match
    open_statuses = UNFINISHED

    async def lease(self, match_id: str) -> Lease | None:
        """Return who owns the match now (None: no such match)."""
        query = (
            select(Match.owner_id, Match.owner_epoch, Match.status, ArenaProcess.heartbeat_at)
            .outerjoin(ArenaProcess, ArenaProcess.id == Match.owner_id)
            .where(Match.id == match_id)
            .add_columns(self._alive())
        )
        async with self._sessions() as session:
            row = (await session.execute(query)).one_or_none()
        if row is None:
            return None
        owner_id, epoch, status, _heartbeat, alive = row
        return Lease(owner_id, epoch, bool(alive), status)

    async def claim(self, match_id: str) -> Claim | None:
        """Claim the unfinished match for this process when it has no owner, is this process's
        or its owner is dead; return the claim, or None for no such match or one that is over
        (nobody owns those). Raises NotOwnerError when another live process owns it.
        """
        async with self._sessions() as session, session.begin():
            taken = await self._take(session, match_id)
            if taken is None:
                return None
            if taken.held:
                assert taken.previous is not None
                raise NotOwnerError(match_id, taken.previous)
            downtime = 0
            if taken.heartbeat is not None and taken.previous != self.process_id:
                last = await session.scalar(
                    select(func.max(MatchEvent.at_ms)).where(MatchEvent.match_id == match_id)
                )
                if last is not None:
                    downtime = max(0, epoch_ms(taken.heartbeat) - int(last))
        return Claim(taken.epoch, downtime, taken.previous)

    async def owned(self) -> Sequence[str]:
        """Return the unfinished matches this process owns, as stored."""
        query = select(Match.id).where(
            Match.owner_id == self.process_id, Match.status.in_(UNFINISHED)
        )
        async with self._sessions() as session:
            return (await session.scalars(query)).all()


def share(match_ids: Sequence[str], live: Sequence[str], process_id: str) -> list[str]:
    """Return this process's share of `match_ids` among the `live` processes: the matches
    whose id hashes to its rank among the live ids (every process computes the same split)."""
    ranked = sorted(set(live) | {process_id})
    rank = ranked.index(process_id)
    return [m for m in match_ids if zlib.crc32(m.encode()) % len(ranked) == rank]
