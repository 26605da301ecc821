"""Start a user's bot in the sandbox as a player speaking Arena's engine protocol.

A hosted bot is a directory of the user's files, run by `start_hosted_engine` in a sandbox of
its own (sandbox.session): no network, no file of the host's but its interpreter, and a
private working directory holding its files. Two kinds:

- "plugin": a Python file (`bot.py`) with a bots.plugin class, or the course's
  `select_move` function, hosted by bots/programs/pyhost.py inside the sandbox. The host
  imports only the Arena modules it needs, bound read-only under /arena (`ARENA_MODULES`):
  never an installed package, the server's data or its settings.
- "engine": a program speaking the engine protocol (docs/ENGINES.md), by default
  `python3 bot.py` (a Python program of the standard library's).

The channel is the one every program run as a bot shares (bots.programs.external over
bots.programs.child): each move has `HostedLimits.move_seconds` of wall time (then `stop`, and
a kill GRACE_SECONDS later, on the caller's clock); CPU, memory, processes, files and disk
are the sandbox's rlimits for the whole game. Every failure is an EngineError whose words
say what the bot did, with the sandbox's reason when its process died. Nothing here knows
the database or the web.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from bots.programs.child import EngineError, Process
from bots.programs.external import ExternalBot, Identity, ProtocolEngine
from bots.result import Clock, SearchResult, Stop
from games import Game, State
from sandbox import (
    MIB,
    Isolation,
    Limits,
    SandboxedProcess,
    SandboxError,
    can_isolate,
    start_sandboxed,
)

Kind = Literal["plugin", "engine"]
KINDS: Final = ("plugin", "engine")
ENTRY: Final = "bot.py"
"""The file a hosted bot is started from, in its directory."""
PYTHON: Final = "/usr/bin/python3"
"""The interpreter inside the sandbox: the system's (the sandbox uid reaches it; a virtual
environment's may live under a private directory)."""
ARENA_INSIDE: Final = "/arena"
"""Where the plug-in host's Arena modules are bound, read-only, inside the sandbox."""
ARENA_MODULES: Final = (
    "games",
    "bots/__init__.py",
    "bots/plugin.py",
    "bots/result.py",
    "bots/programs/__init__.py",
    "bots/programs/child.py",
    "bots/programs/external.py",
    "bots/programs/pyhost.py",
)
"""What bots/programs/pyhost.py imports of Arena: the games, the plug-in interface and the
protocol's channel (the standard library's modules aside)."""
_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class HostedLimits:
    """What a hosted bot may use: wall time per move, the rest for its whole game."""

    move_seconds: float = 1.0
    """Wall time per move (`go movetime`); a bot still silent GRACE_SECONDS later is killed."""
    cpu_seconds: int = 60
    """CPU time of its process for the whole game (an rlimit: the process is stopped)."""
    memory_bytes: int = 256 * MIB
    processes: int = 8
    file_size_bytes: int = 1 * MIB
    open_files: int = 64
    disk_bytes: int = 4 * MIB
    """Room it may write in its working directory, beyond its own files."""
    stderr_bytes: int = 16 * 1024
    """How much of its stderr is kept (the last of it) for a failure's report."""

    def sandbox_limits(self) -> Limits:
        """The sandbox's limits for these (its wall and output are the channel's)."""
        return Limits(
            cpu_seconds=self.cpu_seconds,
            memory_bytes=self.memory_bytes,
            processes=self.processes,
            file_size_bytes=self.file_size_bytes,
            open_files=self.open_files,
            disk_bytes=self.disk_bytes,
        )


def arena_binds() -> dict[str, str]:
    """Return the read-only binds of the plug-in host's modules: path inside -> host path."""
    return {f"{ARENA_INSIDE}/{name}": str(_ROOT / name) for name in ARENA_MODULES}


LONGEST_MOVE_SECONDS: Final = 86_400.0
"""The most wall time a move is given whatever its clock says (an untimed match's budget)."""


class HostedBot:
    """A user's bot playing one game from its sandbox: `choose` a move, `close` at the end.

    `sandboxed` is False where the host cannot make a sandbox (sandbox.can_isolate): the
    program then runs as the server's user with rlimits only, and `what` says so. `release`
    is called once when it closes (its uid and compute slot given back).
    """

    def __init__(
        self,
        bot: ExternalBot,
        process: SandboxedProcess,
        release: Callable[[], None] | None = None,
    ) -> None:
        self.bot = bot
        self.process = process
        self._release = release
        identity = bot.engine.identity
        self.engine_name: str | None = (
            " ".join(part for part in (identity.name, identity.version) if part) or None
        )
        """What the program called itself in the handshake: its name and version."""

    @property
    def identity(self) -> Identity:
        """What the program said of itself in the handshake."""
        return self.bot.engine.identity

    @property
    def what(self) -> str:
        """The bot as messages name it."""
        return self.bot.engine.what

    @property
    def sandboxed(self) -> bool:
        """Whether the program runs in the sandbox (False: on the host, rlimits only)."""
        return self.process.sandboxed

    def choose(self, state: State[Any], budget: float | None, stop: Stop | None) -> SearchResult:
        """Return the bot's move for `state` within `budget` seconds (None: its limits'
        `move_seconds`); EngineError naming what went wrong."""
        seconds = None if budget is None else min(budget, LONGEST_MOVE_SECONDS)
        return self.bot.choose(state, seconds, stop)

    def stderr_tail(self) -> str:
        """The last of what the program wrote on stderr."""
        return self.process.stderr_tail()

    def end_reason(self) -> str:
        """How its process ended, in the sandbox's words; "" while it runs."""
        return self.process.end_reason()

    def close(self) -> None:
        """Say `quit`, then end its sandbox (killed if it lingers) and remove its files."""
        try:
            self.bot.engine.close()
            self.process.kill()
        finally:
            release, self._release = self._release, None
            if release is not None:
                release()

    def __enter__(self) -> HostedBot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def start_hosted_engine(
    kind: Kind,
    files_dir: str | os.PathLike[str],
    game: Game,
    limits: HostedLimits | None = None,
    *,
    clock: Clock = time.monotonic,
    isolation: Isolation | None = None,
    command: Sequence[str] | None = None,
    target: str | None = None,
    entry: str = ENTRY,
    release: Callable[[], None] | None = None,
) -> HostedBot:
    """Start the bot in `files_dir` in a sandbox of its own and its first game of `game`.

    `kind` "plugin": `files_dir/ENTRY` (`bot.py`) holds a bots.plugin class (`target` names
    it, or the file's `select_move` or only plug-in class is played). `kind` "engine":
    `command` (default `python3 ENTRY`)
    runs in the bot's directory and speaks the engine protocol. `clock` times the moves. The
    sandbox ends with the thread that started it (bwrap's `--die-with-parent`). `release`
    is called when the bot closes; not when this raises (the caller still holds what it
    took).
    Raises EngineError when the bot cannot start, its handshake fails or it does not play
    `game`; ValueError for an unknown kind.
    """
    limits = limits or HostedLimits()
    files = Path(files_dir)
    if kind == "plugin":
        argv = [
            PYTHON,
            "-S",
            "-m",
            "bots.programs.pyhost",
            f"./{entry}" + (f":{target}" if target else ""),
        ]
        what = f"plug-in {(target or entry)!r}"
    elif kind == "engine":
        argv = list(command or [PYTHON, "-S", entry])
        what = f"engine {' '.join(Path(arg).name if '/' in arg else arg for arg in argv)!r}"
    else:
        raise ValueError(f"a hosted bot is one of {', '.join(KINDS)}, not {kind!r}")
    if not can_isolate():
        what += " (unsandboxed: rlimits only)"
    started: list[SandboxedProcess] = []

    def start() -> Process:
        started.append(_start(argv, files, limits, isolation, arena=kind == "plugin"))
        return started[-1]

    engine = ProtocolEngine(start, clock, what=what, verbatim=kind == "plugin")
    try:
        bot = ExternalBot(engine, game, limits.move_seconds, 0, 0)
    except EngineError:
        engine.close()
        started[0].kill()
        raise
    return HostedBot(bot, started[0], release)


def _start(
    argv: Sequence[str],
    files: Path,
    limits: HostedLimits,
    isolation: Isolation | None,
    *,
    arena: bool,
) -> SandboxedProcess:
    """Start the program in its sandbox; OSError (the channel's 'cannot start') if it cannot."""
    binds: dict[str, str] = {}
    env: dict[str, str] = {}
    if arena and can_isolate():
        binds, env = arena_binds(), {"PYTHONPATH": ARENA_INSIDE}
    elif arena:
        # No sandbox here, so no binds: the host imports Arena from where it lives.
        env = {"PYTHONPATH": str(_ROOT)}
    try:
        return start_sandboxed(
            argv,
            files=files,
            limits=limits.sandbox_limits(),
            isolation=isolation,
            extra_ro_binds=binds,
            env=env,
            stderr_bytes=limits.stderr_bytes,
        )
    except SandboxError as error:
        raise OSError(str(error)) from None
