"""`arena worker`'s process: run queued jobs, put back those of dead workers, stop cleanly.

A worker registers in procrastinate's worker table and heartbeats every
`worker_heartbeat_s`. Every heartbeat it also asks for stalled jobs: jobs `doing` on a
worker whose heartbeat is older than `worker_stalled_s` (killed, frozen, cut off), and puts
them back in the queue (`retry_job`), where any worker takes them at its next poll
(`worker_poll_s`). So a job of a killed worker runs again within
worker_stalled_s + worker_heartbeat_s + worker_poll_s (defaults: 10 + 2 + 1 = 13 s) while
another worker is up, or when the next worker starts. The task itself must make a re-run
harmless (grading: the job row's attempt number fences the dead run's result).

Sandbox uids: each worker claims a slot number n on the database (the lowest free
PostgreSQL advisory lock of `_SLOT_LOCK`, held on a connection for the worker's life, freed
when it dies) and runs its gradings' sandboxes as `grader_uid_base + n * 3 * concurrency + i`,
i < its concurrency, and its hosted programs (a tournament game's seats) under the 2 x concurrency
uids after those: two workers on one host never share a uid (RLIMIT_NPROC counts per uid),
without per-worker settings. `--uid-base` sets the base instead (then the operator keeps
them apart). A worker whose uids would overlap the hosted bots' (hosted_uid_base...) refuses
to start: a server on the same host runs its hosted programs under those.

SIGTERM or SIGINT: no new job is taken; running ones get `grace_s` to finish, then are
cancelled (a grading is killed and its job queued again for another worker).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from typing import Final

import procrastinate
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from server.db.engine import create_engine, migrate, session_factory
from server.jobs.queue import build_queue, ensure_schema
from server.jobs.registry import UIDS_PER_JOB, JobRuntime, register_tasks
from server.settings import Settings, hosted_uids

log = logging.getLogger(__name__)

_SLOT_LOCK: Final = 0x41524E02
"""The advisory lock class of the workers' uid slots (the lock's second key is the slot)."""
MAX_SLOTS: Final = 256
"""Workers that may run at once on one database (each holds one slot)."""


async def claim_slot(engine: AsyncEngine) -> tuple[AsyncConnection, int]:
    """Return a connection holding the lowest free worker slot, and the slot's number.

    The slot is held until the connection closes (or the process dies).
    """
    connection = await engine.connect()
    try:
        for slot in range(MAX_SLOTS):
            taken = await connection.scalar(
                text("SELECT pg_try_advisory_lock(:kind, :slot)"),
                {"kind": _SLOT_LOCK, "slot": slot},
            )
            if taken:
                await connection.commit()
                return connection, slot
    except BaseException:
        await connection.close()
        raise
    await connection.close()
    raise RuntimeError(f"{MAX_SLOTS} workers hold every slot on this database")


def check_uids(settings: Settings, uid_base: int, concurrency: int) -> range:
    """Return this worker's sandbox uids, its gradings' and its hosted programs'; ValueError
    when they overlap the hosted bots' of a server (a server on the same host runs its hosted
    programs under those)."""
    mine = range(uid_base, uid_base + UIDS_PER_JOB * concurrency)
    hosted = hosted_uids(settings)
    if mine.start < hosted.stop and hosted.start < mine.stop:
        raise ValueError(
            f"this worker's sandbox uids ({mine.start}-{mine.stop - 1}) overlap the hosted "
            f"bots' ({hosted.start}-{hosted.stop - 1}: hosted_uid_base and hosted_max_running "
            "+ 4 after it): move hosted_uid_base, grader_uid_base or --uid-base apart"
        )
    return mine


async def requeue_stalled(app: procrastinate.App, settings: Settings) -> int:
    """Put the jobs of workers silent for `worker_stalled_s` back in the queue; return how many.

    Several workers may find the same job: the first puts it back, the others' retries find it
    no longer `doing` and do nothing.
    """
    stalled = await app.job_manager.get_stalled_jobs(
        seconds_since_heartbeat=settings.worker.stalled_s
    )
    count = 0
    for job in stalled:
        try:
            await app.job_manager.retry_job(job)
        except Exception:  # another worker put it back first
            log.debug("stalled job %s was put back already", job.id, exc_info=True)
            continue
        count += 1
        log.warning("job %s (%s) of a dead worker is queued again", job.id, job.task_name)
    return count


async def _maintain(app: procrastinate.App, runtime: JobRuntime) -> None:
    """Every heartbeat: put back stalled jobs, then run the tasks' maintenance."""
    while True:
        for step in (lambda: requeue_stalled(app, runtime.settings), *runtime.periodic):
            try:
                await step()
            except asyncio.CancelledError:
                raise
            except Exception:  # the database may be away for a moment: try again later
                log.exception("worker maintenance failed")
        await asyncio.sleep(runtime.settings.worker.heartbeat_s)


async def run_worker(
    settings: Settings, concurrency: int, *, uid_base: int | None = None, grace_s: float = 10.0
) -> None:
    """Run queued jobs, `concurrency` at once, until SIGTERM or SIGINT (see the module)."""
    engine = create_engine(settings.database_url)
    slot_connection: AsyncConnection | None = None
    try:
        await migrate(engine)
        await ensure_schema(settings)
        if uid_base is None:
            slot_connection, slot = await claim_slot(engine)
            uid_base = settings.grader.uid_base + slot * UIDS_PER_JOB * concurrency
        uids = check_uids(settings, uid_base, concurrency)
        runtime = JobRuntime(
            settings=settings,
            engine=engine,
            sessions=session_factory(engine),
            concurrency=concurrency,
            uid_base=uid_base,
        )
        app = build_queue(settings)
        register_tasks(app, runtime)
        # Only the queues of tasks this worker has: a job of another would fail here.
        queues = sorted({task.queue for task in app.tasks.values()})
        name = f"{socket.gethostname()}-{os.getpid()}"
        log.info(
            "worker %s: %d at once, queues %s, sandbox uids %d-%d",
            name,
            concurrency,
            ", ".join(queues),
            uids.start,
            uids.stop - 1,
        )
        async with app.open_async():
            maintenance = asyncio.create_task(_maintain(app, runtime), name="worker-maintenance")
            try:
                await app.run_worker_async(
                    queues=queues,
                    name=name,
                    concurrency=concurrency,
                    install_signal_handlers=True,
                    shutdown_graceful_timeout=grace_s,
                    update_heartbeat_interval=settings.worker.heartbeat_s,
                    stalled_worker_timeout=settings.worker.stalled_s,
                    fetch_job_polling_interval=settings.worker.poll_s,
                    # A finished job's row is of no further use (the work's own rows say
                    # what became of it); failed ones stay for the operator to read.
                    delete_jobs="successful",
                    abort_job_polling_interval=settings.worker.poll_s,
                )
            finally:
                maintenance.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await maintenance
                for close in runtime.closing:
                    await close()
    finally:
        if slot_connection is not None:
            await slot_connection.close()
        await engine.dispose()
