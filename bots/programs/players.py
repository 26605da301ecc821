"""The bots that run a program from this machine's disk, each in a child process of its own:
a CheckerBoard-API library (`cb:PATH`), a program speaking Arena's engine protocol
(`cmd:COMMAND`), a Python plug-in (`py:TARGET`) and an engine named in a file of engines
(`engine:NAME`). A host never runs them (bots.registry.LOCAL_PLAYERS).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from bots.engine.search import MAX_PLY
from bots.player import MAX_NODES, MAX_SECONDS, Option, Player, Setup
from bots.programs.cbapi import CheckerBoardBot, Engine
from bots.programs.child import EngineError
from bots.programs.external import ExternalBot, Identity, ProtocolEngine, split_command
from bots.result import SearchResult, Stop
from games import State
from games.checkers import CheckersState


class CheckerBoardPlayer(Player):
    name = "cb"
    description = "a CheckerBoard-API checkers engine (a shared library), run in a child process"
    options = MappingProxyType(
        {
            "path": Option("str", None, "the engine's shared library (given first: cb:PATH)"),
            "time": Option(
                "float",
                1.0,
                "seconds per move (getmove's maxtime), less if the clock says so",
                0.001,
                MAX_SECONDS,
                limit="seconds",
            ),
            "depth": Option(
                "int",
                0,
                "search depth instead of a time (getmove's info bit 3; 0: off)",
                0,
                MAX_PLY,
            ),
        }
    )
    positional = "path"

    def __init__(self, values: Mapping[str, Any], setup: Setup) -> None:
        super().__init__(values, setup)
        if setup.game.name != "checkers":
            raise EngineError(f"a CheckerBoard engine plays checkers, not {setup.game.name}")
        # The child process starts here, so a library that cannot be loaded is refused
        # when the bot is built, before any game.
        engine = Engine(values["path"], setup.clock)
        self.bot = CheckerBoardBot(engine, values["time"], values["depth"])

    @property
    def engine_name(self) -> str | None:
        return self.bot.engine.name or None

    def choose(self, state: State[Any], budget: float | None, stop: Stop | None) -> SearchResult:
        assert isinstance(state, CheckersState)
        return self.bot.choose(state, budget, stop)


ENGINE_LIMITS: Final[Mapping[str, Option]] = MappingProxyType(
    {
        "time": Option(
            "float",
            1.0,
            "seconds per move (go movetime), less if the clock says so (0: none)",
            0.0,
            MAX_SECONDS,
            limit="seconds",
        ),
        "depth": Option("int", 0, "plies per move (go depth; 0: none)", 0, MAX_PLY),
        "nodes": Option("int", 0, "positions per move (go nodes; 0: none)", 0, MAX_NODES),
    }
)
"""Arena's limits on an engine or plug-in, sent with each `go`; other keys are its options."""


class ProtocolPlayer(Player):
    """A program speaking Arena's engine protocol (docs/ENGINES.md) in a child process.

    The process starts when the bot is built (so a program that cannot start, a handshake
    that fails, an option it does not declare or a game it does not play is refused before
    any game) and serves this one bot: a fresh bot, a fresh process.
    """

    options = ENGINE_LIMITS
    open_options = True

    def start(
        self,
        argv: Sequence[str],
        what: str,
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        verbatim: bool = False,
        engine_options: Mapping[str, str] | None = None,
    ) -> None:
        """Start the program and its first game; EngineError naming what went wrong."""
        engine = ProtocolEngine(
            argv, self.setup.clock, what=what, cwd=cwd, env=env, verbatim=verbatim
        )
        own = {**(engine_options or {})}
        own.update({k: str(v) for k, v in self.values.items() if k not in self.options})
        own.pop(self.positional or "", None)
        try:
            engine.configure(own)
            self.bot = ExternalBot(
                engine,
                self.setup.game,
                self.values["time"],
                self.values["depth"],
                self.values["nodes"],
            )
        except EngineError:
            engine.close()
            raise

    @property
    def identity(self) -> Identity:
        """What the program said of itself: name, author, version, options, games."""
        return self.bot.engine.identity

    @property
    def engine_name(self) -> str | None:
        identity = self.identity
        return " ".join(part for part in (identity.name, identity.version) if part) or None

    def choose(self, state: State[Any], budget: float | None, stop: Stop | None) -> SearchResult:
        return self.bot.choose(state, budget, stop)


class CommandPlayer(ProtocolPlayer):
    name = "cmd"
    description = "a program speaking Arena's engine protocol (docs/ENGINES.md): cmd:COMMAND"
    options = MappingProxyType(
        {
            "command": Option(
                "str", None, 'the command, shell-quoted (given first: cmd:COMMAND or cmd:"...")'
            ),
            **ENGINE_LIMITS,
        }
    )
    positional = "command"

    def __init__(self, values: Mapping[str, Any], setup: Setup) -> None:
        super().__init__(values, setup)
        command = values["command"]
        argv = split_command(command)
        self.start(argv, f"engine {_short(argv)!r}")


class PythonPlayer(ProtocolPlayer):
    name = "py"
    description = (
        "a Python plug-in (bots/plugin.py) in a child process: py:FILE.py:CLASS, "
        "py:MODULE:CLASS or py:NAME (entry point arena.bots)"
    )
    options = MappingProxyType(
        {
            "target": Option("str", None, "the plug-in (given first: py:FILE.py:CLASS)"),
            **ENGINE_LIMITS,
        }
    )
    positional = "target"

    def __init__(self, values: Mapping[str, Any], setup: Setup) -> None:
        super().__init__(values, setup)
        target = values["target"]
        # The host imports Arena's games and bots.plugin from where this Arena lives.
        root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        argv = [sys.executable, "-m", "bots.programs.pyhost", target]
        self.start(argv, f"plug-in {_short([target])!r}", env=env, verbatim=True)


class NamedEnginePlayer(ProtocolPlayer):
    name = "engine"
    description = (
        "an engine named in a JSON file of engines ($ARENA_ENGINES, else ./engines.json): "
        "engine:NAME"
    )
    options = MappingProxyType(
        {
            "engine": Option("str", None, "the engine's name in the file (given first)"),
            **ENGINE_LIMITS,
        }
    )
    positional = "engine"

    def __init__(self, values: Mapping[str, Any], setup: Setup) -> None:
        super().__init__(values, setup)
        path = Path(os.environ.get("ARENA_ENGINES") or "engines.json")
        entry = read_engines(path).get(values["engine"])
        if entry is None:
            known = ", ".join(read_engines(path)) or "none"
            raise EngineError(f"{str(path)!r} names no engine {values['engine']!r} ({known})")
        argv = split_command(entry["command"])
        where = entry.get("workingDirectory")
        cwd = None if where is None else str((path.parent / str(where)).resolve())
        raw = entry.get("options", {})
        options = {str(k): spec_text(v) for k, v in raw.items()} if isinstance(raw, dict) else {}
        self.start(argv, f"engine {entry['name']!r}", cwd=cwd, engine_options=options)


def _short(argv: Sequence[str]) -> str:
    """A command as messages name it: each path by its last part (reasons are short)."""
    return " ".join(Path(arg).name if "/" in arg else arg for arg in argv)


def spec_text(value: Any) -> str:
    """An option's value from JSON as the protocol sends it (true/false for a bool)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def read_engines(path: Path) -> dict[str, dict[str, Any]]:
    """Read a JSON list of engines ({name, command, workingDirectory?, options?}) by name.

    The shape is cutechess's engines.json, except that `options` maps names to values.
    EngineError naming the file and what is wrong.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EngineError(f"no engines file {str(path)!r} (set $ARENA_ENGINES)") from None
    except (OSError, ValueError) as exc:
        raise EngineError(f"cannot read the engines file {str(path)!r}: {exc}") from None
    engines: dict[str, dict[str, Any]] = {}
    for index, entry in enumerate(data if isinstance(data, list) else [None]):
        if not (
            isinstance(entry, dict)
            and isinstance(entry.get("name"), str)
            and isinstance(entry.get("command"), str)
        ):
            raise EngineError(
                f"{str(path)!r}: entry {index + 1} is not an object with a name and a command"
            )
        if entry.get("protocol", "arena") != "arena":
            raise EngineError(
                f"{str(path)!r}: engine {entry['name']!r} speaks "
                f"{entry['protocol']!r}; Arena plays engines speaking 'arena'"
            )
        engines[entry["name"]] = entry
    return engines
