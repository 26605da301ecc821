"""The sandbox against a gallery of broken and malicious programs (tests/grader/gallery/)."""

from __future__ import annotations

import errno
import json
import os
import shutil
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import grader
from grader.sandbox import (
    MIB,
    UNSHARE,
    Limits,
    SandboxError,
    SandboxResult,
    Status,
    private_dir,
    run_sandboxed,
)
from tests.grader.processes import live_processes

GALLERY = Path(__file__).parent / "gallery"
ROOT = Path(__file__).resolve().parents[2]
SANDBOX_UID = 65534
# The student's interpreter must be readable by the sandbox uid (the venv's may live under /root).
PYTHON = "/usr/bin/python3"

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox needs root to drop to uid 65534"),
    pytest.mark.skipif(not os.path.exists(UNSHARE), reason=f"{UNSHARE} (util-linux) is missing"),
    pytest.mark.skipif(not os.path.exists(PYTHON), reason=f"{PYTHON} is missing"),
]

SMALL = Limits(cpu_seconds=5, wall_seconds=3.0, memory_bytes=256 * MIB, output_bytes=64 * 1024)


def run(program: str, *args: str, limits: Limits = SMALL, stdin: bytes = b"") -> SandboxResult:
    """Run gallery/`program` as a submission of that one file."""
    source = (GALLERY / program).read_bytes()
    return run_sandboxed(
        [PYTHON, program, *args], files={program: source}, limits=limits, stdin=stdin
    )


@pytest.fixture
def no_survivors() -> Iterator[None]:
    """Fail the test if a process of the sandbox uid is still alive after it."""
    before = live_processes(SANDBOX_UID)
    yield
    deadline = time.monotonic() + 2.0
    while (survivors := live_processes(SANDBOX_UID) - before) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not survivors, f"sandbox processes outlived the run: {sorted(survivors)}"


@pytest.fixture
def private_tmp() -> Iterator[Path]:
    """Yield a fresh 0700 root-owned directory outside /tmp (which the sandbox hides anyway)."""
    if not os.access("/run", os.W_OK):
        pytest.skip("/run is not writable: no place for a private directory outside /tmp")
    directory = Path(tempfile.mkdtemp(prefix="arena-grader-test-", dir="/run"))
    yield private_dir(directory)
    shutil.rmtree(directory)


def test_ok_program_echoes_stdin_in_a_scrubbed_environment(no_survivors: None) -> None:
    result = run("echo.py", stdin=b"red to move\n")

    assert result.status is Status.OK, result.reason
    assert result.exit_code == 0
    assert result.stdout == "RED TO MOVE\n"
    assert not result.stdout_truncated
    assert result.isolation.network and result.isolation.separate_user
    assert result.isolation.filesystem and result.isolation.pid_namespace


def test_program_sees_only_its_files_its_uid_and_the_scrubbed_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ARENA_SECRET_KEY", "hunter2")
    probe = (
        "import json, os\n"
        "print(json.dumps({'uid': os.getuid(), 'gid': os.getgid(), 'groups': os.getgroups(),\n"
        "  'cwd': os.getcwd(), 'files': sorted(os.listdir('.')), 'env': dict(os.environ),\n"
        "  'mode': oct(os.stat('.').st_mode & 0o777), 'pid': os.getpid()}))\n"
    )
    result = run_sandboxed(
        [PYTHON, "probe.py"],
        files={"probe.py": probe.encode(), "data/board.txt": b"b.r"},
        limits=SMALL,
    )

    assert result.status is Status.OK, result.stderr
    seen = json.loads(result.stdout)
    assert (seen["uid"], seen["gid"], seen["groups"]) == (SANDBOX_UID, SANDBOX_UID, [])
    assert seen["files"] == ["data", "probe.py"]
    assert seen["mode"] == "0o700"
    assert seen["pid"] != 1  # an init of ours is PID 1, so the program keeps normal signals
    assert seen["env"] == {
        "PATH": "/usr/bin:/bin",
        "HOME": seen["cwd"],
        "TMPDIR": seen["cwd"],
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
    }
    assert not Path(seen["cwd"]).exists()  # the working directory is removed after the run


LISTER = """
import json, os, sys
seen = {}
for path in sys.argv[1:]:
    try:
        seen[path] = sorted(os.listdir(path))
    except OSError as error:
        seen[path] = type(error).__name__
print(json.dumps(seen))
"""


def test_program_sees_a_minimal_root_and_nothing_of_the_host() -> None:
    installed = Path(grader.__file__).resolve().parent
    venv_packages = sysconfig.get_path("purelib")
    listed = [
        "/",
        "/etc",
        "/dev",
        "/usr/bin",
        str(ROOT),
        venv_packages,
        str(installed),
        str(installed / "reference"),
        "/root",
        "/home",
        "/work",
        tempfile.gettempdir(),
    ]

    result = run_sandboxed(
        [PYTHON, "lister.py", *listed], files={"lister.py": LISTER.encode()}, limits=SMALL
    )

    assert result.status is Status.OK, result.stderr
    assert result.isolation.filesystem
    seen = json.loads(result.stdout)
    assert set(seen["/"]) <= {"bin", "dev", "etc", "lib", "lib64", "proc", "sbin", "tmp", "usr"}
    assert seen["/etc"] == ["ld.so.cache"]
    assert seen["/dev"] == ["fd", "null", "stderr", "stdin", "stdout", "urandom", "zero"]
    assert set(seen["/usr/bin"]) <= {"python3", Path(os.path.realpath(PYTHON)).name}
    for path in listed[4:-1]:
        assert seen[path] == "FileNotFoundError", (path, seen[path])
    # Its own directory is the only one under the temporary directory: no other run's.
    assert len(seen[tempfile.gettempdir()]) == 1
    assert seen[tempfile.gettempdir()][0].startswith("arena-run-")
    for secret in ("endgame_solver.py", "fastapi", "pyproject.toml", "sandbox.py", "passwd"):
        assert secret not in result.stdout


def test_program_sees_its_own_processes_only_not_the_init() -> None:
    probe = (
        "import json, os\n"
        "pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())\n"
        "try:\n"
        "    init = open('/proc/1/cmdline', 'rb').read().decode(errors='replace')\n"
        "except OSError as error:\n"
        "    init = type(error).__name__\n"
        "print(json.dumps({'pids': pids, 'me': os.getpid(), 'init': init}))\n"
    )

    result = run_sandboxed([PYTHON, "probe.py"], files={"probe.py": probe.encode()}, limits=SMALL)

    assert result.status is Status.OK, result.stderr
    seen = json.loads(result.stdout)
    assert seen["pids"] == [seen["me"]]
    assert seen["init"] == "FileNotFoundError"  # the init's command line names the grader's paths


def test_without_root_the_result_says_the_isolation_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("grader.sandbox.can_isolate", lambda: False)

    result = run_sandboxed(
        [PYTHON, "lister.py", "/"], files={"lister.py": LISTER.encode()}, limits=SMALL
    )

    assert result.status is Status.OK, result.stderr
    assert not result.isolation.filesystem and not result.isolation.separate_user
    assert not result.isolation.network and not result.isolation.pid_namespace
    assert json.loads(result.stdout)["/"] == sorted(os.listdir("/"))  # the host, as it says


def test_the_installed_reference_solution_cannot_be_run() -> None:
    solver = Path(grader.__file__).resolve().parent / "reference" / "endgame_solver.py"
    program = f"import runpy; runpy.run_path({str(solver)!r}, run_name='__main__')\n"
    board = b"........\n........\n...b....\n......R.\n...R....\n........\n.....b..\n........\n"

    result = run_sandboxed(
        [PYTHON, "checkers.py", "--inputfile", "input.txt", "--outputfile", "output.txt"],
        files={"checkers.py": program.encode(), "input.txt": board},
        limits=SMALL,
        collect=["output.txt"],
    )

    assert result.status is Status.EXIT_ERROR
    assert "FileNotFoundError" in result.stderr
    assert result.files == {}


def test_installed_packages_inside_the_standard_library_are_covered() -> None:
    python = os.path.realpath(sys.executable)
    stdlib = sysconfig.get_path("stdlib")
    packages = os.path.join(stdlib, "site-packages")
    if not os.path.isdir(packages) or not os.listdir(packages):
        pytest.skip(f"{python} keeps no packages inside its standard library {stdlib}")

    result = run_sandboxed(
        [python, "lister.py", stdlib, packages],
        files={"lister.py": LISTER.encode()},
        limits=SMALL,
    )

    assert result.status is Status.OK, result.stderr
    seen = json.loads(result.stdout)
    assert "os.py" in seen[stdlib]  # the interpreter's standard library is there
    assert seen[packages] == []  # its installed packages are not


def test_infinite_loop_hits_the_wall_limit(no_survivors: None) -> None:
    result = run("busy_loop.py", limits=Limits(cpu_seconds=30, wall_seconds=1.0))

    assert result.status is Status.TIMEOUT
    assert result.reason == "your program ran for more than 1 s of wall time and was stopped"
    assert result.wall_seconds < 5


def test_infinite_loop_hits_the_cpu_limit(no_survivors: None) -> None:
    result = run("busy_loop.py", limits=Limits(cpu_seconds=1, wall_seconds=10.0))

    assert result.status is Status.CPU_LIMIT
    assert result.reason == "your program used more than 1 s of CPU time and was stopped"
    assert result.cpu_seconds >= 0.9


def test_memory_bomb_hits_the_memory_limit(no_survivors: None) -> None:
    result = run("memory_bomb.py", limits=Limits(memory_bytes=128 * MIB, wall_seconds=5.0))

    assert result.status is Status.MEMORY_LIMIT
    assert result.reason == "your program used more than 128 MiB of memory and was stopped"
    assert "MemoryError" in result.stderr


def test_fork_bomb_is_contained_and_leaves_no_process(no_survivors: None) -> None:
    started = time.monotonic()
    result = run("fork_bomb.py", limits=Limits(wall_seconds=2.0, processes=16))

    assert result.status is Status.TIMEOUT
    assert time.monotonic() - started < 2.0 + 5.0


def test_daemon_started_by_a_program_dies_with_it(no_survivors: None) -> None:
    result = run("orphan.py")

    assert result.status is Status.OK, result.reason
    assert result.stdout == "parent done\n"
    assert result.wall_seconds < 3.0  # the run ended with the program, not with its daemon


def test_network_is_unreachable_even_on_loopback(no_survivors: None) -> None:
    result = run("socket_connect.py")

    assert result.status is Status.OK, result.stderr
    assert result.stdout.splitlines() == [
        f"127.0.0.1:5432 failed {errno.errorcode[errno.ENETUNREACH]}",
        f"1.1.1.1:53 failed {errno.errorcode[errno.ENETUNREACH]}",
    ]


def test_private_file_of_the_grader_is_unreadable(private_tmp: Path) -> None:
    secret = private_tmp / "suite.txt"
    secret.write_text("the graded puzzles")
    secret.chmod(0o600)

    result = run("read_file.py", str(secret))

    assert result.status is Status.OK, result.stderr
    # Not even there: the program's root holds nothing of the host's private directories.
    assert result.stdout.startswith("FileNotFoundError")
    assert "graded puzzles" not in result.stdout


def test_symlink_in_a_submission_grants_nothing(private_tmp: Path) -> None:
    secret = private_tmp / "suite.txt"
    secret.write_text("the graded puzzles")
    secret.chmod(0o600)
    submission = private_tmp / "submission"
    submission.mkdir()
    shutil.copy(GALLERY / "read_file.py", submission / "read_file.py")
    (submission / "link.txt").symlink_to(secret)

    result = run_sandboxed(
        [PYTHON, "read_file.py", "link.txt"], files=submission, limits=SMALL, collect=["link.txt"]
    )

    assert result.stdout.startswith("FileNotFoundError")  # a link to what is not there
    assert result.files == {}  # collecting does not follow the student's symlink either


def test_writing_outside_the_working_directory_fails() -> None:
    targets = [
        f"/tmp/arena-escape-{os.getpid()}",
        f"/var/tmp/arena-escape-{os.getpid()}",
        f"/dev/shm/arena-escape-{os.getpid()}",
        str(Path(__file__).resolve().parents[2] / f"arena-escape-{os.getpid()}"),
    ]

    result = run("write_outside.py", *targets)

    assert result.status is Status.OK, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split()[0] for line in lines] == targets
    # Not there (the program's root holds no /var/tmp, /dev/shm or checkout), or read-only
    # (the parents of its working directory).
    assert all(line.split()[1] in ("ENOENT", "EROFS") for line in lines), lines
    assert not any(os.path.exists(target) for target in targets)


def test_huge_file_hits_the_file_size_limit() -> None:
    result = run("huge_file.py", limits=Limits(file_size_bytes=1 * MIB, wall_seconds=5.0))

    assert result.status is Status.FILE_SIZE_LIMIT
    assert result.reason == "your program tried to write a file larger than 1 MiB"


def test_garbage_output_is_captured_and_cut_at_the_cap(no_survivors: None) -> None:
    result = run("garbage.py", limits=Limits(output_bytes=64 * 1024, wall_seconds=5.0))

    assert result.status is Status.OUTPUT_LIMIT
    assert result.stdout_truncated
    assert "\ufffd" in result.stdout  # undecodable bytes are replaced, not fatal
    assert 0 < len(result.stdout) <= 64 * 1024
    assert result.reason.startswith("your program printed more than 64 KiB")


def test_crash_is_an_exit_error_with_the_traceback() -> None:
    result = run("crash.py")

    assert result.status is Status.EXIT_ERROR
    assert result.exit_code == 1
    assert "Traceback" in result.stderr and 'crash.py", line' in result.stderr
    assert result.reason == "your program exited with code 1: ValueError: no legal move found"


def test_missing_program_is_an_exit_error_not_a_grader_crash() -> None:
    result = run_sandboxed(["no-such-program"], files={}, limits=SMALL)

    assert result.status is Status.EXIT_ERROR
    assert result.exit_code == 127
    assert "no-such-program" in result.stderr


def test_output_files_are_collected_after_the_run() -> None:
    result = run_sandboxed(
        [PYTHON, "-c", "open('OUT', 'w').write('solution')"],
        files={},
        limits=SMALL,
        collect=["OUT", "absent"],
    )

    assert result.status is Status.OK, result.stderr
    assert result.files == {"OUT": b"solution"}


@pytest.mark.parametrize("name", ["/etc/passwd", "../x", ""])
def test_file_names_escaping_the_working_directory_are_refused(name: str) -> None:
    with pytest.raises(SandboxError):
        run_sandboxed([PYTHON, "-c", "pass"], files={name: b"x"}, limits=SMALL)


def test_private_dir_is_mode_0700(private_tmp: Path) -> None:
    directory = private_dir(private_tmp / "suite")

    assert directory.stat().st_mode & 0o777 == 0o700
