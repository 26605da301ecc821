"""Alembic environment: runs on the connection the server passes in, or on ARENA_DATABASE_URL."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.engine import Connection

from server.db.engine import create_engine
from server.db.models import Base, is_arena_schema
from server.settings import get_settings

target_metadata = Base.metadata


def run_on(connection: Connection) -> None:
    """Run the migrations on an open synchronous connection."""
    context.configure(
        connection=connection, target_metadata=target_metadata, include_name=is_arena_schema
    )
    with context.begin_transaction():
        context.run_migrations()


async def run_from_settings() -> None:
    """Run the migrations on the database named by ARENA_DATABASE_URL (the alembic CLI)."""
    engine = create_engine(get_settings().database_url)
    async with engine.begin() as connection:
        await connection.run_sync(run_on)
    await engine.dispose()


given = context.config.attributes.get("connection")
if given is not None:
    run_on(given)
else:
    asyncio.run(run_from_settings())
