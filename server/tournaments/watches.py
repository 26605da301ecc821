"""The matches a tournament runner waits for, and their ends as they come.

A match is watched from before its bots can move (`watch`) until its result is read (`outcome`):
its end comes from the match service's listener (`on_broadcast`), or, in a cluster (`follow_s`
given), over the bus from the process that plays it (`on_remote`, wanting only the matches
watched: `wants`), and its stored state is read every `follow_s` seconds should a broadcast be
lost (Redis restarted).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from protocol.errors import ProtocolError
from protocol.messages import MatchEnded, MatchResult
from server.matches.publisher import Broadcast
from server.matches.service import MatchService

log = logging.getLogger(__name__)

Spawn = Callable[[Coroutine[Any, Any, None]], object]
"""Runs a coroutine as a background task of the runner."""


@dataclass
class _Watch:
    """A match a tournament waits for: its end (its result)."""

    future: asyncio.Future[MatchResult]


class MatchWatches:
    """The matches watched for their ends, read through `matches` (see the module)."""

    def __init__(self, matches: MatchService, spawn: Spawn, follow_s: float | None) -> None:
        self._matches = matches
        self._spawn = spawn
        self._follow_s = follow_s
        self._watches: dict[str, _Watch] = {}

    async def on_broadcast(self, broadcast: Broadcast) -> None:
        """Notice the end of a watched match."""
        watch = self._watches.get(broadcast.match_id)
        if watch is None:
            return
        for message in broadcast.messages:
            if isinstance(message, MatchEnded) and not watch.future.done():
                watch.future.set_result(message.result)

    def wants(self, match_id: str, _players: object = None, _seqs: object = None) -> bool:
        """Return True for a match watched here (a `Bus.on_match` filter)."""
        return match_id in self._watches

    async def on_remote(self, item: object) -> None:
        """Notice the end of a watched match played by another process (a `Bus.on_match`
        handler): a broadcast ends it; a notice (its owner could not publish) has its state
        read."""
        if isinstance(item, Broadcast):
            await self.on_broadcast(item)
            return
        match_id = getattr(item, "match_id", None)
        if isinstance(match_id, str) and match_id in self._watches:
            self._spawn(self._check(match_id))

    async def _check(self, match_id: str) -> None:
        """Read a watched match's state: its result ends the watch."""
        watch = self._watches.get(match_id)
        if watch is None or watch.future.done():
            return
        try:
            state = await self._matches.state(match_id)
        except ProtocolError as error:
            log.info("cannot read match %s of a tournament now: %s", match_id, error.message)
            return
        if state.result is not None and not watch.future.done():
            watch.future.set_result(state.result)

    def watch(self, match_id: str) -> _Watch:
        """Return the watch of a match, registering it (the listener then follows the match)."""
        watch = self._watches.get(match_id)
        if watch is None:
            watch = _Watch(asyncio.get_running_loop().create_future())
            self._watches[match_id] = watch
        return watch

    async def outcome(self, match_id: str, watch: _Watch) -> MatchResult:
        """Wait for the match's result (its referee draws it at its ply cap).

        The watch is registered before the state is read, and both the listener and `state`
        run under the match's lock, so an end is seen either in the state or by the listener.
        """
        try:
            if self._follow_s is None:
                state = await self._matches.state(match_id)
                if state.result is not None and not watch.future.done():
                    watch.future.set_result(state.result)
                return await watch.future
            # A cluster: the end may come over the bus; its state is read every follow_s too.
            while True:
                await self._check(match_id)
                try:
                    return await asyncio.wait_for(asyncio.shield(watch.future), self._follow_s)
                except TimeoutError:
                    continue
        finally:
            self._watches.pop(match_id, None)
