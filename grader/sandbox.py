"""Run untrusted student programs with limits, no network and no access to the grader's files.

Two halves live in this module. `run_sandboxed` is called by the grader; it prepares a fresh
working directory and starts this same file as a tiny *init* (`python -I -S sandbox.py CONFIG`)
inside new network, mount, IPC and PID namespaces (util-linux `unshare`). The init, still root
inside the namespaces, builds a private read-only root (a tmpfs holding the interpreter, its
standard library and shared libraries, three devices, its own /proc and the working directory)
and pivots into it, then forks the student program with resource limits under an
unprivileged uid and reports its wait status on a private pipe. When the init exits, the kernel
kills every process left in the PID namespace, so nothing the student started outlives the run.

What enforces what (see docs/GRADER.md, "Sandbox"):
- CPU, memory, file size, open files, core dumps: `setrlimit` in the student's process.
- Processes: RLIMIT_NPROC, which counts per uid, so the sandbox uid must be used by nothing else
  (one uid per concurrently running sandbox); the PID namespace bounds their lifetime.
- Wall time and output size: the grader, which SIGKILLs the init (and the process group).
- Network: an empty network namespace (loopback down; every connect fails).
- Files: the private root (nothing of the host but what the interpreter needs, read-only; the
  working directory is the only writable place), and the unprivileged uid (the grader keeps
  private data root-owned, mode 0700/0600, see `private_dir`).
When the grader does not run as root, none of the namespaces or the uid switch are available;
the result says so in `SandboxResult.isolation` instead of claiming them.
"""

from __future__ import annotations

import ctypes
import enum
import functools
import json
import os
import resource
import selectors
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

MIB = 1024 * 1024

UNSHARE = "/usr/bin/unshare"
SETPRIV = "/usr/bin/setpriv"
LDD = "/usr/bin/ldd"
LD_CACHE = "/etc/ld.so.cache"
DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom")
"""The only device nodes inside the sandbox's root."""

# Linux mount(2) and umount2(2) flags; the stdlib has no names for them.
_MS_RDONLY = 1
_MS_NOSUID = 2
_MS_NODEV = 4
_MS_NOEXEC = 8
_MS_REMOUNT = 32
_MS_BIND = 4096
_MS_REC = 16384
_MS_PRIVATE = 1 << 18
_MNT_DETACH = 2
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
"""pivot_root(2) has no libc wrapper: its system call number; elsewhere the init uses chroot."""

_PYTHON_PROBE = (
    "import json, site, sys, sysconfig\n"
    "print(json.dumps({'stdlib': [sysconfig.get_path('stdlib'), sysconfig.get_path('platstdlib')],"
    " 'path': sys.path, 'site': site.getsitepackages() + [site.getusersitepackages()]}))\n"
)
"""Asks a Python interpreter where its standard library and its installed packages live."""

_SETUP_OK = b"S"
_GRACE_SECONDS = 3.0
_READ_CHUNK = 65536


class SandboxError(Exception):
    """Raised for the caller's mistakes only; nothing the sandboxed program does raises it."""


class Status(enum.StrEnum):
    """How a sandboxed run ended."""

    OK = "ok"
    EXIT_ERROR = "exit_error"
    TIMEOUT = "timeout"
    CPU_LIMIT = "cpu_limit"
    MEMORY_LIMIT = "memory_limit"
    FILE_SIZE_LIMIT = "file_size_limit"
    OUTPUT_LIMIT = "output_limit"
    KILLED = "killed"
    SANDBOX_ERROR = "sandbox_error"


@dataclass(frozen=True)
class Limits:
    """Resource limits of one run; sizes in bytes, times in seconds."""

    cpu_seconds: int = 10
    wall_seconds: float = 20.0
    memory_bytes: int = 512 * MIB
    processes: int = 32
    file_size_bytes: int = 1 * MIB
    open_files: int = 64
    output_bytes: int = 1 * MIB


@dataclass(frozen=True)
class Isolation:
    """Who the student runs as.

    `uid`/`gid` must belong to no other process on the host (RLIMIT_NPROC counts per uid), and
    concurrent sandboxes need distinct uids. What the program sees of the host is fixed: its
    working directory, its interpreter with the interpreter's standard library and shared
    libraries (found by `runtime_paths`), a few devices and its own /proc; anything else a
    profile needs is copied into the working directory (as the agent harness is).
    """

    uid: int = 65534
    gid: int = 65534


@dataclass(frozen=True)
class IsolationReport:
    """Which isolation mechanisms were actually in force for a run."""

    separate_user: bool
    network: bool
    filesystem: bool
    """The program ran in a private root (its directory, its interpreter, nothing else)."""
    pid_namespace: bool


@dataclass(frozen=True)
class SandboxResult:
    """What happened in one run; `reason` is written for the student."""

    status: Status
    reason: str
    exit_code: int | None
    signal: int | None
    wall_seconds: float
    cpu_seconds: float
    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    isolation: IsolationReport
    files: dict[str, bytes] = field(default_factory=dict)

    @property
    def is_ok(self) -> bool:
        """Return whether the program exited normally with code 0 within all limits."""
        return self.status is Status.OK


def can_isolate() -> bool:
    """Return whether runs get the namespaces and the uid switch (root and util-linux unshare).

    Without them a run has only its rlimits and runs as the grader's own user, which can read
    the grader's files: fine for trying a program out, not for grading strangers' code.
    """
    return os.geteuid() == 0 and os.path.exists(UNSHARE)


def private_dir(path: str | os.PathLike[str]) -> Path:
    """Create (or tighten) a directory only the grader's user can enter: mode 0700.

    Keep the private suite, other submissions and results under such directories (and files
    0600): the sandbox's unprivileged uid then cannot read them.
    """
    directory = Path(path)
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    directory.chmod(0o700)
    return directory


def run_sandboxed(
    argv: Sequence[str],
    *,
    files: Mapping[str, bytes] | str | os.PathLike[str],
    limits: Limits | None = None,
    stdin: bytes = b"",
    collect: Sequence[str] = (),
    isolation: Isolation | None = None,
) -> SandboxResult:
    """Run `argv` in a fresh working directory holding `files` and return how it ended.

    `files` maps relative paths to contents, or names a directory whose tree is copied (symlinks
    are copied as links, so they grant nothing). `argv[0]` is looked up on PATH=/usr/bin:/bin,
    and the program runs with cwd, HOME and TMPDIR set to the working directory. `collect` names
    files (plain names, no directories) to read back from the working directory after the run,
    each at most `limits.file_size_bytes`; missing or non-regular ones are left out. Never raises
    for anything the program does; raises SandboxError for invalid arguments.
    """
    limits = limits or Limits()
    isolation = isolation or Isolation()
    if not argv:
        raise SandboxError("argv is empty: give the program to run")
    for name in collect:
        _check_plain_name(name)
    privileged = can_isolate()
    workdir = Path(tempfile.mkdtemp(prefix="arena-run-"))
    try:
        _populate(workdir, files)
        if privileged:
            _chown_tree(workdir, isolation.uid, isolation.gid)
        result = _run(argv, workdir, limits, isolation, stdin, privileged)
        collected = _collect(workdir, collect, limits.file_size_bytes)
        return _with_files(result, collected)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _with_files(result: SandboxResult, files: dict[str, bytes]) -> SandboxResult:
    if not files:
        return result
    return SandboxResult(**{**result.__dict__, "files": files})


def _check_plain_name(name: str) -> None:
    if not name or "/" in name or name in {".", ".."} or "\0" in name:
        raise SandboxError(f"cannot collect {name!r}: give a plain file name, no directories")


def _populate(workdir: Path, files: Mapping[str, bytes] | str | os.PathLike[str]) -> None:
    if isinstance(files, Mapping):
        for name, content in files.items():
            relative = Path(name)
            if relative.is_absolute() or ".." in relative.parts or not relative.parts:
                raise SandboxError(f"file name {name!r} must be a relative path without '..'")
            target = workdir / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
        return
    source = Path(files)
    if not source.is_dir():
        raise SandboxError(f"{source} is not a directory of submission files")
    shutil.copytree(source, workdir, symlinks=True, dirs_exist_ok=True)


def _chown_tree(workdir: Path, uid: int, gid: int) -> None:
    os.chown(workdir, uid, gid)
    for root, dirs, names in os.walk(workdir):
        for name in dirs + names:
            os.lchown(os.path.join(root, name), uid, gid)


def _collect(workdir: Path, names: Sequence[str], cap: int) -> dict[str, bytes]:
    collected: dict[str, bytes] = {}
    for name in names:
        try:
            # O_NOFOLLOW: a student's symlink must not make root read a file for them.
            fd = os.open(workdir / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        with os.fdopen(fd, "rb") as handle:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                collected[name] = handle.read(cap)
    return collected


def _student_env(workdir: Path) -> dict[str, str]:
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(workdir),
        "TMPDIR": str(workdir),
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
    }


def _root_plan(argv: Sequence[str]) -> dict[str, list[str]]:
    """Return what the init shows the program of the host: read-only binds and what to cover."""
    program = argv[0]
    if "/" not in program:
        program = shutil.which(program, path="/usr/bin:/bin") or ""
    binds, covers = runtime_paths(program) if os.path.isabs(program) else ((), ())
    return {"binds": list(binds), "covers": list(covers)}


@functools.cache
def runtime_paths(program: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Return (paths to bind read-only, directories to cover empty) that `program` needs.

    The paths are the program itself, the directories of the shared libraries it loads (as
    `ldd` lists them) and the dynamic loader's cache; for a Python interpreter also its
    standard library and the libraries of its extension modules. The directories to cover are
    the interpreter's package directories (site-packages, dist-packages, the user's) that lie
    inside a bound directory: no installed package, Arena included, is visible. Computed once
    per program and process (a second or so: one `ldd`, one run of the interpreter).
    """
    binds = {program}
    libraries = [program]
    packages: list[str] = []
    stdlib: list[str] = []
    if os.path.basename(program).startswith("python"):
        try:
            probe = subprocess.run(
                [program, "-I", "-c", _PYTHON_PROBE],
                capture_output=True,
                check=True,
                timeout=30,
                env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
            )
            found = json.loads(probe.stdout)
        except (OSError, ValueError, subprocess.SubprocessError):
            found = {"stdlib": [], "path": [], "site": []}
        stdlib = [str(path) for path in found["stdlib"] if os.path.isdir(path)]
        binds.update(stdlib)
        for entry in found["path"]:
            if entry and os.path.isdir(entry) and _is_under(entry, stdlib):
                libraries.extend(str(p) for p in Path(entry).glob("*.so"))
        packages = [str(p) for p in found["path"] if p and not _is_under(p, stdlib)]
        packages.extend(str(p) for p in found["site"])
        for directory in stdlib:
            packages.extend(str(p) for p in Path(directory).glob("*-packages"))
    for library in _loaded_libraries(libraries):
        binds.add(os.path.dirname(library))
        binds.add(os.path.dirname(os.path.realpath(library)))
    if os.path.exists(LD_CACHE):
        binds.add(LD_CACHE)
    real = [os.path.realpath(path) for path in binds if os.path.isdir(path)]
    covers = {
        os.path.realpath(path)
        for path in packages
        if os.path.isdir(path) and _is_under(os.path.realpath(path), real)
    }
    return tuple(sorted(binds)), tuple(sorted(covers))


def _is_under(path: str, directories: Sequence[str]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in directories)


def _loaded_libraries(programs: Sequence[str]) -> list[str]:
    """Return the absolute paths `ldd` says `programs` load (the loader included), or []."""
    if not os.path.exists(LDD):
        return []
    try:
        listing = subprocess.run(
            [LDD, *programs],
            capture_output=True,
            timeout=60,
            env={"PATH": "/usr/bin:/bin", "LANG": "C"},
            check=False,
        ).stdout.decode(errors="replace")
    except (OSError, subprocess.SubprocessError):
        return []
    found = set()
    for line in listing.splitlines():
        for word in line.split():
            if word.startswith("/") and not word.endswith(":") and os.path.exists(word):
                found.add(word)
    return sorted(found - set(programs))


def _run(
    argv: Sequence[str],
    workdir: Path,
    limits: Limits,
    isolation: Isolation,
    stdin: bytes,
    privileged: bool,
) -> SandboxResult:
    report_read, report_write = os.pipe()
    config = {
        "argv": list(argv),
        "env": _student_env(workdir),
        "workdir": str(workdir),
        "report_fd": report_write,
        "privileged": privileged,
        "uid": isolation.uid,
        "gid": isolation.gid,
        "root": _root_plan(argv) if privileged else {},
        "limits": {
            "cpu": limits.cpu_seconds,
            "memory": limits.memory_bytes,
            "processes": limits.processes,
            "file_size": limits.file_size_bytes,
            "open_files": limits.open_files,
        },
    }
    init = [sys.executable, "-I", "-S", os.path.abspath(__file__), json.dumps(config)]
    if privileged:
        namespaces = ["--net", "--ipc", "--uts", "--pid", "--fork", "--kill-child", "--mount-proc"]
        command = [UNSHARE, *namespaces, "--", *init]
        if os.path.exists(SETPRIV):
            # SIGKILL the sandbox when the grader dies (a grading killed by the server's job
            # timeout): `unshare --kill-child` passes it on to the init, whose exit empties the
            # PID namespace, so no student process outlives its grader.
            command = [SETPRIV, "--pdeathsig", "KILL", "--", *command]
    else:
        command = init
    isolation_report = IsolationReport(
        separate_user=privileged,
        network=privileged,
        filesystem=privileged,
        pid_namespace=privileged,
    )
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=workdir,
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
            start_new_session=True,
            pass_fds=(report_write,),
        )
    except OSError as error:
        os.close(report_read)
        os.close(report_write)
        return _sandbox_error(f"could not start the sandbox: {error}", isolation_report)
    os.close(report_write)
    capture = _Capture(process, report_read, stdin, limits)
    try:
        kill_cause = capture.pump(started + limits.wall_seconds)
        killed_cpu = _kill(process.pid) if kill_cause is not None else None
        wait_status, shim_rusage = _reap(process)
        capture.drain(time.monotonic() + _GRACE_SECONDS)
    finally:
        capture.close()
    wall = time.monotonic() - started
    if killed_cpu is not None:
        shim_rusage = None
    result = _interpret(
        capture, kill_cause, wait_status, shim_rusage, wall, limits, isolation_report
    )
    if killed_cpu is not None:
        return SandboxResult(**{**result.__dict__, "cpu_seconds": killed_cpu})
    return result


class _Capture:
    """Feed stdin and read stdout, stderr and the init's report, each up to its cap."""

    def __init__(
        self, process: subprocess.Popen[bytes], report_fd: int, stdin: bytes, limits: Limits
    ) -> None:
        assert process.stdin and process.stdout and process.stderr
        self.process = process
        self.cap = limits.output_bytes
        self.selector = selectors.DefaultSelector()
        self.buffers: dict[int, bytearray] = {}
        self.truncated: dict[int, bool] = {}
        self.stdout_fd = process.stdout.fileno()
        self.stderr_fd = process.stderr.fileno()
        self.report_fd = report_fd
        for fd in (self.stdout_fd, self.stderr_fd, report_fd):
            os.set_blocking(fd, False)
            self.buffers[fd] = bytearray()
            self.truncated[fd] = False
            self.selector.register(fd, selectors.EVENT_READ)
        self.pending = memoryview(stdin)
        self.stdin_fd = process.stdin.fileno()
        os.set_blocking(self.stdin_fd, False)
        if self.pending:
            self.selector.register(self.stdin_fd, selectors.EVENT_WRITE)
        else:
            process.stdin.close()

    def pump(self, deadline: float) -> str | None:
        """Move data until the child exits; return "timeout" or "output" if it must be killed."""
        while True:
            if _has_exited(self.process.pid):
                return None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "timeout"
            self._step(min(remaining, 0.05))
            if self.truncated[self.stdout_fd] or self.truncated[self.stderr_fd]:
                return "output"

    def drain(self, deadline: float) -> None:
        """Read what is left after the child ended, giving up at `deadline`."""
        while self.selector.get_map() and time.monotonic() < deadline:
            self._step(0.05)

    def _step(self, timeout: float) -> None:
        for key, _ in self.selector.select(timeout):
            fd = int(key.fd)
            if fd == self.stdin_fd:
                self._write_stdin()
            else:
                self._read(fd)

    def _write_stdin(self) -> None:
        try:
            written = os.write(self.stdin_fd, self.pending[:_READ_CHUNK])
        except BlockingIOError:
            return
        except OSError:
            written = len(self.pending)  # the program closed its stdin; drop the rest
        self.pending = self.pending[written:]
        if not self.pending:
            self.selector.unregister(self.stdin_fd)
            assert self.process.stdin
            self.process.stdin.close()

    def _read(self, fd: int) -> None:
        try:
            chunk = os.read(fd, _READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self.selector.unregister(fd)
            return
        buffer = self.buffers[fd]
        room = self.cap - len(buffer) if fd != self.report_fd else len(chunk)
        buffer += chunk[:room]
        if len(chunk) > room:
            self.truncated[fd] = True

    def close(self) -> None:
        for fd in list(self.selector.get_map()):
            self.selector.unregister(fd)
        self.selector.close()
        os.close(self.report_fd)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None and not stream.closed:
                stream.close()


def _has_exited(pid: int) -> bool:
    """Return whether `pid` has ended, without reaping it (its rusage is collected later)."""
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None


def _kill(shim_pid: int) -> float:
    """SIGKILL the init (which ends its PID namespace) and the shim's group; return CPU used.

    The CPU time is read from /proc just before the kill, summed over the process tree, because
    processes killed this way are never waited for by anyone who could report their rusage.
    """
    tree = _descendants(shim_pid)
    cpu = sum(_cpu_of(pid) for pid in tree)
    for pid in tree[:1]:
        _signal(pid)
    _signal(-shim_pid)
    return cpu


def _descendants(pid: int) -> list[int]:
    found: list[int] = []
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        try:
            children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
        except OSError:
            continue
        found.extend(int(child) for child in children)
        frontier.extend(int(child) for child in children)
    return found


def _cpu_of(pid: int) -> float:
    """Return the user + system seconds of `pid` and its waited-for children, 0 if gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
    except OSError:
        return 0.0
    # After the command name: state is field 3 of stat(5); utime..cstime are fields 14..17.
    ticks = sum(int(value) for value in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


def _signal(pid: int) -> None:
    try:
        if pid < 0:
            os.killpg(-pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
    except OSError:
        pass  # already gone


def _reap(process: subprocess.Popen[bytes]) -> tuple[int, resource.struct_rusage | None]:
    """Wait for the shim for at most a few seconds; SIGKILL its group if it lingers."""
    deadline = time.monotonic() + _GRACE_SECONDS
    while True:
        try:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        except ChildProcessError:
            return 0, None  # Popen.poll already reaped it; its rusage is lost
        if pid:
            process.returncode = _returncode(status)
            return status, usage
        if time.monotonic() > deadline:
            _signal(-process.pid)
            deadline = time.monotonic() + _GRACE_SECONDS
        time.sleep(0.01)


def _returncode(status: int) -> int:
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def _interpret(
    capture: _Capture,
    kill_cause: str | None,
    shim_status: int,
    shim_rusage: resource.struct_rusage | None,
    wall: float,
    limits: Limits,
    isolation: IsolationReport,
) -> SandboxResult:
    stdout = bytes(capture.buffers[capture.stdout_fd])
    stderr = bytes(capture.buffers[capture.stderr_fd])
    report = bytes(capture.buffers[capture.report_fd])
    cpu = shim_rusage.ru_utime + shim_rusage.ru_stime if shim_rusage else 0.0
    exit_code: int | None = None
    signal_number: int | None = None
    if report.startswith(_SETUP_OK) and len(report) > 1:
        final = json.loads(report[1:])
        status_word = int(final["status"])
        cpu = float(final["cpu"])
        if os.WIFSIGNALED(status_word):
            signal_number = os.WTERMSIG(status_word)
        else:
            exit_code = os.WEXITSTATUS(status_word)
    stderr_text = stderr.decode(errors="replace")

    def result(status: Status, reason: str) -> SandboxResult:
        return SandboxResult(
            status=status,
            reason=reason,
            exit_code=exit_code,
            signal=signal_number,
            wall_seconds=wall,
            cpu_seconds=cpu,
            stdout=stdout.decode(errors="replace"),
            stderr=stderr_text,
            stdout_truncated=capture.truncated[capture.stdout_fd],
            stderr_truncated=capture.truncated[capture.stderr_fd],
            isolation=isolation,
        )

    if kill_cause == "timeout":
        return result(
            Status.TIMEOUT,
            f"your program ran for more than {limits.wall_seconds:g} s of wall time "
            "and was stopped",
        )
    if kill_cause == "output":
        return result(
            Status.OUTPUT_LIMIT,
            f"your program printed more than {_size(limits.output_bytes)} "
            "and was stopped; the output was cut there",
        )
    if not report.startswith(_SETUP_OK):
        lines = stderr_text.strip().splitlines() or [f"wait status {shim_status}"]
        return result(
            Status.SANDBOX_ERROR,
            f"the grader could not start your program (not your fault): {lines[-1]}",
        )
    if len(report) == 1:
        return result(Status.KILLED, "your program was stopped before it finished")
    tail = stderr_text[-4000:]
    if signal_number is not None:
        name = _signal_name(signal_number)
        if signal_number == signal.SIGXCPU or (
            signal_number == signal.SIGKILL and cpu >= limits.cpu_seconds * 0.95
        ):
            return result(
                Status.CPU_LIMIT,
                f"your program used more than {limits.cpu_seconds} s of CPU time and was stopped",
            )
        if signal_number == signal.SIGXFSZ:
            return result(Status.FILE_SIZE_LIMIT, _file_size_reason(limits))
        if "MemoryError" in tail or "bad_alloc" in tail:
            return result(Status.MEMORY_LIMIT, _memory_reason(limits))
        return result(
            Status.KILLED,
            f"your program was killed by {name}; a common cause is running out of memory "
            f"(the limit is {_size(limits.memory_bytes)}) or a crash in native code",
        )
    if exit_code == 0:
        return result(Status.OK, "your program finished normally")
    if "MemoryError" in tail or "Cannot allocate memory" in tail or "bad_alloc" in tail:
        return result(Status.MEMORY_LIMIT, _memory_reason(limits))
    if "File too large" in tail:
        return result(Status.FILE_SIZE_LIMIT, _file_size_reason(limits))
    last = next((line for line in reversed(tail.splitlines()) if line.strip()), "")
    detail = f": {last.strip()}" if last else ""
    return result(Status.EXIT_ERROR, f"your program exited with code {exit_code}{detail}")


def _sandbox_error(reason: str, isolation: IsolationReport) -> SandboxResult:
    return SandboxResult(
        status=Status.SANDBOX_ERROR,
        reason=f"the grader could not start your program (not your fault): {reason}",
        exit_code=None,
        signal=None,
        wall_seconds=0.0,
        cpu_seconds=0.0,
        stdout="",
        stderr="",
        stdout_truncated=False,
        stderr_truncated=False,
        isolation=isolation,
    )


def _memory_reason(limits: Limits) -> str:
    return f"your program used more than {_size(limits.memory_bytes)} of memory and was stopped"


def _file_size_reason(limits: Limits) -> str:
    return f"your program tried to write a file larger than {_size(limits.file_size_bytes)}"


def _size(count: int) -> str:
    if count % MIB == 0:
        return f"{count // MIB} MiB"
    if count % 1024 == 0:
        return f"{count // 1024} KiB"
    return f"{count} bytes"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


# ---- the init: runs as `python -I -S sandbox.py CONFIG`, PID 1 of the sandbox's namespaces ----


def _init_main(raw_config: str) -> int:
    """Set up the namespaces' filesystem, run the student program, report its end, exit."""
    config = json.loads(raw_config)
    report_fd = int(config["report_fd"])
    os.set_inheritable(report_fd, False)
    workdir = str(config["workdir"])
    try:
        if config["privileged"]:
            root = config["root"]
            _enter_private_root(workdir, [str(p) for p in root["binds"]], root["covers"])
        os.chdir(workdir)
    except OSError as error:
        sys.stderr.write(f"sandbox setup failed: {error}\n")
        return 125
    os.write(report_fd, _SETUP_OK)
    pid = os.fork()
    if pid == 0:
        _exec_student(config)
    while True:
        try:
            reaped, status, usage = os.wait4(-1, 0)
        except ChildProcessError:
            return 125
        if reaped == pid:
            cpu = usage.ru_utime + usage.ru_stime
            os.write(report_fd, json.dumps({"status": status, "cpu": cpu}).encode())
            return 0


def _enter_private_root(workdir: str, binds: Sequence[str], covers: Sequence[str]) -> None:
    """Make a fresh root holding only what the program may see, and move into it.

    The root is a new tmpfs, mounted over the working directory's own path (a mount point we
    own; our cwd still names the directory underneath, which is bound back at its path inside
    the new root, read-write). Everything else is bound read-only at its host path: `binds`
    (the interpreter, its libraries, ...), with symbolic links on the way recreated; `covers`
    get an empty read-only tmpfs each. Then /dev (null, zero, urandom), a /proc of our PID
    namespace showing the program its own processes only, pivot_root (chroot where the system
    call number is unknown), and the root is
    made read-only. The host's other files, mounts and directories are gone from this
    namespace.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    _mount(libc, None, "/", None, _MS_REC | _MS_PRIVATE)
    _mount(libc, "tmpfs", workdir, "tmpfs", _MS_NOSUID | _MS_NODEV, "size=1m,mode=0755")
    root = workdir
    bound: list[str] = []
    for path in sorted(binds):
        _materialize(libc, root, path, bound)
    for path in covers:
        inside = root + path
        if os.path.isdir(inside):
            flags = _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
            _mount(libc, "tmpfs", inside, "tmpfs", flags, "size=4k,mode=0755")
    os.makedirs(root + "/dev", mode=0o755, exist_ok=True)
    for device in DEVICES:
        _bind(libc, device, root + device, _MS_NOSUID | _MS_NOEXEC)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0")):
        os.symlink(target, f"{root}/dev/{name}")
    for number, name in enumerate(("stdout", "stderr"), start=1):
        os.symlink(f"/proc/self/fd/{number}", f"{root}/dev/{name}")
    os.makedirs(root + "/proc", mode=0o555, exist_ok=True)
    # hidepid=2: the program sees its own processes only, not this init (whose command line
    # would name the grader's paths).
    flags = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    _mount(libc, "proc", root + "/proc", "proc", flags, "hidepid=2")
    os.makedirs(root + workdir, mode=0o755, exist_ok=True)
    _bind(libc, ".", root + workdir, _MS_NOSUID | _MS_NODEV)
    os.chdir(root)
    pivot_root = _SYS_PIVOT_ROOT.get(os.uname().machine)
    if pivot_root is not None and libc.syscall(pivot_root, b".", b".") == 0:
        # The old root now sits on top of the new one at "/": detach it and all its mounts.
        if libc.umount2(b".", _MNT_DETACH) != 0:
            _fail("detach the old root", libc)
    else:
        os.chroot(".")
    os.chdir("/")
    _mount(libc, None, "/", None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)


def _materialize(libc: ctypes.CDLL, root: str, path: str, bound: list[str]) -> None:
    """Bind host `path` read-only at the same path under `root`, recreating symlinks on the way.

    Each symbolic link met while resolving `path` is copied as a link (so `/lib64/ld-linux...`
    or `/usr/bin/python3 -> python3.11` resolve inside the root as they do outside), and the
    file or directory reached is bound. A path inside one already bound is left as it is.
    """
    current = "/"
    parts = [part for part in path.split("/") if part]
    hops = 0
    while parts:
        part = parts.pop(0)
        if part == ".":
            continue
        if part == "..":
            current = os.path.dirname(current)
            continue
        host = os.path.join(current, part)
        if _is_under(host, bound):
            return
        if os.path.islink(host):
            hops += 1
            if hops > 40:
                raise OSError(f"too many symbolic links in {path}")
            target = os.readlink(host)
            if not os.path.lexists(root + host):
                os.symlink(target, root + host)
            if target.startswith("/"):
                current = "/"
            parts = [p for p in target.split("/") if p] + parts
            continue
        if not os.path.exists(host):
            return
        if parts:
            if not os.path.isdir(root + host):
                os.mkdir(root + host, 0o755)
            current = host
            continue
        _bind(libc, host, root + host, _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
        bound.append(host)


def _bind(libc: ctypes.CDLL, source: str, target: str, flags: int) -> None:
    """Bind `source` (not its submounts) at `target`, created empty, with the mount `flags`."""
    if os.path.isdir(source):
        os.makedirs(target, mode=0o755, exist_ok=True)
    elif not os.path.exists(target):
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    _mount(libc, source, target, None, _MS_BIND)
    _mount(libc, None, target, None, _MS_BIND | _MS_REMOUNT | flags)


def _mount(
    libc: ctypes.CDLL,
    source: str | None,
    target: str,
    kind: str | None,
    flags: int,
    data: str | None = None,
) -> None:
    encoded = [None if value is None else value.encode() for value in (source, target, kind, data)]
    if libc.mount(encoded[0], encoded[1], encoded[2], flags, encoded[3]) != 0:
        _fail(f"mount {source} on {target}", libc)


def _fail(action: str, libc: ctypes.CDLL) -> None:
    errno = ctypes.get_errno()
    raise OSError(errno, f"{action}: {os.strerror(errno)}")


def _exec_student(config: dict[str, object]) -> None:
    """In the forked child: apply limits, drop to the sandbox uid and exec; never returns."""
    try:
        limits = config["limits"]
        assert isinstance(limits, dict)
        cpu = int(limits["cpu"])
        _set_limit(resource.RLIMIT_CPU, cpu, cpu + 1)
        _set_limit(resource.RLIMIT_AS, int(limits["memory"]))
        _set_limit(resource.RLIMIT_FSIZE, int(limits["file_size"]))
        _set_limit(resource.RLIMIT_NOFILE, int(limits["open_files"]))
        _set_limit(resource.RLIMIT_CORE, 0)
        if config["privileged"]:
            # Only meaningful for a dedicated uid: RLIMIT_NPROC counts that uid's processes.
            _set_limit(resource.RLIMIT_NPROC, int(limits["processes"]))
            os.setgroups([])
            os.setgid(int(str(config["gid"])))
            os.setuid(int(str(config["uid"])))
        argv = config["argv"]
        env = config["env"]
        assert isinstance(argv, list) and isinstance(env, dict)
        os.execvpe(argv[0], argv, env)
    except (OSError, ValueError, AssertionError) as error:
        sys.stderr.write(f"could not run {config.get('argv')!r}: {error}\n")
        sys.stderr.flush()
    os._exit(127)


def _set_limit(which: int, soft: int, hard: int | None = None) -> None:
    resource.setrlimit(which, (soft, soft if hard is None else hard))


if __name__ == "__main__":
    sys.exit(_init_main(sys.argv[1]))
