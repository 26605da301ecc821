"""Waiting for what another process or task does: poll until it holds, and fail naming what
never happened once a generous bound has passed.

The bound is a liveness check, never a speed claim: it only keeps a broken run from hanging,
and is wide enough for a machine loaded by other runs (`make test` beside `make test`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

LIVENESS_S = 180.0
"""How long a test waits for something that should come within seconds."""


class WaitedTooLongError(AssertionError):
    """What a test waited for did not come within the bound."""


def wait_for(
    what: str,
    read: Callable[[], T],
    holds: Callable[[T], bool] = bool,
    *,
    bound_s: float = LIVENESS_S,
    every_s: float = 0.1,
) -> T:
    """Call `read` every `every_s` until `holds` of its value; return that value.

    Raises WaitedTooLongError naming `what`, with the last value read, after `bound_s`.
    """
    deadline = time.monotonic() + bound_s
    while True:
        value = read()
        if holds(value):
            return value
        if time.monotonic() > deadline:
            raise WaitedTooLongError(f"never: {what} (last: {value!r:.2000})")
        time.sleep(every_s)


async def until(
    what: str,
    read: Callable[[], T],
    holds: Callable[[T], bool] = bool,
    *,
    bound_s: float = LIVENESS_S,
    every_s: float = 0.02,
) -> T:
    """`wait_for` in a running event loop (it sleeps with asyncio)."""
    deadline = time.monotonic() + bound_s
    while True:
        value = read()
        if holds(value):
            return value
        if time.monotonic() > deadline:
            raise WaitedTooLongError(f"never: {what} (last: {value!r:.2000})")
        await asyncio.sleep(every_s)
