"""Shared test fixtures: where ../shared lives, and skipping when its data is absent.

Under pytest-xdist (`make test` runs two workers) each worker gets its own PostgreSQL database,
Redis database and sandbox uids, so tests that reset a schema, count rate-limit keys or bound
a sandbox uid's processes never see another worker's.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.ext.asyncio import create_async_engine

SHARED = Path(__file__).resolve().parents[2] / "shared"


def shared_file(relative: str) -> Path:
    """Return the path of a file under ../shared, skipping the test when it is absent."""
    path = SHARED / relative
    if not path.is_file():
        pytest.skip(f"{path} is absent (shared data lives beside the repository)")
    return path


UID_BASE_STEP = 1000
"""Sandbox uids apart between xdist workers (a server's slots use base, base + 1, ...)."""


def pytest_configure(config: pytest.Config) -> None:
    """Give this xdist worker its own databases and sandbox uids (nothing without xdist)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return
    index = int(re.sub(r"\D", "", worker) or 0)
    database = os.environ.get("ARENA_TEST_DATABASE_URL")
    if database:
        os.environ["ARENA_TEST_DATABASE_URL"] = _worker_database(database, worker)
    redis = os.environ.get("ARENA_TEST_REDIS_URL")
    if redis:
        os.environ["ARENA_TEST_REDIS_URL"] = _worker_redis(redis, index)
    os.environ["ARENA_GRADER_UID_BASE"] = str(64000 + UID_BASE_STEP * (index + 2))


def _worker_database(url: str, worker: str) -> str:
    """Return `url` naming the database `<name>_<worker>`, created when it does not exist."""
    base = make_url(url)
    name = f"{base.database or 'test'}_{worker}"
    asyncio.run(_create_database(base, name))
    return base.set(database=name).render_as_string(hide_password=False)


async def _create_database(url: URL, name: str) -> None:
    engine = create_async_engine(url, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as connection:
            found = await connection.scalar(
                text("SELECT 1 FROM pg_database WHERE datname = :name"), {"name": name}
            )
            if not found:
                await connection.execute(text(f'CREATE DATABASE "{name}"'))
    finally:
        await engine.dispose()


def _worker_redis(url: str, index: int) -> str:
    """Return `url` naming Redis database `<its number> + 1 + index` (0-15 wrap)."""
    match = re.fullmatch(r"(.*/)(\d+)", url)
    number = int(match.group(2)) if match else 0
    prefix = match.group(1) if match else url.rstrip("/") + "/"
    return f"{prefix}{(number + 1 + index) % 16}"
