"""Start one sandbox: stage its files, build bwrap's command line and the init's config, start it.

The batch run (sandbox/run.py) and the interactive one (sandbox/session.py) start their
sandboxes here, the same way: the same root, namespaces, seccomp filter, init and rlimits.
The started process has pipes on stdin, stdout and stderr, and the init's report arrives on
`Started.report_fd`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from sandbox.bwrap import init_python, namespace_args, root_args, runtime_paths, workdir_args
from sandbox.limits import Isolation, Limits, init_limits
from sandbox.process import close_fds, memfd
from sandbox.results import IsolationReport
from sandbox.seccomp import SeccompUnavailableError, filter_fd
from sandbox.support import Mode, Support

_INIT = Path(__file__).with_name("init.py")


class SandboxError(Exception):
    """Raised for the caller's mistakes only; nothing the sandboxed program does raises it."""


class LaunchError(OSError):
    """The sandbox could not be prepared or started (not the program's fault): the words say why."""

    def __init__(self, reason: str, isolation: IsolationReport) -> None:
        super().__init__(reason)
        self.reason = reason
        self.isolation = isolation


@dataclass(frozen=True)
class Started:
    """A started sandbox: bwrap (or, unsandboxed, the init), the init's report pipe, the
    isolation in force."""

    process: subprocess.Popen[bytes]
    report_fd: int
    isolation: IsolationReport
    started_at: float
    """`time.monotonic()` just before the start: where the run's wall time begins."""


def check_plain_name(name: str) -> None:
    """Raise SandboxError unless `name` is a plain file name (no directories)."""
    if not name or "/" in name or name in {".", ".."} or "\0" in name:
        raise SandboxError(f"cannot collect {name!r}: give a plain file name, no directories")


def populate(workdir: Path, files: Mapping[str, bytes] | str | os.PathLike[str]) -> None:
    """Write `files` (relative paths to contents, or a directory to copy) into `workdir`."""
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


def check_binds(binds: Mapping[str, str]) -> None:
    """Raise SandboxError unless each of `binds` (inside path: host path) is absolute and there."""
    for inside, host in binds.items():
        if not os.path.isabs(inside) or ".." in Path(inside).parts:
            raise SandboxError(f"bind target {inside!r} must be an absolute path without '..'")
        if not os.path.exists(host):
            raise SandboxError(f"cannot bind {host!r}: it does not exist")


def isolation_report(support: Support) -> IsolationReport:
    """Return the isolation a run gets under `support`."""
    sandboxed = support.mode is not Mode.NONE
    return IsolationReport(
        separate_user=support.mode is Mode.ROOT,
        network=sandboxed,
        filesystem=sandboxed,
        pid_namespace=sandboxed,
        user_namespace=sandboxed,
        seccomp=sandboxed,
        no_new_privs=sandboxed,
        capabilities_dropped=sandboxed,
        disk_limit=sandboxed,
    )


def inside_dir(staging: Path, support: Support) -> str:
    """Return the working directory's path as the program sees it."""
    if support.mode is Mode.NONE:
        return str(staging)
    return os.path.join(tempfile.gettempdir(), staging.name)


def _student_env(workdir: str, extra: Mapping[str, str]) -> dict[str, str]:
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": workdir,
        "TMPDIR": workdir,
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        **extra,
    }


def launch(
    argv: Sequence[str],
    staging: Path,
    limits: Limits,
    isolation: Isolation,
    support: Support,
    *,
    collect: Sequence[str] = (),
    ro_binds: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Started:
    """Start `argv` in a sandbox whose working directory holds a copy of `staging`'s tree.

    `ro_binds` maps paths inside to host paths bound there read-only (sandboxed only: on the
    host the program reaches them where they are); `env` adds environment variables. Raises
    LaunchError when the sandbox cannot be prepared or started.
    """
    sandboxed = support.mode is not Mode.NONE
    rooted = support.mode is Mode.ROOT
    inside = inside_dir(staging, support)
    program = argv[0]
    if "/" not in program:
        program = shutil.which(program, path="/usr/bin:/bin") or ""
    python = init_python(program, rooted) if sandboxed else sys.executable
    report = isolation_report(support)
    report_read, report_write = os.pipe()
    fds = [report_write]
    try:
        fds.append(memfd("arena-init", _INIT.read_bytes()))
        config = {
            "argv": list(argv),
            "env": _student_env(inside, env or {}),
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
            for target, host in sorted((ro_binds or {}).items()):
                args += ["--ro-bind", host, target]
            args += workdir_args(staging, inside, limits.disk_bytes, fds)
            fds.append(filter_fd())
            args += ["--remount-ro", "/", "--chdir", inside, "--seccomp", str(fds[-1])]
            # Through a file descriptor: the host's process list shows no paths of ours.
            fds.append(memfd("arena-bwrap-args", "\0".join(args).encode() + b"\0"))
            command, executable = ["bwrap", "--args", str(fds[-1]), "--", *init], support.bwrap
            cwd, run_env, switch = "/", {}, isolation if rooted else None
        else:
            command, executable = init, sys.executable
            cwd, run_env, switch = str(staging), _student_env(inside, env or {}), None
    except (OSError, SeccompUnavailableError) as error:
        close_fds(fds, report_read)
        raise LaunchError(f"could not prepare the sandbox: {error}", report) from error
    started_at = time.monotonic()
    try:
        process = subprocess.Popen(
            command,
            executable=executable,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=run_env,
            start_new_session=True,
            pass_fds=fds,
            user=None if switch is None else switch.uid,
            group=None if switch is None else switch.gid,
            extra_groups=None if switch is None else [],
        )
    except OSError as error:
        close_fds(fds, report_read)
        raise LaunchError(f"could not start the sandbox: {error}", report) from error
    close_fds(fds)
    return Started(process, report_read, report, started_at)
