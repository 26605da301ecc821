"""The grading service: who may upload, how many wait, and who may read a job.

`GradingService` decides the policies (a known profile, a sandbox or the operator's leave to
grade without one, the queue's limit, a job read by its uploader only) and answers for the
jobs; the intake is server.grading.uploads' (and the refusals of a full queue
server.grading.intake's), who may read a job server.grading.access', the private files
server.grading.files', the rows server.grading.store's and the grading server.grading.workers'.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import shutil
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from autograder.grade import MAIN_FILES, GradeError, starter
from autograder.results import GradeReport
from autograder.visibility import UPLOADER, view
from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import GradingJob, GradingProfiles
from sandbox import can_isolate, sandbox_support
from sandbox.workdirs import sweep_runs
from server.db.models import GradingJob as JobRow
from server.grading.access import finished_report, finished_row, readable_row, report_of
from server.grading.files import GraderFiles
from server.grading.intake import Intake, queue_full
from server.grading.queue import Place
from server.grading.shared import QueueFullError, SharedQueue
from server.grading.store import Admission, JobStore
from server.grading.uploads import Upload, UploadLimits, bad_submission, unpack
from server.grading.wire import describe_job, describe_profiles
from server.grading.workers import GradingWorkers
from server.settings import Settings

if TYPE_CHECKING:
    import procrastinate

log = logging.getLogger(__name__)


class GradingService:
    """Queues uploads, grades them `grader_workers` at a time, and answers for their status."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        settings: Settings,
        queue: procrastinate.App | None = None,
    ) -> None:
        """Grade in-process, or with `queue` (an open server.jobs App: `ARENA_ROLE=server`)
        send each job to the shared queue for `arena worker` processes to grade
        (server.grading.shared)."""
        self._settings = settings
        self._store = JobStore(sessions)
        self._files = GraderFiles(settings)
        self._workers = GradingWorkers(settings, self._store, self._files)
        self._shared = None if queue is None else SharedQueue(queue, sessions)
        self._admitting = 0
        """Uploads past the queue check and not yet queued or refused: they hold their place."""
        self._admitting_by: Counter[int | None] = Counter()
        """The same, per uploader."""
        self._admitting_from: Counter[str | None] = Counter()
        """The same, per address (course submissions not counted)."""
        self._intake = ThreadPoolExecutor(
            settings.grader.intake_threads, thread_name_prefix="arena-intake"
        )
        """Unpacking, checking and writing uploads: CPU and disk work kept off the event loop,
        on threads of its own so that it never takes every thread of the default executor."""
        self._sweeper: asyncio.Task[None] | None = None

    async def start(self) -> int:
        """Re-queue the jobs a previous run left queued or running; start the workers.

        Returns the number of jobs re-queued. Makes no directory until a job needs one, and
        removes the sandbox working directories a killed grading left. With the shared queue,
        nothing: the workers grade, and find unfinished jobs themselves. In either case, sweeps
        job directories that have no row now and every `grader_orphan_sweep_s` (see
        `sweep_orphans`).
        """
        self._sweeper = asyncio.create_task(self._sweep_periodically(), name="orphan-sweep")
        if self._shared is not None:
            return 0
        swept = await asyncio.to_thread(sweep_runs)
        if swept:
            log.info("removed %d sandbox directories of killed gradings", swept)
        pending = await self._store.requeue_unfinished()
        for job in pending:
            # A regrade waits behind fresh uploads after a restart as before it.
            self._workers.enqueue(
                job.job_id, job.owner, job.address, background=job.background, exempt=job.course
            )
        self._workers.start()
        if pending:
            log.info("re-queued %d grading jobs", len(pending))
        return len(pending)

    async def close(self) -> None:
        """Stop the workers and kill running gradings (their jobs are re-run at the next start)."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
        self._intake.shutdown(wait=False, cancel_futures=True)
        if self._shared is None:
            await self._workers.close()

    async def sweep_orphans(self) -> int:
        """Remove the job directories that have no row and are `grader_orphan_age_s` old;
        return how many.

        A server killed between writing an upload's files and storing its row leaves such a
        directory. A younger one may be an upload still being stored, here or by another
        server process sharing the directory, so it is left alone.
        """
        old = await asyncio.to_thread(self._files.old_job_ids, self._settings.grader.orphan_age_s)
        if not old:
            return 0
        stored = await self._store.existing(old)
        orphans = [job_id for job_id in old if job_id not in stored]
        for job_id in orphans:
            await asyncio.to_thread(self._files.remove_job, job_id)
        if orphans:
            log.info("removed %d job directories that had no job", len(orphans))
        return len(orphans)

    async def _sweep_periodically(self) -> None:
        while True:
            try:
                await self.sweep_orphans()
            except Exception:
                # A database or disk failing now may not fail at the next sweep.
                log.exception("sweeping job directories without a job failed")
            await asyncio.sleep(self._settings.grader.orphan_sweep_s)

    def profiles(self) -> GradingProfiles:
        """Describe the profiles and the limits of an upload."""
        return describe_profiles(self._settings, sandboxed=self._sandboxed())

    def starter(self, profile: str) -> tuple[str, str]:
        """Return a profile's starter file, its name and text (autograder.grade.starter).

        Raises ProtocolError: NOT_FOUND for a profile that does not exist.
        """
        try:
            return starter(profile)
        except GradeError:
            raise ProtocolError(
                ErrorCode.NOT_FOUND,
                f"no starter for profile {profile[:40]!r}: choose one of {', '.join(MAIN_FILES)}",
                {"profile": profile[:40]},
            ) from None

    def _sandboxed(self) -> bool:
        """Return whether uploads are graded in the sandbox.

        With the shared queue the workers grade, and one that cannot sandbox takes no grading
        job (server.jobs.grading) unless its own operator allows it: this server's rights
        do not matter.
        """
        return self._shared is not None or can_isolate()

    async def submit(
        self,
        profile: str,
        uploads: Sequence[Upload],
        player_id: int | None = None,
        *,
        address: str | None = None,
        assignment_id: int | None = None,
        member_id: int | None = None,
        admission: Admission | None = None,
    ) -> GradingJob:
        """Check, store and queue an upload by `player_id` from client `address`; return its
        job (status `queued`).

        `player_id` None is an anonymous upload, which the route accepts only when
        `grader_allow_anonymous` is set; such a job is read by anyone holding its id. A course
        submission (server.courses, which decides its policies first) names its assignment,
        whose suite grades it, and its member; it is read through its course only. Raises
        ProtocolError: VALIDATION_ERROR for an unknown profile, BAD_SUBMISSION or
        SUBMISSION_TOO_LARGE for the files, QUEUE_FULL when the queue is full, the player has
        `grader_max_queued_per_player` jobs waiting already, or the address
        `grader_max_queued_per_address` (course submissions are not counted there: a class
        may submit from one campus address). `admission` is the caller's last check, run in
        the transaction that stores the job's row (server.grading.store: a course's daily
        limit). Nothing is stored or queued when it raises; once it returns, the job survives
        a restart.
        """
        if profile not in MAIN_FILES:
            raise ProtocolError(
                ErrorCode.VALIDATION_ERROR,
                f"unknown profile {profile[:40]!r}: choose one of {', '.join(MAIN_FILES)}",
                {"profile": "unknown profile"},
            )
        if not self._sandboxed() and not self._settings.grader.allow_unsandboxed:
            why = sandbox_support().reason or "the sandbox is unavailable"
            raise ProtocolError(
                ErrorCode.GRADER_UNAVAILABLE,
                f"this server cannot sandbox student code ({why}), so it grades nothing; its "
                "operator can set ARENA_GRADER_ALLOW_UNSANDBOXED=true for trials on trusted code",
                {"sandbox": why},
            )
        intake = Intake(profile, uploads, player_id, address, assignment_id, member_id, admission)
        if self._shared is not None:
            return await self._submit_shared(intake, self._shared)
        # The checks and the place they take are one step (no await between them), and the
        # place is held until the job is queued or refused: concurrent uploads cannot all pass
        # the checks while the first of them is still being stored.
        settings = self._settings
        if self._workers.waiting + self._admitting >= settings.grader.max_queued:
            raise queue_full(self._settings, "queue")
        if (
            player_id is not None
            and self._workers.waiting_of(player_id) + self._admitting_by[player_id]
            >= settings.grader.max_queued_per_player
        ):
            raise queue_full(self._settings, "player")
        if (
            not intake.course
            and self._workers.waiting_from(address) + self._admitting_from[address]
            >= settings.grader.max_queued_per_address
        ):
            raise queue_full(self._settings, "address")
        self._admitting += 1
        self._admitting_by[player_id] += 1
        if not intake.course:
            self._admitting_from[address] += 1
        try:
            return await self._admit(intake)
        finally:
            self._admitting -= 1
            self._admitting_by[player_id] -= 1
            if not self._admitting_by[player_id]:
                del self._admitting_by[player_id]
            if not intake.course:
                self._admitting_from[address] -= 1
                if not self._admitting_from[address]:
                    del self._admitting_from[address]

    async def _submit_shared(self, intake: Intake, shared: SharedQueue) -> GradingJob:
        """`submit` with the shared queue: the limits count the database's waiting rows,
        checked before the files are read and again, with the place taken, as the row is
        stored (server.grading.shared)."""
        settings = self._settings
        waiting = await shared.waiting(intake.player_id, intake.address)
        if waiting.total >= settings.grader.max_queued:
            raise queue_full(self._settings, "queue")
        if intake.player_id is not None and waiting.player >= settings.grader.max_queued_per_player:
            raise queue_full(self._settings, "player")
        if not intake.course and waiting.address >= settings.grader.max_queued_per_address:
            raise queue_full(self._settings, "address")
        job_id, files, job_dir = await self._store_files(intake.profile, intake.uploads)
        row = self._store.new_row(
            job_id,
            intake.profile,
            sorted(files),
            intake.player_id,
            intake.assignment_id,
            intake.member_id,
            intake.address,
        )
        try:
            rank = await shared.admit(
                row,
                max_queued=settings.grader.max_queued,
                max_per_player=settings.grader.max_queued_per_player,
                max_per_address=settings.grader.max_queued_per_address,
                check=intake.admission,
            )
        except QueueFullError as full:
            await asyncio.to_thread(shutil.rmtree, job_dir, True)
            raise queue_full(self._settings, full.scope) from None
        except BaseException:
            await asyncio.to_thread(shutil.rmtree, job_dir, True)
            raise
        # Stored: from here the job is graded even if this process dies before the next line
        # (a worker queues a row that has no job: SharedQueue.requeue_orphans).
        await shared.defer(job_id, rank)
        # Its address's other waiting jobs may rank after it now (another player's turn).
        await shared.rank([(intake.address, False)])
        return describe_job(row, await shared.place(job_id))

    async def _store_files(
        self, profile: str, uploads: Sequence[Upload]
    ) -> tuple[str, dict[str, bytes], Path]:
        """Check an upload's files and write them privately, on an intake thread; return the
        new job's id, the files and the job's directory. Nothing is left on disk when it
        raises."""
        job_id = secrets.token_urlsafe(16)
        limits = UploadLimits.of(self._settings)
        try:
            work = self._intake.submit(self._take_files, profile, uploads, job_id, limits)
        except RuntimeError:  # shut down: the server is stopping
            raise ProtocolError(ErrorCode.UNAVAILABLE, "the server is stopping") from None
        try:
            files = await asyncio.wrap_future(work)
        except asyncio.CancelledError:
            # The thread may still be writing: what it wrote goes once it is done.
            work.add_done_callback(lambda _: self._files.remove_job(job_id))
            raise
        return job_id, files, self._files.job_dir(job_id)

    def _take_files(
        self, profile: str, uploads: Sequence[Upload], job_id: str, limits: UploadLimits
    ) -> dict[str, bytes]:
        """Unpack and check an upload, then write its files as job `job_id`'s (blocking)."""
        files = unpack(uploads, limits)
        main = MAIN_FILES[profile]
        if main not in files:
            found = ", ".join(sorted(files)[:10])
            raise bad_submission(
                f"the {profile} profile runs {main}, which the upload does not hold at its top "
                f"level (found: {found})",
                profile=profile,
            )
        self._files.store_submission(job_id, files)
        return files

    async def _admit(self, intake: Intake) -> GradingJob:
        """Check, store and queue an upload that holds a place in the queue."""
        job_id, files, job_dir = await self._store_files(intake.profile, intake.uploads)
        try:
            row = await self._store.add(
                job_id,
                intake.profile,
                sorted(files),
                intake.player_id,
                intake.assignment_id,
                intake.member_id,
                intake.admission,
                intake.address,
            )
        except BaseException:
            await asyncio.to_thread(shutil.rmtree, job_dir, True)
            raise
        self._workers.enqueue(job_id, intake.player_id, intake.address, exempt=intake.course)
        return await self._view(row)

    async def regrade(self, job_ids: Sequence[str]) -> list[str]:
        """Grade jobs again from the start (a course's regrade, which decides who may): their
        results are cleared and they are queued as background work (after every fresh upload,
        server.grading.queue), past the queue's limits; a grading of theirs still running is
        stopped. Returns the ids found. Durable: once it returns, a restart grades them."""
        found = await self._store.requeue(job_ids)
        if self._shared is not None:
            # A grading still running elsewhere sees its attempt superseded and stops.
            await self._shared.defer_regrades(found)
            return [job.job_id for job in found]
        for job in found:
            self._workers.stop_grading(job.job_id)
            self._workers.enqueue(
                job.job_id, job.owner, job.address, background=True, exempt=job.course
            )
        return [job.job_id for job in found]

    def queue_position(self, job_id: str) -> int | None:
        """Return a job's place in this process's queue, from 1; None when it waits for no
        worker here (always, with the shared queue: see `position`)."""
        return self._workers.position(job_id)

    async def position(self, job_id: str) -> int | None:
        """Return a job's place in the queue, from 1, in-process or shared; None when it
        waits for no worker."""
        place = await self.place(job_id)
        return None if place is None else place.position

    async def place(self, job_id: str) -> Place | None:
        """Return where a job stands in the queue, in-process or shared, and whose jobs are
        before it (server.grading.queue.Place); None when it waits for no worker."""
        return (await self.places([job_id])).get(job_id)

    async def places(self, job_ids: Sequence[str]) -> dict[str, Place]:
        """Return where each waiting job of `job_ids` stands (see `place`); the others are
        left out."""
        if self._shared is None:
            return self._workers.places(job_ids)
        found = {}
        for job_id in job_ids:
            place = await self._shared.place(job_id)
            if place is not None:
                found[job_id] = place
        return found

    async def positions(self, job_ids: Sequence[str]) -> dict[str, int | None]:
        """Return the places of jobs in the queue (see `position`), by job id."""
        places = await self.places(job_ids)
        return {
            job_id: place.position if (place := places.get(job_id)) is not None else None
            for job_id in job_ids
        }

    async def uploaded_files(self, job_id: str) -> dict[str, bytes]:
        """Return a job's uploaded files (path -> bytes); empty once they are gone."""
        return await asyncio.to_thread(self._files.submission_files, job_id)

    async def job(self, job_id: str, viewer: int | None) -> GradingJob:
        """Return a job's status to player `viewer` (None: no token); see
        server.grading.access.readable_row for errors."""
        return await self._view(await readable_row(self._store, job_id, viewer))

    async def results(self, job_id: str, viewer: int | None) -> dict[str, Any]:
        """Return a finished job's results.json object as its uploader may see it;
        JOB_NOT_FINISHED before then."""
        report = view(report_of(await finished_row(self._store, job_id, viewer)), UPLOADER)
        return report.to_json()

    async def report(self, job_id: str, viewer: int | None) -> GradeReport:
        """Return a finished job's report as its uploader may see it (read from its results);
        JOB_NOT_FINISHED before then."""
        return view(report_of(await finished_row(self._store, job_id, viewer)), UPLOADER)

    async def job_and_report(
        self, job_id: str, viewer: int | None
    ) -> tuple[GradingJob, GradeReport | None]:
        """Return a job's status to player `viewer` and, once it is finished, its report as
        its uploader may see it."""
        row = await readable_row(self._store, job_id, viewer)
        report = finished_report(row)
        return await self._view(row), None if report is None else view(report, UPLOADER)

    async def _view(self, row: JobRow) -> GradingJob:
        """Return the job as its uploader sees it, with its place in the queue while it waits.

        A job on the grader's own suites is read by its uploader only, who is never shown its
        private tests (autograder.visibility.UPLOADER); a course job is described by its course.
        """
        place = await self.place(row.id) if row.status == "queued" else None
        return describe_job(row, place, finished_report(row), UPLOADER)
