"""An upload's files checked and written as a new job's, on intake threads of their own.

Unpacking and checking an upload (server.grading.uploads) is CPU work and writing it
(server.grading.files) disk work: both are kept off the event loop, on threads that are never
the default executor's, so that uploads cannot take every one of its threads.
"""

from __future__ import annotations

import asyncio
import secrets
import shutil
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager

from autograder.grade import MAIN_FILES
from protocol.errors import ErrorCode, ProtocolError
from server.grading.files import GraderFiles
from server.grading.uploads import Upload, UploadLimits, bad_submission, unpack
from server.settings import Settings


class FileIntake:
    """Checks and writes uploads on `grader_intake_threads` threads."""

    def __init__(self, settings: Settings, files: GraderFiles) -> None:
        self._settings = settings
        self._files = files
        self._threads = ThreadPoolExecutor(
            settings.grader.intake_threads, thread_name_prefix="arena-intake"
        )

    def close(self) -> None:
        """Take no more uploads; those not yet begun are cancelled."""
        self._threads.shutdown(wait=False, cancel_futures=True)

    @asynccontextmanager
    async def new_job(
        self, profile: str, uploads: Sequence[Upload]
    ) -> AsyncIterator[tuple[str, dict[str, bytes]]]:
        """Check an upload's files for `profile` and write them privately; yield the new job's
        id and the files, for the caller to store the job's row.

        Nothing is left on disk when the checks, the writing or the caller's block raise.
        Raises ProtocolError: BAD_SUBMISSION or SUBMISSION_TOO_LARGE for the files,
        UNAVAILABLE once closed (the server is stopping).
        """
        job_id, files = await self._store(profile, uploads)
        try:
            yield job_id, files
        except BaseException:
            await asyncio.to_thread(shutil.rmtree, self._files.job_dir(job_id), True)
            raise

    async def _store(self, profile: str, uploads: Sequence[Upload]) -> tuple[str, dict[str, bytes]]:
        """Check an upload's files and write them privately, on an intake thread; return the
        new job's id and the files. Nothing is left on disk when it raises."""
        job_id = secrets.token_urlsafe(16)
        limits = UploadLimits.of(self._settings)
        try:
            work = self._threads.submit(self._take, profile, uploads, job_id, limits)
        except RuntimeError:  # shut down: the server is stopping
            raise ProtocolError(ErrorCode.UNAVAILABLE, "the server is stopping") from None
        try:
            files = await asyncio.wrap_future(work)
        except asyncio.CancelledError:
            # The thread may still be writing: what it wrote goes once it is done.
            work.add_done_callback(lambda _: self._files.remove_job(job_id))
            raise
        return job_id, files

    def _take(
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
