"""The server's limits on what its users may ask it to compute: bot searches and game sizes.

The games and bots packages have their own absolute limits (a Nim heap of a million objects
is a valid local game); a hosted game and a house bot must stay within the smaller maxima of
the settings, so no state, legal-move list, message or search can grow without bound.
"""

from __future__ import annotations

from typing import Any

from bots.registry import PLAYERS
from bots.spec import SearchLimits, spec_value
from games.base import State
from games.nim import NimState
from protocol.messages import BotInfo, BotLimits, BotList, BotOptionInfo
from server.settings import Settings


def search_limits(settings: Settings) -> SearchLimits:
    """Return the maxima of house and tournament bots' searches."""
    return SearchLimits(
        depth=settings.bot.max_depth,
        simulations=settings.bot.max_simulations,
        seconds=settings.bot.max_seconds,
        nodes=settings.bot.max_nodes,
    )


def oversize(state: State[Any], settings: Settings) -> str | None:
    """Return why `state` is too large a start for a game on the server, or None.

    Only Nim can grow (its heaps are options and positions); checkers, Connect Four and
    tic-tac-toe have fixed boards. A game never grows past its start: Nim's heaps only shrink.
    """
    if isinstance(state, NimState):
        heaps = state.heaps
        if len(heaps) > settings.nim.max_heaps:
            return (
                f"{len(heaps)} heaps is more than this server's maximum of "
                f"{settings.nim.max_heaps} heaps"
            )
        for number, size in enumerate(heaps, start=1):
            if size > settings.nim.max_heap:
                return (
                    f"heap {number} has {size} objects, more than this server's maximum of "
                    f"{settings.nim.max_heap} per heap"
                )
    return None


LIMIT_SETTINGS = {
    "depth": "ARENA_BOT_MAX_DEPTH",
    "simulations": "ARENA_BOT_MAX_SIMULATIONS",
    "seconds": "ARENA_BOT_MAX_SECONDS",
    "nodes": "ARENA_BOT_MAX_NODES",
}
"""The setting of each `SearchLimits` field."""


def house_bots(settings: Settings) -> BotList:
    """Return the bots a match or tournament may seat as house bots, with this server's limits
    on their options (`GET /bots`)."""
    limits = search_limits(settings)
    bots = []
    for name, player in PLAYERS.items():
        options = []
        for key, option in player.options.items():
            server_maximum = None if option.limit is None else getattr(limits, option.limit)
            options.append(
                BotOptionInfo(
                    name=key,
                    kind=option.kind,
                    default=None if option.default is None else spec_value(option.default),
                    help=option.help,
                    minimum=option.minimum,
                    maximum=option.maximum,
                    server_maximum=server_maximum,
                    server_setting=None if option.limit is None else LIMIT_SETTINGS[option.limit],
                    unless=option.unless,
                )
            )
        bots.append(BotInfo(name=name, description=player.description, options=tuple(options)))
    return BotList(
        bots=tuple(bots),
        limits=BotLimits(
            max_depth=limits.depth,
            max_simulations=limits.simulations,
            max_seconds=limits.seconds,
            max_nodes=limits.nodes,
            threads=settings.bot.threads,
            searches_per_player=settings.bot.searches_per_player,
        ),
    )
