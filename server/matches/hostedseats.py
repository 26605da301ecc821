"""Hosted bots in the seats of matches: the programs players uploaded (server.hosted), played
by the house bots (server.matches.housebots) through the `HostedSeats` contract.

A seat asking for `hosted:OWNER/NAME` stores the version it plays; its program starts in the
sandbox when it is first to move and lives for its whole match (bounded by its sandbox, and
their number by the hosted bots' seats); it is never played ahead. A failure is told to the
bot's owner before the match ends, while the opponent reads only HOSTED_FAILED.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Coroutine
from typing import Any, Protocol

from bots.spec import Bot, BotSpecError
from games.base import Game
from games.match import Status
from server.matches.live import LiveMatch

log = logging.getLogger(__name__)

HOSTED_FAILED = "failed (its owner is told why)"
"""What an opponent reads when a hosted bot fails: the details are its owner's alone."""


class HostedSeats(Protocol):
    """The hosted bots as seats of matches (server.hosted.HostedBots)."""

    def claims(self, spec: str) -> bool:
        """Whether `spec` names a hosted bot."""
        ...

    async def resolve(self, spec: str, game: Game) -> str:
        """Return the spec a seat stores (the version it plays); ValueError in words."""
        ...

    def build(self, spec: str, game: Game) -> Bot:
        """Return the bot of a seat's stored spec; it fails when it first moves if it cannot
        start."""
        ...

    async def failed(self, spec: str, match_id: str, words: str) -> None:
        """Tell the bot's owner how it failed in a match."""
        ...

    async def finished(self, spec: str) -> None:
        """The bot played a match to its end without failing."""
        ...


class HostedPlayers:
    """The hosted bots' programs of the matches held here, and what their owners are told."""

    def __init__(self) -> None:
        self.source: HostedSeats | None = None
        """The hosted bots, when the server hosts them (set by the app)."""
        self._running: dict[tuple[str, int], Bot] = {}
        self._failed: set[tuple[str, int]] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    def claims(self, spec: str | None) -> bool:
        """Whether `spec` names a hosted bot of this server."""
        return spec is not None and self.source is not None and self.source.claims(spec)

    async def seat(self, spec: str, game: Game) -> str:
        """Return the spec a seat asking for the hosted bot `spec` stores; BotSpecError in
        words when it cannot play."""
        assert self.source is not None
        try:
            return await self.source.resolve(spec, game)
        except ValueError as error:
            raise BotSpecError(str(error)) from None

    def bot(self, live: LiveMatch, seat: int) -> Bot:
        """Return the hosted bot of `seat`, its program kept for the match."""
        assert self.source is not None
        spec = live.bot_specs[seat]
        assert spec is not None
        key = (live.id, seat)
        running = self._running.get(key)
        if running is None:
            running = self._running[key] = self.source.build(spec, live.referee.game)
        return running

    async def failed(self, live: LiveMatch, seat: int, why: str) -> str:
        """Tell the owner of the hosted bot in `seat` why it failed; return what its opponent
        reads instead."""
        assert self.source is not None
        spec = live.bot_specs[seat]
        assert spec is not None
        self._failed.add((live.id, seat))
        try:
            await self.source.failed(spec, live.id, why)
        except Exception:
            log.exception("keeping the failure of hosted bot %s in match %s", spec, live.id)
        return HOSTED_FAILED

    def stop(self, live: LiveMatch) -> None:
        """End the programs of a match that is over, and count a finished match for each
        hosted bot that did not fail in it."""
        for seat in (0, 1):
            _close(self._running.pop((live.id, seat), None))
            spec = live.bot_specs[seat]
            failed = (live.id, seat) in self._failed
            self._failed.discard((live.id, seat))
            if self.claims(spec) and not failed and live.referee.status is Status.FINISHED:
                assert spec is not None
                self._spawn(self._finished(spec))

    async def close(self) -> None:
        """End every program (the server stops)."""
        for bot in self._running.values():
            _close(bot)
        self._running.clear()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _finished(self, spec: str) -> None:
        assert self.source is not None
        try:
            await self.source.finished(spec)
        except Exception:
            log.exception("counting a finished match of hosted bot %s", spec)


def _close(bot: Bot | None) -> None:
    """End a bot's program, if it runs one (a hosted bot's sandbox), off the event loop."""
    close = getattr(bot, "close", None)
    if close is not None:
        threading.Thread(target=close, name="arena-hosted-close", daemon=True).start()
