"""Start a sandboxed program and report how it ended; runs INSIDE the sandbox (stdlib only).

sandbox/run.py runs this file with the student's interpreter, `python -I -S /dev/fd/N
CONFIG`, as PID 1 of the sandbox bubblewrap builds (or on the host when no sandbox is
available). It forks the program with its resource limits, reaps every process orphaned in
the sandbox while the program runs, and once the program has exited writes on its report
pipe the program's wait status, its CPU time and the files to collect from the working
directory; then it exits, and the kernel kills whatever is left in the PID namespace.

It makes itself non-dumpable first: the program runs under the same uid, and could otherwise
read or write this process's memory and pipe through /proc. As PID 1 it only receives the
signals it handles, so the program cannot kill it either. It runs under whatever Python the
student uses: standard library only, nothing newer than Python 3.8.
"""

from __future__ import annotations

import base64
import json
import os
import resource
import stat
import sys
from typing import Any

READY = b"S"
"""Written on the report pipe once the sandbox is set up, before the program starts."""

_PR_SET_DUMPABLE = 4

_LIMITS = (
    ("cpu", resource.RLIMIT_CPU, 1),
    ("memory", resource.RLIMIT_AS, 0),
    ("file_size", resource.RLIMIT_FSIZE, 0),
    ("open_files", resource.RLIMIT_NOFILE, 0),
    ("processes", resource.RLIMIT_NPROC, 0),
    ("core", resource.RLIMIT_CORE, 0),
)
"""Config key, rlimit, and how far the hard limit lies above the soft one (SIGXCPU, then KILL)."""


def main(raw_config: str) -> int:
    """Run the program the config names; report its end on the config's `report_fd`."""
    config = json.loads(raw_config)
    os.close(int(config["init_fd"]))  # this file, read already: the program has no use for it
    report_fd = int(config["report_fd"])
    os.set_inheritable(report_fd, False)
    _make_undumpable()
    os.write(report_fd, READY)
    pid = os.fork()
    if pid == 0:
        _exec_program(config)
    while True:
        reaped, status, usage = os.wait4(-1, 0)
        if reaped == pid:
            break
    final = {
        "status": status,
        "cpu": usage.ru_utime + usage.ru_stime,
        "files": _collect(config["collect"], int(config["collect_bytes"])),
    }
    _write_all(report_fd, json.dumps(final).encode())
    return 0


def _make_undumpable() -> None:
    try:
        import ctypes  # noqa: PLC0415 - only here: the helper must start fast

        ctypes.CDLL(None).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (ImportError, OSError, AttributeError):
        pass  # an interpreter without ctypes: the report may be forged, the run still bounded


def _exec_program(config: dict[str, Any]) -> None:
    """In the forked child: set the limits and exec the program; never returns."""
    argv = config["argv"]
    try:
        for key, which, above in _LIMITS:
            value = config["limits"].get(key)
            if value is not None:
                resource.setrlimit(which, (int(value), int(value) + above))
        os.execvpe(argv[0], argv, config["env"])
    except (OSError, ValueError) as error:
        sys.stderr.write(f"could not run {argv!r}: {error}\n")
        sys.stderr.flush()
    os._exit(127)


def _collect(names: list[str], cap: int) -> dict[str, str]:
    """Return {name: base64 of at most `cap` bytes} of the regular files among `names`."""
    found = {}
    for name in names:
        try:
            # O_NOFOLLOW: a link the program left is not followed; O_NONBLOCK: nor a FIFO waited on.
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                data = b""
                while len(data) < cap:
                    chunk = os.read(fd, cap - len(data))
                    if not chunk:
                        break
                    data += chunk
                found[name] = base64.b64encode(data).decode("ascii")
        except OSError:
            pass
        finally:
            os.close(fd)
    return found


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
