"""The sandbox against a gallery of broken and malicious programs (tests/sandbox/gallery/).

Run as root the sandbox runs under the uid of `Isolation` (65534 here); run as another user it
runs under that user's uid, in a user namespace. The tests that need the uid switch say so.
"""

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
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeoutError
from pathlib import Path

import pytest

import autograder
from sandbox import (
    MIB,
    Limits,
    SandboxError,
    SandboxResult,
    Status,
    can_isolate,
    private_dir,
    run_sandboxed,
    sandbox_support,
)
from tests.sandbox.processes import live_processes

GALLERY = Path(__file__).parent / "gallery"
ROOT = Path(__file__).resolve().parents[2]
SANDBOX_UID = 65534
# The student's interpreter must be readable by the sandbox uid (the venv's may live under /root).
PYTHON = "/usr/bin/python3"

ROOTED = os.geteuid() == 0

pytestmark = [
    pytest.mark.skipif(not can_isolate(), reason=f"no sandbox here: {sandbox_support().reason}"),
    pytest.mark.skipif(not os.path.exists(PYTHON), reason=f"{PYTHON} is missing"),
]
rooted = pytest.mark.skipif(not ROOTED, reason="the uid switch to 65534 needs root")

SMALL = Limits(cpu_seconds=5, wall_seconds=20.0, memory_bytes=256 * MIB, output_bytes=64 * 1024)
"""Limits for programs that end by themselves: a wall limit a loaded machine never reaches."""

DEADLINE = 60.0
"""Seconds a run may take before the test fails, whatever its own limits: generous."""


def run(program: str, *args: str, limits: Limits = SMALL, stdin: bytes = b"") -> SandboxResult:
    """Run gallery/`program` as a submission of that one file."""
    source = (GALLERY / program).read_bytes()
    return run_sandboxed(
        [PYTHON, program, *args], files={program: source}, limits=limits, stdin=stdin
    )


@pytest.fixture
def no_survivors() -> Iterator[None]:
    """Fail the test if a process of the sandbox uid is still alive after it.

    Only as root: without root the sandbox shares the tester's uid with every other process
    of the tester's (its PID namespace still ends with its init).
    """
    if not ROOTED:
        yield
        return
    before = live_processes(SANDBOX_UID)
    yield
    # Generous: the gallery's daemon, for one, would live on for a minute.
    deadline = time.monotonic() + 30.0
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
    assert result.isolation.network and result.isolation.separate_user is ROOTED
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
    if ROOTED:
        assert (seen["uid"], seen["gid"], seen["groups"]) == (SANDBOX_UID, SANDBOX_UID, [])
    else:
        assert (seen["uid"], seen["gid"]) == (os.getuid(), os.getgid())
    assert seen["files"] == ["data", "probe.py"]
    assert seen["mode"] == "0o700"
    assert seen["pid"] != 1  # an init of ours is PID 1, so the program keeps normal signals
    assert "arena-run-" in seen["cwd"]
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
    installed = Path(autograder.__file__).resolve().parent
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


def test_program_sees_its_own_processes_only_and_an_init_that_tells_nothing() -> None:
    probe = (
        "import json, os\n"
        "pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())\n"
        "def read(path):\n"
        "    try:\n"
        "        return open(path, 'rb').read().decode(errors='replace')\n"
        "    except OSError as error:\n"
        "        return type(error).__name__\n"
        "print(json.dumps({'pids': pids, 'me': os.getpid(), 'init': read('/proc/1/cmdline'),\n"
        "  'environ': read('/proc/1/environ'), 'maps': read('/proc/1/maps'),\n"
        "  'fds': sorted(os.listdir('/proc/self/fd'))}))\n"
    )

    result = run_sandboxed([PYTHON, "probe.py"], files={"probe.py": probe.encode()}, limits=SMALL)

    assert result.status is Status.OK, result.stderr
    seen = json.loads(result.stdout)
    # The sandbox's init (PID 1, started by bubblewrap) and the program: no process of the host.
    assert seen["pids"] == [1, seen["me"]]
    # The init's command line names nothing of the grader's: its code arrives on a descriptor.
    init = seen["init"].split("\0")
    assert init[:3] == [PYTHON, "-I", "-S"] and init[3].startswith("/dev/fd/")
    for secret in (str(ROOT), "sandbox", "bwrap", "arena-runs", "site-packages"):
        assert secret not in seen["init"], secret
    # Its memory and environment are closed to the program (it is not dumpable).
    assert seen["environ"] == seen["maps"] == "PermissionError"
    # The program inherits stdin, stdout and stderr only (3: the listing's own).
    assert seen["fds"] == ["0", "1", "2", "3"]


def test_without_root_the_result_says_the_isolation_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("sandbox.support.can_isolate", lambda: False)

    result = run_sandboxed(
        [PYTHON, "lister.py", "/"], files={"lister.py": LISTER.encode()}, limits=SMALL
    )

    assert result.status is Status.OK, result.stderr
    assert not result.isolation.filesystem and not result.isolation.separate_user
    assert not result.isolation.network and not result.isolation.pid_namespace
    assert json.loads(result.stdout)["/"] == sorted(os.listdir("/"))  # the host, as it says


def test_the_installed_reference_solution_cannot_be_run() -> None:
    solver = Path(autograder.__file__).resolve().parent / "reference" / "endgame_solver.py"
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
    if ROOTED and not all(os.stat(p).st_mode & 0o001 for p in Path(python).parents):
        pytest.skip(f"the sandbox uid cannot reach {python} (bubblewrap binds as that uid)")

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
    # Stopped at its wall limit, not before it, and not at its CPU limit.
    assert result.wall_seconds >= 1.0 and result.cpu_seconds < 30


def test_infinite_loop_hits_the_cpu_limit(no_survivors: None) -> None:
    result = run("busy_loop.py", limits=Limits(cpu_seconds=1, wall_seconds=60.0))

    assert result.status is Status.CPU_LIMIT
    assert result.reason == "your program used more than 1 s of CPU time and was stopped"
    assert result.cpu_seconds >= 0.9


def test_memory_bomb_hits_the_memory_limit(no_survivors: None) -> None:
    result = run("memory_bomb.py", limits=Limits(memory_bytes=128 * MIB, wall_seconds=20.0))

    assert result.status is Status.MEMORY_LIMIT
    assert result.reason == "your program used more than 128 MiB of memory and was stopped"
    assert "MemoryError" in result.stderr


def test_fork_bomb_is_contained_and_leaves_no_process(no_survivors: None) -> None:
    pool = ThreadPoolExecutor(1)
    bomb = pool.submit(run, "fork_bomb.py", limits=Limits(wall_seconds=2.0, processes=16))
    pool.shutdown(wait=False)
    try:
        result = bomb.result(timeout=DEADLINE)
    except FutureTimeoutError:
        pytest.fail(f"the fork bomb's run did not end within {DEADLINE:g} s")

    # The processes limit refused its forks, and it was stopped at its wall limit.
    assert "fork refused: Resource temporarily unavailable" in result.stderr
    assert result.status is Status.TIMEOUT
    assert result.reason == "your program ran for more than 2 s of wall time and was stopped"


def test_daemon_started_by_a_program_dies_with_it(no_survivors: None) -> None:
    result = run("orphan.py")

    # OK, not TIMEOUT: the run ended with the program, not with its daemon, which sleeps a
    # minute (SMALL's wall limit is 20 s).
    assert result.status is Status.OK, result.reason
    assert result.stdout == "parent done\n"


def test_network_is_unreachable_even_on_loopback(no_survivors: None) -> None:
    result = run("socket_connect.py")

    assert result.status is Status.OK, result.stderr
    # The sandbox's own network namespace: its loopback reaches nothing of the host's
    # (PostgreSQL listens on the host's), and there is no other interface.
    assert result.stdout.splitlines() == [
        f"127.0.0.1:5432 failed {errno.errorcode[errno.ECONNREFUSED]}",
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
    result = run("huge_file.py", limits=Limits(file_size_bytes=1 * MIB, wall_seconds=20.0))

    assert result.status is Status.FILE_SIZE_LIMIT
    assert result.reason == "your program tried to write a file larger than 1 MiB"


def test_garbage_output_is_captured_and_cut_at_the_cap(no_survivors: None) -> None:
    result = run("garbage.py", limits=Limits(output_bytes=64 * 1024, wall_seconds=20.0))

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


# -- what the sandbox withholds: privileges, kernel interfaces, room to write --------------------

STATUS_PROBE = """
import json
fields = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
print(json.dumps({key: fields[key].strip() for key in
    ("NoNewPrivs", "Seccomp", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")}))
"""


def test_the_program_runs_with_no_privileges_under_a_seccomp_filter() -> None:
    result = run_sandboxed(
        [PYTHON, "probe.py"], files={"probe.py": STATUS_PROBE.encode()}, limits=SMALL
    )

    assert result.status is Status.OK, result.stderr
    seen = json.loads(result.stdout)
    assert seen["NoNewPrivs"] == "1"
    assert seen["Seccomp"] == "2"  # a filter
    for capabilities in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert int(seen[capabilities], 16) == 0, capabilities
    report = result.isolation
    assert report.seccomp and report.no_new_privs and report.capabilities_dropped
    assert report.user_namespace and report.disk_limit


SYSCALLS = {
    "x86_64": {
        "setns": 308,
        "keyctl": 250,
        "bpf": 321,
        "perf_event_open": 298,
        "userfaultfd": 323,
        "io_uring_setup": 425,
        "process_vm_readv": 310,
        "open_tree": 428,
        "fsopen": 430,
        "clone3": 435,
        "clone": 56,
    },
    "aarch64": {
        "setns": 268,
        "keyctl": 219,
        "bpf": 280,
        "perf_event_open": 241,
        "userfaultfd": 282,
        "io_uring_setup": 425,
        "process_vm_readv": 270,
        "open_tree": 428,
        "fsopen": 430,
        "clone3": 435,
        "clone": 220,
    },
}

ESCAPES = """
import ctypes, errno, json, os, sys
NR = json.loads(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

def outcome(result):
    if result == 0 and os.getpid() != PID:
        os._exit(0)  # a clone that worked: its child leaves at once
    return "ok" if result >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")

def call(function, *args):
    ctypes.set_errno(0)
    return outcome(function(*args))

PID = os.getpid()
CLONE_NEWUSER, CLONE_NEWNS, SIGCHLD = 0x10000000, 0x00020000, 17
seen = {
    "unshare(CLONE_NEWUSER)": call(libc.unshare, CLONE_NEWUSER),
    "unshare(CLONE_NEWNS)": call(libc.unshare, CLONE_NEWNS),
    "clone(CLONE_NEWUSER)": call(libc.syscall, NR["clone"], CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0),
    "mount tmpfs": call(libc.mount, b"none", b".", b"tmpfs", 0, None),
    "umount2": call(libc.umount2, b"/proc", 2),
    "chroot": call(libc.chroot, b"."),
    "ptrace(PTRACE_TRACEME)": call(libc.ptrace, 0, 0, None, None),
    "setns": call(libc.syscall, NR["setns"], 0, 0),
    "keyctl(get session keyring)": call(libc.syscall, NR["keyctl"], 0, -3, 0),
    "bpf": call(libc.syscall, NR["bpf"], 0, None, 0),
    "perf_event_open": call(libc.syscall, NR["perf_event_open"], None, 0, -1, -1, 0),
    "userfaultfd": call(libc.syscall, NR["userfaultfd"], 0),
    "io_uring_setup": call(libc.syscall, NR["io_uring_setup"], 1, None),
    "process_vm_readv": call(libc.syscall, NR["process_vm_readv"], 1, None, 0, None, 0, 0),
    "open_tree": call(libc.syscall, NR["open_tree"], -100, b"/", 1),
    "fsopen": call(libc.syscall, NR["fsopen"], b"tmpfs", 0),
    "clone3": call(libc.syscall, NR["clone3"], None, 0),
}
print(json.dumps(seen))
"""


def test_kernel_interfaces_that_could_leave_the_sandbox_are_denied() -> None:
    import platform

    numbers = SYSCALLS.get(platform.machine())
    if numbers is None:
        pytest.skip(f"no system call numbers for {platform.machine()} in this test")

    result = run_sandboxed(
        [PYTHON, "escape.py", json.dumps(numbers)],
        files={"escape.py": ESCAPES.encode()},
        limits=SMALL,
    )

    assert result.status is Status.OK, result.stderr
    seen = json.loads(result.stdout)
    # Denied by the filter before the kernel looks at the arguments: EPERM, whatever they are
    # (clone3 ENOSYS, so that libc falls back to clone, whose flags the filter reads).
    expected = {name: "EPERM" for name in seen}
    expected["clone3"] = "ENOSYS"
    assert seen == expected


FLOOD = """
import errno
block = b"x" * (1024 * 1024)
written, error = 0, "none"
for i in range(1500):
    try:
        with open(f"block-{i}", "wb") as handle:
            handle.write(block)
        written += 1
    except OSError as failure:
        error = errno.errorcode[failure.errno]
        break
print(written, error)
"""


def test_writing_many_files_stops_at_the_working_directorys_size() -> None:
    limits = Limits(wall_seconds=20.0, file_size_bytes=1 * MIB, disk_bytes=8 * MIB)

    result = run_sandboxed([PYTHON, "flood.py"], files={"flood.py": FLOOD.encode()}, limits=limits)

    assert result.status is Status.OK, result.stderr
    written, error = result.stdout.split()
    # 1,500 files of 1 MiB each were tried: the tmpfs of 8 MiB (and the program's own page)
    # is full after at most 8, and the rest of the host's memory and disk are untouched.
    assert error == "ENOSPC"
    assert int(written) <= 8
    assert result.isolation.disk_limit


# -- without root --------------------------------------------------------------------------------

UNROOTED = """
import dataclasses, json, sys
from sandbox import run_sandboxed, sandbox_support
support = sandbox_support()
if support.mode.value == "none":
    print(json.dumps({"none": support.reason}))
    sys.exit(0)
probe = sys.argv[1]
result = run_sandboxed([sys.argv[2], "probe.py", *sys.argv[3:]], files={"probe.py": probe.encode()})
print(json.dumps({"mode": support.mode.value, "status": result.status.value,
                  "stderr": result.stderr, "seen": result.stdout,
                  "isolation": dataclasses.asdict(result.isolation)}))
"""

UNROOTED_PROBE = """
import ctypes, json, os, sys
fields = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
listed = {}
for path in sys.argv[1:]:
    try:
        listed[path] = sorted(os.listdir(path))
    except OSError as error:
        listed[path] = type(error).__name__
libc = ctypes.CDLL(None, use_errno=True)
print(json.dumps({"uid": os.getuid(), "listed": listed,
    "status": {key: fields[key].strip() for key in ("NoNewPrivs", "Seccomp", "CapEff", "CapBnd")},
    "unshare": libc.unshare(0x10000000), "errno": ctypes.get_errno()}))
"""


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """Yield a fresh directory any user may write in (mode 1777), removed afterwards."""
    directory = Path(tempfile.mkdtemp(prefix="arena-unrooted-"))
    directory.chmod(0o1777)
    yield directory
    shutil.rmtree(directory)


def test_a_run_is_sandboxed_without_root(shared_tmp: Path) -> None:
    """An ordinary user gets the sandbox too, in a user namespace of its own.

    As root the run happens in a child process dropped to an unprivileged uid (setpriv);
    otherwise in a child process of the tester's own.
    """
    import subprocess

    packages = sysconfig.get_path("purelib")
    paths = [str(ROOT), packages, *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    env["TMPDIR"] = str(shared_tmp)
    command = [sys.executable, "-c", UNROOTED]
    uid = os.getuid()
    if ROOTED:
        # The tests' interpreter may live where the unprivileged uid cannot go (/root).
        command = [PYTHON, "-s", "-c", UNROOTED]
        setpriv = "/usr/bin/setpriv"
        if not os.path.exists(setpriv):
            pytest.skip(f"{setpriv} (util-linux) is missing: cannot drop root for the test")
        for needed in (ROOT, Path(packages), shared_tmp):
            if not all(os.stat(p).st_mode & 0o001 for p in (needed, *needed.parents)):
                pytest.skip(f"an unprivileged uid cannot reach {needed}")
        uid = int(os.environ.get("ARENA_GRADER_UID_BASE", "64000")) + 999
        command = [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *command]
    listed = ["/", "/home", "/root", str(ROOT), packages]
    done = subprocess.run(
        [*command, UNROOTED_PROBE, PYTHON, *listed],
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stderr.decode()
    answer = json.loads(done.stdout)
    if "none" in answer:
        pytest.skip(f"no sandbox without root here: {answer['none']}")
    assert answer["mode"] == "user"
    assert answer["status"] == "ok", answer["stderr"]
    report = answer["isolation"]
    assert not report["separate_user"]  # the uid is the user's own
    for enforced in ("network", "filesystem", "pid_namespace", "user_namespace", "seccomp"):
        assert report[enforced], enforced
    assert report["no_new_privs"] and report["capabilities_dropped"] and report["disk_limit"]
    seen = json.loads(answer["seen"])
    assert seen["uid"] == uid
    assert seen["status"] == {
        "NoNewPrivs": "1",
        "Seccomp": "2",
        "CapEff": "0" * 16,
        "CapBnd": "0" * 16,
    }
    assert (seen["unshare"], seen["errno"]) == (-1, errno.EPERM)
    assert set(seen["listed"]["/"]) <= {"dev", "etc", "lib", "lib64", "proc", "tmp", "usr", "bin"}
    for hidden in listed[1:]:
        assert seen["listed"][hidden] == "FileNotFoundError", hidden
