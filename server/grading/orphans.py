"""Job directories that have no job: found and removed now and then.

A server killed between writing an upload's files and storing its row leaves such a
directory; nothing else would ever remove it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from server.grading.files import GraderFiles
from server.grading.store import JobStore
from server.settings import Settings

log = logging.getLogger(__name__)


class OrphanSweep:
    """Removes the job directories without a row, at once and every `grader_orphan_sweep_s`."""

    def __init__(self, settings: Settings, store: JobStore, files: GraderFiles) -> None:
        self._settings = settings
        self._store = store
        self._files = files
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Sweep now and then every `grader_orphan_sweep_s`, until `close`."""
        self._task = asyncio.create_task(self._periodically(), name="orphan-sweep")

    async def close(self) -> None:
        """Stop sweeping."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def sweep(self) -> int:
        """Remove the job directories that have no row and are `grader_orphan_age_s` old;
        return how many.

        A younger one may be an upload still being stored, here or by another server process
        sharing the directory, so it is left alone.
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

    async def _periodically(self) -> None:
        while True:
            try:
                await self.sweep()
            except Exception:
                # A database or disk failing now may not fail at the next sweep.
                log.exception("sweeping job directories without a job failed")
            await asyncio.sleep(self._settings.grader.orphan_sweep_s)
