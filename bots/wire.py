"""A search's statistics in the wire protocol's form (`SearchInfo`), for every player of a bot.

The network client sends them with its moves; the server's house bots and tournament games
record them the same way. This is the one module of `bots` that imports the protocol
(ARCHITECTURE.md): it knows how Arena's engines score a forced win and what the wire can carry.
"""

from __future__ import annotations

import math
from itertools import takewhile

from bots.result import SearchResult
from bots.scoring import ENGINE
from protocol.messages import (
    MAX_MOVE_LENGTH,
    MAX_PV_MOVES,
    MAX_SAFE_INTEGER,
    MAX_SEARCH_DEPTH,
    SearchInfo,
)


def _fits_the_wire(move: str) -> bool:
    return 0 < len(move) <= MAX_MOVE_LENGTH


def search_info(result: SearchResult) -> SearchInfo:
    """Return the wire statistics of a search by one of Arena's bots (`SearchInfo`).

    The score is the search's, from the mover's view. Arena's engines score a forced win as
    `ENGINE.win` less its distance in plies: such a score is reported as the `outcome` `win`
    (or `loss`) with that distance (MCTS proves a win without one: exactly `ENGINE.win`).
    Values beyond the wire's bounds are clamped; the PV is cut to `MAX_PV_MOVES`, and before a
    move the wire cannot carry (the rest of the line would not follow from the moves sent).
    """
    stats = result.stats
    score = result.score
    outcome = None
    plies = None
    if math.isfinite(score) and (ENGINE.is_win(score) or ENGINE.is_loss(score)):
        outcome = "win" if score > 0 else "loss"
        distance = round(ENGINE.win - abs(score))
        plies = distance if 0 < distance <= MAX_SEARCH_DEPTH else None
    limit = float(MAX_SAFE_INTEGER)
    return SearchInfo(
        depth=min(max(stats.depth, 0), MAX_SEARCH_DEPTH),
        nodes=min(max(stats.nodes, 0), MAX_SAFE_INTEGER),
        score=max(-limit, min(limit, float(score))) if math.isfinite(score) else None,
        outcome=outcome,
        outcome_plies=plies,
        pv=tuple(takewhile(_fits_the_wire, stats.pv[:MAX_PV_MOVES])),
        time_ms=min(max(round(stats.seconds * 1000), 0), MAX_SAFE_INTEGER),
        nps=min(max(round(stats.nps), 0), MAX_SAFE_INTEGER),
    )
