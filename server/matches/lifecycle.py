"""The matches this process holds: resumed at start, taken over, announced when claimed, dropped.

`MatchLifecycle` is owned by the match service (server.matches.service) and kept as its
`lifecycle`. One process resumes every unfinished match at start (`resume`); in a cluster the
membership (server.cluster.processes) takes over its share of the matches without a live owner
(`take_over`), releases what it holds (`owned_ids`) and drops it all when its leases are lost
(`drop_all`), and every match claimed is announced to its followers. The restart's clock rule
is in docs/ARCHITECTURE.md ("The match service").
"""

from __future__ import annotations

import logging
from typing import Protocol

from games.match import Effect
from server.errors import MatchError
from server.matches.housebots import HouseBots
from server.matches.live import LiveMatch
from server.matches.ownership import NotOwnerError
from server.matches.publisher import Publisher
from server.matches.store import MatchStore

log = logging.getLogger(__name__)


class Host(Protocol):
    """What the life cycle needs of the match service (server.matches.service.MatchService)."""

    def now_ms(self) -> int:
        """Return the referee's clock, in monotonic milliseconds."""

    async def run(self, live: LiveMatch, effects: list[Effect]) -> object:
        """Commit and publish the accepted events of `effects` (under the match's lock)."""


class MatchLifecycle:
    """Loads, claims and drops the matches held in memory (see the module)."""

    def __init__(
        self, host: Host, store: MatchStore, bots: HouseBots, publisher: Publisher
    ) -> None:
        self._host = host
        self._store = store
        self._bots = bots
        self._publisher = publisher
        store.on_claim = self._announce_claim

    async def resume(self) -> int:
        """Rebuild every unfinished match from its stored events; return how many were resumed.

        For a single process: in a cluster the reaper (server.cluster.processes) shares the
        matches without a live owner among the live processes, each taking its share over
        (`take_over`).
        """
        ids = await self._store.unfinished_ids()
        for match_id in ids:
            live = await self._store.load(match_id)
            async with live.lock:
                await self._host.run(live, live.referee.tick(self._host.now_ms()))
                self._bots.schedule(live)
        return len(ids)

    async def take_over(self, match_id: str) -> bool:
        """Claim and resume a match without a live owner: rebuild it (charged the clock rule),
        let a fallen flag end it, schedule its house bots. Return False when it was not taken
        (another process owns it, it is over, or it is held here already)."""
        if self._store.in_memory(match_id) is not None:
            return False
        try:
            live = await self._store.load(match_id)
        except (NotOwnerError, MatchError):
            return False
        if not self._store.is_live(live):
            return False
        async with live.lock:
            try:
                await self._host.run(live, live.referee.tick(self._host.now_ms()))
            except MatchError as error:
                log.error("taking over match %s: %s", match_id, error)
                return False
            self._bots.schedule(live)
        return True

    async def _announce_claim(self, live: LiveMatch) -> None:
        """Send everyone following a match just claimed its state as stored.

        Its previous owner may have stored events it never published (it died in between):
        the state shows them to the players and spectators, on every process, so none waits
        for a `move_made` that will never come (a connection drops a state it is ahead of).
        A house bot to move plays (claimed on first touch, say a player's `state` read, the
        match would otherwise wait for a move nobody makes).
        """
        await self._publisher.publish_state(live)
        self._bots.schedule(live)  # its task starts once the match is held

    def owned_ids(self) -> list[str]:
        """Return the ids of the matches held in memory (in a cluster: owned here)."""
        return [live.id for live in self._store.live_matches()]

    def drop_all(self) -> int:
        """Drop every match held from memory and stop its house bots; return how many.

        For a process that lost its leases (server.cluster.processes): the owners now are
        others, and a call reloads (or forwards) the match."""
        held = self._store.live_matches()
        for live in held:
            self._bots.stop(live)
            self._store.evict(live.id)
        return len(held)
