"""The services a local cluster (`arena cluster`) runs on, checked before anything starts:
PostgreSQL and Redis answer at their URLs, or ClusterError says what to do.
"""

from __future__ import annotations

import asyncio

from cli.cluster_member import ClusterError

CHECK_TIMEOUT_S = 5.0


def check_services(database_url: str, redis_url: str) -> None:
    """Raise ClusterError unless PostgreSQL and Redis answer at these URLs, saying what to do."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        url = make_url(database_url)
    except ArgumentError as exc:
        raise ClusterError(f"bad database URL {database_url!r}: {exc}") from None
    shown = url.render_as_string(hide_password=True)
    if not url.drivername.startswith("postgresql"):
        raise ClusterError(
            f"a cluster needs PostgreSQL (postgresql+asyncpg://USER@HOST/DB), not {shown}: "
            "several processes share the database, and SQLite is one process's "
            "(`arena serve` runs one on SQLite)"
        )
    if not redis_url.startswith(("redis://", "rediss://")):
        raise ClusterError(f"a Redis URL starts with redis:// or rediss://, not {redis_url!r}")
    asyncio.run(_check(database_url, shown, redis_url))


async def _check(database_url: str, shown: str, redis_url: str) -> None:
    import redis.asyncio as redis
    from sqlalchemy import text
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(database_url, connect_args={"timeout": CHECK_TIMEOUT_S})
    try:
        async with asyncio.timeout(CHECK_TIMEOUT_S + 1):
            async with engine.connect() as connection:
                await connection.execute(text("SELECT 1"))
    except Exception as exc:  # noqa: BLE001 - any failure to connect is reported in words
        raise ClusterError(
            f"cannot use PostgreSQL at {shown}: {_reason(exc)} (is it running, and does the "
            "database exist? `createdb NAME`; set --database or ARENA_DATABASE_URL)"
        ) from None
    finally:
        await engine.dispose()
    client = redis.from_url(redis_url, socket_connect_timeout=CHECK_TIMEOUT_S)
    try:
        async with asyncio.timeout(CHECK_TIMEOUT_S + 1):
            await client.ping()
    except Exception as exc:  # noqa: BLE001 - any failure to connect is reported in words
        raise ClusterError(
            f"cannot use Redis at {redis_url}: {_reason(exc)} (is it running? "
            "`redis-server`; set --redis or ARENA_REDIS_URL)"
        ) from None
    finally:
        await client.aclose()


def _reason(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return f"no answer within {CHECK_TIMEOUT_S:g} s"
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
