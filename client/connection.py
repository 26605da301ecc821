"""A bot client's connection: what it sends on, how long it waits between attempts, and when it
gives up on a server that does not answer."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from client.errors import ServerUnreachable, describe_exception
from protocol.messages import ClientMessage, dump_client_message
from protocol.version import PROTOCOL_VERSION


def backoff_delays(
    rng: random.Random, *, first: float = 0.5, factor: float = 2.0, cap: float = 30.0
) -> Iterator[float]:
    """Yield the seconds to wait before each reconnection attempt, forever.

    The base doubles from `first` up to `cap`; each delay is drawn uniformly from the upper
    half of its base ("equal jitter"), so many clients never reconnect in lockstep.
    """
    base = first
    while True:
        yield base / 2 + rng.uniform(0.0, base / 2)
        base = min(cap, base * factor)


async def send_quietly(connection: ClientConnection, text: str) -> None:
    """Send `text`; a closed connection is fine (the next connection resyncs)."""
    with contextlib.suppress(ConnectionClosed):
        await connection.send(text)


class Link:
    """The client's current connection (None between connections), the protocol version of
    the server's last `welcome` (what its messages may carry), and the tasks the client runs
    beside its session (sends, searches, REST checks), held until they finish."""

    def __init__(self) -> None:
        self.connection: ClientConnection | None = None
        self.server_version = "1.0"
        self._tasks: set[asyncio.Task[Any]] = set()

    def start(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` as a task on the running loop, held until it finishes."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def send(self, message: ClientMessage, version: str = PROTOCOL_VERSION) -> None:
        """Send `message` (as a server of `version` reads it) on the current connection, if
        there is one."""
        if self.connection is not None:
            self.start(send_quietly(self.connection, dump_client_message(message, version)))

    def cancel_all(self) -> None:
        """Cancel every task still running."""
        for task in list(self._tasks):
            task.cancel()


class Patience:
    """How long the client has tried to reach a server that does not answer: from the first
    failed attempt since it was last welcomed, counted on `clock`, until `give_up_after`
    seconds (None: never)."""

    def __init__(
        self,
        url: str,
        give_up_after: float | None,
        clock: Callable[[], float],
        log: logging.Logger,
    ) -> None:
        self.url = url
        self.give_up_after = give_up_after
        self._clock = clock
        self._log = log
        self._since: float | None = None

    def reached(self) -> None:
        """The server answered: the next failure starts the count afresh."""
        self._since = None

    def failed(self, exc: BaseException, delay: float) -> None:
        """Log what the client waits for after a failed connection, or raise ServerUnreachable
        once it has waited `give_up_after` seconds."""
        why = describe_exception(exc)
        now = self._clock()
        if self._since is None:
            self._since = now
        waited = now - self._since
        limit = self.give_up_after
        if limit is not None and waited >= limit:
            raise ServerUnreachable(
                f"no Arena server answered at {self.url} for {limit:g} s ({why}); is `arena "
                "serve` running there? (--wait sets how long to wait; 0 waits forever)"
            )
        left = "" if limit is None else f"; giving up in {max(0.0, limit - waited):.0f} s"
        self._log.warning(
            "waiting for the Arena server at %s (%s); retrying in %.1f s%s",
            self.url,
            why,
            delay,
            left,
        )
