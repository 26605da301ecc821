"""Grading on `arena worker` processes (ARENA_ROLE=server): a burst across two workers, one of
them SIGKILLed while it grades, comes out with every accepted upload graded once, with the
score its kind earns; the shared queue keeps uploaders in turn and the per-player limit.

Real processes: one `arena serve` with ARENA_ROLE=server and two `arena worker`s on one
PostgreSQL database (ARENA_TEST_DATABASE_URL) and one grader directory. The workers claim
their sandbox uids themselves (server.jobs.worker): the test only gives the base. The tests
without workers drive GradingService with the shared queue directly: places, limits (also
racing through two services), regrades and lost jobs.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from protocol.errors import ProtocolError
from server.db.engine import create_engine, migrate, session_factory
from server.grading import GradingService, Upload
from server.grading.shared import SharedQueue
from server.jobs import build_queue, ensure_schema
from server.players import PlayerRegistry
from server.settings import Settings
from tests.server.conftest import arena_serve
from tests.server.grading.test_grading_burst import (
    PUBLIC_SUITE,
    REFERENCE,
    SLOW,
    Attempt,
    Kind,
    Shared,
    Stored,
    grading_processes,
    kinds,
    read_jobs,
    sandboxed,
    send,
    upload_all,
    wait_for,
)

DATABASE = os.environ.get("ARENA_TEST_DATABASE_URL")
UID_BASE = int(os.environ.get("ARENA_GRADER_UID_BASE", "64000")) + 700
"""The workers' uid base: worker slot n grades as UID_BASE + n (concurrency 1 each)."""

pytestmark = pytest.mark.skipif(not DATABASE, reason="ARENA_TEST_DATABASE_URL is not set")


async def _reset(url: str) -> None:
    """Empty the database: Arena's tables and the job queue's (the server makes both again)."""
    engine = create_engine(url)
    try:
        async with engine.begin() as connection:
            await connection.execute(text("DROP SCHEMA public CASCADE"))
            await connection.execute(text("CREATE SCHEMA public"))
    finally:
        await engine.dispose()


@contextmanager
def arena_worker(
    url: str, env: dict[str, str], log: Path, grace: float = 5
) -> Iterator[subprocess.Popen[bytes]]:
    """Run `arena worker` (one job at a time); kill it on the way out if it still runs."""
    exe = shutil.which("arena", path=str(Path(sys.executable).parent))
    assert exe is not None
    with open(log, "wb") as output:
        process = subprocess.Popen(
            [exe, "worker", "--database", url, "--concurrency", "1", "--grace", str(grace)],
            stdout=output,
            stderr=subprocess.STDOUT,
            env={**os.environ, **env},
        )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)


def parent_of(pid: int) -> int:
    """Return the parent pid of process `pid`."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[1])


def running_jobs(grader_dir: Path) -> dict[str, int]:
    """Return the jobs being graded now, each with the pid of the process grading it."""
    jobs = {}
    for pid in grading_processes(grader_dir):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            jobs[Path(command[-2].decode()).name] = parent_of(pid)
        except (OSError, IndexError):
            continue
    return jobs


@sandboxed
def test_a_burst_on_two_workers_survives_killing_one_mid_grading(tmp_path: Path) -> None:
    assert DATABASE is not None
    asyncio.run(_reset(DATABASE))
    grader_dir = tmp_path / "grader"
    suite = json.loads(PUBLIC_SUITE.read_text())
    suite["puzzles"] = suite["puzzles"][:1]
    (tmp_path / "one-puzzle.json").write_text(json.dumps(suite))
    env = {
        "ARENA_ROLE": "server",
        "ARENA_GRADER_DIR": str(grader_dir),
        "ARENA_GRADER_ENDGAME_SUITE": str(tmp_path / "one-puzzle.json"),
        "ARENA_GRADER_UID_BASE": str(UID_BASE),
        "ARENA_GRADER_MAX_QUEUED_PER_PLAYER": "3",
        "ARENA_GRADER_MAX_QUEUED_PER_ADDRESS": "100",  # every client is on 127.0.0.1
        "ARENA_RATE_LIMITS_ENABLED": "false",
        "ARENA_WORKER_HEARTBEAT_S": "0.5",
        "ARENA_WORKER_STALLED_S": "3",
        "ARENA_WORKER_POLL_S": "0.5",
    }
    slow = Kind(
        "slow reference",
        {"checkers.py": SLOW.encode(), "reference_solver.py": REFERENCE.read_bytes()},
        1.0,
    )
    fast = [kind for kind in kinds() if kind.score is not None]
    numbers = iter(range(1000))
    slows = [Attempt(next(numbers), slow) for _ in range(2)]
    flood = [Attempt(next(numbers), fast[0]) for _ in range(4)]
    mine = Attempt(next(numbers), fast[1])
    burst = [Attempt(next(numbers), fast[n % len(fast)]) for n in range(12)]
    attempts = {a.number: a for a in [*slows, *flood, mine, *burst]}

    def stored() -> dict[str, Stored]:
        return asyncio.run(read_jobs(DATABASE, grader_dir))

    with (
        arena_serve(DATABASE, **env) as (_server, base),
        httpx.Client(base_url=base, timeout=10) as client,
        arena_worker(DATABASE, env, tmp_path / "worker-1.log") as first,
        arena_worker(DATABASE, env, tmp_path / "worker-2.log") as second,
    ):
        for attempt in attempts.values():
            if attempt in flood[1:]:
                attempt.token = flood[0].token
                continue
            response = client.post("/players", json={"name": f"student-{attempt.number}"})
            attempt.token = response.json()["token"]
        for attempt in slows:
            send(client, attempt)
            assert attempt.status == 202
        wait_for(
            "both slow jobs run, one on each worker", lambda: len(running_jobs(grader_dir)) == 2
        )
        graders = running_jobs(grader_dir)
        assert set(graders.values()) == {first.pid, second.pid}
        uids = {
            json.loads((grader_dir / "jobs" / job_id / "job.json").read_text())["uid"]
            for job_id in graders
        }
        # Slot n's block is 3 uids a job (a grading's, then two hosted programs'): slot 1's
        # grading uid is UID_BASE + 3.
        assert uids == {UID_BASE, UID_BASE + 3}, "two workers grade under one sandbox uid"

        # Both workers are busy: what follows waits in the shared queue, uploaders in turn.
        for attempt in flood:
            send(client, attempt)
        assert [a.status for a in flood] == [202, 202, 202, 503]
        refused = client.post(
            "/grader/jobs",
            data={"profile": "endgame"},
            files=[("files", ("checkers.py", b"# more\n", "text/x-python"))],
            headers={"Authorization": f"Bearer {flood[0].token}"},
        ).json()
        assert refused["code"] == "QUEUE_FULL"
        assert refused["details"] == {"player_queue_limit": 3}
        send(client, mine)

        def place(attempt: Attempt) -> int | None:
            auth = {"Authorization": f"Bearer {attempt.token}"}
            job = client.get(f"/grader/jobs/{attempt.job_id}", headers=auth).json()
            return job["queue_position"]  # type: ignore[no-any-return]

        assert [place(a) for a in flood[:3]] == [1, 3, 4]
        assert place(mine) == 2

        shared = Shared(burst)
        threads = [threading.Thread(target=upload_all, args=(base, shared)) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert all(a.status == 202 for a in burst)
        assert len(running_jobs(grader_dir)) == 2, "a slow job ended before the kill"

        # Kill the first worker mid-grading: its grading dies with it (PDEATHSIG), and its
        # job goes back in the queue for the second worker once the first's heartbeat is stale.
        killed_job = next(job for job, pid in running_jobs(grader_dir).items() if pid == first.pid)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
        wait_for(
            "the killed worker's grading is gone",
            lambda: killed_job not in running_jobs(grader_dir),
            timeout=5,
        )
        wait_for(
            "every stored job is graded",
            lambda: all(job.status in ("done", "error") for job in stored().values()),
            timeout=120,
        )
        accepted = [a for a in attempts.values() if a.status == 202]
        for attempt in accepted:
            auth = {"Authorization": f"Bearer {attempt.token}"}
            job = client.get(f"/grader/jobs/{attempt.job_id}", headers=auth).json()
            assert (job["status"], job["score"], job["max_score"]) == (
                "done",
                attempt.kind.score,
                1,
            ), (attempt.kind.name, job["summary"])
        started = {
            a.number: client.get(
                f"/grader/jobs/{a.job_id}", headers={"Authorization": f"Bearer {a.token}"}
            ).json()["started_time_ms"]
            for a in [*flood[:3], mine]
        }
        # The student who came last is graded before the flooder's second job (the burst's
        # first uploads come between them in the queue's order).
        assert started[mine.number] < started[flood[1].number] < started[flood[2].number]

        # A clean stop: SIGTERM, and the surviving worker exits at once, nothing running.
        second.send_signal(signal.SIGTERM)
        assert second.wait(timeout=15) == 0

    after = stored()
    assert {a.job_id for a in accepted} == set(after), "a job appeared or vanished"
    for job_id, job in after.items():
        attempt = attempts[job.upload]
        assert job.status == "done"
        # Graded once: only the killed worker's job was started a second time.
        assert job.attempts == (2 if job_id == killed_job else 1), attempt.kind.name


async def test_the_shared_queue_orders_limits_and_recovers_jobs_in_the_database(
    tmp_path: Path,
) -> None:
    """Without workers: the places, limits, regrades and lost jobs of the shared queue."""
    assert DATABASE is not None
    await _reset(DATABASE)
    settings = Settings(
        database_url=DATABASE,
        role="server",
        grader_dir=tmp_path / "grader",
        grader_allow_unsandboxed=True,
        grader_max_queued=5,
        grader_max_queued_per_player=3,
    )
    engine = create_engine(DATABASE)
    await migrate(engine)
    await ensure_schema(settings)
    queue = build_queue(settings)
    await queue.open_async()
    sessions = session_factory(engine)
    try:
        players = PlayerRegistry(sessions)
        flooder = (await players.register("flooder", "hash-1")).id
        student = (await players.register("student", "hash-2")).id
        grading = GradingService(sessions, settings, queue)
        source = [Upload("checkers.py", b"pass\n")]
        flood = [await grading.submit("endgame", source, flooder) for _ in range(3)]
        assert [job.queue_position for job in flood] == [1, 2, 3]
        with pytest.raises(ProtocolError) as refused:
            await grading.submit("endgame", source, flooder)
        assert refused.value.details == {"player_queue_limit": 3}
        mine = await grading.submit("endgame", source, student)
        assert mine.queue_position == 2
        assert [await grading.position(job.job_id) for job in flood] == [1, 3, 4]

        # A regrade waits behind every fresh upload, and counts toward the queue's limit.
        regraded = await grading.submit("endgame", source, None)
        assert regraded.queue_position == 3  # an anonymous lane's first job
        async with engine.begin() as connection:  # as if a worker had graded it
            await connection.execute(
                text("UPDATE grading_jobs SET status = 'done' WHERE id = :id"),
                {"id": regraded.job_id},
            )
            await connection.execute(
                text(
                    "UPDATE procrastinate_jobs SET status = 'succeeded' WHERE args->>'job_id' = :id"
                ),
                {"id": regraded.job_id},
            )
        assert await grading.regrade([regraded.job_id]) == [regraded.job_id]
        assert await grading.position(regraded.job_id) == 5
        with pytest.raises(ProtocolError) as full:  # 3 + 1 + the regrade wait
            await grading.submit("endgame", source, None)
        assert full.value.details == {"queue_limit": 5}

        # A row whose job is lost (its server died between the two) is queued again, once.
        async with engine.begin() as connection:
            await connection.execute(
                text("DELETE FROM procrastinate_jobs WHERE args->>'job_id' = :id"),
                {"id": mine.job_id},
            )
        assert await grading.position(mine.job_id) is None
        shared = SharedQueue(queue, sessions)
        assert await shared.requeue_orphans() == 1
        assert await shared.requeue_orphans() == 0
        assert await grading.position(mine.job_id) == 2
    finally:
        await queue.close_async()
        await engine.dispose()


SLEEPER = b"import time\ntime.sleep(120)\n"
"""A submission that takes two minutes: whatever grades it is surely still at it."""


async def _regrade(settings: Settings, job_id: str) -> None:
    """Regrade a job as a course's staff would, from another server process's service."""
    engine = create_engine(settings.database_url)
    queue = build_queue(settings)
    await queue.open_async()
    try:
        assert await GradingService(session_factory(engine), settings, queue).regrade([job_id])
    finally:
        await queue.close_async()
        await engine.dispose()


async def _row(url: str, job_id: str) -> tuple[str, int, int]:
    engine = create_engine(url)
    try:
        async with engine.connect() as connection:
            found = (
                await connection.execute(
                    text("SELECT status, attempts, regrades FROM grading_jobs WHERE id = :id"),
                    {"id": job_id},
                )
            ).one()
    finally:
        await engine.dispose()
    return found[0], found[1], found[2]


@sandboxed
def test_a_regrade_stops_a_stale_grading_and_a_stopped_worker_hands_its_job_on(
    tmp_path: Path,
) -> None:
    assert DATABASE is not None
    asyncio.run(_reset(DATABASE))
    grader_dir = tmp_path / "grader"
    env = {
        "ARENA_ROLE": "server",
        "ARENA_GRADER_DIR": str(grader_dir),
        "ARENA_GRADER_UID_BASE": str(UID_BASE + 10),
        "ARENA_RATE_LIMITS_ENABLED": "false",
        "ARENA_WORKER_HEARTBEAT_S": "0.5",
        "ARENA_WORKER_STALLED_S": "3",
        "ARENA_WORKER_POLL_S": "0.5",
    }
    settings = Settings(database_url=DATABASE, role="server", grader_dir=grader_dir)

    def row(job_id: str) -> tuple[str, int, int]:
        return asyncio.run(_row(DATABASE, job_id))

    with (
        arena_serve(DATABASE, **env) as (_server, base),
        httpx.Client(base_url=base, timeout=10) as client,
    ):
        token = client.post("/players", json={"name": "student"}).json()["token"]
        attempt = Attempt(0, Kind("sleeper", {"checkers.py": SLEEPER}, None), token)
        with arena_worker(DATABASE, env, tmp_path / "worker-1.log", grace=1) as worker:
            send(client, attempt)
            assert attempt.job_id is not None
            job_id = attempt.job_id
            wait_for("the job is graded", lambda: job_id in running_jobs(grader_dir))
            first = grading_processes(grader_dir)
            # The regrade supersedes the running attempt: the worker stops it (the job's
            # lock holds the regrade back until then) and grades the job again.
            asyncio.run(_regrade(settings, job_id))
            wait_for(
                "the stale grading stops and the regrade runs",
                # One look at the processes: the stale one gone and another grading.
                lambda: bool(now := set(grading_processes(grader_dir))) and not set(first) & now,
                timeout=30,
            )
            assert row(job_id) == ("running", 2, 1)
            # SIGTERM: the grading is stopped after the grace and its job queued again.
            worker.send_signal(signal.SIGTERM)
            assert worker.wait(timeout=20) == 0
        assert not grading_processes(grader_dir)
        assert row(job_id) == ("queued", 2, 1)
        # The next worker finds the job without a queued grading and grades it.
        with arena_worker(DATABASE, env, tmp_path / "worker-2.log"):
            wait_for("the job is graded again", lambda: row(job_id) == ("running", 3, 1))


async def test_concurrent_uploads_to_two_servers_never_overfill_the_shared_queue(
    tmp_path: Path,
) -> None:
    """The queue's limit is one count in the database: uploads racing through two servers'
    services (each with its own engine and queue connection) take exactly the places left."""
    assert DATABASE is not None
    await _reset(DATABASE)
    settings = Settings(
        database_url=DATABASE,
        role="server",
        grader_dir=tmp_path / "grader",
        grader_allow_unsandboxed=True,
        grader_max_queued=4,
    )
    engines = [create_engine(DATABASE) for _ in range(2)]
    await migrate(engines[0])
    await ensure_schema(settings)
    queues = [build_queue(settings) for _ in range(2)]
    for queue in queues:
        await queue.open_async()
    try:
        players = PlayerRegistry(session_factory(engines[0]))
        ids = [(await players.register(f"student-{n}", f"hash-{n}")).id for n in range(12)]
        services = [
            GradingService(session_factory(engine), settings, queue)
            for engine, queue in zip(engines, queues, strict=True)
        ]
        source = [Upload("checkers.py", b"pass\n")]
        results = await asyncio.gather(
            *(services[n % 2].submit("endgame", source, player) for n, player in enumerate(ids)),
            return_exceptions=True,
        )
        accepted = [r for r in results if not isinstance(r, BaseException)]
        refused = [r for r in results if isinstance(r, ProtocolError)]
        assert len(accepted) == 4 and len(refused) == 8
        assert all(error.details == {"queue_limit": 4} for error in refused)
        places = sorted([await services[0].position(job.job_id) for job in accepted])
        assert places == [1, 2, 3, 4]
        async with engines[1].connect() as connection:
            stored = await connection.scalar(text("SELECT count(*) FROM grading_jobs"))
        assert stored == 4, "a refused upload was stored"
    finally:
        for queue in queues:
            await queue.close_async()
        for engine in engines:
            await engine.dispose()


async def test_the_shared_queue_takes_addresses_in_turn_and_says_why_a_job_waits(
    tmp_path: Path,
) -> None:
    """The order of server.grading.queue in procrastinate's table: one address with two
    tokens, its first job taken by a worker, then another address's upload goes first; the
    per-address limit; each job's place and whose jobs are before it."""
    assert DATABASE is not None
    await _reset(DATABASE)
    settings = Settings(
        database_url=DATABASE,
        role="server",
        grader_dir=tmp_path / "grader",
        grader_allow_unsandboxed=True,
        grader_max_queued_per_player=3,
        grader_max_queued_per_address=5,
    )
    engine = create_engine(DATABASE)
    await migrate(engine)
    await ensure_schema(settings)
    queue = build_queue(settings)
    await queue.open_async()
    sessions = session_factory(engine)
    try:
        players = PlayerRegistry(sessions)
        first = (await players.register("first", "hash-1")).id
        second = (await players.register("second", "hash-2")).id
        stranger = (await players.register("stranger", "hash-3")).id
        grading = GradingService(sessions, settings, queue)
        source = [Upload("checkers.py", b"pass\n")]
        here, there = "10.0.0.1", "10.0.0.2"
        j1 = await grading.submit("endgame", source, first, address=here)
        async with engine.begin() as connection:  # a worker takes it
            await connection.execute(
                text("UPDATE grading_jobs SET status = 'running' WHERE id = :id"),
                {"id": j1.job_id},
            )
            await connection.execute(
                text("UPDATE procrastinate_jobs SET status = 'doing' WHERE args->>'job_id' = :id"),
                {"id": j1.job_id},
            )
        js = [await grading.submit("endgame", source, first, address=here) for _ in range(3)]
        with pytest.raises(ProtocolError) as refused:
            await grading.submit("endgame", source, first, address=here)
        assert refused.value.details == {"player_queue_limit": 3}
        ks = [await grading.submit("endgame", source, second, address=here) for _ in range(2)]
        with pytest.raises(ProtocolError) as refused:
            await grading.submit("endgame", source, second, address=here)
        assert refused.value.details == {"address_queue_limit": 5}
        other = await grading.submit("endgame", source, stranger, address=there)
        assert other.queue_position == 1
        assert other.wait is not None and other.wait.ahead == 0
        order = [ks[0], js[0], ks[1], js[1], js[2]]
        places = await grading.places([job.job_id for job in order])
        assert [places[job.job_id].position for job in order] == [2, 3, 4, 5, 6]
        k2 = places[ks[1].job_id]
        assert (k2.ahead, k2.own, k2.address, k2.others) == (3, 1, 1, 1)
        j4 = places[js[2].job_id]
        assert (j4.own, j4.address, j4.others) == (2, 2, 1)
        async with engine.connect() as connection:
            taken = (
                await connection.execute(
                    text(
                        "SELECT args->>'job_id' FROM procrastinate_jobs WHERE status = 'todo' "
                        "ORDER BY priority DESC, id"
                    )
                )
            ).scalars()
            assert list(taken) == [other.job_id, *(job.job_id for job in order)]
    finally:
        await queue.close_async()
        await engine.dispose()
