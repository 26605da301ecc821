"""An exact Connect Four solver: negamax with alpha-beta on Pascal Pons' bitboard.

The ideas, and their order, follow Pascal Pons' tutorial "Solving Connect 4: how to build a
perfect AI" (http://blog.gamesolver.org/solving-connect-four/); the code is written for Arena
and for CPython, not translated from his C++:

- the score convention of the tutorial's test protocol (part 2): from the side to move, 0 for a
  draw, ``+(22 - k)`` when the side to move wins with its k-th stone and ``-(22 - k)`` when the
  opponent does; an immediate win with ``n`` stones on the board is worth ``(43 - n) // 2``;
- negamax with alpha-beta (part 4), the window clamped to the best and worst scores still
  reachable from the number of stones left;
- centre-first exploration (part 5), refined by the move sorter that tries first the move
  creating the most winning cells (part 10);
- a transposition table keyed by ``current + mask`` (part 6), storing an upper or a lower bound
  (part 12);
- iterative null-window search over the score interval (part 7): each probe asks "is the
  score above ``med``?" and the interval [min, max] narrows, starting halfway between 0 and
  its ends;
- anticipation of losing moves (part 9): the opponent's winning cells give the forced moves and
  the moves that would let the opponent win on top of them ("possible non-losing moves"), and
  the position is lost at once when no such move exists.

`solve` and `Solver` are the solver; `Solver.solve` may be given a deadline, a node budget and a
progress callback, looked at every CHECK_EVERY negamax calls, and then returns the interval the
score lies in when a limit stops it. bots.solvers.connect4_lessons holds the tutorial's
teaching versions of parts 3-5 (no table, an immediate-win check at every node, every call
counted); they reproduce the node counts the tutorial publishes.

The position is read from the public state (`current`, `mask`, `ply`); the search itself runs on
raw ints with a recursive function (bots.solvers.connect4_search). Nothing here reads a clock
except the one passed in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bots.result import Clock, no_clock
from bots.solvers.connect4_search import (
    CENTRE_ORDER,
    CHECK_EVERY,
    Budget,
    Limit,
    LimitReached,
    Negamax,
    Progress,
    is_finished,
    make_negamax,
    winning_cells,
)
from games.connect4 import (
    BOARD,
    BOTTOM,
    BOTTOM_MASKS,
    CELLS,
    COLUMN_MASKS,
    TOP_MASKS,
    WIDTH,
    ConnectFourState,
    has_four,
)

__all__ = [
    "CENTRE_ORDER",
    "CHECK_EVERY",
    "DEFAULT_TABLE_SIZE",
    "MAX_SCORE",
    "MIN_SCORE",
    "Limit",
    "Progress",
    "SolveResult",
    "Solver",
    "solve",
]

MIN_SCORE = -(CELLS // 2) + 3
"""The worst score: losing to the opponent's fourth stone (-18)."""
MAX_SCORE = (CELLS + 1) // 2 - 3
"""The best score: winning with one's own fourth stone (+18)."""

DEFAULT_TABLE_SIZE = 1 << 20
"""Entries the transposition table holds before it is emptied (about 90 MB when full)."""


@dataclass(frozen=True, slots=True)
class SolveResult:
    """The exact value of a position and every move that keeps it, or how far a limit let it go.

    `score` is from the side to move (see the module docstring); with `weak` it is only its
    sign: +1 win, 0 draw, -1 loss. `best_moves` holds every optimal move as a 0-based column,
    ascending: in strong mode the moves whose score equals `score`, in weak mode the moves that
    keep the outcome (every legal move when the position is lost). It is empty for a finished
    game. `nodes` counts negamax calls (the score search and the best-move checks);
    `seconds` is measured with the clock passed to `solve`.

    `limit` is None when the solve finished. Otherwise a limit stopped it: with `bounds` None
    the score is exact and only the best-move checks were cut, so `best_moves` holds the moves
    confirmed optimal before the stop; with `bounds` set, the score search itself was cut:
    the score lies in the interval `bounds` (lower, upper), `score` is 0 and means nothing, and
    `best_moves` is empty.
    """

    score: int
    best_moves: tuple[int, ...]
    nodes: int
    seconds: float
    weak: bool = False
    limit: Limit | None = None
    bounds: tuple[int, int] | None = None


class Solver:
    """An exact Connect Four solver that keeps its transposition table between positions.

    The table is never emptied between calls (only when it reaches `table_size` entries, or on
    `reset`): entries are exact bounds of positions keyed by the whole position, so they stay
    valid for any later search, and positions of one game share many subtrees. To reproduce
    Pons' test protocol (a fresh table per position, node counts independent of the order of
    the positions) call `reset` before each position. `nodes` holds the negamax calls of the
    last `score` or `solve`. Not thread-safe: one solver per thread.
    """

    __slots__ = ("_table", "nodes", "table_size")

    def __init__(self, table_size: int = DEFAULT_TABLE_SIZE) -> None:
        if table_size < 1:
            raise ValueError(f"table_size must be at least 1, not {table_size}")
        self.table_size = table_size
        self._table: dict[int, int] = {}
        self.nodes = 0

    @property
    def table_entries(self) -> int:
        """The number of positions in the transposition table."""
        return len(self._table)

    def reset(self) -> None:
        """Empty the transposition table."""
        self._table.clear()

    def _searcher(self, budget: Budget | None) -> tuple[Negamax, Callable[[], int]]:
        """Return the negamax of one `score` or `solve` and the count of its calls.

        The compiled solver (bots.core.connect4) overrides this, and the table with it; the
        root search, the best-move checks and the limits around it are shared.
        """
        return make_negamax(self._table, self.table_size, budget)

    def score(self, state: ConnectFourState, *, weak: bool = False) -> int:
        """Return the exact score of `state` from the side to move (the sign only with `weak`).

        The score alone, as in Pons' test protocol; `nodes` then holds the negamax calls.
        """
        negamax, count = self._searcher(None)
        value = _root_score(negamax, state.current, state.mask, state.ply, weak)
        self.nodes = count()
        return value

    def solve(
        self,
        state: ConnectFourState,
        *,
        weak: bool = False,
        clock: Clock = no_clock,
        deadline: float | None = None,
        max_nodes: int | None = None,
        progress: Progress | None = None,
    ) -> SolveResult:
        """Return the exact score of `state` and every optimal move (see `SolveResult`).

        Each legal move is checked with one null-window search of its child against the
        score, so this costs more than `score` alone.

        Limits (none by default): the solve stops once `clock()` reaches `deadline` (looked at
        every CHECK_EVERY negamax calls, so it may overrun by about 10 ms) or after `max_nodes`
        negamax calls, and returns a result whose `limit` says which and whose `bounds` hold the
        score's interval. `progress(lower, upper, nodes)` is called every CHECK_EVERY calls with
        that interval (the sign's, with `weak`) and the calls so far.
        """
        if max_nodes is not None and max_nodes < 1:
            raise ValueError(f"max_nodes must be at least 1, not {max_nodes}")
        if deadline is not None and clock is no_clock:
            raise ValueError("a deadline needs a clock: pass clock=time.perf_counter")
        start = clock()
        cur, mask, ply = state.current, state.mask, state.ply
        budget = None
        if deadline is not None or max_nodes is not None or progress is not None:
            budget = Budget(clock, deadline, max_nodes, progress, _score_range(ply, weak))
        negamax, count = self._searcher(budget)
        try:
            value = _root_score(negamax, cur, mask, ply, weak, budget)
        except LimitReached as stop:
            assert budget is not None  # only a budget raises it
            self.nodes = count()
            bounds = (budget.lower, budget.upper)
            return SolveResult(0, (), self.nodes, clock() - start, weak, stop.limit, bounds)
        best: list[int] = []
        limit: Limit | None = None
        if not is_finished(cur, mask):
            if weak and value < 0:
                best = [c for c in range(WIDTH) if not mask & TOP_MASKS[c]]
            else:
                try:
                    for c in range(WIDTH):
                        if not mask & TOP_MASKS[c] and _child_at_most(
                            negamax, cur, mask, ply, c, -value
                        ):
                            best.append(c)
                except LimitReached as stop:
                    limit = stop.limit
        self.nodes = count()
        return SolveResult(value, tuple(best), self.nodes, clock() - start, weak, limit)


def solve(
    state: ConnectFourState,
    *,
    weak: bool = False,
    clock: Clock = no_clock,
    table_size: int = DEFAULT_TABLE_SIZE,
    deadline: float | None = None,
    max_nodes: int | None = None,
    progress: Progress | None = None,
) -> SolveResult:
    """Return the exact score of `state` and every optimal move, with a fresh table.

    The score is from the side to move: 0 draw, +(22 - k) when it wins with its k-th stone,
    -(22 - k) when the opponent wins with its k-th stone; with `weak` only its sign. A finished
    game scores its result (a loss for the side to move, or 0 for a full board) with no best
    moves. `clock` is read twice, to report `seconds`, and more often with a `deadline`; the
    limits and `progress` are those of `Solver.solve`.
    """
    return Solver(table_size).solve(
        state, weak=weak, clock=clock, deadline=deadline, max_nodes=max_nodes, progress=progress
    )


def _score_range(ply: int, weak: bool) -> tuple[int, int]:
    """Return the widest interval a score can lie in after `ply` stones."""
    if weak:
        return -1, 1
    return max(MIN_SCORE, -((CELLS - ply) >> 1)), min(MAX_SCORE, (CELLS + 1 - ply) >> 1)


def _root_score(
    negamax: Negamax, cur: int, mask: int, ply: int, weak: bool, budget: Budget | None = None
) -> int:
    """Return the score of the root by null-window probes narrowing [min, max] (Pons, part 7).

    Each narrowing is written to `budget`, so that a stop can report the interval.
    """
    if has_four(cur ^ mask):  # the opponent has just won, with stone number `ply`
        return -1 if weak else -((CELLS + 2 - ply) >> 1)
    if mask == BOARD:
        return 0
    if winning_cells(cur, mask) & (mask + BOTTOM):
        return 1 if weak else (CELLS + 1 - ply) >> 1
    threat = winning_cells(cur ^ mask, mask)
    low, high = (-1, 1) if weak else (-((CELLS - ply) >> 1), (CELLS + 1 - ply) >> 1)
    while low < high:
        med = low + (high - low) // 2
        # Probe halfway between 0 and the bound first (halves rounded towards 0): 0 splits
        # win from loss, and strong scores near the extremes are rare.
        if med <= 0 and -(-low // 2) < med:
            med = -(-low // 2)
        elif med >= 0 and high // 2 > med:
            med = high // 2
        result = negamax(cur, mask, ply, med, med + 1, threat)
        if result <= med:
            high = result
        else:
            low = result
        if budget is not None:
            budget.lower, budget.upper = _clamp(low, high, ply, weak)
    return max(-1, min(1, low)) if weak else low


def _clamp(low: int, high: int, ply: int, weak: bool) -> tuple[int, int]:
    """Return the search interval [low, high] within the scores possible after `ply` stones."""
    lowest, highest = _score_range(ply, weak)
    if weak:  # the weak search narrows signs, but its fail-soft results may be wider
        low, high = max(-1, min(1, low)), max(-1, min(1, high))
    return max(lowest, low), min(highest, high)


def _child_at_most(negamax: Negamax, cur: int, mask: int, ply: int, col: int, bound: int) -> bool:
    """Return True if the child after playing `col` scores at most `bound` for its mover."""
    move = (mask + BOTTOM_MASKS[col]) & COLUMN_MASKS[col]
    if winning_cells(cur, mask) & move:
        return -((CELLS + 1 - ply) >> 1) <= bound
    child_cur, child_mask = cur ^ mask, mask | move
    if winning_cells(child_cur, child_mask) & (child_mask + BOTTOM):
        return (CELLS - ply) >> 1 <= bound
    child_threat = winning_cells(cur | move, child_mask)
    return negamax(child_cur, child_mask, ply + 1, bound, bound + 1, child_threat) <= bound
