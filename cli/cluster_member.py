"""One process of a local cluster (`arena cluster`): a server, a worker or the proxy, started
in a session of its own with its output copied to its log, signalled, waited for and killed
with its children; and where such a process finds the `arena` command and its ports.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


class ClusterError(Exception):
    """The cluster cannot start: a service unreachable, a process that exits or never answers."""


@dataclass
class Member:
    """One process of the cluster: a server, a worker or the proxy."""

    name: str
    role: str
    argv: list[str]
    env: dict[str, str]
    cwd: Path | None
    log: Path
    port: int | None = None
    process: subprocess.Popen[bytes] | None = None
    echo: Callable[[str], None] | None = None
    _reader: threading.Thread | None = None

    @property
    def pid(self) -> int:
        """The process id of the running process."""
        assert self.process is not None, f"{self.name} was never started"
        return self.process.pid

    @property
    def url(self) -> str | None:
        """The member's base URL (servers and proxy), None for a worker."""
        return None if self.port is None else f"http://127.0.0.1:{self.port}"

    def is_running(self) -> bool:
        """True while the process has not exited."""
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        """Start the process (again, after it exited), its output appended to the log."""
        if self.is_running():
            raise ClusterError(f"{self.name} is already running")
        # Its own session: Ctrl-C in the terminal reaches the launcher only, which stops every
        # member in order, and the member's children can be found (and ended) by group.
        self.process = subprocess.Popen(
            self.argv,
            env=self.env,
            cwd=self.cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self._reader = threading.Thread(
            target=self._copy_output, args=(self.process,), name=f"{self.name}-output", daemon=True
        )
        self._reader.start()

    def _copy_output(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        with open(self.log, "ab") as log:
            for line in process.stdout:
                log.write(line)
                log.flush()
                if self.echo is not None:
                    self.echo(f"{self.name:<9}| {line.decode(errors='replace').rstrip()}")

    def signal(self, signum: int) -> None:
        """Send `signum` to the process (nothing if it has exited)."""
        if self.is_running():
            assert self.process is not None
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signum)

    def wait(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for the process to exit; True if it has."""
        if self.process is None:
            return True
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return True

    def kill_group(self) -> None:
        """SIGKILL the process and whatever it started that is still in its group."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        if self._reader is not None:
            self._reader.join(5)  # its last lines, until the group's end closes the pipe

    def tail(self, lines: int = 15) -> str:
        """The last `lines` lines of the member's log."""
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


def free_port(host: str = "127.0.0.1") -> int:
    """Return a port free now on `host`."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def client_sources(host: str) -> list[str]:
    """Return the addresses a connection to a server listening on `host` comes from."""
    return {
        "0.0.0.0": ["127.0.0.1"],
        "::": ["::1"],
        "localhost": ["127.0.0.1", "::1"],
    }.get(host, [host])


def arena_executable() -> str:
    """The `arena` console script of this interpreter's environment (else the one on PATH)."""
    beside = Path(sys.executable).parent / "arena"
    if beside.exists():
        return str(beside)
    found = shutil.which("arena")
    if found is None:
        raise ClusterError("the arena command is not installed (pip install -e .)")
    return found


def has_worker_command() -> bool:
    """True if this Arena has `arena worker` (the queue's workers)."""
    from cli.main import GROUPS

    return any("worker" in names for names in GROUPS.values())
