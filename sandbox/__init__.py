"""Run untrusted programs with limits, no network and no access to the host's files.

Standard library only, beside `games/` at the bottom of Arena's rooms: the grader
(`autograder/`) and the server use it. The parts, by job: the limits and the uid
(`limits`), bubblewrap's command line and mounts (`bwrap`), the init that runs inside as
PID 1 (`init`), the seccomp filter (`seccomp`), watching the process (`process`), how a
run ended (`results`), staging directories (`workdirs`), and a batch run (`run`).
"""

from __future__ import annotations

from sandbox.run import (
    MIB,
    SETPRIV,
    Isolation,
    IsolationReport,
    Limits,
    Mode,
    SandboxError,
    SandboxResult,
    Status,
    Support,
    can_isolate,
    private_dir,
    run_sandboxed,
    runtime_paths,
    sandbox_support,
)

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
