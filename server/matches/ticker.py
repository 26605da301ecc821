"""The clock ticker: the background task that ends active timed matches whose flag has fallen.

Every call on a match lets a fallen flag end it first; the ticker also ticks every live timed
match past its deadline a few times a second, so an idle match (a disconnected player's, say)
ends on time too. Started in the lifespan (`MatchService.start_ticker`).

In a cluster (several server processes, server.cluster) the memory holds only the matches this
process owns, so each match is ticked by its owner alone. A dead owner's matches are ticked
again once another process has taken them over; the side to move is then charged up to the
dead owner's last heartbeat, not for the time the match had no owner (server.cluster.leases).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from games.match import Effect
from server.errors import MatchError
from server.matches.live import LiveMatch
from server.matches.store import MatchStore

log = logging.getLogger(__name__)

TICK_SECONDS = 0.1
"""How often the background ticker lets fallen flags end active timed matches."""


class Host(Protocol):
    """What the ticker needs of the match service (server.matches.service.MatchService)."""

    def now_ms(self) -> int:
        """Return the referee's clock, in monotonic milliseconds."""

    async def run(self, live: LiveMatch, effects: list[Effect]) -> object:
        """Commit and publish the accepted events of `effects` (under the match's lock)."""


class Ticker:
    """Ticks every live timed match past its deadline, every TICK_SECONDS, once started."""

    def __init__(self, host: Host, store: MatchStore) -> None:
        self._host = host
        self._store = store
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start ticking (again, if the task ended); a no-op while it runs."""
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._tick_forever())

    async def close(self) -> None:
        """Stop ticking."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _tick_forever(self) -> None:
        """Tick every active timed match every TICK_SECONDS; a failure is logged, not fatal."""
        while True:
            await asyncio.sleep(TICK_SECONDS)
            now = self._host.now_ms()
            for live in self._store.live_matches():
                deadline = live.referee.deadline_ms()
                if deadline is None or now < deadline:
                    continue
                try:
                    async with live.lock:
                        if self._store.is_live(live):
                            await self._host.run(live, live.referee.tick(self._host.now_ms()))
                except MatchError as error:
                    log.error("ticking match %s: %s", live.id, error)
                except Exception:
                    log.exception("ticking match %s failed", live.id)
