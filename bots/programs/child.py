"""A program from this machine's disk run as a bot's child process, spoken to in text lines.

Every bot that runs outside Arena's process uses this one channel: a CheckerBoard-API
library hosted by bots/programs/cbhost.py (bots.programs.cbapi), an engine speaking Arena's engine
protocol (bots.programs.external, docs/ENGINES.md) and a Python plug-in hosted by
bots/programs/pyhost.py. A child process gives each bot its own state, keeps a crash or a hang to
the bot's own game, and keeps the program's printing apart from the caller's output.

The process is started by a `Starter` the caller may inject (a program in a sandbox, say): any
object with the parts of `subprocess.Popen` the channel uses (`Process`). One that keeps its
own stderr and knows how it ended (`Explained`) has its words quoted when it fails.

`ChildProcess.read_line` waits for the child's next line under the rules every such bot
shares: a start-up limit; from a time (or once the caller's `stop` says so) the child is told
to answer now, and after GRACE_SECONDS more it is killed. Each failure is an `EngineError`
whose words say what the child did (its exit status or signal, the last lines it wrote on
stderr when those are kept), which the referee quotes when it ends the game.
"""

from __future__ import annotations

import collections
import contextlib
import os
import select
import subprocess
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Final, Protocol, runtime_checkable

from bots.result import Clock, Stop

START_SECONDS: Final = 30.0
"""How long a child may take to start and answer its first request."""
GRACE_SECONDS: Final = 5.0
"""How long a child told to answer now may take before it is killed."""
MAX_LINE: Final = 1 << 16
"""The longest line a child may write (bytes): a longer one is garbage, not a reply."""
STDERR_LINES: Final = 3
"""How many of the child's last stderr lines a failure quotes."""
POLL_SECONDS: Final = 0.01


class EngineError(Exception):
    """A program run as a bot that cannot start, dies, hangs, or answers what it should not."""


class Process(Protocol):
    """The parts of `subprocess.Popen[bytes]` a child process's channel uses."""

    @property
    def pid(self) -> int: ...

    @property
    def stdin(self) -> IO[bytes] | None: ...

    @property
    def stdout(self) -> IO[bytes] | None: ...

    @property
    def stderr(self) -> IO[bytes] | None: ...

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def kill(self) -> None: ...


@runtime_checkable
class Explained(Protocol):
    """A process that keeps its own stderr and says how it ended (a sandboxed program)."""

    def end_reason(self) -> str:
        """How it ended, in words for its author; "" while it runs."""
        ...

    def stderr_tail(self) -> str:
        """The last of what it wrote on stderr."""
        ...


Starter = Callable[[], Process]
"""Starts the child's process, its stdin and stdout on pipes; raises OSError if it cannot."""


def popen_starter(
    argv: Sequence[str],
    *,
    cwd: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    keep_stderr: bool = False,
) -> Starter:
    """Return a Starter running `argv` on this machine, its stderr on a pipe if `keep_stderr`."""

    def start() -> Process:
        return subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if keep_stderr else None,
            cwd=cwd,
            env=None if env is None else dict(env),
        )

    return start


class ChildProcess:
    """One program run with pipes on its stdin and stdout, read and written in lines.

    `command` is the program's arguments, or a Starter that starts it (`cwd`, `env` and
    `keep_stderr` are then the starter's business). `what` names the program in messages
    ("engine './mybot'"). With `keep_stderr` its stderr is read on a thread and its last lines
    quoted when it fails; otherwise it is inherited.
    Raises EngineError when the program cannot be started. The child ends with `close()`, or
    when this object is collected: it is sent the `farewell` line if there is one (`quit`),
    its stdin is closed, and it is killed if it lingers.
    """

    def __init__(
        self,
        command: Sequence[str] | Starter,
        clock: Clock,
        *,
        what: str,
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        keep_stderr: bool = False,
        farewell: str | None = None,
    ) -> None:
        self.what = what
        self._clock = clock
        self._buffer = b""
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        start = (
            command
            if callable(command)
            else popen_starter(command, cwd=cwd, env=env, keep_stderr=keep_stderr)
        )
        try:
            self._process = start()
        except OSError as exc:
            raise EngineError(f"cannot start {what}: {exc.strerror or exc}") from None
        self._finalizer = weakref.finalize(self, _end, self._process, farewell)
        self._reader: threading.Thread | None = None
        stream = self._process.stderr
        if keep_stderr and stream is not None:
            self._reader = threading.Thread(target=self._keep, args=(stream,), daemon=True)
            self._reader.start()

    def _keep(self, stream: IO[bytes]) -> None:
        for line in stream:
            text = line.decode("utf-8", "replace").strip()
            if text:
                self._stderr.append(text[:200])

    @property
    def pid(self) -> int:
        """The child's process id."""
        return self._process.pid

    def close(self) -> None:
        """End the child: its farewell line, then its pipes closed; killed if it lingers."""
        self._finalizer()

    def send(self, line: str) -> None:
        """Write one line to the child; EngineError if it is gone."""
        stdin = self._process.stdin
        assert stdin is not None
        try:
            stdin.write(line.encode("utf-8") + b"\n")
            stdin.flush()
        except (OSError, ValueError):
            raise self.died() from None

    def read_line(
        self,
        *,
        starting: bool = False,
        answer_at: float | None = None,
        stop: Stop | None = None,
        tell: Callable[[], None] | None = None,
        resend: float | None = None,
    ) -> str:
        """Return the child's next line (without its end), waiting as the rules say.

        `starting`: the child has START_SECONDS to write it. Otherwise, from `answer_at`
        (clock time), or once `stop` returns True, `tell()` asks the child to answer now (again
        every `resend` seconds if given); GRACE_SECONDS later the child is killed. Without
        either the wait has no end but the child's.
        """
        started = self._clock()
        told: float | None = None
        last_told = 0.0
        while True:
            newline = self._buffer.find(b"\n")
            if newline >= 0:
                line, self._buffer = self._buffer[:newline], self._buffer[newline + 1 :]
                return line.decode("utf-8", "replace").rstrip("\r")
            if len(self._buffer) > MAX_LINE:
                self.close()
                raise EngineError(
                    f"{self.what} wrote a line of more than {MAX_LINE} bytes: "
                    f"{self._buffer[:60].decode('utf-8', 'replace')!r}..."
                )
            stdout = self._process.stdout
            assert stdout is not None
            ready, _, _ = select.select([stdout], [], [], POLL_SECONDS)
            if ready:
                chunk = os.read(stdout.fileno(), 65536)
                if not chunk:
                    raise self.died()
                self._buffer += chunk
                continue
            now = self._clock()
            if starting:
                if now - started > START_SECONDS:
                    self.close()
                    raise EngineError(f"{self.what} did not start within {START_SECONDS:g} s")
                continue
            if told is None and (
                (answer_at is not None and now >= answer_at) or (stop is not None and stop())
            ):
                told = now
            if told is None:
                continue
            if now - told > GRACE_SECONDS:
                self._process.kill()
                self.close()
                raise EngineError(
                    f"{self.what} did not play within {GRACE_SECONDS:g} s of being told to "
                    f"play now ({now - started:.1f} s in all)"
                )
            if tell is not None and (
                now == told or (resend is not None and now - last_told >= resend)
            ):
                last_told = now
                tell()

    def died(self) -> EngineError:
        """End the child and return the error that says how it ended."""
        process = self._process
        try:
            code = process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            code = None
        if code is not None and self._reader is not None:
            # Its last words may still be in the pipe: read to the end, which the exit brings
            # (unless a process it started holds the pipe open: then not for long).
            self._reader.join(timeout=1.0)
        self.close()
        reason = process.end_reason() if isinstance(process, Explained) else ""
        if reason:
            words = f"{self.what} ended: {reason}"
        elif code is not None and code < 0:
            words = f"{self.what} crashed (signal {-code})"
        else:
            words = f"{self.what}'s process ended (exit status {code})"
        return EngineError(words + self.last_words())

    def last_words(self) -> str:
        """The child's last stderr lines as a clause for a message ('' when none are kept)."""
        lines = list(self._stderr)
        if isinstance(self._process, Explained):
            tail = [line.strip() for line in self._process.stderr_tail().splitlines()]
            lines = [line[:200] for line in tail if line][-STDERR_LINES:]
        if not lines:
            return ""
        return "; it wrote on stderr: " + " / ".join(repr(line) for line in lines)


def _end(process: Process, farewell: str | None) -> None:
    """Say `farewell`, close the child's input (it exits) and reap it; kill it if it lingers."""
    if farewell is not None and process.poll() is None and process.stdin is not None:
        with contextlib.suppress(OSError, ValueError):
            process.stdin.write(farewell.encode("utf-8") + b"\n")
            process.stdin.flush()
    for stream in (process.stdin, process.stdout):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass
    try:
        process.wait(timeout=2.0)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
