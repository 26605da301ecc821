"""The exact command line, mounts and limits the sandbox hands bubblewrap and its init.

These pin, argument for argument, what a typical run asks of bwrap (namespaces, the read-only
root with its recreated links, the covered package directory, the devices, the working
directory's tmpfs and its files, the seccomp descriptor) and of the init (its rlimits and the
student's environment), without starting either: `subprocess.Popen` is replaced for the one
bwrap call. The runs themselves are tested in test_sandbox.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import sandbox.init
from sandbox import MIB, Isolation, Limits, Mode, Status, Support, run_sandboxed
from sandbox.seccomp import SeccompUnavailableError, filter_fd

PYTHON = "/usr/bin/python3"
LIMITS = Limits(cpu_seconds=3, memory_bytes=96 * MIB, processes=5, open_files=40, disk_bytes=MIB)


def _seccomp_available() -> bool:
    try:
        os.close(filter_fd())
    except (SeccompUnavailableError, OSError):
        return False
    return True


needs_seccomp = pytest.mark.skipif(not _seccomp_available(), reason="no libseccomp here")


@pytest.fixture
def host(tmp_path: Path) -> tuple[Path, tuple[str, ...], tuple[str, ...]]:
    """A made-up host tree: an interpreter reached through two links, its libraries, packages."""
    root = tmp_path / "host"
    (root / "usr/bin").mkdir(parents=True)
    (root / "usr/lib/python3.11/site-packages").mkdir(parents=True)
    (root / "usr/lib/x86").mkdir(parents=True)
    (root / "usr/bin/python3.11").write_bytes(b"")
    (root / "usr/bin/python3").symlink_to("python3.11")
    (root / "lib").symlink_to("usr/lib")
    (root / "cache").write_bytes(b"")
    binds = (
        str(root / "usr/bin/python3"),
        str(root / "lib/python3.11"),
        str(root / "lib/x86"),
        str(root / "usr/lib/python3.11/site-packages/inside"),
        str(root / "cache"),
        str(root / "missing/file"),
    )
    covers = (str(root / "usr/lib/python3.11/site-packages"),)
    return root, binds, covers


class Captured:
    """The one bwrap start a run asked for, with the contents of its descriptors."""

    command: list[str]
    kwargs: dict[str, Any]
    args: list[str]
    init_source: bytes


@pytest.fixture
def captured(
    monkeypatch: pytest.MonkeyPatch, host: tuple[Path, tuple[str, ...], tuple[str, ...]]
) -> Iterator[Captured]:
    _, binds, covers = host
    seen = Captured()
    real_popen = subprocess.Popen

    def popen(command: list[str], *args: Any, **kwargs: Any) -> Any:
        if command[0] != "bwrap":
            return real_popen(command, *args, **kwargs)
        seen.command = list(command)
        seen.kwargs = kwargs
        listing = os.pread(int(command[2]), 1 << 20, 0)
        assert listing.endswith(b"\0")
        seen.args = listing[:-1].decode().split("\0")
        init_fd = json.loads(command[-1])["init_fd"]
        seen.init_source = os.pread(init_fd, 1 << 20, 0)
        raise OSError("not started in this test")

    monkeypatch.setattr(subprocess, "Popen", popen)
    monkeypatch.setattr("sandbox.launch.runtime_paths", lambda program: (binds, covers))
    yield seen


def _placeholders(values: list[str], fds: list[int], inside: str) -> list[str]:
    names = {str(fd): f"<fd{index}>" for index, fd in enumerate(fds)}
    return [names.get(value, value.replace(inside, "<inside>")) for value in values]


@needs_seccomp
@pytest.mark.parametrize("mode", [Mode.USER, Mode.ROOT])
def test_a_typical_run_hands_bwrap_exactly_these_arguments(
    mode: Mode,
    monkeypatch: pytest.MonkeyPatch,
    captured: Captured,
    host: tuple[Path, tuple[str, ...], tuple[str, ...]],
    tmp_path: Path,
) -> None:
    root, _, _ = host
    monkeypatch.setattr("sandbox.support.sandbox_support", lambda: Support(mode, "", "/opt/bwrap"))
    files = {"main.py": b"print(1)\n", "data/board.txt": b"xo\n", "run.sh": b"#!/bin/sh\n"}
    staged = tmp_path / "staged"
    staged.mkdir()
    for name, content in files.items():
        (staged / name).parent.mkdir(parents=True, exist_ok=True)
        (staged / name).write_bytes(content)
    os.chmod(staged / "run.sh", 0o755)
    (staged / "link").symlink_to("/etc/passwd")

    result = run_sandboxed(
        [PYTHON, "main.py", "--fast"],
        files=staged,
        limits=LIMITS,
        stdin=b"input",
        collect=["answer.txt"],
        isolation=Isolation(uid=61000, gid=61001),
    )

    assert result.status is Status.SANDBOX_ERROR
    assert result.reason == (
        "the grader could not start your program (not your fault): "
        "could not start the sandbox: not started in this test"
    )
    assert result.isolation.separate_user is (mode is Mode.ROOT)
    assert result.isolation.seccomp and result.isolation.disk_limit
    fds = list(captured.kwargs["pass_fds"])
    assert len(fds) == 7  # report, init, three files, seccomp, the argument list
    config = json.loads(captured.command[-1])
    inside = config["env"]["HOME"]
    assert captured.command[:3] == ["bwrap", "--args", str(fds[6])]
    assert captured.command[3:-1] == ["--", PYTHON, "-I", "-S", f"/dev/fd/{fds[1]}"]
    assert config == {
        "argv": [PYTHON, "main.py", "--fast"],
        "env": {
            "PATH": "/usr/bin:/bin",
            "HOME": inside,
            "TMPDIR": inside,
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONNOUSERSITE": "1",
        },
        "report_fd": fds[0],
        "init_fd": fds[1],
        "collect": ["answer.txt"],
        "collect_bytes": MIB,
        "limits": {
            "cpu": 3,
            "memory": 96 * MIB,
            "file_size": MIB,
            "open_files": 40,
            "processes": 6,
            "core": 0,
        },
    }
    assert captured.init_source == Path(sandbox.init.__file__).read_bytes()
    switch = mode is Mode.ROOT
    assert captured.kwargs == {
        "executable": "/opt/bwrap",
        "stdin": subprocess.PIPE,
        "stdout": subprocess.PIPE,
        "stderr": subprocess.PIPE,
        "cwd": "/",
        "env": {},
        "start_new_session": True,
        "pass_fds": captured.kwargs["pass_fds"],
        "user": 61000 if switch else None,
        "group": 61001 if switch else None,
        "extra_groups": [] if switch else None,
    }
    r = str(root)
    page = 4096
    tmpfs = MIB + page + 5 * (page + page)  # room, then five entries of one page of content
    assert _placeholders(captured.args, fds, inside) == [
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--as-pid-1",
        "--cap-drop",
        "ALL",
        "--clearenv",
        "--hostname",
        "sandbox",
        "--ro-bind",
        f"{r}/cache",
        f"{r}/cache",
        "--symlink",
        "usr/lib",
        f"{r}/lib",
        "--ro-bind",
        f"{r}/usr/lib/python3.11",
        f"{r}/usr/lib/python3.11",
        "--ro-bind",
        f"{r}/usr/lib/x86",
        f"{r}/usr/lib/x86",
        "--symlink",
        "python3.11",
        f"{r}/usr/bin/python3",
        "--ro-bind",
        f"{r}/usr/bin/python3.11",
        f"{r}/usr/bin/python3.11",
        "--size",
        "4096",
        "--tmpfs",
        f"{r}/usr/lib/python3.11/site-packages",
        "--remount-ro",
        f"{r}/usr/lib/python3.11/site-packages",
        "--dev-bind",
        "/dev/null",
        "/dev/null",
        "--dev-bind",
        "/dev/zero",
        "/dev/zero",
        "--dev-bind",
        "/dev/urandom",
        "/dev/urandom",
        "--symlink",
        "/proc/self/fd",
        "/dev/fd",
        "--symlink",
        "/proc/self/fd/0",
        "/dev/stdin",
        "--symlink",
        "/proc/self/fd/1",
        "/dev/stdout",
        "--symlink",
        "/proc/self/fd/2",
        "/dev/stderr",
        "--proc",
        "/proc",
        "--perms",
        "0700",
        "--size",
        str(tmpfs),
        "--tmpfs",
        "<inside>",
        "--perms",
        "0700",
        "--dir",
        "<inside>/data",
        "--symlink",
        "/etc/passwd",
        "<inside>/link",
        "--perms",
        "0600",
        "--file",
        "<fd2>",
        "<inside>/main.py",
        "--perms",
        "0700",
        "--file",
        "<fd3>",
        "<inside>/run.sh",
        "--perms",
        "0600",
        "--file",
        "<fd4>",
        "<inside>/data/board.txt",
        "--remount-ro",
        "/",
        "--chdir",
        "<inside>",
        "--seccomp",
        "<fd5>",
    ]


def test_without_a_sandbox_the_init_runs_on_the_host_with_the_same_limits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: dict[str, Any] = {}
    real_popen = subprocess.Popen

    def popen(command: list[str], *args: Any, **kwargs: Any) -> Any:
        if "-S" not in command:
            return real_popen(command, *args, **kwargs)
        seen.update(kwargs, command=list(command))
        raise OSError("not started in this test")

    monkeypatch.setattr(subprocess, "Popen", popen)
    monkeypatch.setattr("sandbox.support.can_isolate", lambda: False)

    result = run_sandboxed([PYTHON, "main.py"], files={"main.py": b""}, limits=LIMITS)

    assert result.reason.endswith("could not start the sandbox: not started in this test")
    assert not result.isolation.filesystem and not result.isolation.seccomp
    config = json.loads(seen["command"][-1])
    staging = seen["cwd"]
    assert seen["command"][:-1] == [sys.executable, "-I", "-S", f"/dev/fd/{config['init_fd']}"]
    assert seen["executable"] == sys.executable
    assert (
        seen["env"]
        == config["env"]
        == {
            "PATH": "/usr/bin:/bin",
            "HOME": staging,
            "TMPDIR": staging,
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONNOUSERSITE": "1",
        }
    )
    assert seen["user"] is seen["group"] is seen["extra_groups"] is None
    assert config["limits"] == {
        "cpu": 3,
        "memory": 96 * MIB,
        "file_size": MIB,
        "open_files": 40,
        "processes": None,
        "core": 0,
    }


# -- the reasons a student reads, for endings test_sandbox.py does not pin ------------------------


@pytest.fixture
def on_the_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sandbox.support.can_isolate", lambda: False)


def _run_code(code: str, limits: Limits = LIMITS) -> Any:
    return run_sandboxed([sys.executable, "-c", code], files={}, limits=limits)


@pytest.mark.usefixtures("on_the_host")
def test_a_program_killed_by_a_signal_is_told_which() -> None:
    result = _run_code(f"import os; os.kill(os.getpid(), {int(signal.SIGSEGV)})")

    assert result.status is Status.KILLED
    assert result.signal == signal.SIGSEGV
    assert result.reason == (
        "your program was killed by SIGSEGV; a common cause is running out of memory "
        "(the limit is 96 MiB) or a crash in native code"
    )


@pytest.mark.usefixtures("on_the_host")
def test_output_and_exit_reasons_name_the_limit_and_the_last_line() -> None:
    flood = _run_code("print('x' * 5000)", Limits(output_bytes=3000))
    silent = _run_code("raise SystemExit(3)")
    quoted = _run_code("import sys; sys.stderr.write('first\\n  last words  \\n\\n'); sys.exit(4)")
    memory = _run_code(
        "import sys; sys.stderr.write('OSError: Cannot allocate memory'); sys.exit(1)"
    )
    too_large = _run_code("import sys; sys.stderr.write('File too large'); sys.exit(1)")

    assert flood.status is Status.OUTPUT_LIMIT
    assert flood.reason == (
        "your program printed more than 3000 bytes and was stopped; the output was cut there"
    )
    assert (silent.status, silent.reason) == (
        Status.EXIT_ERROR,
        "your program exited with code 3",
    )
    assert quoted.reason == "your program exited with code 4: last words"
    assert (memory.status, memory.reason) == (
        Status.MEMORY_LIMIT,
        "your program used more than 96 MiB of memory and was stopped",
    )
    assert (too_large.status, too_large.reason) == (
        Status.FILE_SIZE_LIMIT,
        "your program tried to write a file larger than 1 MiB",
    )
