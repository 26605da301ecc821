"""The grading queue and its workers: jobs graded in order, each in a child process.

`settings.grader.workers` worker tasks take jobs in the queue's order (server.grading.queue:
addresses in turn, then their players, fresh uploads before regrades); a course submission is graded
with its assignment's suite, any other job with its profile's; worker slot i runs its sandboxes as
uid `grader_uid_base + i` (RLIMIT_NPROC counts per uid, so concurrent gradings must not share
one). A worker holds a grading slot of the process's `ComputeSlots` (server.limits.slots,
shared with hosted bots' programs) while it grades: it waits for one after taking its job,
and grading's reserve is never taken by hosted bots, so a flood of hosted matches delays no
grading that fits in it. Each grading runs in a child process,
`python -m autograder.job JOB_DIR` (see autograder/job.py), under `grader_job_timeout_s`; the
child writes results.json, which is then stored in the job's row with the HTML report made
from it. A child that fails, is killed or overruns still ends its job: status `error` with a
report saying the grader failed (never a job stuck `running`). A child dies with the server,
even one killed outright: the next start grades its job again.

`Grader` grades one job; `GradingWorkers` feeds it in-process, and `arena worker` processes
feed it from the shared queue (server.jobs.grading, server.grading.shared).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Final

from autograder.job import JOB_FILE, RESULTS_FILE, SUBMISSION_DIR, Job, failure_report
from autograder.results import GradeReport
from protocol.messages import JobStatus
from sandbox import SETPRIV
from server.grading.files import GraderFiles
from server.grading.queue import FairQueue, Place
from server.grading.store import JobStore
from server.limits.slots import ComputeSlots, Split
from server.settings import Settings

log = logging.getLogger(__name__)

_MAX_LOG_BYTES: Final = 65_536


class Grader:
    """Grades one job at a time per caller, each in a child process; kills them on request."""

    def __init__(self, settings: Settings, store: JobStore, files: GraderFiles) -> None:
        self._settings = settings
        self._store = store
        self._files = files
        self._children: set[asyncio.subprocess.Process] = set()
        self._running: dict[Path, asyncio.subprocess.Process] = {}
        """The grading child of each job directory being graded."""

    def stop_grading(self, job_id: str) -> None:
        """Kill the grading of job `job_id` if one runs (a regrade: its result would be stale)."""
        child = self._running.get(self._files.job_dir(job_id))
        if child is not None:
            _kill(child)

    def kill_all(self) -> None:
        """Kill every running grading (their jobs are graded again later)."""
        for child in list(self._children):
            _kill(child)

    async def grade(self, job_id: str, uid: int, *, shared: bool = False) -> None:
        """Grade job `job_id` with sandbox uid `uid` and store its report.

        In-process (`shared` False) only a `queued` job is taken. A worker of the shared queue
        (`shared`) also takes a job stored `running`: the queue runs one job of a grading at a
        time, so that attempt's runner is dead; while grading, it stops when the row says the
        attempt is no longer current (a regrade on another server), and if it is cancelled it
        queues the job again. Either way the attempt number fences a stale attempt's report.
        """
        if shared:
            attempt = await self._store.take_attempt(job_id)
        else:
            attempt = await self._store.start_attempt(job_id)
        if attempt is None:
            return
        if attempt.assignment_id is None:
            suite = self._files.suite_path(attempt.profile)
        else:
            suite = self._files.assignment_suite_path(attempt.assignment_id)
        job = Job(
            profile=attempt.profile,
            suite=suite,
            python=self._settings.grader.python,
            uid=uid,
            gid=uid,
            budget_s=self._settings.grader.job_budget_s,
        )
        if attempt.assignment_id is not None and not suite.is_file():
            # Never the grader's own random suite in place of the one the staff set.
            report = failure_report(attempt.profile, "the assignment's suite file is missing")
            status: JobStatus = "error"
        elif shared:
            try:
                report, status = await self._run_child(
                    self._files.job_dir(job_id),
                    job,
                    lambda: self._store.is_current(job_id, attempt.number),
                )
            except asyncio.CancelledError:
                await asyncio.shield(self._store.release_attempt(job_id, attempt.number))
                raise
            except _SupersededError:
                return
        else:
            report, status = await self._run_child(self._files.job_dir(job_id), job)
        await self._store.store_report(job_id, report, status, attempt.number)

    async def _run_child(
        self,
        job_dir: Path,
        job: Job,
        is_current: Callable[[], Awaitable[bool]] | None = None,
    ) -> tuple[GradeReport, JobStatus]:
        """Run the grading child; return its report and the job's final status.

        With `is_current`, asked every `worker_heartbeat_s`: the child is killed and
        _SupersededError raised once it answers False.
        """
        if not (job_dir / SUBMISSION_DIR).is_dir():
            return failure_report(job.profile, "the submission's files are missing"), "error"
        (job_dir / RESULTS_FILE).unlink(missing_ok=True)
        (job_dir / JOB_FILE).write_text(json.dumps(job.to_json()), encoding="utf-8")
        log_path = job_dir / "grader.log"
        with open(log_path, "wb") as log_file:
            child = await asyncio.create_subprocess_exec(
                *_grading_command(job_dir),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log_file,
                stderr=log_file,
                start_new_session=True,
            )
        self._children.add(child)
        self._running[job_dir] = child
        try:
            try:
                code = await self._wait(child, is_current)
            except TimeoutError:
                _kill(child)
                await child.wait()
                why = f"grading took longer than {self._settings.grader.job_timeout_s:g} s"
                return failure_report(job.profile, why), "error"
            except (asyncio.CancelledError, _SupersededError):
                _kill(child)
                raise
        finally:
            self._children.discard(child)
            if self._running.get(job_dir) is child:
                del self._running[job_dir]
        results = job_dir / RESULTS_FILE
        if not results.is_file():
            tail = _tail(log_path)
            log.error("grading child exited %s without results: %s", code, tail)
            why = f"the grading process exited with status {code} and wrote no results"
            return failure_report(job.profile, why), "error"
        report = _read_report(results, job.profile)
        return report, "done" if code == 0 else "error"

    async def _wait(
        self,
        child: asyncio.subprocess.Process,
        is_current: Callable[[], Awaitable[bool]] | None,
    ) -> int:
        """Return the child's exit status; TimeoutError after `grader_job_timeout_s`."""
        timeout = self._settings.grader.job_timeout_s
        if is_current is None:
            return await asyncio.wait_for(child.wait(), timeout=timeout)
        deadline = time.monotonic() + timeout
        waiter = asyncio.ensure_future(child.wait())
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                await asyncio.wait({waiter}, timeout=min(left, self._settings.worker.heartbeat_s))
                if waiter.done():
                    return waiter.result()
                if not await self._still_current(is_current):
                    raise _SupersededError
        finally:
            waiter.cancel()

    @staticmethod
    async def _still_current(is_current: Callable[[], Awaitable[bool]]) -> bool:
        """Ask `is_current`; an error (the database away a moment) counts as yes."""
        try:
            return await is_current()
        except Exception:
            log.warning("cannot check a grading's attempt; it goes on", exc_info=True)
            return True


class _SupersededError(Exception):
    """The attempt being graded is no longer the job's current one."""


class GradingWorkers:
    """The jobs waiting to be graded, in their order, and the worker tasks that grade them."""

    def __init__(
        self,
        settings: Settings,
        store: JobStore,
        files: GraderFiles,
        slots: ComputeSlots | None = None,
    ) -> None:
        """`slots` are the process's, shared with hosted bots (default: slots of their own)."""
        self._settings = settings
        self._grader = Grader(settings, store, files)
        self._slots = slots if slots is not None else ComputeSlots(Split.of(settings))
        self._queue = FairQueue()
        self._ready = asyncio.Event()
        """Set when a job was queued; a worker that finds the queue empty clears it and waits."""
        self._workers: list[asyncio.Task[None]] = []

    @property
    def waiting(self) -> int:
        """Return how many jobs wait for a worker."""
        return len(self._queue)

    def waiting_of(self, owner: int | None) -> int:
        """Return how many jobs uploaded by player `owner` (None: anonymous) wait."""
        return self._queue.waiting_of(owner)

    def waiting_from(self, address: str | None) -> int:
        """Return how many fresh uploads from `address` wait (course submissions not counted)."""
        return self._queue.waiting_from(address)

    def position(self, job_id: str) -> int | None:
        """Return the job's place in the queue, from 1; None when it waits for no worker."""
        return self._queue.position(job_id)

    def places(self, job_ids: Sequence[str]) -> dict[str, Place]:
        """Return where each waiting job of `job_ids` stands (server.grading.queue.Place)."""
        return self._queue.places(job_ids)

    def enqueue(
        self,
        job_id: str,
        owner: int | None,
        address: str | None = None,
        *,
        background: bool = False,
        exempt: bool = False,
    ) -> None:
        """Queue a job uploaded by player `owner` (None: anonymous) from `address`;
        `background` for a regrade, `exempt` for a course submission (not counted toward its
        address's waiting jobs).

        It takes turns with the other addresses' jobs, and within its address with the other
        players' (server.grading.queue).
        """
        self._queue.push(job_id, owner, address, background=background, exempt=exempt)
        self._ready.set()

    def stop_grading(self, job_id: str) -> None:
        """Kill the grading of job `job_id` if one runs (a regrade: its result would be stale)."""
        self._grader.stop_grading(job_id)

    def start(self) -> None:
        """Start the workers."""
        self._workers = [
            asyncio.create_task(self._work(slot), name=f"grader-{slot}")
            for slot in range(self._settings.grader.workers)
        ]

    async def close(self) -> None:
        """Stop the workers and kill running gradings (their jobs are re-run at the next start)."""
        self._grader.kill_all()
        for worker in self._workers:
            worker.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        self._workers = []

    async def _work(self, slot: int) -> None:
        while True:
            job_id = self._queue.pop()
            if job_id is None:
                self._ready.clear()
                await self._ready.wait()
                continue
            try:
                await self._slots.take("grading")
                try:
                    await self._grader.grade(job_id, self._settings.grader.uid_base + slot)
                finally:
                    self._slots.give_back("grading")
            except asyncio.CancelledError:
                raise
            except Exception:  # a worker must outlive any one job
                log.exception("grading job %s failed", job_id)
            finally:
                self._queue.done(job_id)


def _grading_command(job_dir: Path) -> list[str]:
    """Return the command line of the child that grades `job_dir`, which dies with the server.

    A grading that outlived a server killed outright (SIGKILL, a crash) would go on beside the
    next start's, which grades the job again from the start: two runs of one job, the same
    sandbox uid shared by two gradings, results.json written by both. `setpriv --pdeathsig`
    SIGKILLs the child when the server dies (its sandboxes follow: their own PDEATHSIG).
    """
    command = [sys.executable, "-m", "autograder.job", str(job_dir)]
    if os.path.exists(SETPRIV):
        return [SETPRIV, "--pdeathsig", "KILL", "--", *command]
    return command


def _read_report(path: Path, profile: str) -> GradeReport:
    """Read the report the child wrote (results.json), so the row and the page agree."""
    try:
        return GradeReport.from_json(json.loads(path.read_text(encoding="utf-8")), profile)
    except (OSError, ValueError) as error:
        return failure_report(profile, f"its results file is unreadable ({error})")


def _tail(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - _MAX_LOG_BYTES))
            return handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def _kill(child: asyncio.subprocess.Process) -> None:
    """SIGKILL a grading child's process group (its sandboxes die with it: PDEATHSIG)."""
    with contextlib.suppress(OSError):  # already gone
        os.killpg(child.pid, signal.SIGKILL)
