"""The tasks a worker runs, and what a task may use there.

Each module of `TASK_MODULES` has `register(app, runtime)`, which adds its tasks to the
worker's App (`app.task(name=..., queue=..., pass_context=True)` on a function closing over
`runtime`) and may add maintenance to `runtime.periodic`. A server never registers tasks: it
defers by name, so a task's module names its task and queue in constants and offers a
`defer_...` function that takes the App.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Final

import procrastinate
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from server.settings import Settings

HOSTED_PER_JOB: Final = 2
"""Hosted programs one job runs at once at most (a tournament game's two seats)."""
UIDS_PER_JOB: Final = 1 + HOSTED_PER_JOB
"""A worker's sandbox uids per job it runs at once: a grading's, and its hosted programs'."""

TASK_MODULES: Final[tuple[str, ...]] = ("server.jobs.grading", "server.jobs.tournament_games")
"""The modules whose tasks every worker runs (each has `register(app, runtime)`)."""


@dataclass
class JobRuntime:
    """What the tasks of one worker process may use; built when the worker starts."""

    settings: Settings
    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]
    concurrency: int
    """Jobs this worker runs at once."""
    uid_base: int
    """The sandbox uid of this worker's slot 0; slot i uses uid_base + i (i < concurrency),
    distinct from every other worker's on the database (server.jobs.worker); the
    2 x concurrency uids after those are its hosted programs' (`hosted_uids`)."""
    periodic: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    """Maintenance run every `settings.worker.heartbeat_s` (after the stalled-job check)."""
    closing: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    """Run when the worker stops, after its jobs ended or were cancelled."""

    @property
    def hosted_uids(self) -> range:
        """The uids of this worker's hosted programs: two per job at once (a game's two
        seats), after its grading uids."""
        start = self.uid_base + self.concurrency
        return range(start, start + HOSTED_PER_JOB * self.concurrency)


def register_tasks(app: procrastinate.App, runtime: JobRuntime) -> None:
    """Register the tasks of every module of `TASK_MODULES` on a worker's `app`."""
    for name in TASK_MODULES:
        importlib.import_module(name).register(app, runtime)
