"""Shared test fixtures: where ../shared lives, and skipping when its data is absent.

Under pytest-xdist (`make test` runs two workers) each worker gets its own PostgreSQL database,
Redis database and sandbox uids, so tests that reset a schema, count rate-limit keys or bound
a sandbox uid's processes never see another worker's. The database and the uids are also apart
from those of any other test run on the machine at the same time (a second `make test`): the
database is named after the run and dropped when the worker ends.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import time
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

UID_RUN_SLOTS = 50_000
"""Runs are spread over this many uid ranges (each 16 workers of UID_BASE_STEP uids wide)."""

STALE_DATABASE_S = 6 * 3600
"""A run's worker database left by a run that was killed is dropped after this long."""

_created_database: tuple[URL, str] | None = None


def pytest_configure(config: pytest.Config) -> None:
    """Give this xdist worker its own databases and sandbox uids (nothing without xdist)."""
    global _created_database
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return
    index = int(re.sub(r"\D", "", worker) or 0)
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID", "")
    database = os.environ.get("ARENA_TEST_DATABASE_URL")
    if database:
        base = make_url(database)
        name = f"{base.database or 'test'}_{int(time.time())}_{run[:8] or os.getpid()}_{worker}"
        asyncio.run(_create_database(base, name))
        _created_database = (base, name)
        os.environ["ARENA_TEST_DATABASE_URL"] = base.set(database=name).render_as_string(
            hide_password=False
        )
    redis = os.environ.get("ARENA_TEST_REDIS_URL")
    if redis:
        os.environ["ARENA_TEST_REDIS_URL"] = _worker_redis(redis, index)
    slot = int(hashlib.sha256(run.encode()).hexdigest(), 16) % UID_RUN_SLOTS if run else 0
    os.environ["ARENA_GRADER_UID_BASE"] = str(100_000 + UID_BASE_STEP * (16 * slot + index))


def pytest_unconfigure(config: pytest.Config) -> None:
    """Drop the database this worker made for its run."""
    if _created_database is not None:
        base, name = _created_database
        asyncio.run(_drop_databases(base, [name]))


async def _create_database(url: URL, name: str) -> None:
    """Create database `name`, first dropping worker databases of runs long gone."""
    engine = create_async_engine(url, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as connection:
            names = (await connection.scalars(text("SELECT datname FROM pg_database"))).all()
            stale = [
                other
                for other in names
                if (found := re.fullmatch(rf"{re.escape(url.database or 'test')}_(\d+)_\w+", other))
                and time.time() - int(found.group(1)) > STALE_DATABASE_S
            ]
            for other in stale:
                await connection.execute(text(f'DROP DATABASE IF EXISTS "{other}" WITH (FORCE)'))
            await connection.execute(text(f'CREATE DATABASE "{name}"'))
    finally:
        await engine.dispose()


async def _drop_databases(url: URL, names: list[str]) -> None:
    engine = create_async_engine(url, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as connection:
            for name in names:
                await connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        await engine.dispose()


def _worker_redis(url: str, index: int) -> str:
    """Return `url` naming Redis database `<its number> + 1 + index` (0-15 wrap)."""
    match = re.fullmatch(r"(.*/)(\d+)", url)
    number = int(match.group(2)) if match else 0
    prefix = match.group(1) if match else url.rstrip("/") + "/"
    return f"{prefix}{(number + 1 + index) % 16}"
