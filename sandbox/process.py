"""Watch a sandbox's process: stdin, stdout, stderr and the init's report on pipes, the wall
time, and the kill that ends a run (the PID namespace's init and bwrap's process group).
"""

from __future__ import annotations

import contextlib
import os
import resource
import selectors
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from sandbox.results import Output

GRACE_SECONDS = 3.0
"""How long a run's processes are given to end, and its pipes to drain, once it is over."""
_READ_CHUNK = 65536


def memfd(name: str, data: bytes) -> int:
    """Return a descriptor (close-on-exec) of an anonymous file holding `data`, read from 0."""
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def close_fds(fds: Sequence[int], *more: int) -> None:
    """Close every descriptor given, ignoring those already closed."""
    for fd in (*fds, *more):
        with contextlib.suppress(OSError):
            os.close(fd)


class Capture:
    """Feed stdin and read stdout, stderr and the init's report, each up to its cap."""

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        report_fd: int,
        stdin: bytes,
        output_cap: int,
        report_cap: int,
    ) -> None:
        assert process.stdin and process.stdout and process.stderr
        self.process = process
        self.caps: dict[int, int] = {}
        self.selector = selectors.DefaultSelector()
        self.buffers: dict[int, bytearray] = {}
        self.truncated: dict[int, bool] = {}
        self.stdout_fd = process.stdout.fileno()
        self.stderr_fd = process.stderr.fileno()
        self.report_fd = report_fd
        for fd in (self.stdout_fd, self.stderr_fd, report_fd):
            os.set_blocking(fd, False)
            self.buffers[fd] = bytearray()
            self.truncated[fd] = False
            self.caps[fd] = report_cap if fd == report_fd else output_cap
            self.selector.register(fd, selectors.EVENT_READ)
        self.pending = memoryview(stdin)
        self.stdin_fd = process.stdin.fileno()
        os.set_blocking(self.stdin_fd, False)
        if self.pending:
            self.selector.register(self.stdin_fd, selectors.EVENT_WRITE)
        else:
            process.stdin.close()

    def pump(self, deadline: float) -> str | None:
        """Move data until the child exits; return "timeout" or "output" if it must be killed."""
        while True:
            if _has_exited(self.process.pid):
                return None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "timeout"
            self._step(min(remaining, 0.05))
            if self.truncated[self.stdout_fd] or self.truncated[self.stderr_fd]:
                return "output"

    def drain(self, deadline: float) -> None:
        """Read what is left after the child ended, giving up at `deadline`."""
        while self.selector.get_map() and time.monotonic() < deadline:
            self._step(0.05)

    def _step(self, timeout: float) -> None:
        for key, _ in self.selector.select(timeout):
            fd = int(key.fd)
            if fd == self.stdin_fd:
                self._write_stdin()
            else:
                self._read(fd)

    def _write_stdin(self) -> None:
        try:
            written = os.write(self.stdin_fd, self.pending[:_READ_CHUNK])
        except BlockingIOError:
            return
        except OSError:
            written = len(self.pending)  # the program closed its stdin; drop the rest
        self.pending = self.pending[written:]
        if not self.pending:
            self.selector.unregister(self.stdin_fd)
            assert self.process.stdin
            self.process.stdin.close()

    def _read(self, fd: int) -> None:
        try:
            chunk = os.read(fd, _READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self.selector.unregister(fd)
            return
        buffer = self.buffers[fd]
        room = self.caps[fd] - len(buffer)
        buffer += chunk[:room]
        if len(chunk) > room:
            self.truncated[fd] = True

    def output(self) -> Output:
        """Return what was read, each stream up to its cap."""
        return Output(
            stdout=bytes(self.buffers[self.stdout_fd]),
            stderr=bytes(self.buffers[self.stderr_fd]),
            report=bytes(self.buffers[self.report_fd]),
            stdout_truncated=self.truncated[self.stdout_fd],
            stderr_truncated=self.truncated[self.stderr_fd],
        )

    def close(self) -> None:
        for fd in list(self.selector.get_map()):
            self.selector.unregister(fd)
        self.selector.close()
        os.close(self.report_fd)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None and not stream.closed:
                stream.close()


def _has_exited(pid: int) -> bool:
    """Return whether `pid` has ended, without reaping it (its rusage is collected later)."""
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None


def kill_sandbox(shim_pid: int) -> float:
    """SIGKILL the init (which ends its PID namespace) and bwrap's group; return CPU used.

    The CPU time is read from /proc just before the kill, summed over the process tree, because
    processes killed this way are never waited for by anyone who could report their rusage.
    """
    tree = descendants(shim_pid)
    cpu = sum(_cpu_of(pid) for pid in tree)
    for pid in tree[:1]:
        _signal(pid)
    _signal(-shim_pid)
    return cpu


def descendants(pid: int) -> list[int]:
    """Return the ids of `pid`'s children, theirs, and so on (read from /proc)."""
    found: list[int] = []
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        try:
            children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
        except OSError:
            continue
        found.extend(int(child) for child in children)
        frontier.extend(int(child) for child in children)
    return found


def _cpu_of(pid: int) -> float:
    """Return the user + system seconds of `pid` and its waited-for children, 0 if gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
    except OSError:
        return 0.0
    # After the command name: state is field 3 of stat(5); utime..cstime are fields 14..17.
    ticks = sum(int(value) for value in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


def _signal(pid: int) -> None:
    try:
        if pid < 0:
            os.killpg(-pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
    except OSError:
        pass  # already gone


def reap(process: subprocess.Popen[bytes]) -> tuple[int, resource.struct_rusage | None]:
    """Wait for bwrap (or the init) for at most a few seconds; SIGKILL its group if it lingers."""
    deadline = time.monotonic() + GRACE_SECONDS
    while True:
        try:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        except ChildProcessError:
            return 0, None  # Popen.poll already reaped it; its rusage is lost
        if pid:
            process.returncode = _returncode(status)
            return status, usage
        if time.monotonic() > deadline:
            _signal(-process.pid)
            deadline = time.monotonic() + GRACE_SECONDS
        time.sleep(0.01)


def _returncode(status: int) -> int:
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status)
