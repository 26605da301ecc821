"""Database engines, sessions and migrations; nothing is created at import time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, event, text
from sqlalchemy import create_engine as create_sync_engine
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

MIGRATIONS = Path(__file__).resolve().parent.parent / "migrations"


def create_engine(url: str) -> AsyncEngine:
    """Return an async engine for `url` (sqlite+aiosqlite:///FILE or postgresql+asyncpg://...).

    SQLite gets foreign keys, write-ahead logging (readers do not block the writer) and a sync
    of the log at every commit (cheap: server.db.writer commits many moves at once). A
    server database's connections are checked before use (a SQLite file's need not be).
    """
    is_sqlite = url.startswith("sqlite")
    engine = create_async_engine(url, pool_pre_ping=not is_sqlite)
    if engine.dialect.name == "sqlite":
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
    return engine


def sqlite_writer_engine(engine: AsyncEngine) -> Engine | None:
    """Return a blocking (pysqlite) engine on the same SQLite file as `engine`, else None.

    Every aiosqlite call is a round trip to its thread; a batch of writes done in one call
    on a blocking connection (server.db.writer, in its own thread) avoids a dozen of them.
    """
    if engine.dialect.name != "sqlite":
        return None
    url = engine.url.set(drivername="sqlite")
    writer = create_sync_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
    event.listen(writer, "connect", _sqlite_pragmas)
    return writer


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=FULL")  # an acknowledged move survives a power cut
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Return the session maker for `engine` (objects stay usable after commit)."""
    return async_sessionmaker(engine, expire_on_commit=False)


def alembic_config() -> Config:
    """Return the alembic configuration of Arena's migrations."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


_MIGRATE_LOCK = 0x4152454E41
"""The advisory lock key that serializes migrations on PostgreSQL ("ARENA" in hex)."""


async def migrate(engine: AsyncEngine, revision: str = "head") -> None:
    """Bring the schema of `engine`'s database up to `revision` (alembic upgrade).

    On PostgreSQL the upgrade holds a transaction-level advisory lock: several server processes
    starting at once on an empty database (a cluster, server.cluster) migrate one after the
    other, and the later ones find the schema at `revision` already.
    """

    def upgrade(connection: Connection) -> None:
        config = alembic_config()
        config.attributes["connection"] = connection
        command.upgrade(config, revision)

    async with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            await connection.execute(
                text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATE_LOCK}
            )
        await connection.run_sync(upgrade)
