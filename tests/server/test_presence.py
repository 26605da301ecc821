"""The bots online (server.presence, server.cluster.presence): one process's from its hub, a
cluster's through Redis, with a dead process's bots leaving once its entry expires.

The cluster tests need ARENA_TEST_REDIS_URL; each uses a fresh key prefix. Expiry runs on a
clock the test moves.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from types import SimpleNamespace
from typing import Any

import pytest
from redis.asyncio import Redis

from server.cluster.presence import ClusterPresence
from server.hub import Hub
from server.presence import Presence
from server.settings import Settings

REDIS_URL = os.environ.get("ARENA_TEST_REDIS_URL")
needs_redis = pytest.mark.skipif(not REDIS_URL, reason="ARENA_TEST_REDIS_URL is not set")


def connection(*, bot: bool, games: tuple[str, ...] | None = None, closed: bool = False) -> Any:
    return SimpleNamespace(bot_available=bot, bot_games=games, closed=closed)


def test_one_process_lists_the_open_connections_that_said_they_are_bots() -> None:
    hub = Hub()
    hub.players = {
        1: connection(bot=True, games=("checkers",)),
        2: connection(bot=False),
        3: connection(bot=True),
        4: connection(bot=True, closed=True),
    }
    presence = Presence(hub)
    assert asyncio.run(presence.online()) == {1: ("checkers",), 3: None}


async def until(check: Any) -> None:
    """Await `check()` until it is true (a failure is a hang, never a speed claim)."""
    for _ in range(500):
        if await check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("never happened")


@needs_redis
def test_every_process_sees_every_processs_bots_and_a_dead_one_expires() -> None:
    settings = Settings(redis_url=REDIS_URL, redis_key_prefix=f"test-{uuid.uuid4().hex}")
    now = [1_000.0]

    async def scenario() -> None:
        first_hub, second_hub = Hub(), Hub()
        first_hub.players = {1: connection(bot=True, games=("checkers",)), 2: connection(bot=False)}
        second_hub.players = {3: connection(bot=True)}
        first = ClusterPresence(
            first_hub, settings, "p1", refresh_s=3600, ttl_s=30, clock=lambda: now[0]
        )
        second = ClusterPresence(
            second_hub, settings, "p2", refresh_s=3600, ttl_s=30, clock=lambda: now[0]
        )
        redis = Redis.from_url(settings.redis.url or "")
        try:
            await first.start()
            await second.start()

            async def both_see(expected: dict[int, Any]) -> bool:
                return dict(await first.online()) == dict(await second.online()) == expected

            await until(lambda: both_see({1: ("checkers",), 3: None}))
            # A bot leaves, another comes with its games: written at once, not at the refresh.
            del first_hub.players[1]
            first_hub.players[5] = connection(bot=True, games=("nim", "connect4"))
            first.changed()
            await until(lambda: both_see({5: ("nim", "connect4"), 3: None}))
            # The first process dies without a word: its entry stays until it expires.
            assert first._task is not None
            first._task.cancel()
            now[0] += 29
            assert dict(await second.online()) == {5: ("nim", "connect4"), 3: None}
            now[0] += 2
            assert dict(await second.online()) == {3: None}
            assert set(await redis.hkeys(second.key)) == {b"p2"}  # the dead entry was deleted
            # A clean stop takes the process's bots off the list at once.
            await second.close()
            assert await redis.hkeys(second.key) == []
        finally:
            await first.close()
            await second.close()
            await redis.aclose()

    asyncio.run(scenario())
