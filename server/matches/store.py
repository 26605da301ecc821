"""The matches being played, in memory and in the database: loading, rebuilding, committing.

`MatchStore` holds every live match (`LiveMatch`) by id and is the only place they are read from
or written to the database. A match not in memory is rebuilt from its row and its events
(`Referee.restore`); a change is stored through the group-commit writer (server.db.writer),
and a failed write evicts the match, so memory never runs ahead of the database. It knows no
wire message and decides nothing: the match service (server.matches.service) calls it under each
match's lock.

In a cluster (`ownership` given: server.matches.ownership, kept by server.cluster.leases),
loading an unfinished match claims it first: the claim succeeds when the match has no owner,
is this process's, or its owner is dead, and the copy is rebuilt with the claim's owner epoch
(every write of it is fenced by that epoch) and charged the claim's downtime (the clock rule
of a takeover); when another live process owns it, `load` raises NotOwnerError and holds
nothing. A write refused by the fence evicts the copy and raises FencedMatchError
(UNAVAILABLE: the call may be sent again, to the new owner). `load_copy` rebuilds a match for
reading only, held by nobody.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from games.match import Event, EventKind, MatchConfig, Status, TimeControl
from games.referee import Referee
from games.registry import get_game
from protocol.errors import ErrorCode
from server.db.models import Match, MatchEvent, Player, epoch_ms
from server.db.writer import BatchWriter, FencedError, MatchWrite, WriterClosedError
from server.errors import MatchError
from server.matches.live import LiveMatch
from server.matches.ownership import Ownership

log = logging.getLogger(__name__)

UNFINISHED = (Status.WAITING.value, Status.ACTIVE.value)
"""The stored statuses of a match still to be played."""

RETRY_AFTER_MS = 500
"""What a refusal for a match between two owners tells the client to wait (UNAVAILABLE)."""


class FencedMatchError(MatchError):
    """A write refused by the fence: another process owns the match now; nothing was stored.

    The call that made it changed only the copy in memory, which is dropped: it may be sent
    again, to the new owner."""

    def __init__(self, match_id: str) -> None:
        super().__init__(
            ErrorCode.UNAVAILABLE,
            "another server process took this match over; nothing was changed, retry",
            match_id=match_id,
            details={"retry_after_ms": RETRY_AFTER_MS},
        )


class MatchStore:
    """The live matches by id, loaded from and committed to the database.

    Changes are stored through `writer` (by default one on the session maker's engine).
    `now_ms` is the referee's clock (monotonic milliseconds), `wall_ms` the epoch's; both are
    read when a match is rebuilt or an event stored. `ownership` (a cluster only) claims each
    unfinished match loaded (see the module).
    """

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        writer: BatchWriter | None,
        max_illegal_moves: int,
        now_ms: Callable[[], int],
        wall_ms: Callable[[], int],
        ownership: Ownership | None = None,
    ) -> None:
        if writer is None:
            bind = sessions.kw.get("bind")
            if not isinstance(bind, AsyncEngine):
                raise TypeError("MatchService needs a writer or a session maker bound to an engine")
            writer = BatchWriter(bind)
        self.sessions = sessions
        self._writer = writer
        self._max_illegal_moves = max_illegal_moves
        self._now_ms = now_ms
        self._wall_ms = wall_ms
        self._live: dict[str, LiveMatch] = {}
        self._load_lock = asyncio.Lock()
        self._ownership = ownership
        self.on_claim: Callable[[LiveMatch], Awaitable[None]] | None = None
        """Awaited with each match claimed, before anyone else can use it (in a cluster)."""

    def live_matches(self) -> list[LiveMatch]:
        """Return every match held in memory (a copy: the caller may await while iterating)."""
        return list(self._live.values())

    def in_memory(self, match_id: str) -> LiveMatch | None:
        """Return the live match `match_id` if it is in memory, else None."""
        return self._live.get(match_id)

    def is_live(self, live: LiveMatch) -> bool:
        """Return True while `live` is the match held in memory under its id."""
        return self._live.get(live.id) is live

    def add(self, live: LiveMatch) -> None:
        """Hold `live` in memory (once its creation is committed)."""
        self._live[live.id] = live

    def evict(self, match_id: str) -> None:
        """Drop a match from memory: it is reloaded from the database if asked for."""
        self._live.pop(match_id, None)

    async def close(self) -> None:
        """Store what is pending and stop the writer."""
        await self._writer.close()

    # -- reading -------------------------------------------------------------------------------

    async def exists(self, match_id: str) -> bool:
        """Return True when a match has id `match_id` (held here or not; loading nothing)."""
        if match_id in self._live:
            return True
        async with self.sessions() as session:
            found = await session.scalar(select(Match.id).where(Match.id == match_id))
        return found is not None

    async def unfinished_ids(self) -> Sequence[str]:
        """Return the id of every match still waiting or active."""
        async with self.sessions() as session:
            return (
                await session.scalars(select(Match.id).where(Match.status.in_(UNFINISHED)))
            ).all()

    async def held_ids(self, player_id: int) -> Sequence[str]:
        """Return the id of every unfinished match in which `player_id` holds a seat, oldest
        first."""
        async with self.sessions() as session:
            return (
                await session.scalars(
                    select(Match.id)
                    .where(
                        Match.status.in_(UNFINISHED),
                        or_(Match.seat0_player_id == player_id, Match.seat1_player_id == player_id),
                    )
                    .order_by(Match.created_at, Match.id)
                )
            ).all()

    async def challenging_ids(self, player_id: int) -> Sequence[str]:
        """Return the id of every waiting match challenging `player_id`, oldest first."""
        async with self.sessions() as session:
            return (
                await session.scalars(
                    select(Match.id)
                    .where(
                        Match.status == Status.WAITING.value,
                        or_(
                            Match.seat0_challenged_id == player_id,
                            Match.seat1_challenged_id == player_id,
                        ),
                    )
                    .order_by(Match.created_at, Match.id)
                )
            ).all()

    async def load(self, match_id: str) -> LiveMatch:
        """Return the live match `match_id`, rebuilding it from the database if needed.

        Raises MatchError UNKNOWN_MATCH for no such match; in a cluster, NotOwnerError when
        another live process owns it.
        """
        live = self._live.get(match_id)
        if live is not None:
            return live
        async with self._load_lock:
            live = self._live.get(match_id)
            if live is not None:
                return live
            epoch, downtime_ms = None, 0
            if self._ownership is not None:
                claim = await self._ownership.claim(match_id)  # NotOwnerError: not ours to hold
                if claim is not None:
                    epoch, downtime_ms = claim.epoch, claim.downtime_ms
            live = await self._read(match_id, downtime_ms)
            live.epoch = epoch
            if epoch is not None and self.on_claim is not None:
                await self.on_claim(live)
            # A match over never changes again: it is read and let go, never held for good.
            if live.referee.status not in (Status.FINISHED, Status.ABORTED):
                self._live[match_id] = live
            return live

    async def load_copy(self, match_id: str) -> LiveMatch:
        """Return a copy of match `match_id` rebuilt from the database for reading, held by
        nobody: its clocks as they stand now (the time since its last event is charged to the
        side to move, whose owner is playing it). Never commit it.

        Raises MatchError UNKNOWN_MATCH for no such match.
        """
        return await self._read(match_id, None)

    async def _read(self, match_id: str, downtime_ms: int | None) -> LiveMatch:
        """Rebuild match `match_id` from its row and events, `downtime_ms` charged to the side
        to move (None: the time since its last event)."""
        async with self.sessions() as session:
            row = await session.get(Match, match_id)
            if row is None:
                raise MatchError(
                    ErrorCode.UNKNOWN_MATCH, f"no match has id {match_id!r}", match_id=match_id
                )
            stored = (
                await session.scalars(
                    select(MatchEvent)
                    .where(MatchEvent.match_id == match_id)
                    .order_by(MatchEvent.seq)
                )
            ).all()
            ids = (
                row.seat0_player_id,
                row.seat1_player_id,
                row.seat0_challenged_id,
                row.seat1_challenged_id,
                row.created_by,
            )
            known = [i for i in ids if i is not None]
            found = await session.execute(
                select(Player.id, Player.name).where(Player.id.in_(known))
            )
            by_id = {player_id: name for player_id, name in found}
            names = [None if i is None else by_id.get(i) for i in ids]
        if downtime_ms is None:
            downtime_ms = max(0, self._wall_ms() - stored[-1].at_ms) if stored else 0
        return self._rebuild(row, stored, names, downtime_ms)

    def _rebuild(
        self,
        row: Match,
        stored: Sequence[MatchEvent],
        names: list[str | None],
        downtime_ms: int = 0,
    ) -> LiveMatch:
        """Return the live match of `row` and its events; `names` are the names of seat 0's
        and seat 1's players, their challenged players, and the creator. `downtime_ms` is
        charged to the side to move (the rules: docs/ARCHITECTURE.md, docs/SCALING.md)."""
        game = get_game(row.game, row.options)
        tc = None
        if row.base_ms is not None:
            tc = TimeControl(row.base_ms, row.increment_ms, row.move_cap_ms)
        config = MatchConfig(
            game, row.start_position, tc, self._max_illegal_moves, max_plies=row.max_plies
        )
        events = [
            Event(e.seq, EventKind(e.kind), e.player, e.move, e.elapsed_ms or 0) for e in stored
        ]
        # A restart charges nobody, a takeover up to the dead owner's last heartbeat (docs/
        # SCALING.md), a read copy the time since its last event.
        referee = Referee.restore(config, events, self._now_ms(), downtime_ms=downtime_ms)
        searches = {e.seq: e.search for e in stored if isinstance(e.search, dict)}
        return LiveMatch(
            id=row.id,
            referee=referee,
            options=dict(row.options),
            players=[row.seat0_player_id, row.seat1_player_id],
            names=names[:2],
            bot_specs=[row.seat0_bot, row.seat1_bot],
            created_ms=epoch_ms(row.created_at),
            challenged=[row.seat0_challenged_id, row.seat1_challenged_id],
            challenged_names=names[2:4],
            created_by=row.created_by,
            creator_name=names[4],
            searches=searches,
        )

    # -- writing -------------------------------------------------------------------------------

    async def commit(
        self, live: LiveMatch, events: list[Event], *, new_match: dict[str, Any] | None = None
    ) -> None:
        """Store `events` and the match row in one transaction; on failure evict and raise.

        The write goes through the group-commit writer (server.db.writer): the changes of
        every match waiting at the same moment share one commit. The values are taken now,
        under the match's lock. A failure raises MatchError INTERNAL_ERROR; a write refused by
        the fence (another process owns the match now) raises FencedMatchError. In a cluster a
        new match is owned by this process from epoch 1.
        """
        now = self._wall_ms()
        rows = [event_row(live, event, now) for event in events]
        if new_match is not None and self._ownership is not None:
            new_match = new_match | {"owner_id": self._ownership.process_id, "owner_epoch": 1}
            live.epoch = 1
        change = MatchWrite(live.id, match_values(live), new_match, rows, live.epoch)
        try:
            await self._writer.write(change)
        except FencedError as error:
            log.info("match %s: %s; dropping this copy", live.id, error)
            live.stop.set()
            if self._live.get(live.id) is live:
                del self._live[live.id]
            raise FencedMatchError(live.id) from None
        except (SQLAlchemyError, WriterClosedError, ValueError, TypeError):
            # The in-memory match ran ahead of the database: evict it (it reloads as stored).
            log.exception("could not store match %s", live.id)
            self._live.pop(live.id, None)
            raise MatchError(
                ErrorCode.INTERNAL_ERROR,
                "the server could not store the match; nothing was changed, retry",
                match_id=live.id,
            ) from None


def match_values(live: LiveMatch) -> dict[str, Any]:
    """Return the columns of `live`'s `matches` row that its play changes: seats, status, seq
    and result (the rest are written once, as it is created: server.matches.setup)."""
    referee = live.referee
    result = referee.result
    return {
        "seat0_player_id": live.players[0],
        "seat1_player_id": live.players[1],
        "seat0_challenged_id": live.challenged[0],
        "seat1_challenged_id": live.challenged[1],
        "seat0_bot": live.bot_specs[0],
        "seat1_bot": live.bot_specs[1],
        "status": referee.status.value,
        "seq": referee.seq,
        "result_winner": None if result is None else result.winner,
        "result_reason": None if result is None else result.code.value,
        "result_detail": None if result is None else result.reason[:500],
    }


def event_row(live: LiveMatch, event: Event, at_ms: int) -> dict[str, Any]:
    """Return the `match_events` row of `live`'s `event` (but its id and `created_at`), stored
    at `at_ms` (the epoch's milliseconds), with the search of a move when one was noted."""
    return {
        "match_id": live.id,
        "seq": event.seq,
        "kind": event.kind.value,
        "player": event.player,
        "move": event.move,
        "elapsed_ms": event.elapsed_ms,
        "at_ms": at_ms,
        "search": live.searches.get(event.seq) if event.kind is EventKind.MOVE else None,
    }
