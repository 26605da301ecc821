"""The sender of this process's match broadcasts on the bus (server.cluster.bus).

`put` only queues, so a slow or absent Redis never holds a match's lock; one task publishes
the queue in order on the matches channel, each broadcast as `encode_broadcast`'s envelope. A
broadcast that could not be published (Redis away, or MAX_QUEUED already waiting) is not
retried: it is noted, and once Redis answers again a `MatchNotice` of its match (its newest
seq, `encode_notice`'s envelope) goes out before the next broadcast, so followers fetch the
state.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from redis.asyncio import Redis
from redis.exceptions import RedisError

from server.cluster.envelopes import MatchNotice, broadcast_seqs, encode_broadcast, encode_notice
from server.matches.publisher import Broadcast

CLOSE_TIMEOUT_S = 2.0
"""How long `close` lets the sender publish what is queued before giving up on it."""

MAX_QUEUED = 10_000
"""The most broadcasts waiting for the sender; beyond, a broadcast is only noted, and its match
announced by a `MatchNotice` (a Redis too slow to keep up must not grow memory forever)."""


class BroadcastSender:
    """Publishes the broadcasts `put` to it on `channel`, in order, as process `origin`.

    `backoff_s` is the first and the longest wait between tries while Redis is away (the wait
    doubles each failure); `lost` is told each failure to publish. `start` it in the running
    loop, and `close` it at shutdown.
    """

    def __init__(
        self,
        redis: Redis,
        channel: str,
        origin: str,
        backoff_s: tuple[float, float],
        lost: Callable[[BaseException], None],
    ) -> None:
        self._redis = redis
        self._channel = channel
        self._origin = origin
        self._backoff_min_s, self._backoff_max_s = backoff_s
        self._lost = lost
        self._outbox: asyncio.Queue[Broadcast | None] = asyncio.Queue()
        self._unpublished: dict[str, MatchNotice] = {}
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start the task that publishes the queue."""
        self._task = asyncio.create_task(self._send(), name="bus-sender")

    def put(self, broadcast: Broadcast) -> None:
        """Queue `broadcast` (never blocks).

        Beyond MAX_QUEUED waiting, the broadcast is only noted: a `MatchNotice` of its match
        goes out before the next broadcast the sender publishes.
        """
        if self._outbox.qsize() >= MAX_QUEUED:
            self._note(broadcast)
        else:
            self._outbox.put_nowait(broadcast)

    async def close(self) -> None:
        """Publish what is queued (at most CLOSE_TIMEOUT_S), then stop."""
        if self._task is None:
            return
        self._outbox.put_nowait(None)
        done, _ = await asyncio.wait({self._task}, timeout=CLOSE_TIMEOUT_S)
        if not done:
            self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)

    async def _send(self) -> None:
        """Publish queued broadcasts in order; while Redis is away, note them for notices."""
        while True:
            broadcast = await self._outbox.get()
            if broadcast is None:
                return
            try:
                if self._unpublished:
                    await self._publish_notices()
                await self._redis.publish(self._channel, encode_broadcast(self._origin, broadcast))
            except (RedisError, OSError) as error:
                self._lost(error)
                self._note(broadcast)
                if not await self._recover():
                    return

    async def _recover(self) -> bool:
        """Note every queued broadcast until Redis answers, then publish the notices; return
        False when the sender is closing meanwhile."""
        delay = self._backoff_min_s
        while True:
            while not self._outbox.empty():
                queued = self._outbox.get_nowait()
                if queued is None:
                    return False
                self._note(queued)
            await asyncio.sleep(delay)
            delay = min(delay * 2, self._backoff_max_s)
            try:
                await self._redis.ping()
                await self._publish_notices()
            except (RedisError, OSError):
                continue
            return True

    def _note(self, broadcast: Broadcast) -> None:
        """Remember that a broadcast of this match was lost (its newest seq)."""
        seqs = broadcast_seqs(broadcast)
        if seqs is None:
            return  # a challenge: the challenged player sees it on connecting
        known = self._unpublished.get(broadcast.match_id)
        seq = seqs[1] if known is None else max(known.seq, seqs[1])
        self._unpublished[broadcast.match_id] = MatchNotice(
            broadcast.match_id, broadcast.players, seq
        )

    async def _publish_notices(self) -> None:
        for match_id, notice in list(self._unpublished.items()):
            await self._redis.publish(self._channel, encode_notice(self._origin, notice))
            if self._unpublished.get(match_id) is notice:
                del self._unpublished[match_id]
