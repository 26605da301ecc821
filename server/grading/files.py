"""The grader's private files: each job's upload and results, and the private suites.

`grader_dir` (mode 0700) holds `jobs/ID/` (the upload in `submission/`, files 0600, then the
grading child's job.json, results.json and log) and `suites/` (the private suites, generated at
the first job of each profile unless the settings name files, and each course assignment's
`assignment-ID.json`). Only the server's user can read
any of it; student code runs as the sandbox uids.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

from autograder.job import SUBMISSION_DIR
from server.settings import Settings

_JOB_ID = re.compile(r"^[A-Za-z0-9_\-]{1,64}$")
"""A job's id, as `secrets.token_urlsafe` makes them (and as the routes accept them)."""


class GraderFiles:
    """Where the grader keeps its private files; makes no directory until a job needs one."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._root = settings.grader.dir.resolve()

    @property
    def jobs_dir(self) -> Path:
        """The directory of the jobs' private files."""
        return self._root / "jobs"

    def job_dir(self, job_id: str) -> Path:
        """Return the private directory of job `job_id`."""
        return self.jobs_dir / job_id

    def suite_path(self, profile: str) -> Path:
        """Return the private suite file of `profile` (from the settings, or the default)."""
        configured = {
            "endgame": self._settings.grader.endgame_suite,
            "agent": self._settings.grader.agent_suite,
        }.get(profile)
        if configured is not None:
            return configured.resolve()
        return self._root / "suites" / f"{profile}.json"

    def assignment_suite_path(self, assignment_id: int) -> Path:
        """Return the private suite file of course assignment `assignment_id`."""
        return self._root / "suites" / f"assignment-{assignment_id}.json"

    def submission_files(self, job_id: str) -> dict[str, bytes]:
        """Return a job's uploaded files (relative POSIX path -> bytes); empty when gone
        (blocking I/O)."""
        root = self.job_dir(job_id) / SUBMISSION_DIR
        if not root.is_dir():
            return {}
        return {
            path.relative_to(root).as_posix(): path.read_bytes()
            for path in sorted(root.rglob("*"))
            if path.is_file() and not path.is_symlink()
        }

    def store_submission(self, job_id: str, files: dict[str, bytes]) -> Path:
        """Write a new job's uploaded files privately; return the job's directory (blocking I/O).

        All or nothing: a failure part way removes the job's directory before it raises.
        """
        for directory in (self._root, self.jobs_dir):
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            directory.chmod(0o700)
        job_dir = self.job_dir(job_id)
        job_dir.mkdir(mode=0o700)
        try:
            _write_private(job_dir / SUBMISSION_DIR, files)
        except BaseException:
            shutil.rmtree(job_dir, ignore_errors=True)
            raise
        return job_dir

    def remove_job(self, job_id: str) -> None:
        """Remove a job's directory and everything in it, if it is there (blocking I/O)."""
        shutil.rmtree(self.job_dir(job_id), ignore_errors=True)

    def old_job_ids(self, min_age_s: float) -> list[str]:
        """Return the ids of the job directories last changed at least `min_age_s` seconds
        ago (blocking I/O). A directory's time is that of its last entry made or removed: the
        upload's `submission/` when the job is new."""
        if not self.jobs_dir.is_dir():
            return []
        cutoff = time.time() - min_age_s
        found = []
        with os.scandir(self.jobs_dir) as entries:
            for entry in entries:
                if not _JOB_ID.fullmatch(entry.name):
                    continue
                try:
                    if entry.is_dir(follow_symlinks=False) and entry.stat().st_mtime <= cutoff:
                        found.append(entry.name)
                except OSError:  # removed meanwhile
                    continue
        return found


def _write_private(directory: Path, files: dict[str, bytes]) -> None:
    """Write `files` under `directory` (dirs 0700, files 0600), synced to disk."""
    for name, data in files.items():
        path = directory / name
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
