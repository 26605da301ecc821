"""One uploader cannot hold the grading queue: a per-player waiting limit, and uploaders in turn."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
from sqlalchemy import update

from server.db.engine import create_engine, migrate, session_factory
from server.db.models import GradingJob as JobRow
from server.grading import GradingService, Upload
from server.settings import Settings
from tests.server.conftest import start_server
from tests.server.test_grading import grading_settings, upload, wait_done

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
            # A student arriving last is graded second: the uploaders take turns.
            mine = upload(student, "endgame", {"checkers.py": b"# mine\n"})
            assert mine["queue_position"] == 2
            positions = [
                flooder.get(f"/grader/jobs/{job['job_id']}").json()["queue_position"]
                for job in flood
            ]
            assert positions == [1, 3, 4]
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
        flood[0]["job_id"],
        mine["job_id"],
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
