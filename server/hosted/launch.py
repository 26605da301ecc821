"""Start a hosted bot's version for a match: its program in the sandbox (server.hosted.engine),
under a uid of its own when the server runs as root.

As root, each sandbox runs as an unprivileged uid, and RLIMIT_NPROC counts a uid's processes
across sandboxes: every program running at once gets its own uid from `UidSlots`, given back
when it ends (without root each sandbox is a user namespace of its own, counted apart).
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

from bots.programs.child import EngineError
from bots.result import SearchResult, Stop
from games.base import Game, State
from sandbox import MIB, Isolation
from server.hosted.engine import HostedBot, HostedLimits, start_hosted_engine
from server.hosted.files import VersionFiles
from server.hosted.service import Program, RunLimits


class UidSlots:
    """The uids hosted programs run as (root only): `base` and the `count` after it."""

    def __init__(self, base: int, count: int) -> None:
        self._free = list(range(base + count - 1, base - 1, -1))
        self._lock = threading.Lock()

    def take(self) -> int:
        """Return a free uid; EngineError when every one is in use."""
        with self._lock:
            if not self._free:
                raise EngineError("every hosted bot's uid is in use: the server runs too many")
            return self._free.pop()

    def give_back(self, uid: int) -> None:
        with self._lock:
            self._free.append(uid)


class Running:
    """A version's program playing one match: a hosted engine whose uid is given back when it
    ends."""

    def __init__(self, bot: HostedBot, limits: RunLimits, release: Any) -> None:
        self._bot = bot
        self._limits = limits
        self._release = release
        identity = bot.identity
        self.engine_name: str | None = (
            " ".join(part for part in (identity.name, identity.version) if part) or None
        )

    def choose(self, state: State[Any], budget: float | None, stop: Stop | None) -> SearchResult:
        seconds = self._limits.move_seconds if budget is None else min(budget, 86_400.0)
        return self._bot.choose(state, seconds, stop)

    def close(self) -> None:
        try:
            self._bot.close()
        finally:
            release, self._release = self._release, None
            if release is not None:
                release()


TRIALS = 4
"""Uids beyond the matches' for uploads tried at once (each new version is started once)."""


class Launcher:
    """Starts versions' programs, each under its own uid when the server is root: one for each
    of `running` programs of matches, and TRIALS more for the uploads being tried."""

    def __init__(self, uid_base: int, running: int) -> None:
        self._uids = UidSlots(uid_base, running + TRIALS) if os.geteuid() == 0 else None

    def __call__(self, version: VersionFiles, game: Game, limits: RunLimits) -> Program:
        """Start `version` for `game`; EngineError when it does not start or answer."""
        uid = self._uids.take() if self._uids is not None else None
        hosted_limits = HostedLimits(
            move_seconds=limits.move_seconds,
            memory_bytes=limits.memory_mb * MIB,
            processes=limits.processes,
            cpu_seconds=limits.cpu_seconds,
        )
        try:
            bot = start_hosted_engine(
                "plugin" if version.kind == "plugin" else "engine",
                version.directory,
                game,
                hosted_limits,
                clock=time.monotonic,
                isolation=None if uid is None else Isolation(uid, uid),
                entry=version.entry,
            )
        except BaseException:
            if uid is not None and self._uids is not None:
                self._uids.give_back(uid)
            raise
        uids = self._uids
        release = None if uid is None or uids is None else (lambda: uids.give_back(uid))
        return Running(bot, limits, release)
