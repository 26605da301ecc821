"""Grading in the process's compute slots, beside hosted bots: a grading still runs in its
reserve while hosted programs hold every slot they may, and runs one at a time there."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from protocol.messages import GradingJob
from sandbox import can_isolate
from server.db.engine import create_engine, migrate, session_factory
from server.grading import GradingService
from server.grading.uploads import Upload
from server.limits.slots import ComputeSlots, Split
from server.settings import Settings

ROOT = Path(__file__).resolve().parents[3]
PUBLIC_SUITE = ROOT / "autograder" / "examples" / "endgame-puzzles.json"
GIVES_UP = b"import sys\nsys.exit(1)\n"
"""A checkers.py that fails every puzzle at once: a short grading."""

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not can_isolate() or not os.path.exists("/usr/bin/python3"),
    reason="these tests need root (the sandbox uids), the sandbox and /usr/bin/python3",
)


async def finished(service: GradingService, job_id: str) -> GradingJob:
    """Wait until the job is graded; return it."""
    for _ in range(6000):  # a bound for a broken build, never reached by a working one
        job = await service.job(job_id, None)
        if job.status in ("done", "error"):
            return job
        await asyncio.sleep(0.05)
    raise AssertionError(f"job {job_id} was never graded")


async def test_grading_runs_in_its_reserve_while_hosted_bots_hold_all_they_may(
    tmp_path: Path,
) -> None:
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}",
        grader_dir=tmp_path / "grader",
        grader_endgame_suite=PUBLIC_SUITE,
        grader_workers=2,
        grader_uid_base=64300,
        compute_slots=4,
        compute_grading_reserved=1,
        compute_hosted_reserved=1,
    )
    slots = ComputeSlots(Split.of(settings))
    hosted = 0
    while slots.try_take("hosted"):  # a flood of hosted matches
        hosted += 1
    assert hosted == 3  # every slot but grading's reserve
    engine = create_engine(settings.database_url)
    await migrate(engine)
    service = GradingService(session_factory(engine), settings, slots=slots)
    try:
        await service.start()
        first = await service.submit("endgame", [Upload("checkers.py", GIVES_UP)])
        second = await service.submit("endgame", [Upload("checkers.py", GIVES_UP)])
        jobs = [await finished(service, job.job_id) for job in (first, second)]
        assert [job.status for job in jobs] == ["done", "done"]
        assert all(job.score == 0 for job in jobs)
        # Two workers, one slot: the reserve ran the jobs one after the other.
        one, two = sorted(jobs, key=lambda job: job.started_time_ms or 0)
        assert one.finished_time_ms is not None and two.started_time_ms is not None
        assert two.started_time_ms >= one.finished_time_ms
        assert slots.held("grading") == 0 and slots.held("hosted") == 3
    finally:
        await service.close()
        await engine.dispose()
