"""A deadline burst survives SIGKILL: after a restart on the same database and grader directory,
every acknowledged upload is graded once, with the score its kind earns, and nothing refused
is stored.

The burst is `arena serve` (a real process, two grading workers) taking uploads of every kind
from the grader's test gallery: the reference solution, broken programs, hostile ones, and
uploads the intake refuses (no checkers.py; the queue full). The server is killed while two
slow jobs run, others wait and uploads are still arriving; more uploads are tried while it is
down. Then it is started again on the same port.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from sandbox import can_isolate
from server.db.engine import create_engine
from server.db.models import GradingJob as JobRow
from server.settings import Settings
from tests.ports import free_port
from tests.sandbox.processes import live_processes
from tests.server.conftest import arena_serve

ROOT = Path(__file__).resolve().parents[3]
REFERENCE = ROOT / "autograder" / "reference" / "endgame_solver.py"
PUBLIC_SUITE = ROOT / "autograder" / "examples" / "endgame-puzzles.json"
SUBMISSIONS = ROOT / "tests" / "autograder" / "submissions"
GALLERY = ROOT / "tests" / "sandbox" / "gallery"
UID_BASE = 64600
"""Sandbox uids of this test's two worker slots (64600, 64601): no other test uses them."""
MAX_QUEUED = 12
"""The server's queue limit: the burst is larger, so some uploads are refused QUEUE_FULL."""
SLOW_SECONDS = 15
"""How long each of the two slow jobs sleeps before solving: both workers are busy meanwhile."""

sandboxed = pytest.mark.skipif(
    os.geteuid() != 0 or not can_isolate() or not os.path.exists("/usr/bin/python3"),
    reason="these tests need root (the sandbox uids), the sandbox and /usr/bin/python3",
)

# The reference solution run after a pause: a correct job that is surely running at the kill.
SLOW = f"""
import sys, time
time.sleep({SLOW_SECONDS})
import reference_solver
sys.exit(reference_solver.main())
"""


@dataclass(frozen=True)
class Kind:
    """A kind of upload: its files and what it must come to (a score, or a refusal)."""

    name: str
    files: dict[str, bytes]
    score: float | None
    """The score out of 1 (a one-puzzle suite); None: refused at the intake (no job)."""


def kinds() -> list[Kind]:
    """Every kind of the burst, fast ones only (each runs in well under a second)."""
    found = [Kind("reference", {"checkers.py": REFERENCE.read_bytes()}, 1.0)]
    for name in ("crash", "garbage", "illegal_move", "no_output"):
        found.append(
            Kind(name, {"checkers.py": (SUBMISSIONS / name / "checkers.py").read_bytes()}, 0.0)
        )
    for name in (
        "memory_bomb",
        "orphan",
        "huge_file",
        "socket_connect",
        "write_outside",
        "garbage",
    ):
        found.append(
            Kind(f"hostile {name}", {"checkers.py": (GALLERY / f"{name}.py").read_bytes()}, 0.0)
        )
    wrong = (SUBMISSIONS / "missing_program" / "solution.py").read_bytes()
    found.append(Kind("missing_program", {"solution.py": wrong}, None))
    return found


@dataclass
class Attempt:
    """One upload of the burst and what became of it."""

    number: int
    kind: Kind
    token: str = ""
    """The token of the student who uploads it (one student, one upload)."""
    started: float = 0.0
    """time.monotonic() when the request was sent."""
    status: int | None = None
    """The HTTP status; None when no answer came (the server was down or died mid-request)."""
    job_id: str | None = None

    def files(self) -> dict[str, bytes]:
        """Return the kind's files, the main one marked with this upload's number."""
        marked = dict(self.kind.files)
        main = next(iter(marked))
        marked[main] = f"# upload {self.number}\n".encode() + marked[main]
        return marked


def send(client: httpx.Client, attempt: Attempt) -> None:
    """Upload `attempt`'s files; record the status and job id, or that no answer came."""
    attempt.started = time.monotonic()
    try:
        response = client.post(
            "/grader/jobs",
            data={"profile": "endgame"},
            files=[("files", (n, d, "text/x-python")) for n, d in attempt.files().items()],
            headers={"Authorization": f"Bearer {attempt.token}"},
        )
    except httpx.TransportError:
        return
    attempt.status = response.status_code
    if response.status_code == 202:
        attempt.job_id = response.json()["job_id"]


@dataclass(frozen=True)
class Stored:
    """A job's row as the database holds it, and which upload its files came from."""

    status: str
    attempts: int
    score: float | None
    max_score: float | None
    finished_at: datetime | None
    results: str | None
    upload: int


async def read_jobs(database_url: str, grader_dir: Path) -> dict[str, Stored]:
    """Return every stored job by id, each with the upload number marked in its files."""
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            rows = (await connection.execute(select(JobRow))).all()
    finally:
        await engine.dispose()
    jobs = {}
    for row in rows:
        submission = grader_dir / "jobs" / row.id / "submission"
        main = next(submission.iterdir()).read_text(encoding="utf-8")
        number = int(main.split("\n", 1)[0].removeprefix("# upload "))
        jobs[row.id] = Stored(
            row.status, row.attempts, row.score, row.max_score, row.finished_at, row.results, number
        )
    return jobs


def grading_processes(grader_dir: Path) -> list[int]:
    """Return the pids of grading children working in `grader_dir` (`python -m autograder.job`)."""
    needle = str(grader_dir.resolve() / "jobs").encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if b"autograder.job" in command and needle in command:
            found.append(int(entry.name))
    return found


def wait_for(what: str, condition: Callable[[], bool], timeout: float = 60.0) -> None:
    """Poll `condition()` every 0.1 s until it is true; fail saying `what` after `timeout`."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.1)


def upload_all(base: str, pending: Iterator[Attempt]) -> None:
    """Upload attempts from `pending` one after another until it is empty (one thread's share)."""
    with httpx.Client(base_url=base, timeout=10) as client:
        for attempt in pending:
            send(client, attempt)
            time.sleep(0.05)


class Shared:
    """An iterator several threads draw from, each item given to one thread."""

    def __init__(self, items: list[Attempt]) -> None:
        self._items = iter(items)
        self._lock = threading.Lock()

    def __iter__(self) -> Iterator[Attempt]:
        return self

    def __next__(self) -> Attempt:
        with self._lock:
            return next(self._items)


@sandboxed
def test_a_server_killed_mid_burst_grades_every_accepted_upload_once_after_restart(
    server_settings: Settings, tmp_path: Path
) -> None:
    url, grader_dir = server_settings.database_url, server_settings.grader.dir
    suite = json.loads(PUBLIC_SUITE.read_text())
    suite["puzzles"] = suite["puzzles"][:1]
    (tmp_path / "one-puzzle.json").write_text(json.dumps(suite))
    env = {
        "ARENA_GRADER_DIR": str(grader_dir),
        "ARENA_GRADER_ENDGAME_SUITE": str(tmp_path / "one-puzzle.json"),
        "ARENA_GRADER_WORKERS": "2",
        "ARENA_GRADER_UID_BASE": str(UID_BASE),
        "ARENA_GRADER_MAX_QUEUED": str(MAX_QUEUED),
        "ARENA_GRADER_MAX_QUEUED_PER_ADDRESS": str(MAX_QUEUED),  # every client is on 127.0.0.1
        "ARENA_RATE_LIMITS_ENABLED": "false",
    }
    every = kinds()
    fast = [kind for kind in every if kind.score is not None]
    slow = Kind(
        "slow reference",
        {"checkers.py": SLOW.encode(), "reference_solver.py": REFERENCE.read_bytes()},
        1.0,
    )
    numbers = itertools.count()
    # Two graded uploads, and a bad one refused while the queue has room (422, not stored).
    bad = next(kind for kind in every if kind.score is None)
    first = [Attempt(next(numbers), kind) for kind in [*fast[:2], bad]]
    slows = [Attempt(next(numbers), slow) for _ in range(2)]
    burst = [Attempt(next(numbers), kind) for kind in itertools.islice(itertools.cycle(every), 36)]
    down = [Attempt(next(numbers), kind) for kind in fast[:3]]
    attempts = {a.number: a for a in [*first, *slows, *burst, *down]}
    port = free_port()

    def stored() -> dict[str, Stored]:
        return asyncio.run(read_jobs(url, grader_dir))

    with (
        arena_serve(url, port=port, **env) as (process, base),
        httpx.Client(base_url=base, timeout=10) as client,
    ):
        for attempt in attempts.values():
            response = client.post("/players", json={"name": f"student-{attempt.number}"})
            attempt.token = response.json()["token"]
        for attempt in first:
            send(client, attempt)
        wait_for(
            "the first jobs are graded",
            lambda: [j.status for j in stored().values()] == ["done", "done"],
        )
        for attempt in slows:
            send(client, attempt)
        wait_for(
            "both slow jobs run, one in each worker",
            lambda: len(grading_processes(grader_dir)) == 2,
        )
        # Both workers are busy: the burst fills the queue, then meets QUEUE_FULL.
        shared = Shared(burst)
        threads = [threading.Thread(target=upload_all, args=(base, shared)) for _ in range(3)]
        for thread in threads:
            thread.start()
        wait_for(
            "18 uploads of the burst are answered",
            lambda: sum(a.status is not None for a in burst) >= 18,
        )
        assert len(grading_processes(grader_dir)) == 2, "a slow job ended before the kill"
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
        killed = time.monotonic()
        # Nothing of the killed server grades on: a grading that outlived it would run its
        # job a second time beside the new server's, under the same sandbox uid (and hold
        # the port, so that the new server could not start).
        wait_for(
            "no grading child or student process outlives the killed server",
            lambda: (
                not grading_processes(grader_dir)
                and not live_processes(UID_BASE) | live_processes(UID_BASE + 1)
            ),
            timeout=5,
        )
        for attempt in down:
            send(client, attempt)
        for thread in threads:
            thread.join()
    before = stored()
    statuses = sorted(job.status for job in before.values())
    assert statuses.count("done") == 2 and statuses.count("running") == 2
    assert statuses.count("queued") >= 1

    with (
        arena_serve(url, port=port, **env) as (_process, base),
        httpx.Client(base_url=base) as client,
    ):
        wait_for(
            "every stored job is graded",
            lambda: all(job.status in ("done", "error") for job in stored().values()),
            timeout=120,
        )
        after = stored()
        accepted = [a for a in attempts.values() if a.status == 202]
        for attempt in accepted:
            assert attempt.job_id is not None
            auth = {"Authorization": f"Bearer {attempt.token}"}
            job = client.get(f"/grader/jobs/{attempt.job_id}", headers=auth).json()
            assert (job["status"], job["score"], job["max_score"]) == (
                "done",
                attempt.kind.score,
                1,
            ), (attempt.kind.name, job["summary"])

    # Every acknowledged upload is stored (with its own files) and graded once.
    assert {a.job_id: a.number for a in accepted} == {
        job_id: job.upload for job_id, job in after.items() if attempts[job.upload].status == 202
    }
    uploads = [job.upload for job in after.values()]
    assert len(uploads) == len(set(uploads)), "an upload is stored twice"
    assert set(after) == set(before), "a job appeared or vanished across the restart"
    for job in after.values():
        attempt = attempts[job.upload]
        # Refused uploads (a bad submission, QUEUE_FULL, nobody listening) are not stored; an
        # upload cut off by the kill before its answer may be, and is then graded like any.
        assert attempt.status in (202, None), (attempt.kind.name, attempt.status)
        assert attempt.status == 202 or attempt.started < killed
        assert (job.status, job.score, job.max_score) == ("done", attempt.kind.score, 1)
    for job_id, job in before.items():
        if job.status == "done":
            assert after[job_id] == job, "a job graded before the kill was graded again"
        elif job.status == "running":
            assert after[job_id].attempts == job.attempts + 1
        else:
            assert after[job_id].attempts == 1
    refused = [a.status for a in attempts.values() if a.status not in (202, None)]
    assert 422 in refused and 503 in refused
    assert all(a.status is None for a in down)
