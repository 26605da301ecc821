"""The hosted autograder end to end: uploads over multipart to a real uvicorn, queued jobs graded
in the sandbox, status and results endpoints, bad uploads, restarts, timeouts, concurrency."""

from __future__ import annotations

import asyncio
import io
import json
import os
import secrets
import shutil
import stat
import sysconfig
import tempfile
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

import autograder
from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import GradingJob, GradingProfiles
from sandbox import Mode, Support, can_isolate
from server.db.engine import create_engine, migrate, session_factory
from server.db.models import GradingJob as JobRow
from server.grading import GradingService, Upload, UploadLimits, unpack
from server.settings import Settings
from tests.sandbox.processes import live_processes
from tests.server.conftest import RunningServer, start_server

ROOT = Path(__file__).resolve().parents[3]
REFERENCE = ROOT / "autograder" / "reference" / "endgame_solver.py"
PUBLIC_SUITE = ROOT / "autograder" / "examples" / "endgame-puzzles.json"
PUZZLES = len(json.loads(PUBLIC_SUITE.read_text())["puzzles"])
PYTHON = "/usr/bin/python3"
TIMEOUT = 60.0
"""Seconds an HTTP request may take: generous, for a loaded machine that is also grading."""

sandboxed = pytest.mark.skipif(
    os.geteuid() != 0 or not can_isolate() or not os.path.exists(PYTHON),
    reason="these tests need root (the sandbox uids), the sandbox and /usr/bin/python3",
)

# A checkers.py that reports its uid on stderr and fails each puzzle after `delay` seconds.
UID_REPORTER = """
import os, sys, time
time.sleep({delay})
print("running as uid", os.getuid(), file=sys.stderr)
sys.exit(1)
"""

# A checkers.py that tries to read the private suite and another job's upload.
SNOOP = """
import sys
for path in {paths!r}:
    try:
        with open(path) as handle:
            print("LEAKED", path, handle.read()[:80], file=sys.stderr)
    except OSError as error:
        print("refused", type(error).__name__, file=sys.stderr)
sys.exit(1)
"""


def grading_settings(base: Settings, **changes: Any) -> Settings:
    """`base` with the public example suite as the endgame suite, and `changes`."""
    fields: dict[str, Any] = {
        "grader_endgame_suite": PUBLIC_SUITE,
        "grader_allow_unsandboxed": True,  # the tests that need the sandbox are marked
        **changes,
    }
    return base.model_copy(update=fields)


@pytest.fixture
def grading_server(server_settings: Settings) -> Iterator[RunningServer]:
    running = start_server(grading_settings(server_settings))
    try:
        yield running
    finally:
        running.stop()


def authorize(client: httpx.Client) -> None:
    """Register a fresh player unless `client` has one; send its token with every request."""
    if "Authorization" not in client.headers:
        response = client.post("/players", json={"name": f"student-{secrets.token_hex(4)}"})
        assert response.status_code == 201, response.text
        client.headers["Authorization"] = f"Bearer {response.json()['token']}"


def upload(
    client: httpx.Client, profile: str, files: dict[str, bytes], expect: int = 202
) -> dict[str, Any]:
    """POST the files as multipart as `client`'s player; check the status; return the body."""
    authorize(client)
    response = client.post(
        "/grader/jobs",
        data={"profile": profile},
        files=[("files", (name, data, "text/x-python")) for name, data in files.items()],
    )
    assert response.status_code == expect, response.text
    body: dict[str, Any] = response.json()
    return body


def wait_done(client: httpx.Client, job_id: str, timeout: float = 120.0) -> GradingJob:
    """Poll a job until it is done or failed; return it, read by the client's token or its
    browser's cookie (as the job's page does)."""
    deadline = time.monotonic() + timeout
    while True:
        response = client.get(f"/grader/jobs/{job_id}")
        assert response.status_code == 200, response.text
        job = GradingJob.model_validate_json(response.text)
        if job.status in ("done", "error"):
            return job
        assert time.monotonic() < deadline, f"job {job_id} still {job.status}"
        time.sleep(0.1)


# -- uploads: plain files and zips -----------------------------------------------------------------

LIMITS = UploadLimits(
    max_bytes=1000, max_files=5, max_zip_entries=20, max_path_depth=3, max_path_chars=60
)


def zipped(entries: dict[str, bytes], links: tuple[str, ...] = ()) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
        for name in links:
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, "/etc/passwd")
    return buffer.getvalue()


def test_plain_files_and_a_zip_unpack_to_the_same_submission() -> None:
    files = {"checkers.py": b"print(1)\n", "helpers.py": b"X = 1\n"}
    plain = unpack([Upload(n, d) for n, d in files.items()], LIMITS)
    assert plain == files
    flat = unpack([Upload("s.zip", zipped(files))], LIMITS)
    assert flat == files
    # A zip of the student's folder is unwrapped; macOS litter is skipped.
    folder = {f"work/{name}": data for name, data in files.items()}
    folder["__MACOSX/work/._checkers.py"] = b"junk"
    folder["work/__pycache__/helpers.cpython-311.pyc"] = b"junk"
    assert unpack([Upload("s.zip", zipped(folder))], LIMITS) == files
    nested = unpack([Upload("s.zip", zipped({"checkers.py": b"", "lib/board.py": b""}))], LIMITS)
    assert sorted(nested) == ["checkers.py", "lib/board.py"]


@pytest.mark.parametrize(
    ("uploads", "code", "words"),
    [
        ([], ErrorCode.BAD_SUBMISSION, "no file uploaded"),
        ([Upload("../checkers.py", b"")], ErrorCode.BAD_SUBMISSION, "not a plain name"),
        ([Upload(".bashrc", b"")], ErrorCode.BAD_SUBMISSION, "not a plain name"),
        ([Upload("a.py", b""), Upload("a.py", b"")], ErrorCode.BAD_SUBMISSION, "twice"),
        ([Upload("a.zip", b"PK not really")], ErrorCode.BAD_SUBMISSION, "not a readable zip"),
        (
            [Upload("a.zip", zipped({"x.py": b""})), Upload("b.py", b"")],
            ErrorCode.BAD_SUBMISSION,
            "either one zip or plain files",
        ),
        (
            [Upload("a.zip", zipped({"../../etc/cron.d/x": b""}))],
            ErrorCode.BAD_SUBMISSION,
            "not a relative path of plain names",
        ),
        (
            [Upload("a.zip", zipped({"/abs.py": b""}))],
            ErrorCode.BAD_SUBMISSION,
            "not a relative path",
        ),
        (
            [Upload("a.zip", zipped({"checkers.py": b""}, links=("link.py",)))],
            ErrorCode.BAD_SUBMISSION,
            "symbolic link",
        ),
        ([Upload("a.py", b"x" * 1001)], ErrorCode.SUBMISSION_TOO_LARGE, "at most 1000"),
        (
            [Upload("a.zip", zipped({"big.py": b"x" * 5000}))],
            ErrorCode.SUBMISSION_TOO_LARGE,
            "at most 1000",
        ),
        (
            [Upload(f"m{i}.py", b"") for i in range(6)],
            ErrorCode.BAD_SUBMISSION,
            "at most 5",
        ),
    ],
)
def test_a_bad_upload_is_refused_with_its_reason(
    uploads: list[Upload], code: ErrorCode, words: str
) -> None:
    with pytest.raises(ProtocolError) as caught:
        unpack(uploads, LIMITS)
    assert caught.value.code is code
    assert words in caught.value.message


# -- the queue, without workers ----------------------------------------------------------------


async def test_jobs_wait_in_order_and_a_full_queue_refuses_more(tmp_path: Path) -> None:
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}",
        grader_dir=tmp_path / "grader",
        grader_max_queued=2,
        grader_allow_unsandboxed=True,
    )
    engine = create_engine(settings.database_url)
    await migrate(engine)
    service = GradingService(session_factory(engine), settings)
    try:
        first = await service.submit("endgame", [Upload("checkers.py", b"pass\n")])
        second = await service.submit("agent", [Upload("agent.py", b"pass\n")])
        assert (first.status, first.queue_position) == ("queued", 1)
        assert (second.status, second.queue_position) == ("queued", 2)
        with pytest.raises(ProtocolError) as full:
            await service.submit("endgame", [Upload("checkers.py", b"pass\n")])
        assert full.value.code is ErrorCode.QUEUE_FULL
        with pytest.raises(ProtocolError) as early:
            await service.results(first.job_id, None)
        assert early.value.code is ErrorCode.JOB_NOT_FINISHED
        # The upload is private to the server's user: directories 0700, files 0600.
        job_dir = settings.grader.dir / "jobs" / first.job_id
        for path in (settings.grader.dir, job_dir, job_dir / "submission"):
            assert stat.S_IMODE(path.stat().st_mode) == 0o700, path
        program = job_dir / "submission" / "checkers.py"
        assert stat.S_IMODE(program.stat().st_mode) == 0o600
        assert program.read_bytes() == b"pass\n"
        # A fresh service on the same database finds both jobs and keeps their order.
        again = GradingService(session_factory(engine), settings)
        assert await again.start() == 2
        await again.close()
    finally:
        await engine.dispose()


async def test_without_a_sandbox_nothing_is_graded_unless_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("server.grading.service.can_isolate", lambda: False)
    why = "bubblewrap cannot make a sandbox here: No permissions to create a new namespace"
    monkeypatch.setattr("server.grading.service.sandbox_support", lambda: Support(Mode.NONE, why))
    url = f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}"
    engine = create_engine(url)
    await migrate(engine)
    try:
        strict = GradingService(
            session_factory(engine), Settings(database_url=url, grader_dir=tmp_path / "g")
        )
        assert not strict.profiles().sandboxed
        with pytest.raises(ProtocolError) as refused:
            await strict.submit("endgame", [Upload("checkers.py", b"pass\n")])
        assert refused.value.code is ErrorCode.GRADER_UNAVAILABLE
        # It says why, and what the operator may do about it.
        assert refused.value.details == {"sandbox": why}
        assert why in refused.value.message
        assert "ARENA_GRADER_ALLOW_UNSANDBOXED=true" in refused.value.message
        assert not (tmp_path / "g").exists()  # nothing stored
        trial = GradingService(
            session_factory(engine),
            Settings(database_url=url, grader_dir=tmp_path / "g", grader_allow_unsandboxed=True),
        )
        job = await trial.submit("endgame", [Upload("checkers.py", b"pass\n")])
        assert job.status == "queued"
    finally:
        await engine.dispose()


# -- over HTTP -----------------------------------------------------------------------------------


def test_profiles_describe_what_to_upload(grading_server: RunningServer) -> None:
    with httpx.Client(base_url=grading_server.url, timeout=TIMEOUT) as client:
        response = client.get("/grader/profiles")
    assert response.status_code == 200
    profiles = GradingProfiles.model_validate_json(response.text)
    assert {(p.name, p.main_file) for p in profiles.profiles} == {
        ("endgame", "checkers.py"),
        ("agent", "agent.py"),
    }


def test_profiles_say_in_plain_words_how_each_is_run_and_scored(
    grading_server: RunningServer,
) -> None:
    with httpx.Client(base_url=grading_server.url, timeout=TIMEOUT) as client:
        profiles = GradingProfiles.model_validate_json(client.get("/grader/profiles").text)
    described = {p.name: p.description for p in profiles.profiles}
    # No Markdown, and no pointer to a file of the repository: pages show the words as they are.
    assert all("`" not in text and "docs/" not in text for text in described.values())
    assert (
        "python3 checkers.py --inputfile input.txt --outputfile output.txt" in described["endgame"]
    )
    assert "a line that does not end in a red win earns nothing" in described["endgame"]


@pytest.mark.parametrize(("profile", "name"), [("endgame", "checkers.py"), ("agent", "agent.py")])
def test_the_starter_files_download_from_the_server(
    grading_server: RunningServer, profile: str, name: str
) -> None:
    with httpx.Client(base_url=grading_server.url, timeout=TIMEOUT) as client:
        response = client.get(f"/grader/starters/{profile}")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/x-python")
    assert response.headers["content-disposition"] == f'attachment; filename="{name}"'
    assert response.text == (ROOT / "autograder" / "starters" / profile / name).read_text()


def test_an_unknown_starter_is_not_found_saying_which_exist(grading_server: RunningServer) -> None:
    with httpx.Client(base_url=grading_server.url, timeout=TIMEOUT) as client:
        response = client.get("/grader/starters/chess")
    assert response.status_code == 404
    error = response.json()
    assert error["code"] == "NOT_FOUND"
    assert "choose one of endgame, agent" in error["message"]


def test_uploads_need_a_token_and_a_job_is_read_by_its_uploader_only(
    grading_server: RunningServer,
) -> None:
    program = {"files": ("checkers.py", b"import sys\nsys.exit(3)\n")}
    with (
        httpx.Client(base_url=grading_server.url, timeout=TIMEOUT) as anonymous,
        httpx.Client(base_url=grading_server.url, timeout=TIMEOUT) as owner,
        httpx.Client(base_url=grading_server.url, timeout=TIMEOUT) as other,
    ):
        refused = anonymous.post("/grader/jobs", data={"profile": "endgame"}, files=program)
        assert refused.status_code == 401 and refused.json()["code"] == "UNAUTHORIZED"
        assert "token" in refused.json()["message"]
        job = upload(owner, "endgame", {"checkers.py": b"import sys\nsys.exit(3)\n"})
        authorize(other)
        paths = [f"/grader/jobs/{job['job_id']}", job["results_url"], job["report_url"]]
        for path in paths:
            nobody = anonymous.get(path)
            assert nobody.status_code == 401 and nobody.json()["code"] == "UNAUTHORIZED", path
            stranger = other.get(path)
            assert stranger.status_code == 403 and stranger.json()["code"] == "FORBIDDEN", path
        done = wait_done(owner, job["job_id"])
        assert done.status == "done" and done.score == 0
        assert owner.get(job["results_url"]).json()["score"] == 0
        assert owner.get(job["report_url"]).status_code == 200
        assert other.get(job["results_url"]).status_code == 403


def test_anonymous_uploads_when_allowed_are_read_by_whoever_holds_the_id(
    server_settings: Settings,
) -> None:
    running = start_server(grading_settings(server_settings, grader_allow_anonymous=True))
    try:
        with (
            httpx.Client(base_url=running.url, timeout=TIMEOUT) as anonymous,
            httpx.Client(base_url=running.url, timeout=TIMEOUT) as player,
        ):
            response = anonymous.post(
                "/grader/jobs",
                data={"profile": "endgame"},
                files={"files": ("checkers.py", b"import sys\nsys.exit(3)\n")},
            )
            assert response.status_code == 202, response.text
            job_id = response.json()["job_id"]
            authorize(player)
            assert player.get(f"/grader/jobs/{job_id}").status_code == 200
            done = wait_done(anonymous, job_id)
            assert done.status == "done" and done.score == 0
            assert anonymous.get(done.results_url).status_code == 200
            # A player's upload is still theirs alone.
            own = upload(player, "endgame", {"checkers.py": b"import sys\nsys.exit(3)\n"})
            assert anonymous.get(f"/grader/jobs/{own['job_id']}").status_code == 401
    finally:
        running.stop()


def test_bad_requests_get_their_documented_errors(grading_server: RunningServer) -> None:
    with httpx.Client(base_url=grading_server.url, timeout=TIMEOUT) as client:
        unknown = upload(client, "chess", {"checkers.py": b""}, expect=422)
        assert unknown["code"] == "VALIDATION_ERROR" and "chess" in unknown["message"]
        no_files = client.post("/grader/jobs", data={"profile": "endgame"})
        assert no_files.status_code == 422 and no_files.json()["code"] == "VALIDATION_ERROR"
        assert "files" in no_files.json()["message"]
        wrong = upload(client, "endgame", {"solution.py": b""}, expect=422)
        assert wrong["code"] == "BAD_SUBMISSION"
        assert "checkers.py" in wrong["message"] and "solution.py" in wrong["message"]
        big = upload(client, "endgame", {"checkers.py": b"#" * (3 * 1024 * 1024)}, expect=413)
        assert big["code"] == "SUBMISSION_TOO_LARGE"
        missing = client.get("/grader/jobs/nosuchjob")
        assert missing.status_code == 404 and missing.json()["code"] == "UNKNOWN_JOB"
        for page in ("results.json", "report.html"):
            gone = client.get(f"/grader/jobs/nosuchjob/{page}")
            assert gone.status_code == 404 and gone.json()["code"] == "UNKNOWN_JOB"
        garbled = client.post(
            "/grader/jobs",
            content=b"garbage",
            headers={"Content-Type": "multipart/form-data; boundary=xx"},
        )
        assert garbled.status_code == 400 and garbled.json()["code"] == "BAD_MESSAGE"
        bad_id = client.get("/grader/jobs/..%2Fetc")
        assert bad_id.status_code in (404, 422)
        assert client.get("/health").json()["status"] == "ok"


class OpenFileWatch:
    """Sample the sizes of this process's open files under `directory`; keep the peak.

    The server runs in a thread of the test process, so its spooled upload files (unnamed
    temporary files, invisible in a directory listing) are among /proc/self/fd.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = str(directory)
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> OpenFileWatch:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            total = 0
            for fd in os.listdir("/proc/self/fd"):
                try:
                    if os.readlink(f"/proc/self/fd/{fd}").startswith(self.directory):
                        total += os.stat(f"/proc/self/fd/{fd}").st_size
                except OSError:
                    continue
            self.peak = max(self.peak, total)
            time.sleep(0.002)


def test_a_chunked_upload_is_cut_off_at_the_limit_before_it_reaches_the_disk(
    server_settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    limit = 2 * 1024 * 1024
    spool = tmp_path / "spool"
    spool.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spool))  # where the form parser spools files
    settings = grading_settings(server_settings, grader_max_upload_bytes=limit)
    boundary = "arena-upload-boundary"
    sent = 0

    def body() -> Iterator[bytes]:
        nonlocal sent
        yield (
            f'--{boundary}\r\nContent-Disposition: form-data; name="profile"\r\n\r\n'
            f"endgame\r\n--{boundary}\r\n"
            'Content-Disposition: form-data; name="files"; filename="checkers.py"\r\n'
            "Content-Type: text/x-python\r\n\r\n"
        ).encode()
        chunk = b"#" * (256 * 1024)
        for _ in range(50 * limit // len(chunk)):
            sent += len(chunk)
            yield chunk
        yield f"\r\n--{boundary}--\r\n".encode()

    running = start_server(settings)
    try:
        with (
            httpx.Client(base_url=running.url, timeout=60) as client,
            OpenFileWatch(spool) as watch,
        ):
            authorize(client)
            response = client.post(
                "/grader/jobs",
                content=body(),
                headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
            )
            assert response.request.headers.get("transfer-encoding") == "chunked"
            assert "content-length" not in response.request.headers
            assert client.get("/health").json()["status"] == "ok"
    finally:
        running.stop()
    assert response.status_code == 413, response.text
    error = response.json()
    assert error["code"] == "SUBMISSION_TOO_LARGE"
    assert error["details"] == {"max_bytes": limit}
    slack = 128 * 1024
    assert watch.peak <= limit + slack, f"{watch.peak} bytes spooled to disk"
    stored = [p for p in settings.grader.dir.rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in stored) == 0
    assert sent > 0


def test_concurrent_uploads_never_queue_more_than_the_limit(server_settings: Settings) -> None:
    # The rate limits would refuse a burst of 40 from one player before the queue does.
    settings = grading_settings(server_settings, grader_max_queued=5, rate_limits_enabled=False)
    running = start_server(settings)
    try:
        with httpx.Client(base_url=running.url, timeout=TIMEOUT) as client:
            # Keep the one worker busy, so that nothing leaves the queue during the burst.
            busy = upload(client, "endgame", {"checkers.py": b"import time\ntime.sleep(60)\n"})
            deadline = time.monotonic() + 30
            while client.get(f"/grader/jobs/{busy['job_id']}").json()["status"] != "running":
                assert time.monotonic() < deadline
                time.sleep(0.05)
            headers = dict(client.headers)

        async def burst() -> list[httpx.Response]:
            async with httpx.AsyncClient(base_url=running.url, headers=headers, timeout=60) as http:
                return await asyncio.gather(
                    *(
                        http.post(
                            "/grader/jobs",
                            data={"profile": "endgame"},
                            files={"files": ("checkers.py", f"# {i}\n".encode())},
                        )
                        for i in range(40)
                    )
                )

        responses = asyncio.run(burst())
        queued = asyncio.run(count_jobs(settings, "queued"))
    finally:
        running.stop()
    accepted = [r.json() for r in responses if r.status_code == 202]
    refused = [r.json() for r in responses if r.status_code != 202]
    assert len(accepted) == 5, [r.status_code for r in responses]
    assert sorted(job["queue_position"] for job in accepted) == [1, 2, 3, 4, 5]
    assert len(refused) == 35
    assert {r.status_code for r in responses if r.status_code != 202} == {503}
    assert all(body["code"] == "QUEUE_FULL" for body in refused)
    assert queued == 5


async def count_jobs(settings: Settings, status: str) -> int:
    """Return how many grading jobs the server's database holds with `status`."""
    engine = create_engine(settings.database_url)
    try:
        async with engine.connect() as connection:
            result = await connection.execute(
                select(func.count()).select_from(JobRow).where(JobRow.status == status)
            )
            return int(result.scalar_one())
    finally:
        await engine.dispose()


@sandboxed
def test_the_reference_solution_scores_full_marks(grading_server: RunningServer) -> None:
    with httpx.Client(base_url=grading_server.url, timeout=TIMEOUT) as client:
        body = upload(client, "endgame", {"checkers.py": REFERENCE.read_bytes()})
        job = GradingJob.model_validate(body)
        assert job.status == "queued" and job.files == ("checkers.py",)
        done = wait_done(client, job.job_id)
        assert done.status == "done"
        assert done.score == done.max_score == PUZZLES
        assert done.started_time_ms is not None and done.finished_time_ms is not None
        results = client.get(done.results_url).json()
        assert results["score"] == results["max_score"] == PUZZLES
        assert len(results["tests"]) == PUZZLES
        assert all(test["score"] == test["max_score"] == 1 for test in results["tests"])
        report = client.get(done.report_url)
        assert report.headers["content-type"].startswith("text/html")
        assert f"{PUZZLES:g} / {PUZZLES:g}" in report.text


@sandboxed
def test_a_zip_upload_is_graded_and_a_crash_is_explained(grading_server: RunningServer) -> None:
    crash = b"import helper\nhelper.boom()\n"
    helper = b"def boom():\n    raise RuntimeError('my bug')\n"
    with httpx.Client(base_url=grading_server.url, timeout=TIMEOUT) as client:
        authorize(client)
        response = client.post(
            "/grader/jobs",
            data={"profile": "endgame"},
            files={
                "files": (
                    "work.zip",
                    zipped({"work/checkers.py": crash, "work/helper.py": helper}),
                    "application/zip",
                )
            },
        )
        assert response.status_code == 202, response.text
        done = wait_done(client, response.json()["job_id"])
        assert done.files == ("checkers.py", "helper.py")
        assert done.status == "done" and done.score == 0 and done.max_score == PUZZLES
        results = client.get(done.results_url).json()
        for test in results["tests"]:
            assert "RuntimeError: my bug" in test["output"]


@sandboxed
def test_two_workers_grade_at_once_under_their_own_uids(server_settings: Settings) -> None:
    settings = grading_settings(server_settings, grader_workers=2, grader_uid_base=64100)
    running = start_server(settings)
    try:
        with httpx.Client(base_url=running.url, timeout=TIMEOUT) as client:
            # Each job takes some seconds (a delay per puzzle), so that the second upload is taken
            # by the idle worker while the first is still graded, with seconds to spare under load.
            program = UID_REPORTER.format(delay=1.5).encode()
            ids = [upload(client, "endgame", {"checkers.py": program})["job_id"] for _ in "ab"]
            jobs = [wait_done(client, job_id) for job_id in ids]
            uids = set()
            for job in jobs:
                outputs = [t["output"] for t in client.get(job.results_url).json()["tests"]]
                seen = {word for out in outputs for word in out.split() if word.isdigit()}
                uids |= seen & {"64100", "64101"}
            assert uids == {"64100", "64101"}
            first, second = sorted(jobs, key=lambda job: job.started_time_ms or 0)
            assert first.finished_time_ms and second.started_time_ms
            assert second.started_time_ms < first.finished_time_ms  # they overlapped
    finally:
        running.stop()


@sandboxed
def test_student_code_cannot_read_the_private_suite_or_other_uploads(
    server_settings: Settings,
) -> None:
    grader_dir = server_settings.grader.dir
    suites = grader_dir / "suites"
    suites.mkdir(parents=True)
    private = suites / "endgame.json"
    shutil.copyfile(PUBLIC_SUITE, private)
    private.chmod(0o600)
    running = start_server(server_settings)  # the default suite path: grader_dir/suites
    try:
        with httpx.Client(base_url=running.url, timeout=TIMEOUT) as client:
            other = upload(client, "endgame", {"checkers.py": REFERENCE.read_bytes()})
            wait_done(client, other["job_id"])
            target = grader_dir / "jobs" / other["job_id"] / "submission" / "checkers.py"
            snoop = SNOOP.format(paths=[str(private), str(target)]).encode()
            done = wait_done(client, upload(client, "endgame", {"checkers.py": snoop})["job_id"])
            outputs = [t["output"] for t in client.get(done.results_url).json()["tests"]]
        assert done.score == 0
        assert all("refused" in output for output in outputs)
        assert not any("LEAKED" in output for output in outputs)
    finally:
        running.stop()


# A checkers.py that lists directories of the server's machine on one line of stderr, and fails.
LISTER = """
import json, os, sys
seen = {{}}
for path in {paths!r}:
    try:
        seen[path] = sorted(os.listdir(path))[:40]
    except OSError as error:
        seen[path] = type(error).__name__
print(json.dumps(seen), file=sys.stderr)
sys.exit(1)
"""


@sandboxed
def test_student_code_sees_no_server_code_reference_solution_or_other_job(
    server_settings: Settings,
) -> None:
    installed = Path(autograder.__file__).resolve().parent
    solver = installed / "reference" / "endgame_solver.py"
    cheat = f'import runpy; runpy.run_path("{solver}", run_name="__main__")\n'
    venv_packages = sysconfig.get_path("purelib")
    jobs = server_settings.grader.dir.resolve() / "jobs"
    listed = [
        "/",
        str(ROOT),
        venv_packages,
        str(installed),
        str(jobs),
        "/root",
        "/home",
        "/work",
        "/etc",
    ]
    running = start_server(grading_settings(server_settings))
    try:
        with httpx.Client(base_url=running.url, timeout=TIMEOUT) as client:
            cheated = wait_done(
                client, upload(client, "endgame", {"checkers.py": cheat.encode()})["job_id"]
            )
            lister = LISTER.format(paths=listed).encode()
            listed_job = wait_done(
                client, upload(client, "endgame", {"checkers.py": lister})["job_id"]
            )
            outputs = [t["output"] for t in client.get(listed_job.results_url).json()["tests"]]
    finally:
        running.stop()
    assert cheated.status == "done" and cheated.score == 0 and cheated.max_score == PUZZLES
    assert listed_job.status == "done" and listed_job.score == 0
    secrets = [
        "endgame_solver.py",
        "agent_solution.py",
        "server",
        "autograder",
        "pyproject.toml",
        ".venv",
        "fastapi",
        "sqlalchemy",
        "passwd",
        cheated.job_id,
    ]
    for output in outputs:
        line = next(line.strip() for line in output.splitlines() if line.strip().startswith("{"))
        seen = json.loads(line)
        assert set(seen["/"]) <= {"bin", "dev", "etc", "lib", "lib64", "proc", "sbin", "tmp", "usr"}
        assert seen["/etc"] == ["ld.so.cache"]
        for path in listed[1:-1]:
            assert seen[path] == "FileNotFoundError", (path, seen[path])
        for secret in secrets:
            assert f'"{secret}"' not in output, secret


@sandboxed
def test_a_job_cut_off_by_a_restart_is_graded_after_it(server_settings: Settings) -> None:
    settings = grading_settings(server_settings)
    slow = UID_REPORTER.format(delay=1.0).encode()
    running = start_server(settings)
    try:
        with httpx.Client(base_url=running.url, timeout=TIMEOUT) as client:
            job_id = upload(client, "endgame", {"checkers.py": slow})["job_id"]
            headers = dict(client.headers)  # the uploader's token reads the job
            deadline = time.monotonic() + 30
            while client.get(f"/grader/jobs/{job_id}").json()["status"] != "running":
                assert time.monotonic() < deadline
                time.sleep(0.05)
    finally:
        running.stop()
    running = start_server(settings)
    try:
        with httpx.Client(base_url=running.url, headers=headers) as client:
            job = wait_done(client, job_id)
            assert job.status == "done" and job.max_score == PUZZLES
    finally:
        running.stop()


@sandboxed
def test_an_overrunning_grading_is_stopped_and_its_sandboxes_with_it(
    server_settings: Settings,
) -> None:
    settings = grading_settings(server_settings, grader_job_timeout_s=1.5, grader_uid_base=64200)
    running = start_server(settings)
    try:
        with httpx.Client(base_url=running.url, timeout=TIMEOUT) as client:
            sleeper = b"import time\ntime.sleep(60)\n"
            job = wait_done(client, upload(client, "endgame", {"checkers.py": sleeper})["job_id"])
            assert job.status == "error" and job.score == 0
            results = client.get(job.results_url).json()
            assert "longer than 1.5 s" in results["output"]
            assert "not a problem with your submission" in results["output"]
            assert client.get("/health").json()["status"] == "ok"
    finally:
        running.stop()
    deadline = time.monotonic() + 30  # generous: the sleeper would live on for a minute
    while live_processes(64200):
        assert time.monotonic() < deadline, "a sandboxed process outlived its grading"
        time.sleep(0.1)


@sandboxed
def test_a_broken_suite_is_the_graders_error_not_the_students(
    server_settings: Settings, tmp_path: Path
) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "nonsense"}')
    running = start_server(grading_settings(server_settings, grader_endgame_suite=broken))
    try:
        with httpx.Client(base_url=running.url, timeout=TIMEOUT) as client:
            body = upload(client, "endgame", {"checkers.py": REFERENCE.read_bytes()})
            job = wait_done(client, body["job_id"])
            assert job.status == "error"
            results = client.get(job.results_url).json()
            assert results["tests"][0]["name"] == "grader error"
            assert "report it to the course staff" in results["output"]
    finally:
        running.stop()


@sandboxed
def test_the_agent_profile_is_graded_on_a_private_suite_made_at_first_use(
    tmp_path: Path,
) -> None:
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}",
        grader_dir=tmp_path / "grader",
    )
    agent = ROOT / "autograder" / "reference" / "agent_solution.py"
    running = start_server(settings)
    try:
        with httpx.Client(base_url=running.url, timeout=TIMEOUT) as client:
            body = upload(client, "agent", {"agent.py": agent.read_bytes()})
            job = wait_done(client, body["job_id"], timeout=300)
            results = client.get(job.results_url).json()
    finally:
        running.stop()
    assert job.status == "done"
    assert job.score == job.max_score == 100, results
    suite = settings.grader.dir / "suites" / "agent.json"
    assert stat.S_IMODE(suite.stat().st_mode) == 0o600
    assert stat.S_IMODE(suite.parent.stat().st_mode) == 0o700
    assert json.loads(suite.read_text())["public"] is False
    # The server's own suite is private: its uploader sees each test's outcome only.
    assert {test["visibility"] for test in results["tests"]} == {"after_published"}
    assert [test["name"] for test in results["tests"]] == [
        f"private test {n}" for n in range(1, len(results["tests"]) + 1)
    ]
    assert all(test["output"].startswith("passed.") for test in results["tests"])
    count = len(results["tests"])
    assert job.summary == (
        f"score 100 of 100; the {count} private tests show their points and reasons only."
    )


@sandboxed
def test_a_fork_bomb_costs_its_test_and_the_server_stays_responsive(tmp_path: Path) -> None:
    one_puzzle = json.loads(PUBLIC_SUITE.read_text())
    one_puzzle["puzzles"] = one_puzzle["puzzles"][:1]
    suite = tmp_path / "one.json"
    suite.write_text(json.dumps(one_puzzle))
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}",
        grader_dir=tmp_path / "grader",
        grader_endgame_suite=suite,
        grader_uid_base=64300,
    )
    bomb = (ROOT / "tests" / "sandbox" / "gallery" / "fork_bomb.py").read_bytes()
    running = start_server(settings)
    try:
        # Every request below must be answered while the bomb runs (httpx raises otherwise).
        with httpx.Client(base_url=running.url, timeout=10.0) as client:
            job_id = upload(client, "endgame", {"checkers.py": bomb})["job_id"]
            while client.get(f"/grader/jobs/{job_id}").json()["status"] in ("queued", "running"):
                assert client.get("/health").json()["status"] == "ok"
                assert client.get("/games").status_code == 200
                time.sleep(0.2)
            job = wait_done(client, job_id)
            output = client.get(job.results_url).json()["tests"][0]["output"]
    finally:
        running.stop()
    assert job.status == "done" and job.score == 0 and job.max_score == 1
    assert "more than 20 s of wall time and was stopped" in output
    # The sandbox's end kills every process of the bomb; a loaded kernel may take a moment to
    # tear thousands of them down, so they are waited for (as tests/sandbox/test_sandbox.py
    # does).
    deadline = time.monotonic() + 30.0
    while (survivors := live_processes(64300)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not survivors, f"fork bomb processes outlived the job: {sorted(survivors)[:10]}"
