"""An upload's intake off the event loop, its bounds on zips, and job directories never left
without their job.

The server answers other clients while an upload is unpacked (the unpack is held on an event
the test controls); a zip's entries are counted before any is examined; a path too deep or too
long is refused with BAD_SUBMISSION by every route that takes uploads and leaves nothing on
disk; a failure while the files are written leaves nothing; and a job directory without a row
(a server killed between the files and the row) is swept at start-up and periodically, once it
is old enough not to be an upload in progress.
"""

from __future__ import annotations

import io
import os
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from protocol.errors import ErrorCode, ProtocolError
from server.grading import Upload, UploadLimits, intake_files, unpack
from server.grading.files import GraderFiles
from server.settings import Settings
from tests.server.conftest import RunningServer, start_server
from tests.server.courses.test_courses import add_assignment, new_course
from tests.server.grading.test_grading import authorize, grading_settings, upload, wait_done

PROGRAM = b"import sys\nsys.exit(1)\n"

DEEP = "a/" * 2100 + "deep.py"
"""The path that made the server answer 500 and leave the job's directory behind."""


def zipped(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def job_dirs(settings: Settings) -> list[str]:
    """The job directories under the grader's directory (none when it was never made)."""
    jobs = settings.grader.dir / "jobs"
    return sorted(path.name for path in jobs.iterdir()) if jobs.is_dir() else []


@pytest.fixture
def intake_server(server_settings: Settings) -> Iterator[tuple[RunningServer, Settings]]:
    settings = grading_settings(server_settings, rate_limits_enabled=False)
    running = start_server(settings)
    try:
        yield running, settings
    finally:
        running.stop()


class Held:
    """A stand-in for a function that waits, once entered, until the test releases it."""

    def __init__(self, real: Callable[..., Any]) -> None:
        self.real = real
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.entered.set()
        self.release.wait(timeout=300)
        return self.real(*args, **kwargs)


# -- off the event loop ---------------------------------------------------------------------------


def test_the_server_answers_others_while_an_upload_is_unpacked(
    server_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = Held(intake_files.unpack)
    monkeypatch.setattr(intake_files, "unpack", held)
    running = start_server(grading_settings(server_settings))
    try:
        with (
            httpx.Client(base_url=running.url, timeout=120) as client,
            ThreadPoolExecutor(1) as pool,
        ):
            authorize(client)
            pending = pool.submit(
                client.post,
                "/grader/jobs",
                data={"profile": "endgame"},
                files={"files": ("s.zip", zipped({"checkers.py": PROGRAM}))},
            )
            assert held.entered.wait(timeout=60), "the upload never reached its unpacking"
            try:
                # Unpacking on the event loop, the server could not answer this at all.
                health = httpx.get(f"{running.url}/health", timeout=30)
            finally:
                held.release.set()
            assert health.status_code == 200 and health.json()["status"] == "ok"
            answer = pending.result()
            assert answer.status_code == 202, answer.text
            assert wait_done(client, answer.json()["job_id"]).status == "done"
    finally:
        held.release.set()
        running.stop()


# -- what a zip may cost and hold -----------------------------------------------------------------

LIMITS = UploadLimits(
    max_bytes=10_000, max_files=5, max_zip_entries=8, max_path_depth=2, max_path_chars=40
)


@pytest.mark.parametrize(
    ("entries", "words", "detail"),
    [
        # Litter is skipped, but counted: every entry is work.
        (
            {"checkers.py": b"", **{f"__MACOSX/._{i}": b"" for i in range(8)}},
            "holds 9 entries (folders and skipped files included); at most 8",
            {"max_zip_entries": 8},
        ),
        (
            {"checkers.py": b"", "a/b/c/d.py": b""},
            "3 folders deep; at most 2",
            {"max_path_depth": 2},
        ),
        ({"checkers.py": b"", "x" * 41: b""}, "41 characters; at most 40", {"max_path_chars": 40}),
        ({"checkers.py": b"", DEEP: b""}, "characters; at most 40", {"max_path_chars": 40}),
        # One name cannot be a file and a folder: writing them would fail half way.
        ({"lib": b"", "lib/board.py": b""}, "clashes with 'lib'", {}),
        ({"lib/board.py": b"", "lib": b""}, "clashes with 'lib'", {}),
    ],
)
def test_a_zip_over_its_limits_is_refused_naming_them(
    entries: dict[str, bytes], words: str, detail: dict[str, int]
) -> None:
    with pytest.raises(ProtocolError) as caught:
        unpack([Upload("s.zip", zipped(entries))], LIMITS)
    assert caught.value.code is ErrorCode.BAD_SUBMISSION
    assert words in caught.value.message
    assert detail.items() <= dict(caught.value.details).items()


def test_a_zip_at_its_limits_is_accepted() -> None:
    kept = "a/b/" + "x" * 33 + ".py"  # 2 folders, 40 characters
    entries = {"checkers.py": b"", kept: b""}
    # Skipped litter mirrors the files one folder deeper: it is counted, never refused.
    entries.update({f"__MACOSX/._{i}": b"" for i in range(4)})
    entries["__MACOSX/a/b/._" + "x" * 33 + ".py"] = b""
    files = unpack([Upload("s.zip", zipped({**entries, "a/": b""}))], LIMITS)  # 8 entries
    assert sorted(files) == [kept, "checkers.py"]


def test_the_entries_of_a_zip_are_limited_by_the_setting(
    intake_server: tuple[RunningServer, Settings],
) -> None:
    running, settings = intake_server
    assert settings.grader.max_zip_entries == 1000
    litter = {f"__MACOSX/._{i}": b"" for i in range(1000)}
    with httpx.Client(base_url=running.url, timeout=120) as client:
        authorize(client)
        refused = client.post(
            "/grader/jobs",
            data={"profile": "endgame"},
            files={"files": ("s.zip", zipped({"checkers.py": PROGRAM, **litter}))},
        )
        assert refused.status_code == 422, refused.text
        assert refused.json()["code"] == "BAD_SUBMISSION"
        assert refused.json()["details"]["max_zip_entries"] == 1000
        assert job_dirs(settings) == []
        del litter["__MACOSX/._0"]
        accepted = client.post(
            "/grader/jobs",
            data={"profile": "endgame"},
            files={"files": ("s.zip", zipped({"checkers.py": PROGRAM, **litter}))},
        )
        assert accepted.status_code == 202, accepted.text
        assert accepted.json()["files"] == ["checkers.py"]


def post_zip(client: httpx.Client, path: str, data: bytes, **form: str) -> httpx.Response:
    return client.post(path, data=form, files={"files": ("s.zip", data)})


@pytest.mark.parametrize("route", ["grader", "course"])
def test_a_deep_zip_path_is_refused_by_every_upload_route_and_leaves_nothing(
    intake_server: tuple[RunningServer, Settings], route: str
) -> None:
    running, settings = intake_server
    with httpx.Client(base_url=running.url, timeout=120) as client:
        if route == "grader":
            authorize(client)
            path, form = "/grader/jobs", {"profile": "endgame"}
        else:
            prof, cid = new_course(running.url)
            aid = add_assignment(prof, cid)["assignment_id"]
            client.headers.update(prof.http.headers)
            path, form = f"/courses/{cid}/assignments/{aid}/submissions", {}
        for entry in (DEEP, "a/" * 9 + "deep.py", "d" * 99 + "/" + "e" * 99 + "/f.py"):
            response = post_zip(client, path, zipped({"checkers.py": PROGRAM, entry: b""}), **form)
            assert response.status_code == 422, response.text
            error = response.json()
            assert error["code"] == "BAD_SUBMISSION", error
            assert "zip entry" in error["message"]
            assert job_dirs(settings) == []
        assert client.get("/health").json()["status"] == "ok"


# -- never a job directory without its job ---------------------------------------------------------


def test_a_failure_while_the_files_are_written_leaves_no_job_directory(
    server_settings: Settings,
) -> None:
    files = GraderFiles(server_settings)
    # A file named like the folder of the next: the second write fails half way.
    with pytest.raises(OSError):
        files.store_submission("half-written", {"lib": b"x", "lib/board.py": b"y"})
    assert not files.job_dir("half-written").exists()
    files.store_submission("whole", {"checkers.py": b"x"})
    assert files.job_dir("whole").is_dir()


def backdate(path: Path, seconds: float) -> None:
    moment = time.time() - seconds
    os.utime(path, (moment, moment))


def orphan(settings: Settings, job_id: str, age_s: float) -> Path:
    """Make a job directory with files and no row, as a server killed before the row leaves."""
    job_dir = settings.grader.dir / "jobs" / job_id
    (job_dir / "submission").mkdir(parents=True)
    (job_dir / "submission" / "checkers.py").write_bytes(PROGRAM)
    backdate(job_dir, age_s)
    return job_dir


def wait_gone(path: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while path.exists():
        assert time.monotonic() < deadline, f"{path} is still there"
        time.sleep(0.05)


def test_job_directories_without_a_job_are_swept_at_start_up_and_periodically(
    server_settings: Settings,
) -> None:
    day = 86_400.0
    settings = grading_settings(server_settings, grader_orphan_age_s=600)
    # A real job, graded; then its directory is made to look as old as the orphans.
    running = start_server(settings)
    try:
        with httpx.Client(base_url=running.url, timeout=120) as client:
            job_id = upload(client, "endgame", {"checkers.py": PROGRAM})["job_id"]
            wait_done(client, job_id)
    finally:
        running.stop()
    kept = settings.grader.dir / "jobs" / job_id
    backdate(kept, day)
    killed = orphan(settings, "killedBetweenFilesAndRow", day)
    # Younger than the margin: maybe an upload another server process is storing right now.
    young = orphan(settings, "uploadInProgress", 60)
    stray = settings.grader.dir / "jobs" / "not a job id"
    stray.mkdir()
    backdate(stray, day)

    running = start_server(settings.model_copy(update={"grader_orphan_sweep_s": 0.05}))
    try:
        wait_gone(killed)
        # Left by a later kill while the server runs: the next sweep takes it.
        later = orphan(settings, "killedLater", day)
        wait_gone(later)
        with httpx.Client(base_url=running.url, timeout=120) as client:
            authorize(client)
            assert client.get("/health").status_code == 200
    finally:
        running.stop()
    assert (kept / "submission" / "checkers.py").read_bytes() == PROGRAM
    assert (young / "submission" / "checkers.py").exists()
    assert stray.is_dir()
