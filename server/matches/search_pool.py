"""The search pool: house bots' searches on threads of their own, shared fairly among owners.

A house bot's search is CPU-bound and can last seconds. Run on the event loop's default
executor (`asyncio.to_thread`), a few expensive searches took every thread that requests,
tournaments and grading also use, and nothing ever stopped them. `SearchPool` runs them on
`threads` threads of its own, never more at once, and at most `per_owner` of one owner's
searches at a time (an owner is the player a match is played for): the others wait in a queue,
and a freed thread goes to the owners in turn, so one player's many searches cannot hold every
thread while another player's bot waits.

Every search gets a stop (`threading.Event`): a search whose match ended, or any search when the
server stops (`close`), is told to stop and ends within milliseconds (bots.spec: the searches
ask their stop every 64 nodes or every simulation). A search still running after `max_seconds`
is stopped too: time-limited bots then play their best move so far, the others raise
`SearchStopped` (the house bot loses, as on a crash).

A match between two untimed house bots is played ahead in a child process
(server.matches.playahead), which searches move after move for the whole game. It runs only on
a `Lease` of a thread: taken when a thread is free and nobody waits (even beyond its owner's
cap: a tournament alone on the server uses every thread), and revoked as soon as another search
has to wait, so the child process never holds a thread another player needs (the match then
goes on turn by turn through the queue).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from bots.result import SearchResult, SearchStopped
from bots.spec import Bot
from bots.turns import stopped_at_limit
from games.base import State


@dataclass(eq=False)
class Lease:
    """One thread of the pool lent to a play-ahead child; `on_revoke` is called to end it."""

    owner: Hashable
    on_revoke: Callable[[], None] | None = None
    revoked: bool = False


class SearchPool:
    """Runs house bots' searches on `threads` threads, `per_owner` of one owner's at a time."""

    def __init__(
        self,
        threads: int,
        per_owner: int,
        max_seconds: float,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if threads < 1 or per_owner < 1 or max_seconds <= 0:
            raise ValueError("threads and per_owner must be at least 1, max_seconds positive")
        self.threads = threads
        self.per_owner = per_owner
        self.max_seconds = max_seconds
        self._clock = clock
        self._executor = ThreadPoolExecutor(threads, thread_name_prefix="arena-search")
        self._free = threads
        self._running: dict[Hashable, int] = {}
        self._waiting: dict[Hashable, deque[asyncio.Future[None]]] = {}
        self._served: dict[Hashable, int] = {}
        """When each owner with searches running or waiting last got a thread (a counter)."""
        self._turn = 0
        self._stops: set[threading.Event] = set()
        self._leases: list[Lease] = []
        self._closed = False

    @property
    def busy(self) -> int:
        """Return how many threads are searching now (a stopped search counts until it ends)."""
        return self.threads - self._free

    @property
    def queued(self) -> int:
        """Return how many searches wait for a thread."""
        return sum(len(waiters) for waiters in self._waiting.values())

    async def run(
        self,
        owner: Hashable,
        bot: Bot,
        state: State[Any],
        *,
        time_budget: float | None,
        stop: threading.Event,
    ) -> SearchResult:
        """Return `bot`'s search of `state`, run on a pool thread once `owner`'s turn comes.

        Setting `stop` (or cancelling the caller) ends the search within milliseconds; the
        thread counts as busy until the search has really ended. Raises SearchStopped when the
        pool is closed, or when the search was stopped (by `stop` or after `max_seconds`)
        before it had a move.
        """
        if self._closed:
            raise SearchStopped("the server is stopping")
        await self._acquire(owner)
        loop = asyncio.get_running_loop()
        limit = self._clock() + self.max_seconds
        clock = self._clock

        def should_stop() -> bool:
            return stop.is_set() or clock() >= limit

        self._stops.add(stop)
        try:
            job: Future[SearchResult] = self._executor.submit(
                functools.partial(bot.choose, state, time_budget=time_budget, stop=should_stop)
            )
        except RuntimeError:  # shut down meanwhile
            self._stops.discard(stop)
            self._release(owner)
            raise SearchStopped("the server is stopping") from None

        def finished(_: Future[SearchResult]) -> None:
            self._stops.discard(stop)
            with contextlib.suppress(RuntimeError):  # the loop closed: nothing to hand on
                loop.call_soon_threadsafe(self._release, owner)

        job.add_done_callback(finished)
        try:
            return await asyncio.wrap_future(job)
        except asyncio.CancelledError:
            stop.set()
            raise
        except SearchStopped:
            if not stop.is_set() and clock() >= limit:
                raise SearchStopped(stopped_at_limit(self.max_seconds)) from None
            raise

    def lease(self, owner: Hashable) -> Lease | None:
        """Lend a thread to `owner`'s play-ahead child, or return None if none is free or
        anyone waits. Give it back with `end`; it may be revoked first (see `Lease`)."""
        if self._closed or self._free == 0 or self._waiting:
            return None
        self._take(owner)
        lease = Lease(owner)
        self._leases.append(lease)
        return lease

    def end(self, lease: Lease) -> None:
        """Take back a lent thread (once its child process has ended)."""
        if lease in self._leases:
            self._leases.remove(lease)
            self._release(lease.owner)

    def close(self) -> None:
        """Stop every search and refuse new ones; the threads end within milliseconds."""
        self._closed = True
        for stop in list(self._stops):
            stop.set()
        for lease in self._leases:
            self._revoke(lease)
        for waiters in self._waiting.values():
            for waiter in waiters:
                waiter.cancel()
        self._waiting.clear()
        self._executor.shutdown(wait=False, cancel_futures=True)

    # -- the fair queue ------------------------------------------------------------------------

    async def _acquire(self, owner: Hashable) -> None:
        """Take a thread for `owner`: at once if one is free and `owner` is under its cap."""
        if self._free > 0 and self._running.get(owner, 0) < self.per_owner:
            # Nobody eligible waits (`_dispatch` keeps it so), and `owner` is not waiting: a
            # waiting owner is at its cap.
            self._take(owner)
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(owner, deque()).append(waiter)
        if self._running.get(owner, 0) < self.per_owner:
            # Only a lent thread stands in the way: the newest lease gives it back.
            lease = next((lease for lease in reversed(self._leases) if not lease.revoked), None)
            if lease is not None:
                self._revoke(lease)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._release(owner)  # granted as we were cancelled: hand the thread on
            else:
                self._forget(owner, waiter)
            raise

    def _revoke(self, lease: Lease) -> None:
        if not lease.revoked:
            lease.revoked = True
            if lease.on_revoke is not None:
                lease.on_revoke()

    def _take(self, owner: Hashable) -> None:
        self._free -= 1
        self._running[owner] = self._running.get(owner, 0) + 1
        self._turn += 1
        self._served[owner] = self._turn

    def _release(self, owner: Hashable) -> None:
        self._free += 1
        left = self._running.get(owner, 0) - 1
        if left > 0:
            self._running[owner] = left
        else:
            self._running.pop(owner, None)
            if owner not in self._waiting:
                self._served.pop(owner, None)
        self._dispatch()

    def _forget(self, owner: Hashable, waiter: asyncio.Future[None]) -> None:
        waiters = self._waiting.get(owner)
        if waiters is not None and waiter in waiters:
            waiters.remove(waiter)
            if not waiters:
                del self._waiting[owner]
                if owner not in self._running:
                    self._served.pop(owner, None)

    def _dispatch(self) -> None:
        """Give free threads to waiting owners under their cap, in turn: first the owner that
        got a thread least recently (a thread taken back from a play-ahead child counts)."""
        while self._free > 0:
            eligible = [o for o in self._waiting if self._running.get(o, 0) < self.per_owner]
            if not eligible:
                return
            chosen = min(eligible, key=lambda o: self._served.get(o, -1))
            waiters = self._waiting[chosen]
            waiter = waiters.popleft()
            if not waiters:
                del self._waiting[chosen]
            if waiter.cancelled():
                continue
            self._take(chosen)
            waiter.set_result(None)
