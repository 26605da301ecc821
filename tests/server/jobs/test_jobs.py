"""The job queue's pieces that need no database: task registration and the connection string."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.db.engine import create_engine, session_factory
from server.grading.shared import GRADE_TASK, GRADING_QUEUE, priority
from server.jobs import JobRuntime, build_queue
from server.jobs import grading as grading_jobs
from server.jobs.queue import conninfo
from server.settings import Settings

URL = "postgresql+asyncpg://arena:secret@db.example:5433/arena"


def runtime(tmp_path: Path, **settings: object) -> JobRuntime:
    chosen = Settings(database_url=URL, role="worker", grader_dir=tmp_path, **settings)
    engine = create_engine(URL)  # connects only when used
    return JobRuntime(chosen, engine, session_factory(engine), concurrency=2, uid_base=64000)


def test_the_queue_connects_with_libpq_s_form_of_the_database_url() -> None:
    assert conninfo(URL) == "postgresql://arena:secret@db.example:5433/arena"
    with pytest.raises(ValueError, match="PostgreSQL"):
        conninfo("sqlite+aiosqlite:///arena.db")


def test_a_worker_that_cannot_sandbox_takes_no_grading_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(grading_jobs, "can_isolate", lambda: False)
    app = build_queue(runtime(tmp_path).settings)
    grading_jobs.register(app, runtime(tmp_path))
    assert GRADE_TASK not in app.tasks
    allowed = runtime(tmp_path, grader_allow_unsandboxed=True)
    app = build_queue(allowed.settings)
    grading_jobs.register(app, allowed)
    assert app.tasks[GRADE_TASK].queue == GRADING_QUEUE


def test_regrades_rank_below_every_fresh_upload_and_lanes_take_turns() -> None:
    assert priority(0, background=False) > priority(1, background=False)
    assert priority(10_000, background=False) > priority(0, background=True)


def test_role_server_or_worker_needs_postgresql() -> None:
    with pytest.raises(ValueError, match="needs a PostgreSQL database"):
        Settings(role="server")
    assert Settings(role="server", database_url=URL).role == "server"
