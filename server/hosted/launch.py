"""Start a hosted bot's version: its program, spoken to in the engine protocol."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from bots.programs.child import EngineError
from bots.programs.external import ExternalBot, ProtocolEngine
from bots.result import SearchResult, Stop
from games.base import Game, State
from server.hosted.files import VersionFiles
from server.hosted.service import Program, RunLimits

ARENA_ROOT = Path(__file__).resolve().parents[2]


class Running:
    """A version's program playing one match."""

    def __init__(self, engine: ProtocolEngine, game: Game, limits: RunLimits) -> None:
        self._engine = engine
        self._limits = limits
        self._bot = ExternalBot(engine, game, 0.0, 0, 0)
        identity = engine.identity
        self.engine_name: str | None = (
            " ".join(part for part in (identity.name, identity.version) if part) or None
        )

    def choose(self, state: State[Any], budget: float | None, stop: Stop | None) -> SearchResult:
        seconds = self._limits.move_seconds if budget is None else budget
        return self._bot.choose(state, seconds, stop)

    def close(self) -> None:
        self._engine.close()


def launch(version: VersionFiles, game: Game, limits: RunLimits) -> Program:
    """Start `version` for `game`; EngineError when it does not start or answer."""
    entry = str(version.directory / version.entry)
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
    if version.kind == "plugin":
        env["PYTHONPATH"] = str(ARENA_ROOT)
        argv = [sys.executable, "-m", "bots.programs.pyhost", entry]
        what, verbatim = f"plug-in {version.entry}", True
    else:
        argv = [sys.executable, entry]
        what, verbatim = f"engine {version.entry}", False
    engine = ProtocolEngine(
        argv, time.perf_counter, what=what, cwd=version.directory, env=env, verbatim=verbatim
    )
    try:
        return Running(engine, game, limits)
    except EngineError:
        engine.close()
        raise
