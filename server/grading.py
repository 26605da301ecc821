"""The hosted autograder: uploads become queued grading jobs, graded a few at a time.

`GradingService` is built in the lifespan and kept on `app.state.grading`. An upload
(`submit`) is checked (profile, file names, size, the profile's main program), written to the
grader's private directory and stored as a `queued` row before it is acknowledged; from then
on it is graded even if the server restarts. `settings.grader_workers` worker tasks take jobs
in order; worker slot i runs its sandboxes as uid `grader_uid_base + i` (RLIMIT_NPROC counts
per uid, so concurrent gradings must not share one).

Each grading runs in a child process, `python -m grader.job JOB_DIR` (see grader/job.py), under
`grader_job_timeout_s`; the child writes results.json, which is then stored in the job's row
with the HTML report made from it. A child that fails, is killed or overruns still ends its
job: status `error` with a report saying the grader failed (never a job stuck `running`).

Private data: `grader_dir` (mode 0700) holds `jobs/ID/` (the upload in `submission/`, files
0600) and `suites/` (the private suites, generated at the first job of each profile unless
the settings name files). Only the server's user can read any of it; student code runs as the
sandbox uids.

Restarts: `start()` re-queues every job stored `queued` or `running`, oldest first; a job that
was running is graded again from the start.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import os
import re
import secrets
import shutil
import signal
import stat
import sys
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any, Final

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from grader.grade import MAIN_FILES
from grader.html import html_report
from grader.job import JOB_FILE, RESULTS_FILE, SUBMISSION_DIR, Job, failure_report
from grader.profiles import PROFILES
from grader.results import GradeReport
from grader.sandbox import can_isolate
from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import GradingJob, GradingProfile, GradingProfiles, JobStatus
from server.db.models import GradingJob as JobRow
from server.db.models import epoch_ms
from server.settings import Settings

log = logging.getLogger(__name__)

DESCRIPTIONS: Final = {
    "endgame": "Endgame solver: `python3 checkers.py --inputfile IN --outputfile OUT` writes "
    "the states from IN to the end of the game; graded per puzzle on legality, a red win, and "
    "optimal length (docs/GRADER.md).",
    "agent": "Agent: agent.py defines select_move(board, player, depth_limit, time_limit); "
    "graded on legal moves, exact minimax moves and values, games against reference bots and "
    "time (docs/GRADER.md).",
}

_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,99}$")
_IGNORED_PARTS: Final = frozenset({"__MACOSX", "__pycache__", ".DS_Store"})
_MAX_LOG_BYTES: Final = 65_536


def _now() -> datetime:
    return datetime.now(UTC)


def _bad(message: str, **details: str | int) -> ProtocolError:
    return ProtocolError(ErrorCode.BAD_SUBMISSION, message, details)


@dataclass(frozen=True)
class Upload:
    """One uploaded file: the name the client gave and its bytes."""

    name: str
    data: bytes


def unpack(uploads: Sequence[Upload], *, max_bytes: int, max_files: int) -> dict[str, bytes]:
    """Return the submission's files (relative POSIX path -> bytes) from the uploaded files.

    Either plain files (flat names: letters, digits, `_`, `.`, `-`) or a single `.zip`, whose
    entries may sit in folders; a zip whose files all sit in one top folder is unwrapped, and
    macOS/`__pycache__` litter is skipped. Raises ProtocolError BAD_SUBMISSION naming what is
    wrong, or SUBMISSION_TOO_LARGE.
    """
    if not uploads:
        raise _bad("no file uploaded: send the program as the multipart field `files`")
    if len(uploads) == 1 and uploads[0].name.lower().endswith(".zip"):
        files = _unzip(uploads[0], max_bytes=max_bytes, max_files=max_files)
    else:
        files = {}
        for upload in uploads:
            if upload.name.lower().endswith(".zip"):
                raise _bad(
                    f"{upload.name!r} is a zip uploaded with other files: upload either one "
                    "zip or plain files",
                    file=upload.name[:100],
                )
            if not _NAME.fullmatch(upload.name):
                raise _bad(
                    f"file name {upload.name[:100]!r} is not a plain name (letters, digits, "
                    "`_`, `.`, `-`; no folders)",
                    file=upload.name[:100],
                )
            if upload.name in files:
                raise _bad(f"{upload.name!r} is uploaded twice", file=upload.name)
            files[upload.name] = upload.data
    if len(files) > max_files:
        raise _bad(f"the upload holds {len(files)} files; at most {max_files} are accepted")
    total = sum(len(data) for data in files.values())
    if total > max_bytes:
        raise _too_large(total, max_bytes)
    return files


def _too_large(size: int, max_bytes: int) -> ProtocolError:
    return ProtocolError(
        ErrorCode.SUBMISSION_TOO_LARGE,
        f"the submission is {size} bytes; at most {max_bytes} are accepted",
        {"max_bytes": max_bytes},
    )


def _unzip(upload: Upload, *, max_bytes: int, max_files: int) -> dict[str, bytes]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(upload.data))
    except (zipfile.BadZipFile, ValueError) as error:
        raise _bad(f"{upload.name!r} is not a readable zip file: {error}") from None
    files: dict[str, bytes] = {}
    total = 0
    with archive:
        entries = [info for info in archive.infolist() if not info.is_dir()]
        for info in entries:
            path = PurePosixPath(info.filename)
            if any(part in _IGNORED_PARTS or part.startswith("._") for part in path.parts):
                continue
            if (
                path.is_absolute()
                or not path.parts
                or not all(_NAME.fullmatch(part) for part in path.parts)
            ):
                raise _bad(
                    f"zip entry {info.filename[:100]!r} is not a relative path of plain names",
                    file=info.filename[:100],
                )
            if stat.S_ISLNK(info.external_attr >> 16):
                raise _bad(f"zip entry {info.filename[:100]!r} is a symbolic link")
            if len(files) >= max_files:
                raise _bad(f"the zip holds more than {max_files} files")
            try:
                with archive.open(info) as entry:
                    # The header's size may lie: read no more than what is still allowed.
                    data = entry.read(max_bytes - total + 1)
            except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError) as error:
                raise _bad(f"cannot read {info.filename[:100]!r} from the zip: {error}") from None
            total += len(data)
            if total > max_bytes:
                raise _too_large(total, max_bytes)
            files[path.as_posix()] = data
    tops = {PurePosixPath(name).parts[0] for name in files}
    if len(tops) == 1 and all(len(PurePosixPath(name).parts) > 1 for name in files):
        top = tops.pop()
        files = {name[len(top) + 1 :]: data for name, data in files.items()}
    return files


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


class GradingService:
    """Queues uploads, grades them `grader_workers` at a time, and answers for their status."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], settings: Settings) -> None:
        self._sessions = sessions
        self._settings = settings
        self._root = settings.grader_dir.resolve()
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self._waiting: list[str] = []
        self._admitting = 0
        """Uploads past the queue check and not yet queued or refused: they hold their place."""
        self._workers: list[asyncio.Task[None]] = []
        self._children: set[asyncio.subprocess.Process] = set()

    @property
    def jobs_dir(self) -> Path:
        """The directory of the jobs' private files."""
        return self._root / "jobs"

    def suite_path(self, profile: str) -> Path:
        """Return the private suite file of `profile` (from the settings, or the default)."""
        configured = {
            "endgame": self._settings.grader_endgame_suite,
            "agent": self._settings.grader_agent_suite,
        }.get(profile)
        if configured is not None:
            return configured.resolve()
        return self._root / "suites" / f"{profile}.json"

    async def start(self) -> int:
        """Re-queue the jobs a previous run left queued or running; start the workers.

        Returns the number of jobs re-queued. Makes no directory until a job needs one.
        """
        async with self._sessions() as session:
            rows = (
                await session.execute(
                    select(JobRow.id)
                    .where(JobRow.status.in_(("queued", "running")))
                    .order_by(JobRow.created_at, JobRow.id)
                )
            ).scalars()
            pending = list(rows)
            if pending:
                await session.execute(
                    update(JobRow).where(JobRow.id.in_(pending)).values(status="queued")
                )
                await session.commit()
        for job_id in pending:
            self._enqueue(job_id)
        self._workers = [
            asyncio.create_task(self._work(slot), name=f"grader-{slot}")
            for slot in range(self._settings.grader_workers)
        ]
        if pending:
            log.info("re-queued %d grading jobs", len(pending))
        return len(pending)

    async def close(self) -> None:
        """Stop the workers and kill running gradings (their jobs are re-run at the next start)."""
        for child in list(self._children):
            _kill(child)
        for worker in self._workers:
            worker.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        self._workers = []

    def profiles(self) -> GradingProfiles:
        """Describe the profiles and the limits of an upload."""
        return GradingProfiles(
            profiles=tuple(
                GradingProfile(
                    name=name,
                    description=DESCRIPTIONS[name],
                    main_file=MAIN_FILES[name],
                    max_upload_bytes=self._settings.grader_max_upload_bytes,
                )
                for name in PROFILES
            ),
            max_files=self._settings.grader_max_files,
            queue_limit=self._settings.grader_max_queued,
            sandboxed=can_isolate(),
        )

    async def submit(
        self, profile: str, uploads: Sequence[Upload], player_id: int | None = None
    ) -> GradingJob:
        """Check, store and queue an upload by `player_id`; return its job (status `queued`).

        `player_id` None is an anonymous upload, which the route accepts only when
        `grader_allow_anonymous` is set; such a job is read by anyone holding its id. Raises
        ProtocolError: VALIDATION_ERROR for an unknown profile, BAD_SUBMISSION or
        SUBMISSION_TOO_LARGE for the files, QUEUE_FULL when the queue is full. Nothing is
        stored or queued when it raises; once it returns, the job survives a restart.
        """
        if profile not in MAIN_FILES:
            raise ProtocolError(
                ErrorCode.VALIDATION_ERROR,
                f"unknown profile {profile[:40]!r}: choose one of {', '.join(MAIN_FILES)}",
                {"profile": "unknown profile"},
            )
        if not can_isolate() and not self._settings.grader_allow_unsandboxed:
            raise ProtocolError(
                ErrorCode.GRADER_UNAVAILABLE,
                "this server cannot sandbox student code (it must run as root with util-linux "
                "unshare), so it grades nothing; its operator can set "
                "ARENA_GRADER_ALLOW_UNSANDBOXED=true for trials on trusted code",
            )
        # The check and the place it takes are one step (no await between them), and the place
        # is held until the job is queued or refused: concurrent uploads cannot all pass the
        # check while the first of them is still being stored.
        if len(self._waiting) + self._admitting >= self._settings.grader_max_queued:
            raise ProtocolError(
                ErrorCode.QUEUE_FULL,
                f"{self._settings.grader_max_queued} submissions are waiting to be graded, the "
                "most this server queues; nothing was queued: retry in a few minutes",
                {"queue_limit": self._settings.grader_max_queued},
            )
        self._admitting += 1
        try:
            return await self._admit(profile, uploads, player_id)
        finally:
            self._admitting -= 1

    async def _admit(
        self, profile: str, uploads: Sequence[Upload], player_id: int | None
    ) -> GradingJob:
        """Check, store and queue an upload that holds a place in the queue."""
        files = unpack(
            uploads,
            max_bytes=self._settings.grader_max_upload_bytes,
            max_files=self._settings.grader_max_files,
        )
        main = MAIN_FILES[profile]
        if main not in files:
            found = ", ".join(sorted(files)[:10])
            raise _bad(
                f"the {profile} profile runs {main}, which the upload does not hold at its top "
                f"level (found: {found})",
                profile=profile,
            )
        job_id = secrets.token_urlsafe(16)
        job_dir = self.jobs_dir / job_id
        await asyncio.to_thread(self._store_files, job_dir, files)
        row = JobRow(
            id=job_id,
            profile=profile,
            status="queued",
            files=sorted(files),
            attempts=0,
            player_id=player_id,
        )
        try:
            async with self._sessions() as session:
                session.add(row)
                await session.commit()
        except BaseException:
            await asyncio.to_thread(shutil.rmtree, job_dir, True)
            raise
        self._enqueue(job_id)
        return self._view(row)

    def _store_files(self, job_dir: Path, files: dict[str, bytes]) -> None:
        for directory in (self._root, self.jobs_dir):
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            directory.chmod(0o700)
        job_dir.mkdir(mode=0o700)
        _write_private(job_dir / SUBMISSION_DIR, files)

    async def job(self, job_id: str, viewer: int | None) -> GradingJob:
        """Return a job's status to player `viewer` (None: no token); see `_row` for errors."""
        return self._view(await self._row(job_id, viewer))

    async def results(self, job_id: str, viewer: int | None) -> dict[str, Any]:
        """Return a finished job's results.json object; JOB_NOT_FINISHED before then."""
        row = await self._finished(job_id, viewer)
        data: dict[str, Any] = json.loads(row.results or "{}")
        return data

    async def report(self, job_id: str, viewer: int | None) -> str:
        """Return a finished job's HTML report; JOB_NOT_FINISHED before then."""
        row = await self._finished(job_id, viewer)
        return row.report or ""

    async def _row(self, job_id: str, viewer: int | None) -> JobRow:
        """Return the job's row if player `viewer` may read it.

        UNKNOWN_JOB when no job has this id; a job uploaded by a player is theirs alone:
        UNAUTHORIZED without a token, FORBIDDEN with another player's. An anonymous job is
        read by anyone holding its id.
        """
        async with self._sessions() as session:
            row = await session.get(JobRow, job_id)
        if row is None:
            raise ProtocolError(ErrorCode.UNKNOWN_JOB, f"no grading job has the id {job_id!r}")
        if row.player_id is not None and viewer is None:
            raise ProtocolError(
                ErrorCode.UNAUTHORIZED,
                "this grading job is read with the token of the player who uploaded it: send "
                "`Authorization: Bearer TOKEN`",
            )
        if row.player_id is not None and viewer != row.player_id:
            raise ProtocolError(ErrorCode.FORBIDDEN, "this grading job belongs to another player")
        return row

    async def _finished(self, job_id: str, viewer: int | None) -> JobRow:
        row = await self._row(job_id, viewer)
        if row.status not in ("done", "error"):
            raise ProtocolError(
                ErrorCode.JOB_NOT_FINISHED,
                f"job {job_id} is {row.status}: poll GET /grader/jobs/{job_id} until it is done",
                {"status": row.status},
            )
        return row

    def _view(self, row: JobRow) -> GradingJob:
        status: JobStatus = row.status  # type: ignore[assignment]
        position = None
        if status == "queued" and row.id in self._waiting:
            position = self._waiting.index(row.id) + 1
        base = f"/grader/jobs/{row.id}"
        return GradingJob(
            job_id=row.id,
            profile=row.profile,
            status=status,
            files=tuple(row.files),
            queue_position=position,
            score=row.score,
            max_score=row.max_score,
            summary=None if row.summary is None else row.summary[:4000],
            created_time_ms=epoch_ms(row.created_at),
            started_time_ms=None if row.started_at is None else epoch_ms(row.started_at),
            finished_time_ms=None if row.finished_at is None else epoch_ms(row.finished_at),
            results_url=f"{base}/results.json",
            report_url=f"{base}/report.html",
        )

    def _enqueue(self, job_id: str) -> None:
        self._waiting.append(job_id)
        self._queue.put_nowait(job_id)

    async def _work(self, slot: int) -> None:
        while True:
            job_id = await self._queue.get()
            if job_id in self._waiting:
                self._waiting.remove(job_id)
            try:
                await self._grade(job_id, slot)
            except asyncio.CancelledError:
                raise
            except Exception:  # a worker must outlive any one job
                log.exception("grading job %s failed", job_id)

    async def _grade(self, job_id: str, slot: int) -> None:
        async with self._sessions() as session:
            row = await session.get(JobRow, job_id)
            if row is None or row.status not in ("queued", "running"):
                return
            row.status = "running"
            row.started_at = _now()
            row.attempts += 1
            await session.commit()
            profile = row.profile
        job_dir = self.jobs_dir / job_id
        uid = self._settings.grader_uid_base + slot
        job = Job(
            profile=profile,
            suite=self.suite_path(profile),
            python=self._settings.grader_python,
            uid=uid,
            gid=uid,
        )
        report, status = await self._run_child(job_dir, job)
        await self._store_report(job_id, report, status)

    async def _run_child(self, job_dir: Path, job: Job) -> tuple[GradeReport, JobStatus]:
        """Run the grading child; return its report and the job's final status."""
        if not (job_dir / SUBMISSION_DIR).is_dir():
            return failure_report(job.profile, "the submission's files are missing"), "error"
        (job_dir / RESULTS_FILE).unlink(missing_ok=True)
        (job_dir / JOB_FILE).write_text(json.dumps(job.to_json()), encoding="utf-8")
        log_path = job_dir / "grader.log"
        with open(log_path, "wb") as log_file:
            child = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "grader.job",
                str(job_dir),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log_file,
                stderr=log_file,
                start_new_session=True,
            )
        self._children.add(child)
        try:
            try:
                code = await asyncio.wait_for(
                    child.wait(), timeout=self._settings.grader_job_timeout_s
                )
            except TimeoutError:
                _kill(child)
                await child.wait()
                why = f"grading took longer than {self._settings.grader_job_timeout_s:g} s"
                return failure_report(job.profile, why), "error"
        finally:
            self._children.discard(child)
        results = job_dir / RESULTS_FILE
        if not results.is_file():
            tail = _tail(log_path)
            log.error("grading child exited %s without results: %s", code, tail)
            why = f"the grading process exited with status {code} and wrote no results"
            return failure_report(job.profile, why), "error"
        report = _read_report(results, job.profile)
        return report, "done" if code == 0 else "error"

    async def _store_report(self, job_id: str, report: GradeReport, status: JobStatus) -> None:
        async with self._sessions() as session:
            await session.execute(
                update(JobRow)
                .where(JobRow.id == job_id)
                .values(
                    status=status,
                    score=report.score,
                    max_score=report.max_score,
                    summary=report.output,
                    results=json.dumps(report.to_json()),
                    report=html_report(report),
                    finished_at=_now(),
                )
            )
            await session.commit()


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
