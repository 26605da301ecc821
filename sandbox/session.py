"""An interactive sandboxed program: pipes on its stdin and stdout that the caller talks to.

`start_sandboxed` starts the program the way `run_sandboxed` does (sandbox/launch.py): the
same root, namespaces, seccomp filter, init and rlimits (CPU, memory, processes, file size,
open files), no network, and a private tmpfs working directory holding only its files. The
caller writes to `stdin` and reads `stdout`, a line at a time if it likes; stderr and the
init's report are read on a thread of the process's own, and only the last `stderr_bytes` of
stderr are kept (`stderr_tail`). The session has no wall limit of its own: the caller decides
how long it waits, and `kill()` then ends the whole sandbox (its PID namespace). `result()`
says how the program ended, in the words the grader gives (sandbox/results.py).

A `SandboxedProcess` has the parts of `subprocess.Popen` a line channel uses (`stdin`,
`stdout`, `pid`, `poll`, `wait`, `kill`), so such a channel runs it unchanged. Its stderr is
its own (`stderr` is None). The sandbox ends with the thread that started it (bwrap's
`--die-with-parent`): start it on a thread that outlives the conversation.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import IO

from sandbox.launch import SandboxError, Started, check_binds, launch, populate
from sandbox.limits import Isolation, Limits
from sandbox.process import GRACE_SECONDS, kill_sandbox
from sandbox.results import IsolationReport, Output, SandboxResult, interpret
from sandbox.support import run_support
from sandbox.workdirs import new_workdir

STDERR_BYTES = 16 * 1024
"""How much of a session's stderr is kept by default: its last 16 KiB."""
_REPORT_BYTES = 65536
_READ_CHUNK = 65536


class SandboxedProcess:
    """A program running in its sandbox, started by `start_sandboxed`.

    End it with `close()` (its stdin closed, then killed if it lingers) or `kill()`; either
    removes its staging directory, as does the first `wait` or `poll` that sees it ended.
    """

    def __init__(self, started: Started, staging: Path, limits: Limits, stderr_bytes: int) -> None:
        self._process = started.process
        self.isolation: IsolationReport = started.isolation
        """Which isolation mechanisms are in force (all off when no sandbox can be made)."""
        self._limits = limits
        self._staging = staging
        self._stderr_cap = stderr_bytes
        self._lock = threading.Lock()
        self._finishing = threading.Lock()
        self._stderr = bytearray()
        self._stderr_truncated = False
        self._report = bytearray()
        self._started_at = started.started_at
        self._ended_at: float | None = None
        self._killed_cpu: float | None = None
        self._result: SandboxResult | None = None
        stderr = self._process.stderr
        assert stderr is not None
        self._reader = threading.Thread(
            target=self._read, args=(stderr, started.report_fd), daemon=True
        )
        self._reader.start()

    @property
    def sandboxed(self) -> bool:
        """Whether the program runs in the sandbox (False: on the host, with rlimits only)."""
        return self.isolation.filesystem

    @property
    def pid(self) -> int:
        """The process id of bwrap (of the init when unsandboxed), on the host."""
        return self._process.pid

    @property
    def stdin(self) -> IO[bytes] | None:
        """The program's standard input."""
        return self._process.stdin

    @property
    def stdout(self) -> IO[bytes] | None:
        """The program's standard output."""
        return self._process.stdout

    @property
    def stderr(self) -> IO[bytes] | None:
        """None: the session reads stderr itself (`stderr_tail`)."""
        return None

    @property
    def returncode(self) -> int | None:
        """bwrap's exit status once it ended (the program's is in `result()`)."""
        return self._process.returncode

    def poll(self) -> int | None:
        """Return bwrap's exit status if the sandbox has ended, else None."""
        code = self._process.poll()
        if code is not None:
            self._finish()
        return code

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the sandbox to end; subprocess.TimeoutExpired after `timeout` seconds."""
        code = self._process.wait(timeout)
        self._finish()
        return code

    def kill(self) -> None:
        """End the whole sandbox now (SIGKILL to its PID namespace) and clean up."""
        if self._process.poll() is None:
            cpu = kill_sandbox(self._process.pid)
            with self._lock:
                self._killed_cpu = cpu
        self.wait()

    def close(self) -> None:
        """Close the program's stdin and give it GRACE_SECONDS to end; then kill it."""
        for stream in (self._process.stdin, self._process.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()
        try:
            self.wait(GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            self.kill()

    def stderr_tail(self) -> str:
        """The last of what the program wrote on stderr (at most `stderr_bytes`)."""
        with self._lock:
            return bytes(self._stderr).decode(errors="replace")

    def result(self) -> SandboxResult:
        """Return how the program ended; wait for it (kill it first to stop it)."""
        self.wait()
        assert self._result is not None
        return self._result

    def end_reason(self) -> str:
        """How the program ended, in the grader's words; "" while it runs."""
        if self._process.poll() is None:
            return ""
        return self.result().reason

    def _read(self, stderr: IO[bytes], report_fd: int) -> None:
        """Keep the tail of stderr and the init's report until both pipes close."""
        selector = selectors.DefaultSelector()
        for fd in (stderr.fileno(), report_fd):
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ)
        try:
            while selector.get_map():
                for key, _ in selector.select(1.0):
                    fd = int(key.fd)
                    try:
                        chunk = os.read(fd, _READ_CHUNK)
                    except BlockingIOError:
                        continue
                    except OSError:
                        chunk = b""
                    if not chunk:
                        selector.unregister(fd)
                    elif fd == report_fd:
                        with self._lock:
                            self._report += chunk[: _REPORT_BYTES - len(self._report)]
                    else:
                        self._keep(chunk)
        finally:
            selector.close()
            os.close(report_fd)
            stderr.close()

    def _keep(self, chunk: bytes) -> None:
        with self._lock:
            self._stderr += chunk
            excess = len(self._stderr) - self._stderr_cap
            if excess > 0:
                del self._stderr[:excess]
                self._stderr_truncated = True

    def _finish(self) -> None:
        """Once the sandbox has ended: read its last words, say how it ended, clean up."""
        with self._finishing:
            if self._result is None:
                self._conclude()

    def _conclude(self) -> None:
        self._ended_at = time.monotonic()
        self._reader.join(GRACE_SECONDS)
        shutil.rmtree(self._staging, ignore_errors=True)
        with self._lock:
            output = Output(
                stdout=b"",
                stderr=bytes(self._stderr),
                report=bytes(self._report),
                stdout_truncated=False,
                stderr_truncated=self._stderr_truncated,
            )
            killed_cpu = self._killed_cpu
        wall = self._ended_at - self._started_at
        code = self._process.returncode or 0
        status = (-code & 0x7F) if code < 0 else (code & 0xFF) << 8
        result = interpret(output, None, status, None, wall, self._limits, self.isolation)
        if killed_cpu is not None and result.cpu_seconds < killed_cpu:
            result = replace(result, cpu_seconds=killed_cpu)
        self._result = result


def start_sandboxed(
    argv: Sequence[str],
    *,
    files: Mapping[str, bytes] | str | os.PathLike[str],
    limits: Limits | None = None,
    isolation: Isolation | None = None,
    extra_ro_binds: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    stderr_bytes: int = STDERR_BYTES,
) -> SandboxedProcess:
    """Start `argv` in a fresh sandbox whose working directory holds `files`; return it running.

    `files`, `limits` and `isolation` are as for `run_sandboxed` (`limits.wall_seconds` and
    `output_bytes` are the caller's to enforce: it reads the output). `extra_ro_binds` maps
    absolute paths inside the sandbox to host files or directories bound there read-only
    (when no sandbox can be made the program runs on the host and the map is not applied);
    `env` adds environment variables. Raises SandboxError for invalid arguments and
    LaunchError (an OSError) when the sandbox cannot be started.
    """
    limits = limits or Limits()
    isolation = isolation or Isolation()
    if not argv:
        raise SandboxError("argv is empty: give the program to run")
    binds = dict(extra_ro_binds or {})
    check_binds(binds)
    support = run_support()
    staging = new_workdir()
    try:
        populate(staging, files)
        started = launch(argv, staging, limits, isolation, support, ro_binds=binds, env=env)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return SandboxedProcess(started, staging, limits, stderr_bytes)
