"""Run untrusted programs with limits, no network and no access to the host's files.

Standard library only, beside `games/` at the bottom of Arena's rooms: the grader
(`autograder/`) and the server use it. The parts, by job: the limits and the uid
(`limits`), whether runs get the sandbox here (`support`), bubblewrap's command line and
mounts (`bwrap`), the init that runs inside as PID 1 (`init`), the seccomp filter
(`seccomp`), staging and starting a sandbox (`launch`), watching the process (`process`), how
a run ended (`results`), staging directories (`workdirs`); and the two ways to run a
program: a batch run (`run`: stdin up front, output after exit) and an interactive one
(`session`: pipes the caller talks to).
"""

from __future__ import annotations

from sandbox.bwrap import runtime_paths
from sandbox.launch import LaunchError, SandboxError
from sandbox.limits import MIB, Isolation, Limits
from sandbox.results import IsolationReport, SandboxResult, Status
from sandbox.run import SETPRIV, private_dir, run_sandboxed
from sandbox.session import SandboxedProcess, start_sandboxed
from sandbox.support import Mode, Support, can_isolate, sandbox_support

__all__ = [
    "MIB",
    "SETPRIV",
    "Isolation",
    "IsolationReport",
    "LaunchError",
    "Limits",
    "Mode",
    "SandboxError",
    "SandboxResult",
    "SandboxedProcess",
    "Status",
    "Support",
    "can_isolate",
    "private_dir",
    "run_sandboxed",
    "runtime_paths",
    "sandbox_support",
    "start_sandboxed",
]
