"""The grading service: who may upload, how many wait, and who may read a job.

`GradingService` decides the policies (a known profile, a sandbox or the operator's leave to
grade without one, the queue's limit, a job read by its uploader only) and answers for the
jobs. The rest is by job: an upload's checks are server.grading.uploads', its files written on
threads of their own server.grading.intake_files', the refusals of a full queue and the places
held server.grading.intake's, who may read a job server.grading.access', the private files
server.grading.files' (and the sweep of those left without a job server.grading.orphans'),
the rows server.grading.store's and the grading server.grading.workers'.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
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
from server.grading.intake import Admitting, Intake, queue_full, refuse_if_full
from server.grading.intake_files import FileIntake
from server.grading.orphans import OrphanSweep
from server.grading.queue import Place
from server.grading.shared import QueueFullError, SharedQueue
from server.grading.store import Admission, JobStore
from server.grading.uploads import Upload
from server.grading.wire import describe_job, describe_profiles
from server.grading.workers import GradingWorkers
from server.limits.slots import ComputeSlots
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
        *,
        slots: ComputeSlots | None = None,
    ) -> None:
        """Grade in-process, or with `queue` (an open server.jobs App: `ARENA_ROLE=server`)
        send each job to the shared queue for `arena worker` processes to grade
        (server.grading.shared). In-process, each grading holds a slot of `slots`, shared
        with hosted bots (default: slots of its own)."""
        self._settings = settings
        self._store = JobStore(sessions)
        self._files = GraderFiles(settings)
        self._workers = GradingWorkers(settings, self._store, self._files, slots)
        self._shared = None if queue is None else SharedQueue(queue, sessions)
        self._admitting = Admitting()
        self._intake = FileIntake(settings, self._files)
        self._sweep = OrphanSweep(settings, self._store, self._files)

    async def start(self) -> int:
        """Re-queue the jobs a previous run left queued or running; start the workers.

        Returns the number of jobs re-queued. Makes no directory until a job needs one, and
        removes the sandbox working directories a killed grading left. With the shared queue,
        nothing: the workers grade, and find unfinished jobs themselves. In either case, sweeps
        job directories that have no row now and every `grader_orphan_sweep_s` (see
        `sweep_orphans`).
        """
        self._sweep.start()
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
        await self._sweep.close()
        self._intake.close()
        if self._shared is None:
            await self._workers.close()

    async def sweep_orphans(self) -> int:
        """Remove the job directories that have no row and are `grader_orphan_age_s` old;
        return how many (server.grading.orphans)."""
        return await self._sweep.sweep()

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
        admitting = self._admitting
        refuse_if_full(
            self._settings,
            intake,
            waiting=self._workers.waiting + admitting.total,
            of_player=self._workers.waiting_of(player_id) + admitting.of(player_id),
            from_address=self._workers.waiting_from(address) + admitting.from_address(address),
        )
        with admitting.hold(intake):
            return await self._admit(intake)

    async def _submit_shared(self, intake: Intake, shared: SharedQueue) -> GradingJob:
        """`submit` with the shared queue: the limits count the database's waiting rows,
        checked before the files are read and again, with the place taken, as the row is
        stored (server.grading.shared)."""
        grader = self._settings.grader
        waiting = await shared.waiting(intake.player_id, intake.address)
        refuse_if_full(
            self._settings,
            intake,
            waiting=waiting.total,
            of_player=waiting.player,
            from_address=waiting.address,
        )
        async with self._intake.new_job(intake.profile, intake.uploads) as (job_id, files):
            row = intake.row(job_id, files)
            try:
                rank = await shared.admit(
                    row,
                    max_queued=grader.max_queued,
                    max_per_player=grader.max_queued_per_player,
                    max_per_address=grader.max_queued_per_address,
                    check=intake.admission,
                )
            except QueueFullError as full:
                raise queue_full(self._settings, full.scope) from None
        # Stored: from here the job is graded even if this process dies before the next line
        # (a worker queues a row that has no job: SharedQueue.requeue_orphans).
        await shared.defer(job_id, rank)
        # Its address's other waiting jobs may rank after it now (another player's turn).
        await shared.rank([(intake.address, False)])
        return describe_job(row, await shared.place(job_id))

    async def _admit(self, intake: Intake) -> GradingJob:
        """Check, store and queue an upload that holds a place in the queue."""
        async with self._intake.new_job(intake.profile, intake.uploads) as (job_id, files):
            row = await self._store.add(intake.row(job_id, files), intake.admission)
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
