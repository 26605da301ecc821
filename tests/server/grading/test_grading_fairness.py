"""One uploader cannot hold the grading queue: per-player and per-address waiting limits,
addresses and then players in turn, each waiting job saying why it waits, and a budget per job."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import update

from server.db.engine import create_engine, migrate, session_factory
from server.db.models import GradingJob as JobRow
from server.grading import GradingService, Upload
from server.grading.workers import Grader
from server.settings import Settings
from tests.server.conftest import start_server
from tests.server.grading.test_grading import PUZZLES, grading_settings, upload, wait_done

BUSY = {"checkers.py": b"import time\ntime.sleep(3)\n"}


def test_a_flooding_player_waits_behind_others_and_is_capped(server_settings: Settings) -> None:
    settings = grading_settings(
        server_settings, grader_max_queued_per_player=3, rate_limits_enabled=False
    )
    running = start_server(settings)
    try:
        with (
            httpx.Client(base_url=running.url, timeout=30) as flooder,
            httpx.Client(base_url=running.url, timeout=30) as student,
        ):
            # The one worker is busy, so what follows waits.
            busy = upload(flooder, "endgame", BUSY)
            deadline = time.monotonic() + 30
            while flooder.get(f"/grader/jobs/{busy['job_id']}").json()["status"] != "running":
                assert time.monotonic() < deadline
                time.sleep(0.05)
            flood = [
                upload(flooder, "endgame", {"checkers.py": f"# {n}\n".encode()}) for n in range(3)
            ]
            assert [job["queue_position"] for job in flood] == [1, 2, 3]
            refused = upload(flooder, "endgame", {"checkers.py": b"# 4\n"}, expect=503)
            assert refused["code"] == "QUEUE_FULL"
            assert refused["details"] == {"player_queue_limit": 3}
            assert "3 submissions waiting" in refused["message"]
            # A student arriving last is graded next: the flooder is being served already.
            mine = upload(student, "endgame", {"checkers.py": b"# mine\n"})
            assert mine["queue_position"] == 1
            positions = [
                flooder.get(f"/grader/jobs/{job['job_id']}").json()["queue_position"]
                for job in flood
            ]
            assert positions == [2, 3, 4]
            finished = [wait_done(flooder, job["job_id"]) for job in flood]
            my_job = wait_done(student, mine["job_id"])
            # Once one of the flooder's jobs is graded, it may upload again.
            upload(flooder, "endgame", {"checkers.py": b"# 5\n"})
    finally:
        running.stop()
    started = sorted(
        [(job.started_time_ms or 0, job.job_id) for job in finished]
        + [(my_job.started_time_ms or 0, my_job.job_id)]
    )
    assert [job_id for _, job_id in started] == [
        mine["job_id"],
        flood[0]["job_id"],
        flood[1]["job_id"],
        flood[2]["job_id"],
    ]


async def test_after_a_restart_regrades_still_wait_behind_fresh_uploads(tmp_path: Path) -> None:
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}",
        grader_dir=tmp_path / "grader",
        grader_allow_unsandboxed=True,
    )
    engine = create_engine(settings.database_url)
    await migrate(engine)
    try:
        first = GradingService(session_factory(engine), settings)
        older = await first.submit("endgame", [Upload("checkers.py", b"pass\n")], None)
        fresh = await first.submit("endgame", [Upload("checkers.py", b"pass\n")], None)
        # The older job is being regraded when the server stops.
        async with session_factory(engine)() as session:
            await session.execute(
                update(JobRow).where(JobRow.id == older.job_id).values(regrades=1)
            )
            await session.commit()
        again = GradingService(session_factory(engine), settings)
        assert await again.start() == 2
        try:
            assert again.queue_position(fresh.job_id) == 1
            assert again.queue_position(older.job_id) == 2
        finally:
            await again.close()
    finally:
        await engine.dispose()


class Gate:
    """Holds every grading before its child starts, in the order the worker takes the jobs,
    until the test lets it run (the server runs in this process)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.started: list[str] = []
        self._released: set[str] = set()
        self._open = False
        self._changed = threading.Condition()
        original = Grader._run_child

        async def held(grader: Grader, job_dir: Path, *args: Any) -> Any:
            with self._changed:
                self.started.append(job_dir.name)
                self._changed.notify_all()
            await asyncio.to_thread(self._wait, job_dir.name)
            return await original(grader, job_dir, *args)

        monkeypatch.setattr(Grader, "_run_child", held)

    def _wait(self, job_id: str) -> None:
        with self._changed:
            self._changed.wait_for(lambda: self._open or job_id in self._released, 120)

    def wait_started(self, count: int) -> None:
        with self._changed:
            assert self._changed.wait_for(lambda: len(self.started) >= count, 120), self.started

    def open(self) -> None:
        with self._changed:
            self._open = True
            self._changed.notify_all()


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    made = Gate(monkeypatch)
    try:
        yield made
    finally:
        made.open()


def client_from(url: str, address: str) -> httpx.Client:
    """A client whose connections come from `address` (any 127.x.y.z reaches the server)."""
    return httpx.Client(
        base_url=url, timeout=30, transport=httpx.HTTPTransport(local_address=address)
    )


def test_one_address_with_two_tokens_cannot_hold_the_queue_and_each_job_says_why_it_waits(
    server_settings: Settings, gate: Gate
) -> None:
    settings = grading_settings(
        server_settings,
        grader_max_queued_per_player=3,
        grader_max_queued_per_address=5,
        rate_limits_enabled=False,
    )
    running = start_server(settings)
    program = {"checkers.py": b"import sys\nsys.exit(1)\n"}
    try:
        with (
            client_from(running.url, "127.0.0.1") as first,
            client_from(running.url, "127.0.0.1") as second,
            client_from(running.url, "127.0.0.2") as stranger,
        ):
            # One address, two tokens: the first job is taken (and held), more wait.
            j1 = upload(first, "endgame", program)["job_id"]
            gate.wait_started(1)
            js = [upload(first, "endgame", program)["job_id"] for _ in range(3)]
            refused = upload(first, "endgame", program, expect=503)
            assert refused["details"] == {"player_queue_limit": 3}
            ks = [upload(second, "endgame", program)["job_id"] for _ in range(2)]
            refused = upload(second, "endgame", program, expect=503)
            assert refused["code"] == "QUEUE_FULL"
            assert refused["details"] == {"address_queue_limit": 5}
            assert "5 submissions from your address" in refused["message"]
            # Another address's upload is taken next, before the address being served.
            other = upload(stranger, "endgame", program)
            assert other["queue_position"] == 1
            assert other["wait"]["ahead"] == 0
            assert other["wait"]["reason"].startswith("next in the queue")
            # Each waiting job says where it stands, and whose jobs are before it.
            waits = {
                job_id: (first if job_id in js else second).get(f"/grader/jobs/{job_id}").json()
                for job_id in js + ks
            }
            order = [ks[0], js[0], ks[1], js[1], js[2]]
            assert [waits[j]["queue_position"] for j in order] == [2, 3, 4, 5, 6]
            k2 = waits[ks[1]]["wait"]
            assert (k2["ahead"], k2["ahead_own"], k2["ahead_address"], k2["ahead_others"]) == (
                3,
                1,
                1,
                1,
            )
            assert k2["reason"].startswith(
                "3 jobs are ahead of it in the queue: 1 of your own earlier upload, 1 from "
                "another player at your address, 1 from another uploader; the queue takes "
                "addresses in turn"
            ), k2["reason"]
            j4 = waits[js[2]]["wait"]
            assert (j4["ahead_own"], j4["ahead_address"], j4["ahead_others"]) == (2, 2, 1)
            gate.open()
            for job_id in [j1, *js]:
                wait_done(first, job_id)
            for job_id in ks:
                wait_done(second, job_id)
            wait_done(stranger, other["job_id"])
    finally:
        gate.open()
        running.stop()
    assert gate.started == [j1, other["job_id"], *order]


def test_a_job_whose_tests_all_hang_is_stopped_by_its_budget_with_the_reason(
    server_settings: Settings,
) -> None:
    # Each run may take the profile's 20 s; the job as a whole 1 s (the hard stop is far off).
    settings = grading_settings(
        server_settings, grader_job_budget_s=1.0, grader_job_timeout_s=600, grader_uid_base=64300
    )
    running = start_server(settings)
    try:
        with httpx.Client(base_url=running.url, timeout=30) as client:
            hang = {"checkers.py": b"import time\ntime.sleep(3600)\n"}
            job = wait_done(client, upload(client, "endgame", hang)["job_id"], timeout=300)
            assert job.status == "done" and job.score == 0
            tests = client.get(job.results_url).json()["tests"]
    finally:
        running.stop()
    assert tests[0]["output"].startswith(
        "stopped when the grading's time budget of 1 s ran out during this test"
    ), tests[0]["output"]
    assert len(tests) == PUZZLES
    for test in tests[1:]:
        assert test["output"].startswith(
            "not run: the grading's time budget of 1 s was spent on the tests before this one"
        ), test["output"]
