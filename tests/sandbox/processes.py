"""Which processes a uid has: how the tests see that no sandboxed process outlives its run."""

from __future__ import annotations

import time
from pathlib import Path


def live_processes(uid: int) -> set[int]:
    """Return the pids of non-zombie processes whose real uid is `uid`."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if int(fields["Uid"].split()[0]) == uid and not fields["State"].strip().startswith("Z"):
            found.add(int(entry.name))
    return found


def survivors(uid: int, patience: float = 30.0) -> set[int]:
    """Return the processes of `uid` still alive once they had `patience` seconds to die.

    A killed PID namespace takes a moment to empty: its processes are dying, not yet gone.
    """
    deadline = time.monotonic() + patience
    while (alive := live_processes(uid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive
