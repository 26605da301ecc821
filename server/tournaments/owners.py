"""Which server process runs a tournament in a cluster: a PostgreSQL lease with fencing.

A tournament played by a server process's runner (server.tournaments.runner: one with a
registered player among its participants, or any tournament of a process with role `all`) has
exactly one owner among the clustered processes (`tournaments.owner_id`), on the same terms as
a match (server.cluster.leases): the owner holds it while its heartbeat
(server.cluster.processes) is younger than `lease_ttl_ms`. A *claim* sets `owner_id` to the
claiming process and adds one to `owner_epoch`, under the row's lock, and only when the
tournament is running and has no owner, a dead one, or is the claimer's own. The runner's
writes name the epoch its claim got (server.tournaments.store, `HostedTournament.epoch`) and
are refused once another process has claimed the tournament: a runner that stalled past its
lease can neither add a game nor store a result or an end; it stops.

Starting a tournament claims it in the same update that stores it `running`; the reaper's
round (server.cluster.processes, `Membership.also`) claims the running tournaments without a
live owner and resumes them (`TournamentService.reap`): shared among the live processes as
their matches are (server.cluster.leases.share), plus any left unclaimed for a whole round.
A clean stop releases the tournaments run here (owner NULL: the others claim them at their
next round).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import select, update

from server.cluster.leases import RowLeases
from server.db.models import ArenaProcess
from server.db.models import Tournament as TournamentRow


@dataclass(frozen=True)
class Owner:
    """A tournament's stored owner, epoch and status."""

    owner_id: str | None
    epoch: int
    status: str


class TournamentOwners(RowLeases):
    """Reads, claims and releases the owners of the running tournaments for the process
    `process_id` (server.cluster.leases.RowLeases: the leases of matches, on tournaments)."""

    table = TournamentRow
    open_statuses = ("running",)

    async def start(self, tournament_id: str) -> int | None:
        """Store a created tournament `running`, owned by this process; return the epoch, or
        None when it was not `created` any more (another call started or cancelled it)."""
        async with self._sessions() as session, session.begin():
            epoch = await session.scalar(
                update(TournamentRow)
                .where(TournamentRow.id == tournament_id, TournamentRow.status == "created")
                .values(
                    status="running",
                    owner_id=self.process_id,
                    owner_epoch=TournamentRow.owner_epoch + 1,
                    updated_at=datetime.now(UTC),
                )
                .returning(TournamentRow.owner_epoch)
            )
        return None if epoch is None else int(epoch)

    async def claim(self, tournament_id: str) -> int | None:
        """Claim the running tournament when it has no owner, a dead one or this process;
        return the new epoch, or None (not running, or another live process owns it)."""
        async with self._sessions() as session, session.begin():
            taken = await self._take(session, tournament_id)
        return None if taken is None or taken.held else taken.epoch

    async def live_ids(self) -> Sequence[str]:
        """Return the ids of the live processes."""
        async with self._sessions() as session:
            return (
                await session.scalars(
                    select(ArenaProcess.id).where(self._alive()).order_by(ArenaProcess.id)
                )
            ).all()

    async def owners(self, tournament_ids: Sequence[str]) -> dict[str, Owner]:
        """Return the stored owner of each of `tournament_ids` (those that exist)."""
        if not tournament_ids:
            return {}
        async with self._sessions() as session:
            rows = await session.execute(
                select(
                    TournamentRow.id,
                    TournamentRow.owner_id,
                    TournamentRow.owner_epoch,
                    TournamentRow.status,
                ).where(TournamentRow.id.in_(tournament_ids))
            )
            return {row.id: Owner(row.owner_id, row.owner_epoch, row.status) for row in rows}
