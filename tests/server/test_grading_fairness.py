"""One uploader cannot hold the grading queue: a per-player waiting limit, and uploaders in turn."""

from __future__ import annotations

import time

import httpx

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
