"""What a solve answers: the `Solution` of a position (its value, every optimal move, or what the
limits left known), the `SolveProgress` reports of a running solve, and how a position was
solved (`Method`) or what stopped it (`Limit`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Literal, TypeAlias

from games import State

Limit: TypeAlias = Literal["time", "nodes", "plies"]
"""What stopped a solve: its deadline, its node budget, or (checkers) `max_plies`."""
Method: TypeAlias = Literal["search", "proof", "connect4", "nim-sum", "egdb"]
"""How a position is solved: alpha-beta to the end, the checkers proof search, the Connect Four
solver, the nim-sum theory, or the checkers endgame database (bots.egdb.probe.DatabaseSolver)."""


@dataclass(slots=True)
class Solution:
    """The solved value of a position for its side to move, or what the limits left known.

    `value` is "win", "loss", "draw" or "unknown" (not decided within the limits).
    `score` is the Connect Four score convention for connect4 (from the side to move: +(22-k)
    for a win with its k-th stone, -(22-k) for a loss to the opponent's k-th stone, 0 draw),
    and +1 / 0 / -1 for the other games; 0 when the value is unknown. `plies` is the length of
    the game under optimal play (the winner winning as fast as possible, the loser resisting
    as long as possible), None for a draw, an unknown value or the nim-sum theory (which does
    not give it). `best_moves` holds every optimal move; from the nim-sum theory every winning
    move, and none in a lost position (every move loses).

    `lower` <= exact score <= `upper` always holds: both equal `score` once it is known. When a
    limit stops Connect Four, they are the interval of its null-window search; elsewhere an
    unknown value has -1 and 1 (or a lower bound from the root moves already searched).
    `limit` is None when the solve finished, else what stopped it (`Limit`); with a limit and
    a known score, only the listing of best moves was cut and `best_moves` holds the moves
    confirmed optimal before the stop. `depth` (checkers without a proof) is the number of
    plies the proof search completed: no forced win or loss ends within that many plies.
    `method` says how the position was solved (`Method`).
    """

    value: str
    score: int
    plies: int | None
    best_moves: list[Hashable] = field(default_factory=list)
    nodes: int = 0
    seconds: float = 0.0
    _: KW_ONLY
    lower: int
    upper: int
    method: Method
    limit: Limit | None = None
    depth: int | None = None


@dataclass(frozen=True, slots=True)
class SolveProgress:
    """A report from a running solve, for a progress display.

    `lower` and `upper` bound the score as in `Solution` (Connect Four: the interval of the
    null-window search, narrowing). `depth` is the checkers proof depth completed without a
    proof (None elsewhere); `nodes` the nodes searched so far; `seconds` the time spent on the
    solver's clock.
    """

    lower: int
    upper: int
    depth: int | None
    nodes: int
    seconds: float


Progress: TypeAlias = Callable[[SolveProgress], None]


def terminal_solution(state: State[Any], method: Method) -> Solution:
    """Return the Solution of a finished game: its value for the side to move, 0 plies."""
    outcome = state.outcome()
    assert outcome is not None
    if outcome.winner is None:
        return Solution("draw", 0, 0, lower=0, upper=0, method=method)
    won = outcome.winner == state.to_move
    score = 1 if won else -1
    return Solution("win" if won else "loss", score, 0, lower=score, upper=score, method=method)
