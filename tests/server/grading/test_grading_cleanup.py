"""A stopped grading leaves no working directory behind: a private puzzle's input never stays.

The grading child (`python -m autograder.job`, as the server runs it) is stopped mid-run as the
server or an operator stops it: SIGTERM (it kills its sandbox and removes its directories
before it exits) or SIGKILL (its directories stay until the next start removes them).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox import can_isolate, sandbox_support
from sandbox.process import descendants
from sandbox.workdirs import new_workdir, runs_dir
from server.db.engine import create_engine, migrate, session_factory
from server.grading import GradingService
from server.settings import Settings
from tests.sandbox.processes import live_processes

ROOT = Path(__file__).resolve().parents[3]
PUBLIC_SUITE = ROOT / "autograder" / "examples" / "endgame-puzzles.json"
PYTHON = "/usr/bin/python3"
BLOCKER = b"import time\ntime.sleep(3600)\n"
"""A checkers.py that never answers: the grading is surely mid-run when it is stopped."""
UID = int(os.environ.get("ARENA_GRADER_UID_BASE", "64000")) + 37

pytestmark = [
    pytest.mark.skipif(not can_isolate(), reason=f"no sandbox here: {sandbox_support().reason}"),
    pytest.mark.skipif(not os.path.exists(PYTHON), reason=f"{PYTHON} is missing"),
]


@pytest.fixture
def temp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Yield the temporary directory of this test and of the grading children it starts."""
    directory = tmp_path / "tmp"
    directory.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(directory))
    yield directory


def start_grading(job_dir: Path, temp_dir: Path) -> subprocess.Popen[bytes]:
    """Start the grading child of a job whose checkers.py never answers."""
    (job_dir / "submission").mkdir(parents=True)
    (job_dir / "submission" / "checkers.py").write_bytes(BLOCKER)
    job = {"profile": "endgame", "suite": str(PUBLIC_SUITE), "python": PYTHON, "uid": UID}
    (job_dir / "job.json").write_text(json.dumps({**job, "gid": UID}))
    env = {"PATH": "/usr/bin:/bin", "TMPDIR": str(temp_dir), "LANG": "C.UTF-8"}
    return subprocess.Popen(
        [sys.executable, "-m", "autograder.job", str(job_dir)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def working_dirs(temp_dir: Path) -> list[Path]:
    """Return every working directory a grading made under `temp_dir`, wherever it is."""
    return sorted(
        path
        for path in temp_dir.rglob("arena-*")
        if path.is_dir() and not path.name.startswith("arena-runs-")
    )


def wait_until_sandboxed(child: subprocess.Popen[bytes], temp_dir: Path) -> None:
    """Wait until the child runs a puzzle in the sandbox (a generous deadline, no timing).

    Its working directories hold the puzzle's input.txt, and the sandbox's processes run
    below it (bwrap and the program, or the init and the program).
    """
    deadline = time.monotonic() + 120
    while True:
        staged = [d for d in working_dirs(temp_dir) if (d / "input.txt").exists()]
        if staged and len(descendants(child.pid)) >= 2:
            return
        assert child.poll() is None, child.stderr.read() if child.stderr else ""
        assert time.monotonic() < deadline, "the grading never started its sandbox"
        time.sleep(0.05)


def no_sandbox_survives() -> None:
    """Fail unless the sandbox's processes are gone (as root: its uid runs nothing)."""
    if os.geteuid() != 0:
        return  # without root the sandbox runs under the tester's uid, shared with all else
    deadline = time.monotonic() + 60  # generous: the blocker would sleep for an hour
    while live_processes(UID):
        assert time.monotonic() < deadline, "a sandboxed process outlived its grading"
        time.sleep(0.05)


def test_a_grading_stopped_by_sigterm_removes_its_directories(
    tmp_path: Path, temp_dir: Path
) -> None:
    child = start_grading(tmp_path / "job", temp_dir)
    try:
        wait_until_sandboxed(child, temp_dir)
        assert working_dirs(temp_dir)  # the puzzle's input is on disk while it runs

        child.send_signal(signal.SIGTERM)
        code = child.wait(timeout=60)
    finally:
        child.kill()
        child.wait()

    assert code == 128 + signal.SIGTERM
    assert working_dirs(temp_dir) == []
    no_sandbox_survives()


async def test_directories_of_a_killed_grading_are_removed_at_the_next_start(
    tmp_path: Path, temp_dir: Path
) -> None:
    child = start_grading(tmp_path / "job", temp_dir)
    try:
        wait_until_sandboxed(child, temp_dir)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    finally:
        child.kill()
        child.wait()
    no_sandbox_survives()
    left = working_dirs(temp_dir)
    assert left and all(path.parent == runs_dir() for path in left)  # one known place
    live = new_workdir()  # this process's, alive: kept
    url = f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}"
    engine = create_engine(url)
    await migrate(engine)
    try:
        service = GradingService(
            session_factory(engine), Settings(database_url=url, grader_dir=tmp_path / "g")
        )
        await service.start()
        await service.close()
    finally:
        await engine.dispose()

    assert working_dirs(temp_dir) == [live]  # the killed grading's are gone


def test_a_runs_directory_is_removed_after_it_ends_well_or_badly(
    temp_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sandbox import run as runner
    from sandbox import run_sandboxed

    result = run_sandboxed([PYTHON, "-c", "pass"], files={"input.txt": b"private board"})
    assert result.is_ok, result.reason

    def fail(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the grader's own bug")

    monkeypatch.setattr(runner, "_run", fail)
    with pytest.raises(RuntimeError):
        run_sandboxed([PYTHON, "-c", "pass"], files={"input.txt": b"private board"})

    assert working_dirs(temp_dir) == []
    assert runs_dir().parent == temp_dir  # the one place, in the temporary directory
