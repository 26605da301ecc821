"""One process's budget of sandboxed programs: grading jobs and hosted bots' programs share
its `slots`, and each kind keeps a reserve the other never takes (docs/SCALING.md).

A grading job holds a slot while its grading child runs; a hosted bot's program holds one
from its start to its end (a match, or the one start that tries an upload). A kind `k` takes
a slot when

    held[k] < cap[k]  and  held[k] + max(held[other], reserve[other]) < slots

so a kind holding fewer than its reserve always finds a slot free at once (the other never
takes it), and either borrows the slots beyond both reserves while the other leaves them
idle. A slot borrowed is held until its work ends: nothing is taken back by force.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

from server.settings import Settings, hosted_uids, in_process_graders

Kind = Literal["grading", "hosted"]
KINDS: Final[tuple[Kind, Kind]] = ("grading", "hosted")


@dataclass(frozen=True, slots=True)
class Split:
    """How a process's slots are shared: the total, each kind's reserve and each kind's cap."""

    slots: int
    grading_reserved: int
    hosted_reserved: int
    grading_max: int
    hosted_max: int

    def __post_init__(self) -> None:
        if self.slots < 1:
            raise ValueError(f"a process needs at least one slot, not {self.slots}")
        if self.grading_reserved + self.hosted_reserved > self.slots:
            raise ValueError(
                f"the reserves ({self.grading_reserved} for grading, {self.hosted_reserved} for "
                f"hosted bots) add up to more than the {self.slots} slots"
            )
        for kind in KINDS:
            if not self.reserve(kind) <= self.cap(kind) <= self.slots - self.reserve(_other(kind)):
                raise ValueError(
                    f"{kind} may use at most {self.cap(kind)} slots: that must lie between its "
                    f"reserve ({self.reserve(kind)}) and the slots the other kind's reserve "
                    f"leaves ({self.slots - self.reserve(_other(kind))})"
                )

    def reserve(self, kind: Kind) -> int:
        """The slots `kind` always finds free."""
        return self.grading_reserved if kind == "grading" else self.hosted_reserved

    def cap(self, kind: Kind) -> int:
        """The most slots `kind` holds at once."""
        return self.grading_max if kind == "grading" else self.hosted_max

    @classmethod
    def of(cls, settings: Settings) -> Split:
        """The split the settings give (`compute_*`, defaults from the CPU count)."""
        workers = in_process_graders(settings)
        slots, grading, hosted, hosted_max = settings.compute.derived(
            workers, len(hosted_uids(settings))
        )
        return cls(
            slots=slots,
            grading_reserved=grading,
            hosted_reserved=hosted,
            grading_max=min(workers, slots - hosted),
            hosted_max=hosted_max,
        )


class SlotsBusyError(Exception):
    """No slot came free for a hosted program within its wait; the words say why."""


def _other(kind: Kind) -> Kind:
    return "hosted" if kind == "grading" else "grading"


class ComputeSlots:
    """A process's slots for sandboxed programs, taken by threads (hosted bots' starts) and
    by asyncio tasks (grading workers) alike; every take is matched by one `give_back`."""

    def __init__(self, split: Split) -> None:
        self.split = split
        self._held: dict[Kind, int] = {"grading": 0, "hosted": 0}
        self._changed = threading.Condition()
        self._async_waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()

    def held(self, kind: Kind) -> int:
        """The slots `kind` holds now."""
        with self._changed:
            return self._held[kind]

    def try_take(self, kind: Kind) -> bool:
        """Take a slot for `kind` if the split allows one now; whether one was taken."""
        with self._changed:
            return self._take_locked(kind)

    def take_waiting(self, kind: Kind, wait_s: float, clock: Callable[[], float]) -> None:
        """Take a slot for `kind`, waiting (this thread) until one frees or `wait_s` seconds
        of `clock` pass; then SlotsBusyError. `wake` makes a waiter look at its clock again."""
        with self._changed:
            deadline = clock() + wait_s
            while not self._take_locked(kind):
                left = deadline - clock()
                if left <= 0:
                    raise SlotsBusyError(self._why_busy(kind, wait_s))
                self._changed.wait(left)

    async def take(self, kind: Kind) -> None:
        """Take a slot for `kind`, waiting as long as it takes (a cancelled wait takes none)."""
        loop = asyncio.get_running_loop()
        ready = asyncio.Event()
        waiter = (loop, ready)
        while True:
            with self._changed:
                if self._take_locked(kind):
                    self._async_waiters.discard(waiter)
                    return
                ready.clear()
                self._async_waiters.add(waiter)
            try:
                await ready.wait()
            except BaseException:
                with self._changed:
                    self._async_waiters.discard(waiter)
                raise

    def give_back(self, kind: Kind) -> None:
        """Give back a slot `kind` took; wake whoever waits for one."""
        with self._changed:
            if self._held[kind] <= 0:
                raise RuntimeError(f"{kind} gives back a slot it does not hold")
            self._held[kind] -= 1
        self.wake()

    def wake(self) -> None:
        """Make every waiter look again (at its clock, or for a slot)."""
        with self._changed:
            self._changed.notify_all()
            waiters = list(self._async_waiters)
        for loop, ready in waiters:
            if not loop.is_closed():
                loop.call_soon_threadsafe(ready.set)

    def _take_locked(self, kind: Kind) -> bool:
        split = self.split
        other = _other(kind)
        mine, theirs = self._held[kind], self._held[other]
        if mine >= split.cap(kind) or mine + max(theirs, split.reserve(other)) >= split.slots:
            return False
        self._held[kind] = mine + 1
        return True

    def _why_busy(self, kind: Kind, wait_s: float) -> str:
        split = self.split
        mine, theirs = self._held[kind], self._held[_other(kind)]
        if mine >= split.cap(kind):
            busy = f"{kind} holds all {split.cap(kind)} slots it may"
        else:
            busy = (
                f"{kind} holds {mine} and {_other(kind)} {theirs} of the {split.slots} slots "
                f"({_other(kind)} keeps {split.reserve(_other(kind))} of them)"
            )
        return f"no compute slot came free on this server within {wait_s:g} s: {busy}"
