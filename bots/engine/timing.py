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


SOFT_SHARE = 0.5
"""An iteration is started only before this share of the move's time has passed: the next
one takes a few times as long as the last, so a later start would rarely finish."""
STABLE_SHARE = 0.25
"""The share instead once the best move has held for STABLE_ITERATIONS iterations."""
STABLE_ITERATIONS = 4
SCORE_DROP = 30
"""A fall of the score between two iterations (a man is 100) that earns the whole time."""


def start_iteration(
    elapsed: float, budget: float, *, stable_iterations: int, score_drop: float
) -> bool:
    """Return whether iterative deepening starts another iteration, `elapsed` seconds into a
    move of `budget` seconds (the hard limit, which aborts a running iteration).

    The soft limit is SOFT_SHARE of the budget, STABLE_SHARE when the best move has been the
    same for `stable_iterations` >= STABLE_ITERATIONS, and the whole budget when the score
    fell by SCORE_DROP or more (`score_drop`: last score less this one) since the iteration
    before: a failing line gets the time to find a way out.
    """
    if score_drop >= SCORE_DROP:
        limit = budget
    elif stable_iterations >= STABLE_ITERATIONS:
        limit = STABLE_SHARE * budget
    else:
        limit = SOFT_SHARE * budget
    return elapsed < limit
