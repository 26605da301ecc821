"""Start a hosted bot's version for a match: its program in the sandbox (server.hosted.engine),
in one of the process's compute slots, under a uid of its own when the server runs as root.

Every program running holds a hosted slot of the process's `ComputeSlots` (server.limits.slots:
grading keeps its reserve, hosted bots keep theirs) from its start to its close. A start waits
for a slot at most `compute_hosted_wait_s` on the launcher's clock, then fails with an
EngineError saying the server's slots are busy: the seat's first move fails, as a program
that does not start fails (docs/SCALING.md).

As root, each sandbox runs as an unprivileged uid, and RLIMIT_NPROC counts a uid's processes
across sandboxes: every program running at once gets its own uid from `UidSlots`, given back
when it ends (without root each sandbox is a user namespace of its own, counted apart).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

from bots.programs.child import EngineError
from games.base import Game
from sandbox import MIB, Isolation
from server.hosted.engine import HostedBot, HostedLimits, start_hosted_engine
from server.hosted.files import VersionFiles
from server.hosted.service import RunLimits
from server.limits.slots import ComputeSlots, SlotsBusyError
from server.settings import Settings, hosted_uids


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


class Launcher:
    """Starts versions' programs, each in a hosted slot of `slots` and, when the server is
    root, under its own uid: one for each of `hosted_max_running` programs of matches, and
    HOSTED_TRIAL_UIDS more for the uploads being tried (a worker gives its own `uids`)."""

    def __init__(
        self,
        settings: Settings,
        slots: ComputeSlots,
        *,
        clock: Callable[[], float] = time.monotonic,
        as_root: bool | None = None,
        uids: range | None = None,
    ) -> None:
        uids = hosted_uids(settings) if uids is None else uids
        root = os.geteuid() == 0 if as_root is None else as_root
        self._uids = UidSlots(uids.start, len(uids)) if root else None
        self._slots = slots
        self._wait_s = settings.compute.hosted_wait_s
        self._clock = clock

    def __call__(self, version: VersionFiles, game: Game, limits: RunLimits) -> HostedBot:
        """Start `version` for `game`; EngineError when no slot frees in time, or when it does
        not start or answer."""
        try:
            self._slots.take_waiting("hosted", self._wait_s, self._clock)
        except SlotsBusyError as busy:
            raise EngineError(f"the bot was not started: {busy}") from None
        uid: int | None = None
        try:
            uid = self._uids.take() if self._uids is not None else None
            return start_hosted_engine(
                "plugin" if version.kind == "plugin" else "engine",
                version.directory,
                game,
                HostedLimits(
                    move_seconds=limits.move_seconds,
                    memory_bytes=limits.memory_mb * MIB,
                    processes=limits.processes,
                    cpu_seconds=limits.cpu_seconds,
                ),
                clock=time.monotonic,
                isolation=None if uid is None else Isolation(uid, uid),
                entry=version.entry,
                release=self._releaser(uid),
            )
        except BaseException:
            self._releaser(uid)()
            raise

    def _releaser(self, uid: int | None) -> Callable[[], None]:
        """Return what gives back the slot and `uid` of one program."""
        uids, slots = self._uids, self._slots

        def release() -> None:
            if uid is not None and uids is not None:
                uids.give_back(uid)
            slots.give_back("hosted")

        return release
