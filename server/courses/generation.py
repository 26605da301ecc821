"""The generation of assignments' suites in the background, one at a time, each in a child
process of its own (`python -m server.courses.suites`) that a timeout, a shutdown or the
server's death kills; what a run leaves ungenerated is generated at the next start.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys

from sandbox import SETPRIV
from server.courses.store import CourseStore
from server.db.models import Assignment as AssignmentRow
from server.grading.files import GraderFiles
from server.settings import Settings

log = logging.getLogger(__name__)


class SuiteGeneration:
    """The suites being generated, and the lock under which a suite file and its row change."""

    def __init__(self, store: CourseStore, files: GraderFiles, settings: Settings) -> None:
        self._store = store
        self._files = files
        self._settings = settings
        self.lock = asyncio.Lock()
        """Held while an assignment's suite file and its row change together."""
        self._generator = asyncio.Semaphore(1)
        """Suites are generated one at a time: each keeps a CPU busy for minutes."""
        self._generations: set[asyncio.Task[None]] = set()
        self._children: set[asyncio.subprocess.Process] = set()

    async def start(self) -> int:
        """Generate the suites a previous run left ungenerated; return how many."""
        pending = await self._store.generating()
        for row in pending:
            self.later(row)
        return len(pending)

    async def close(self) -> None:
        """Stop the suites' generation (what is unfinished is generated at the next start)."""
        for child in list(self._children):
            with contextlib.suppress(ProcessLookupError):
                child.kill()
        for task in list(self._generations):
            task.cancel()
        await asyncio.gather(*self._generations, return_exceptions=True)

    def later(self, row: AssignmentRow) -> None:
        """Generate an assignment's suite in the background (`_generate`)."""
        task = asyncio.create_task(
            self._generate(row.id, row.profile, row.public_tests, row.private_tests),
            name=f"suite-{row.id}",
        )
        self._generations.add(task)
        task.add_done_callback(self._generation_ended)

    def _generation_ended(self, task: asyncio.Task[None]) -> None:
        self._generations.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("generating a suite failed", exc_info=task.exception())

    async def _generate(self, assignment_id: int, profile: str, public: int, private: int) -> None:
        """Generate a suite in a child process, then make it the assignment's (unless a suite
        was given meanwhile). A failure is logged; the assignment waits for a given suite or
        the next start."""
        path = self._files.assignment_suite_path(assignment_id)
        generated = path.with_name(path.name + ".generated")
        async with self._generator:
            command = [
                sys.executable,
                "-m",
                "server.courses.suites",
                profile,
                str(generated),
                str(public),
                str(private),
            ]
            if os.path.exists(SETPRIV):
                # It dies with the server, even one killed outright: the next start begins anew.
                command = [SETPRIV, "--pdeathsig", "KILL", "--", *command]
            child = await asyncio.create_subprocess_exec(
                *command,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            self._children.add(child)
            try:
                out, err = await asyncio.wait_for(
                    child.communicate(), self._settings.course.suite_timeout_s
                )
            except TimeoutError:
                child.kill()
                await child.wait()
                log.error("the suite of assignment %d took too long to generate", assignment_id)
                return
            finally:
                self._children.discard(child)
        if child.returncode != 0:
            log.error(
                "the suite of assignment %d could not be generated: %s",
                assignment_id,
                err.decode("utf-8", "replace")[-2000:],
            )
            return
        summary = json.loads(out)
        async with self.lock:
            row = await self._store.assignment_by_id(assignment_id)
            if row is None or row.suite_version != 0:
                generated.unlink(missing_ok=True)  # a suite was given meanwhile
                return
            generated.replace(path)
            await self._store.update_assignment(
                assignment_id,
                {
                    "public_tests": summary["public_tests"],
                    "private_tests": summary["private_tests"],
                    "suite_version": 1,
                },
            )
