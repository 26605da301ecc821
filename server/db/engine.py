"""Database engines, sessions and migrations; nothing is created at import time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import event
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

    SQLite gets foreign keys and write-ahead logging, so readers do not block the writer.
    """
    engine = create_async_engine(url, pool_pre_ping=True)
    if engine.dialect.name == "sqlite":

        @event.listens_for(engine.sync_engine, "connect")
        def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

    return engine


def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Return the session maker for `engine` (objects stay usable after commit)."""
    return async_sessionmaker(engine, expire_on_commit=False)


def alembic_config() -> Config:
    """Return the alembic configuration of Arena's migrations."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


async def migrate(engine: AsyncEngine, revision: str = "head") -> None:
    """Bring the schema of `engine`'s database up to `revision` (alembic upgrade)."""

    def upgrade(connection: Connection) -> None:
        config = alembic_config()
        config.attributes["connection"] = connection
        command.upgrade(config, revision)

    async with engine.begin() as connection:
        await connection.run_sync(upgrade)
