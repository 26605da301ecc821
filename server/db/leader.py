"""One leader among the processes sharing a database: a PostgreSQL advisory lock held on a
connection of the leader's own.

`Leadership.held()` takes the lock if it is free and tells whether this process holds it; the
lock goes with the connection, so a leader that dies (or loses the database) frees it at once,
and the next process to ask becomes the leader. On SQLite there is one process: it always
leads.
"""

from __future__ import annotations

import contextlib
import logging

from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

log = logging.getLogger(__name__)


class Leadership:
    """This process's claim to lead the work named by the advisory lock `(kind, key)`."""

    def __init__(self, engine: AsyncEngine, kind: int, key: int, name: str) -> None:
        self._engine = engine
        self._kind, self._key = kind, key
        self._name = name
        self._connection: AsyncConnection | None = None

    @property
    def shared(self) -> bool:
        """Whether other processes may share the database (it is not SQLite)."""
        return self._engine.dialect.name != "sqlite"

    async def held(self) -> bool:
        """Return whether this process leads: it held the lock already and its connection is
        alive, or it just took the free lock."""
        if not self.shared:
            return True
        try:
            if self._connection is not None:
                await self._connection.execute(text("SELECT 1"))
                return True
            connection = await self._engine.connect()
            try:
                taken = await connection.scalar(
                    text("SELECT pg_try_advisory_lock(:kind, :key)"),
                    {"kind": self._kind, "key": self._key},
                )
                await connection.commit()
            except BaseException:
                await connection.close()
                raise
            if not taken:
                await connection.close()
                return False
            self._connection = connection
            log.info("this process leads %s", self._name)
            return True
        except (SQLAlchemyError, OSError) as error:
            log.warning("%s: the leader's lock was lost (%r); trying again", self._name, error)
            await self.release()
            return False

    async def release(self) -> None:
        """Give the lead up: end the database session that holds the lock (the connection is
        discarded, not returned to the pool, where the lock would live on)."""
        connection, self._connection = self._connection, None
        if connection is not None:
            with contextlib.suppress(Exception):
                await connection.invalidate()
            with contextlib.suppress(Exception):
                await connection.close()
