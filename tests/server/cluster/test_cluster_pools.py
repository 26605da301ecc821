"""Rated pools in a cluster: one process pairs (the holder of an advisory lock), the bookings
refuse a member booked twice whoever books, and when the pairing process is killed another
takes the lead and the pool plays on, no member ever in two pool games at once.

Needs ARENA_TEST_DATABASE_URL (PostgreSQL); the processes' test needs ARENA_TEST_REDIS_URL too.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select, text

from server.db.engine import create_engine, migrate, session_factory
from server.db.leader import Leadership
from server.db.models import Match, PoolGame
from server.pool.store import PoolStore
from tests.server.conftest import _reset_database, arena_serve
from tests.server.hosted.test_hosted_bots import RANDOM_ENGINE
from tests.waiting import wait_for

DATABASE_URL = os.environ.get("ARENA_TEST_DATABASE_URL")
REDIS_URL = os.environ.get("ARENA_TEST_REDIS_URL")

needs_postgres = pytest.mark.skipif(not DATABASE_URL, reason="ARENA_TEST_DATABASE_URL is not set")
needs_cluster = pytest.mark.skipif(
    not (DATABASE_URL and REDIS_URL),
    reason="ARENA_TEST_DATABASE_URL and ARENA_TEST_REDIS_URL are needed",
)


@needs_postgres
async def test_one_process_leads_until_it_lets_go_or_its_connection_dies() -> None:
    assert DATABASE_URL is not None
    engines = [create_engine(DATABASE_URL) for _ in range(3)]
    first, second = (Leadership(engine, 0x41524E7F, 9, "a test's work") for engine in engines[:2])
    try:
        assert await first.held()
        assert not await second.held()
        assert await first.held()  # still (its connection answers)
        await first.release()
        assert await second.held()
        assert not await first.held()
        # The leader's session is ended from outside, as when its process dies: it finds out
        # at its next look, and the lock is free for whoever asks.
        async with engines[2].connect() as admin:
            pids = (
                await admin.scalars(
                    text(
                        "SELECT pid FROM pg_locks WHERE locktype = 'advisory' "
                        "AND classid = :kind AND objid = :key AND granted"
                    ),
                    {"kind": 0x41524E7F, "key": 9},
                )
            ).all()
            assert len(pids) == 1
            await admin.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pids[0]})
        assert not await second.held()
        assert await first.held()
    finally:
        await first.release()
        await second.release()
        for engine in engines:
            await engine.dispose()


@needs_postgres
async def test_a_member_is_booked_into_one_pool_game_whoever_books_it() -> None:
    assert DATABASE_URL is not None
    await _reset_database(DATABASE_URL)
    engines = [create_engine(DATABASE_URL) for _ in range(2)]
    try:
        await migrate(engines[0])
        stores = [PoolStore(session_factory(engine)) for engine in engines]
        # Two servers book overlapping pairs at once: exactly one of them gets its pair.
        for round_ in range(20):
            a, b, c = (f"bot:{round_ * 3 + n}" for n in range(3))
            booked = await asyncio.gather(
                stores[0].book("ttt", f"m_{round_}_x", (a, b)),
                stores[1].book("ttt", f"m_{round_}_y", (b, c)),
            )
            assert sorted(booked) == [False, True], booked
            keys = await stores[0].booked()  # no match exists yet: the bookings are young
            assert b in keys and (a in keys) != (c in keys)
        # A pairing that could not make its match lets its members go at once.
        await stores[1].release("m_0_x")
        await stores[1].release("m_0_y")
        assert not {"bot:0", "bot:1", "bot:2"} & await stores[0].booked()
    finally:
        for engine in engines:
            await engine.dispose()


# -- two real processes, the pairing one killed ------------------------------------------------


@contextmanager
def pool_server(
    tmp_path: Path, name: str, prefix: str, uid_offset: int
) -> Iterator[tuple[Any, str]]:
    assert DATABASE_URL is not None and REDIS_URL is not None
    grader_base = int(os.environ.get("ARENA_GRADER_UID_BASE", "100000"))
    env = {
        "ARENA_REDIS_URL": REDIS_URL,
        "ARENA_REDIS_KEY_PREFIX": prefix,
        "ARENA_LEASE_TTL_MS": "2000",
        "ARENA_HEARTBEAT_MS": "500",
        "ARENA_RATE_LIMITS_ENABLED": "false",
        "ARENA_GRADER_DIR": str(tmp_path / f"grader-{name}"),
        "ARENA_HOSTED_DIR": str(tmp_path / "hosted"),  # one volume for both, as in a cluster
        "ARENA_HOSTED_UID_BASE": str(grader_base + uid_offset),
        "ARENA_HOSTED_ALLOW_UNSANDBOXED": "true",
        "ARENA_POOL_POOLS": json.dumps(
            [{"name": "ttt", "game": "tictactoe", "base_ms": 60_000, "increment_ms": 0}]
        ),
        "ARENA_POOL_PAIR_EVERY_S": "0.2",
    }
    with arena_serve(DATABASE_URL, None, **env) as (process, base):
        yield process, base


def _finished(url: str) -> int:
    pool = httpx.get(f"{url}/pools/ttt", timeout=30).json()
    return sum(1 for game in pool["recent"] if game["status"] == "finished")


@needs_cluster
def test_the_pool_plays_on_when_its_pairing_process_is_killed(tmp_path: Path) -> None:
    assert DATABASE_URL is not None
    asyncio.run(_reset_database(DATABASE_URL))
    prefix = f"test-{uuid.uuid4().hex}"
    with pool_server(tmp_path, "a", prefix, 500) as (first, first_url):
        http = httpx.Client(timeout=30)
        for who in ("ada", "bob", "cy", "dee"):
            token = http.post(f"{first_url}/players", json={"name": who}).json()["token"]
            auth = {"Authorization": f"Bearer {token}"}
            made = http.post(
                f"{first_url}/hosted-bots", json={"name": "rnd", "game": "tictactoe"}, headers=auth
            )
            assert made.status_code == 201, made.text
            version = http.post(
                f"{first_url}/hosted-bots/{who}/rnd/versions",
                data={"kind": "engine"},
                files=[("files", ("bot.py", RANDOM_ENGINE))],
                headers=auth,
            )
            assert version.json()["status"] == "ready", version.text
            joined = http.post(
                f"{first_url}/pools/ttt/members", json={"bot": f"{who}/rnd"}, headers=auth
            )
            assert joined.status_code == 201, joined.text
        # The first process leads (it is alone); the second, started now, does not pair.
        wait_for("the first games", lambda: _finished(first_url) >= 4)
        with pool_server(tmp_path, "b", prefix, 600) as (_second, second_url):
            assert _finished(second_url) >= 4  # one database: both show the pool
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=10)
            before = _finished(second_url)
            # The second takes the lead (the lock went with the dead process's connection)
            # and the matches the first owned are taken over and finished.
            wait_for("games paired by the second", lambda: _finished(second_url) >= before + 8)
            pool = http.get(f"{second_url}/pools/ttt").json()
            assert {entry["bot"] for entry in pool["ladder"]} == {
                f"{who}/rnd" for who in ("ada", "bob", "cy", "dee")
            }
        http.close()
    asyncio.run(_check_no_member_played_two_games_at_once())


async def _check_no_member_played_two_games_at_once() -> None:
    assert DATABASE_URL is not None
    engine = create_engine(DATABASE_URL)
    try:
        async with engine.connect() as connection:
            rows = (
                await connection.execute(
                    select(
                        PoolGame.first_bot_id,
                        PoolGame.second_bot_id,
                        Match.created_at,
                        Match.updated_at,
                        Match.status,
                    ).join(Match, Match.id == PoolGame.match_id)
                )
            ).all()
    finally:
        await engine.dispose()
    assert len(rows) >= 12
    spans: dict[int, list[tuple[Any, Any]]] = {}
    for first, second, created, updated, status in rows:
        end = updated if status in ("finished", "aborted") else None
        for bot in (first, second):
            spans.setdefault(bot, []).append((created, end))
    for bot, played in spans.items():
        played.sort(key=lambda span: span[0])
        for (_, end), (start, _) in itertools.pairwise(played):
            assert end is not None and end <= start, f"bot {bot} played two pool games at once"
