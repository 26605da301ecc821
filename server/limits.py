"""The server's limits on what its users may ask it to compute: bot searches and game sizes.

The games and bots packages have their own absolute limits (a Nim heap of a million objects
is a valid local game); a hosted game and a house bot must stay within the smaller maxima of
the settings, so no state, legal-move list, message or search can grow without bound.
"""

from __future__ import annotations

from typing import Any

from bots.spec import SearchLimits
from games.base import State
from games.nim import NimState
from server.settings import Settings


def search_limits(settings: Settings) -> SearchLimits:
    """Return the maxima of house and tournament bots' searches."""
    return SearchLimits(
        depth=settings.bot_max_depth,
        simulations=settings.bot_max_simulations,
        seconds=settings.bot_max_seconds,
        nodes=settings.bot_max_nodes,
    )


def oversize(state: State[Any], settings: Settings) -> str | None:
    """Return why `state` is too large a start for a game on the server, or None.

    Only Nim can grow (its heaps are options and positions); checkers, Connect Four and
    tic-tac-toe have fixed boards. A game never grows past its start: Nim's heaps only shrink.
    """
    if isinstance(state, NimState):
        heaps = state.heaps
        if len(heaps) > settings.nim_max_heaps:
            return (
                f"{len(heaps)} heaps is more than this server's maximum of "
                f"{settings.nim_max_heaps} heaps"
            )
        for number, size in enumerate(heaps, start=1):
            if size > settings.nim_max_heap:
                return (
                    f"heap {number} has {size} objects, more than this server's maximum of "
                    f"{settings.nim_max_heap} per heap"
                )
    return None
