"""The resource limits of a sandboxed run, and who the student runs as.

The grader's watch enforces the wall time and the output size (sandbox/process.py); the
sandbox's init sets the others as rlimits (sandbox/init.py), from `init_limits`.
"""

from __future__ import annotations

from dataclasses import dataclass

MIB = 1024 * 1024


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


def init_limits(limits: Limits, sandboxed: bool) -> dict[str, int | None]:
    """Return the rlimits the init sets before it starts the program, by its config keys."""
    return {
        "cpu": limits.cpu_seconds,
        "memory": limits.memory_bytes,
        "file_size": limits.file_size_bytes,
        "open_files": limits.open_files,
        # Counted in the sandbox's user namespace, its init included. On the host it
        # would count the grader's own processes: none there.
        "processes": limits.processes + 1 if sandboxed else None,
        "core": 0,
    }
