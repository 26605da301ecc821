"""An interactive sandboxed program: spoken to in lines, bounded, ended with its whole sandbox."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox import (
    MIB,
    Isolation,
    Limits,
    SandboxedProcess,
    SandboxError,
    Status,
    can_isolate,
    sandbox_support,
    start_sandboxed,
)
from tests.sandbox.processes import survivors

PYTHON = "/usr/bin/python3"
ROOTED = os.geteuid() == 0
UID = int(os.environ.get("ARENA_GRADER_UID_BASE", "100000")) + 500
"""A uid of this test worker's own: its processes are counted after each test."""
LIMITS = Limits(cpu_seconds=5, memory_bytes=256 * MIB)

pytestmark = [
    pytest.mark.skipif(not can_isolate(), reason=f"no sandbox here: {sandbox_support().reason}"),
    pytest.mark.skipif(not os.path.exists(PYTHON), reason=f"{PYTHON} is missing"),
]

ECHO = b"""\
import sys
for line in sys.stdin:
    print("echo " + line.strip(), flush=True)
"""


@pytest.fixture
def sessions() -> Iterator[list[SandboxedProcess]]:
    """Sessions the test starts: killed after it, and none of their processes may survive."""
    started: list[SandboxedProcess] = []
    yield started
    for session in started:
        session.kill()
    if ROOTED:
        assert not survivors(UID)


def start(
    sessions: list[SandboxedProcess],
    source: bytes,
    limits: Limits = LIMITS,
    *,
    more_files: dict[str, bytes] | None = None,
    extra_ro_binds: dict[str, str] | None = None,
    stderr_bytes: int = 16 * 1024,
) -> SandboxedProcess:
    session = start_sandboxed(
        [PYTHON, "main.py"],
        files={"main.py": source, **(more_files or {})},
        limits=limits,
        isolation=Isolation(UID, UID),
        extra_ro_binds=extra_ro_binds,
        stderr_bytes=stderr_bytes,
    )
    sessions.append(session)
    return session


def talk(session: SandboxedProcess, line: str) -> str:
    assert session.stdin is not None and session.stdout is not None
    session.stdin.write(line.encode() + b"\n")
    session.stdin.flush()
    return session.stdout.readline().decode().strip()


def test_a_session_answers_line_by_line_and_ends_cleanly(
    sessions: list[SandboxedProcess],
) -> None:
    session = start(sessions, ECHO)
    assert session.sandboxed and session.isolation.network
    assert talk(session, "one") == "echo one"
    assert talk(session, "two") == "echo two"
    staging = _staging(session)
    assert staging.is_dir()

    session.close()

    result = session.result()
    assert result.status is Status.OK, result.reason
    assert not staging.exists()
    assert session.poll() is not None


def test_the_program_sees_only_its_files_no_network_and_no_host_files(
    sessions: list[SandboxedProcess],
) -> None:
    probe = b"""\
import os, socket, sys
print(sorted(os.listdir(".")), flush=True)
for path in ("/etc/hostname", "/etc/passwd", os.path.expanduser("~root")):
    print(path, os.path.exists(path), flush=True)
try:
    socket.create_connection(("1.1.1.1", 53), timeout=2)
    print("connected", flush=True)
except OSError as error:
    print("no network:", error.errno, flush=True)
sys.stdin.readline()
"""
    session = start(sessions, probe, more_files={"data.txt": b"x"})
    assert session.stdout is not None
    lines = [session.stdout.readline().decode().strip() for _ in range(5)]
    assert lines[0] == "['data.txt', 'main.py']"
    assert lines[1:3] == ["/etc/hostname False", "/etc/passwd False"]
    assert lines[4].startswith("no network:")


@pytest.fixture
def shared() -> Iterator[Path]:
    """A host directory the sandbox uid can reach (pytest's own are private to their user)."""
    directory = Path(tempfile.mkdtemp(prefix="arena-shared-"))
    directory.chmod(0o755)
    (directory / "module.txt").write_text("hello")
    yield directory
    shutil.rmtree(directory)


def test_read_only_binds_are_readable_and_not_writable(
    sessions: list[SandboxedProcess], shared: Path
) -> None:
    source = b"""\
print(open("/arena/shared/module.txt").read(), flush=True)
try:
    open("/arena/shared/new.txt", "w")
    print("written", flush=True)
except OSError as error:
    print("refused", error.errno, flush=True)
"""
    session = start(sessions, source, extra_ro_binds={"/arena/shared": str(shared)})
    assert session.stdout is not None
    assert session.stdout.readline().decode().strip() == "hello", session.stderr_tail()
    assert session.stdout.readline().decode().startswith("refused")
    assert not (shared / "new.txt").exists()


def test_kill_ends_the_whole_sandbox_and_says_so(sessions: list[SandboxedProcess]) -> None:
    spawner = b"""\
import subprocess, sys
sleeper = [sys.executable, "-c", "import time; time.sleep(600)"]
children = [subprocess.Popen(sleeper) for _ in range(3)]
print("spawned", flush=True)
sys.stdin.readline()
"""
    session = start(sessions, spawner)
    assert session.stdout is not None
    assert session.stdout.readline().decode().strip() == "spawned"
    staging = _staging(session)

    session.kill()

    result = session.result()
    assert result.status is Status.KILLED, result.reason
    assert "stopped before it finished" in session.end_reason()
    assert not staging.exists()
    if ROOTED:
        assert not survivors(UID)


def test_the_memory_limit_is_named_when_the_program_dies_of_it(
    sessions: list[SandboxedProcess],
) -> None:
    hog = b"hog = [bytearray(16 * 1024 * 1024) for _ in range(1000)]\n"
    session = start(sessions, hog, limits=Limits(cpu_seconds=5, memory_bytes=128 * MIB))
    session.wait(timeout=60)
    result = session.result()
    assert result.status is Status.MEMORY_LIMIT, result.reason
    assert "128 MiB of memory" in session.end_reason()


def test_the_cpu_limit_is_named_when_the_program_spins(sessions: list[SandboxedProcess]) -> None:
    session = start(sessions, b"while True:\n    pass\n", limits=Limits(cpu_seconds=1))
    session.wait(timeout=60)
    assert session.result().status is Status.CPU_LIMIT
    assert "1 s of CPU time" in session.end_reason()


def test_only_the_tail_of_stderr_is_kept(sessions: list[SandboxedProcess]) -> None:
    noisy = b"""\
import sys
for index in range(20000):
    sys.stderr.write(f"line {index:05d} of noise\\n")
sys.stderr.write("the last words\\n")
raise SystemExit(3)
"""
    session = start(sessions, noisy, stderr_bytes=4096)
    session.wait(timeout=60)
    tail = session.stderr_tail()
    assert len(tail) <= 4096
    assert tail.endswith("the last words\n")
    result = session.result()
    assert result.status is Status.EXIT_ERROR and result.exit_code == 3
    assert result.stderr_truncated
    assert "exited with code 3: the last words" in result.reason


def test_without_a_sandbox_the_session_runs_on_the_host_and_says_so(
    monkeypatch: pytest.MonkeyPatch, sessions: list[SandboxedProcess]
) -> None:
    monkeypatch.setattr("sandbox.support.can_isolate", lambda: False)
    session = start(sessions, ECHO)
    assert not session.sandboxed
    assert not session.isolation.filesystem and not session.isolation.network
    assert talk(session, "bare") == "echo bare"
    session.close()
    assert session.result().status is Status.OK


def test_invalid_arguments_are_the_callers_mistake() -> None:
    with pytest.raises(SandboxError):
        start_sandboxed([], files={})
    with pytest.raises(SandboxError, match="absolute"):
        start_sandboxed([PYTHON], files={}, extra_ro_binds={"relative": "/usr"})
    with pytest.raises(SandboxError, match="does not exist"):
        start_sandboxed([PYTHON], files={}, extra_ro_binds={"/x": "/no/such/path"})


def _staging(session: SandboxedProcess) -> Path:
    staging = session._staging
    assert isinstance(staging, Path)
    return staging
