"""The online bots of every process of a cluster, kept in one Redis hash.

Each process writes its own bots (`Presence.local`) as one field of the hash
`<redis_key_prefix>:presence:bots`, named by its process id: a JSON object with the bots (player
id -> games) and a wall-clock expiry `ttl_s` ahead. It rewrites the field at once when a bot
comes, goes or changes its games, and every `refresh_s` otherwise; a clean stop deletes it. A
reader takes every field that has not expired (and deletes the expired ones: a process that
died leaves the list within `ttl_s`), with this process's own bots read from its hub. While
Redis is away the list holds this process's bots only (one warning per outage).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable, Mapping

from redis.asyncio import Redis
from redis.exceptions import RedisError

from server.hub import Hub
from server.presence import Games, Presence
from server.settings import Settings

log = logging.getLogger(__name__)

REFRESH_S = 10.0
"""How often a process rewrites its field when nothing changed."""
TTL_S = 30.0
"""How long a field counts after it was written: a dead process's bots leave within this."""


class ClusterPresence(Presence):
    """This process's end of the cluster's list of online bots (see the module)."""

    def __init__(
        self,
        hub: Hub,
        settings: Settings,
        process_id: str,
        *,
        refresh_s: float = REFRESH_S,
        ttl_s: float = TTL_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(hub)
        if not settings.redis.url:
            raise ValueError("the cluster's presence needs a Redis URL (settings.redis.url)")
        self.process_id = process_id
        self.key = f"{settings.redis.key_prefix}:presence:bots"
        self._refresh_s = refresh_s
        self._ttl_s = ttl_s
        self._clock = clock
        self._redis: Redis = Redis.from_url(
            settings.redis.url, socket_connect_timeout=2.0, socket_timeout=2.0
        )
        self._dirty = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._down = False

    def changed(self) -> None:
        """Rewrite this process's field soon (a bot came, went or changed its games)."""
        self._dirty.set()

    async def start(self) -> None:
        """Start the writer: now, on every change, and every `refresh_s`."""
        self._task = asyncio.create_task(self._write_forever(), name="presence-writer")

    async def close(self) -> None:
        """Stop the writer and take this process's bots off the list."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        with contextlib.suppress(RedisError, OSError):
            await self._redis.hdel(self.key, self.process_id)
        with contextlib.suppress(Exception):
            await self._redis.aclose()

    async def online(self) -> Mapping[int, Games]:
        """Return the online bots of every live process (this one's from its hub)."""
        bots: dict[int, Games] = {}
        try:
            fields = await self._redis.hgetall(self.key)
        except (RedisError, OSError) as error:
            self._lost(error)
            fields = {}
        now = self._clock()
        expired: list[bytes | str] = []
        for process, raw in fields.items():
            name = process.decode() if isinstance(process, bytes) else process
            if name == self.process_id:
                continue
            try:
                entry = json.loads(raw)
                if float(entry["expires"]) < now:
                    expired.append(process)
                    continue
                for player_id, games in entry["bots"].items():
                    bots[int(player_id)] = None if games is None else tuple(games)
            except (ValueError, KeyError, TypeError, AttributeError):
                log.warning("presence: an unreadable entry of process %s dropped", name)
                expired.append(process)
        if expired:
            with contextlib.suppress(RedisError, OSError):
                await self._redis.hdel(self.key, *expired)
        bots.update(self.local())
        return bots

    async def write(self) -> None:
        """Write this process's bots now (its field is deleted when it has none)."""
        local = self.local()
        if local:
            entry = {
                "expires": self._clock() + self._ttl_s,
                "bots": {str(pid): None if g is None else list(g) for pid, g in local.items()},
            }
            await self._redis.hset(self.key, self.process_id, json.dumps(entry))
        else:
            await self._redis.hdel(self.key, self.process_id)

    async def _write_forever(self) -> None:
        while True:
            self._dirty.clear()
            try:
                await self.write()
            except (RedisError, OSError) as error:
                self._lost(error)
            else:
                if self._down:
                    self._down = False
                    log.info("presence: Redis answers again; this process's bots are listed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._dirty.wait(), self._refresh_s)

    def _lost(self, error: BaseException) -> None:
        if not self._down:
            self._down = True
            log.warning("presence: Redis is away (%s); listing this process's bots only", error)
