"""The bridge from the bus to this process's hub: other processes' match events, in order.

A match is played on the process that owns it; its players and spectators may be connected to
any process. `MatchBridge.deliver` (a `Bus.on_match` handler) takes each broadcast another
process published and hands it to the local `Hub`, in seq order per match:

- a broadcast whose events are all at or below the last seq delivered here is a duplicate
  (the state sent by a resync showed it already): dropped;
- a broadcast that starts beyond the next seq (a gap: the bus lost something) is not
  delivered; the match is resynced instead: its state is read (`MatchService.read`, from the
  database on a process that does not own it) and each local seated player (with its own
  `your_seat`) and spectator is sent a fresh `match_state`; the broadcasts that arrive meanwhile
  wait, then go through the same checks (those the state shows are dropped);
- a `MatchNotice` (the owner could not publish while Redis was away) newer than what was
  delivered resyncs the match the same way;
- messages without a seq (a challenge) pass as they come.

A match nobody here follows is never resynced, and its broadcasts are not even parsed
(`wanted`, the bus's filter): only their seqs are counted.
After the bus reconnects (`resync_all`, a `Bus.on_reconnect` handler) every match followed here
is resynced: the matches of each local player (`MatchStore.held_ids`), each watched match, and
each match seen unfinished before the outage (it may have ended meanwhile).

One connection per player across processes (`OnePerPlayer`): as in one process, a player's
newer connection replaces the older (4002) wherever it is.

Each connection also drops events its own state already showed (server.hub,
`Connection.deliver`): a spectator who joins on one process reads the state from the database,
and the owner's broadcast of that same event may arrive after.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from protocol.messages import MatchEnded, MatchState
from server.cluster.bus import Bus
from server.cluster.envelopes import BusUnavailable, MatchNotice, Seats, broadcast_seqs
from server.hub import Connection, Hub
from server.matches import translation
from server.matches.live import LiveMatch
from server.matches.publisher import Broadcast
from server.matches.store import UNFINISHED

if TYPE_CHECKING:
    from server.matches.service import MatchService

log = logging.getLogger(__name__)

MAX_TRACKED = 100_000
"""The most matches whose last delivered seq is remembered (the oldest are forgotten)."""


class MatchBridge:
    """Hands other processes' match broadcasts to `hub` in seq order (see the module)."""

    def __init__(self, hub: Hub, service: MatchService) -> None:
        self._hub = hub
        self._service = service
        self._last: dict[str, int] = {}
        """The last seq delivered here, per match (at most MAX_TRACKED, oldest first)."""
        self._unfinished: dict[str, Seats] = {}
        """The seats of each match seen unfinished, followed here, and not seen ending."""
        self._resyncing: dict[str, list[Broadcast | MatchNotice]] = {}
        """The broadcasts waiting for each match being resynced."""
        self._tasks: set[asyncio.Task[None]] = set()

    def wanted(self, match_id: str, players: Seats, seqs: tuple[int, int] | None) -> bool:
        """Return True when `deliver` needs this broadcast (a `Bus.on_match` filter): a local
        connection follows the match, or it is being resynced. The seq of one nobody here
        follows is still counted, so a follower who comes later has its gaps noticed."""
        if match_id in self._resyncing or self._is_followed(match_id, players):
            return True
        if seqs is not None and seqs[1] > self._last.get(match_id, -1):
            self._count(match_id, seqs[1])
        return False

    async def deliver(self, item: Broadcast | MatchNotice) -> None:
        """Hand one broadcast (or notice) of another process to the hub, in seq order."""
        match_id = item.match_id
        waiting = self._resyncing.get(match_id)
        if waiting is not None:
            waiting.append(item)
            return
        last = self._last.get(match_id)
        if isinstance(item, MatchNotice):
            if (last is None or item.seq > last) and self._is_followed(match_id, item.players):
                self._resync(match_id, [])
            return
        seqs = broadcast_seqs(item)
        if seqs is None:
            await self._hub.publish(item)
            return
        low, high = seqs
        if last is not None and high <= last:
            return
        if last is not None and low > last + 1 and self._is_followed(match_id, item.players):
            self._resync(match_id, [item])
            return
        await self._hub.publish(item)
        self._remember(match_id, high, item.players, ended=_ends(item))

    async def resync_all(self) -> None:
        """Send a fresh state of every match followed here (after the bus reconnected)."""
        match_ids = dict.fromkeys(self._unfinished)
        match_ids.update(dict.fromkeys(self._hub.spectators))
        for player_id in list(self._hub.players):
            try:
                match_ids.update(dict.fromkeys(await self._service.store.held_ids(player_id)))
            except Exception:
                log.exception("cannot list the matches of player %s to resync them", player_id)
        for match_id in match_ids:
            if match_id not in self._resyncing:
                self._resyncing[match_id] = []
                await self._run_resync(match_id)

    async def close(self) -> None:
        """Stop the resyncs under way."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _is_followed(self, match_id: str, players: Seats) -> bool:
        """Return True when a local connection follows the match (a seat's player or a
        spectator)."""
        return bool(self._hub.spectators.get(match_id)) or any(
            pid is not None and pid in self._hub.players for pid in players
        )

    def _count(self, match_id: str, seq: int) -> None:
        """Remember `seq` as the match's last delivered (the newest match last)."""
        self._last.pop(match_id, None)
        self._last[match_id] = seq
        if len(self._last) > MAX_TRACKED:
            del self._last[next(iter(self._last))]

    def _remember(self, match_id: str, seq: int, players: Seats, *, ended: bool) -> None:
        self._count(match_id, seq)
        if ended:
            self._unfinished.pop(match_id, None)
        elif self._is_followed(match_id, players):
            self._unfinished[match_id] = players

    def _resync(self, match_id: str, waiting: list[Broadcast | MatchNotice]) -> None:
        self._resyncing[match_id] = waiting
        self._spawn(self._run_resync(match_id))

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run_resync(self, match_id: str) -> None:
        """Send the match's state to its local followers, then the broadcasts that waited."""
        try:
            state, players = await self._service.read(match_id, self._snapshot)
        except Exception:
            log.exception("cannot read match %s to resync its followers", match_id)
            # Deliver what waited as it is: its followers see a gap rather than nothing.
            for item in self._resyncing.pop(match_id, []):
                if isinstance(item, Broadcast):
                    await self._hub.publish(item)
                    seqs = broadcast_seqs(item)
                    if seqs is not None:
                        self._remember(match_id, seqs[1], item.players, ended=_ends(item))
            return
        for seat, player_id in enumerate(players):
            connection = None if player_id is None else self._hub.players.get(player_id)
            if connection is not None:
                connection.sync(state.model_copy(update={"your_seat": seat}))
        for connection in list(self._hub.spectators.get(match_id, ())):
            connection.sync(state)
        last = self._last.get(match_id, -1)
        self._remember(
            match_id, max(last, state.seq), players, ended=state.status not in UNFINISHED
        )
        for item in self._resyncing.pop(match_id, []):
            await self.deliver(item)

    def _snapshot(self, live: LiveMatch) -> tuple[MatchState, Seats]:
        now_ms, wall_ms = self._service.now_ms(), self._service.wall_ms()
        return translation.match_state(live, None, now_ms, wall_ms), live.recipients()


def _ends(broadcast: Broadcast) -> bool:
    return any(isinstance(message, MatchEnded) for message in broadcast.messages)


PLAYERS_TOPIC = "player_connections"
"""The bus topic on which each process announces the player connections it makes current."""


class OnePerPlayer:
    """Closes a player's connection (4002) when a newer one is opened in another process.

    Each process announces every player connection it makes current on the bus topic
    PLAYERS_TOPIC, and every process (the announcing one too) hears every announcement in the
    one order Redis gives them. A connection counts as announced once its own announcement
    comes back; an announcement of another connection of the same player heard after that
    replaces it. A connection whose announcement is still on its way is the newer one and
    stays, so exactly one survives however close together two connections were made. While
    Redis is away nothing is announced, and connections in two processes may both stay.
    """

    def __init__(self, hub: Hub, bus: Bus) -> None:
        self._hub = hub
        self._bus = bus
        self._tasks: set[asyncio.Task[None]] = set()
        hub.attach_listeners.append(self._attached)
        bus.subscribe(PLAYERS_TOPIC, self._heard)

    def _attached(self, connection: Connection) -> None:
        payload = {"player_id": connection.player_id, "connection": connection.key}
        task = asyncio.create_task(self._announce(payload))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _announce(self, payload: dict[str, Any]) -> None:
        with contextlib.suppress(BusUnavailable):  # logged by the bus; it stays unannounced
            await self._bus.publish(PLAYERS_TOPIC, payload)

    async def _heard(self, payload: dict[str, Any]) -> None:
        player_id = payload["player_id"]
        here = self._hub.players.get(player_id)
        if here is None:
            return
        if here.key == payload["connection"]:
            here.announced = True
        elif here.announced:
            self._hub.replace_player(player_id)

    async def close(self) -> None:
        """Stop the announcements under way."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
