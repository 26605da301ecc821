"""The job queue: a procrastinate App on the settings' PostgreSQL database.

Jobs live in procrastinate's tables (`procrastinate_jobs`, ...) in Arena's own database, so
a job is deferred by the process that stores the row it works on, and both survive anything
short of losing the database. The schema is procrastinate's, applied by the first process
that needs it (`ensure_schema`, under an advisory lock: processes starting together apply it
once). Only a missing schema is applied: a procrastinate upgrade that ships schema migrations
(procrastinate's `sql/migrations`) needs them applied by the operator, as its docs say.
"""

from __future__ import annotations

from typing import Final

import procrastinate
import psycopg
from procrastinate.schema import SchemaManager
from sqlalchemy.engine import make_url

from server.settings import Settings

_SCHEMA_LOCK: Final = 0x41524E01
"""The advisory lock key held while the queue's schema is checked and applied."""


def conninfo(database_url: str) -> str:
    """Return the libpq connection string of a SQLAlchemy PostgreSQL URL (psycopg's form).

    `postgresql+asyncpg://user@host/db` becomes `postgresql://user@host/db`. Query options are
    passed on as they are: asyncpg's and libpq's differ (`ssl=` vs `sslmode=`), so a URL that
    needs them must use the libpq names.
    """
    url = make_url(database_url)
    if url.get_backend_name() != "postgresql":
        raise ValueError(f"the job queue needs PostgreSQL, not {url.get_backend_name()}")
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


def build_queue(settings: Settings) -> procrastinate.App:
    """Return the job queue's App on `settings.database_url` (not open: `open_async` it).

    It knows no task: a server defers by task name (`configure_task`); a worker registers
    the tasks it runs (server.jobs.registry).
    """
    connector = procrastinate.PsycopgConnector(
        conninfo=conninfo(settings.database_url), min_size=1, max_size=4
    )
    return procrastinate.App(connector=connector)


async def ensure_schema(settings: Settings) -> bool:
    """Apply procrastinate's schema to the database unless it is there; return whether applied.

    Idempotent, and safe when processes start together: the check and the application run
    under one advisory lock.
    """
    async with await psycopg.AsyncConnection.connect(
        conninfo(settings.database_url), autocommit=True
    ) as connection:
        await connection.execute("SELECT pg_advisory_lock(%s)", (_SCHEMA_LOCK,))
        try:
            cursor = await connection.execute("SELECT to_regclass('procrastinate_jobs')")
            row = await cursor.fetchone()
            if row is not None and row[0] is not None:
                return False
            schema = SchemaManager.get_schema()
            await connection.execute(schema)
            return True
        finally:
            await connection.execute("SELECT pg_advisory_unlock(%s)", (_SCHEMA_LOCK,))
