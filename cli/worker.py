"""`arena worker`: run the jobs that `ARENA_ROLE=server` processes queue (grading, ...)."""

from __future__ import annotations

import asyncio
import logging
from typing import Annotated, Any

import typer

from cli.common import fail
from cli.rlimit import raise_open_file_limit


def register(app: typer.Typer) -> None:
    """Add the worker command to `app`."""
    app.command("worker")(worker)


def worker(
    database: Annotated[
        str | None,
        typer.Option(
            "--database",
            help="PostgreSQL URL (ARENA_DATABASE_URL), the same as the servers': "
            "postgresql+asyncpg://user@host/db.",
        ),
    ] = None,
    concurrency: Annotated[
        int | None,
        typer.Option(min=1, max=32, help="Jobs run at once (default: ARENA_GRADER_WORKERS)."),
    ] = None,
    uid_base: Annotated[
        int | None,
        typer.Option(
            min=1000,
            help="First sandbox uid of this worker (slot i uses it plus i). Default: "
            "ARENA_GRADER_UID_BASE plus a range of its own claimed on the database, so workers "
            "on one host never share a uid.",
        ),
    ] = None,
    grace: Annotated[
        float,
        typer.Option(
            min=0,
            help="Seconds running jobs get to finish after SIGTERM before they are "
            "stopped and queued again.",
        ),
    ] = 10.0,
) -> None:
    """Run queued jobs until SIGTERM: grading for servers run with ARENA_ROLE=server.

    Jobs live in the PostgreSQL database; run as many workers as wanted, on any hosts that
    share the database and the grader directory (ARENA_GRADER_DIR). A worker killed outright
    has its running jobs queued again within ARENA_WORKER_STALLED_S + ARENA_WORKER_HEARTBEAT_S
    + ARENA_WORKER_POLL_S seconds. Settings are read as for `arena serve` (`arena serve --help`).
    """
    from pydantic import ValidationError

    from server.jobs.worker import run_worker
    from server.settings import Settings

    overrides: dict[str, Any] = {"role": "worker"}
    if database is not None:
        overrides["database_url"] = database
    try:
        settings = Settings(**overrides)
    except ValidationError as exc:
        fail("bad setting: " + "; ".join(str(e["msg"]) for e in exc.errors()))
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    raise_open_file_limit()  # its database connections and grading children's pipes
    asyncio.run(
        run_worker(
            settings,
            concurrency or settings.grader.workers,
            uid_base=uid_base,
            grace_s=grace,
        )
    )
