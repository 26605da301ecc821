"""The grading task: a worker grades one job of the shared queue (server.grading.shared).

The grading itself is server.grading's (`Grader`: a child process per job, under the
sandbox); this is its entry in a worker. Each running job takes one of the worker's sandbox
uids (runtime.uid_base + i, i < concurrency) and gives it back when it ends. Every heartbeat
the worker also queues again the unfinished jobs that have no grading waiting or running.
"""

from __future__ import annotations

import logging

import procrastinate

from sandbox import can_isolate, sandbox_support
from sandbox.workdirs import sweep_runs
from server.grading.files import GraderFiles
from server.grading.shared import GRADE_TASK, GRADING_QUEUE, SharedQueue
from server.grading.store import JobStore
from server.grading.workers import Grader
from server.jobs.registry import JobRuntime

log = logging.getLogger(__name__)


def register(app: procrastinate.App, runtime: JobRuntime) -> None:
    """Add the grading task to a worker's `app`, and its upkeep to `runtime`.

    Not on a worker that cannot sandbox student code (sandbox.support.sandbox_support says
    why) unless its operator allows unsandboxed grading: such a worker takes no grading job
    (it listens only to the queues of its tasks), which waits for a worker that can. A worker
    that grades first removes the sandbox working directories killed gradings left.
    """
    if not can_isolate() and not runtime.settings.grader.allow_unsandboxed:
        log.warning(
            "this worker cannot sandbox student code (%s): it grades nothing",
            sandbox_support().reason,
        )
        return
    if swept := sweep_runs():
        log.info("removed %d sandbox directories of killed gradings", swept)
    grader = Grader(runtime.settings, JobStore(runtime.sessions), GraderFiles(runtime.settings))
    free_uids = [runtime.uid_base + slot for slot in reversed(range(runtime.concurrency))]
    shared = SharedQueue(app, runtime.sessions)

    @app.task(name=GRADE_TASK, queue=GRADING_QUEUE)
    async def grade(job_id: str) -> None:
        # The worker runs at most `concurrency` jobs at once, so a uid is always free.
        uid = free_uids.pop()
        try:
            await grader.grade(job_id, uid, shared=True)
        finally:
            free_uids.append(uid)

    async def requeue_orphans() -> None:
        await shared.requeue_orphans()

    async def kill_gradings() -> None:
        grader.kill_all()

    runtime.periodic.append(requeue_orphans)
    runtime.closing.append(kill_gradings)
