"""How long a bot may think about one move, given its clock (shared by every client of a clock).

Pure arithmetic on milliseconds: the network client, the server's house bots and tournaments
budget moves the same way.
"""

from __future__ import annotations

MOVES_TO_GO = 20
"""A move spends at most 1/MOVES_TO_GO of the remaining time (plus most of the increment)."""
INCREMENT_SHARE = 0.8
MINIMUM_MS = 10.0


def time_budget(
    remaining_ms: float,
    increment_ms: float = 0,
    move_cap_ms: float | None = None,
    *,
    margin_ms: float = 100,
    moves_to_go: int = MOVES_TO_GO,
    increment_share: float = INCREMENT_SHARE,
) -> float:
    """Return the seconds to spend on a move with `remaining_ms` left on the clock.

    The budget is `remaining / moves_to_go + increment_share * increment`, capped by the
    per-move cap and by what is left, each less `margin_ms` (latency), never below 10 ms.
    """
    budget_ms = remaining_ms / moves_to_go + increment_share * increment_ms
    budget_ms = min(budget_ms, remaining_ms - margin_ms)
    if move_cap_ms is not None:
        budget_ms = min(budget_ms, move_cap_ms - margin_ms)
    return max(budget_ms, MINIMUM_MS) / 1000.0
