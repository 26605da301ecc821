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
score lies in when a limit stops it. `negamax_plain` and `alphabeta_plain` are the tutorial's
teaching versions of parts 3-5 (no table, an immediate-win check at every node, every call
counted); they reproduce the node counts the tutorial publishes.

The position is read from the public state (`current`, `mask`, `ply`); the search itself runs on
raw ints with a private recursive function. Nothing here reads a clock except the one passed in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeAlias

from bots.result import Clock, no_clock
from games.connect4 import (
    BOARD,
    BOTTOM,
    BOTTOM_MASKS,
    CELLS,
    COLUMN_MASKS,
    HEIGHT,
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
    "alphabeta_plain",
    "negamax_plain",
    "solve",
]

MIN_SCORE = -(CELLS // 2) + 3
"""The worst score: losing to the opponent's fourth stone (-18)."""
MAX_SCORE = (CELLS + 1) // 2 - 3
"""The best score: winning with one's own fourth stone (+18)."""

CENTRE_ORDER: tuple[int, ...] = tuple(
    WIDTH // 2 + (1 - 2 * (i % 2)) * (i + 1) // 2 for i in range(WIDTH)
)
"""Columns (0-based) from the centre outwards: 3, 2, 4, 1, 5, 0, 6."""

DEFAULT_TABLE_SIZE = 1 << 20
"""Entries the transposition table holds before it is emptied (about 90 MB when full)."""
CHECK_EVERY = 4096
"""Negamax calls between two looks at the clock and the progress callback (about 10 ms)."""

Limit: TypeAlias = Literal["time", "nodes"]
"""The limit that stopped a solve: its deadline passed, or its node budget ran out."""
Progress: TypeAlias = Callable[[int, int, int], None]
"""Called as progress(lower, upper, nodes) while `Solver.solve` runs (see there)."""

_H1 = HEIGHT + 1
_H2 = HEIGHT + 2
# Bits between the board copies of the move sorter: 49 board bits plus the widest shift (3 x 8),
# so that no shift carries one copy's stones into the next copy's board.
_SPACING = WIDTH * _H1 + 3 * _H2
# The low bits of a candidate move's sort key, priority << 3 | column; the sorter adds the
# number of winning cells << 6 above them. Ties go centre-first: the centre has priority 6.
_PRIORITY_KEYS: tuple[int, ...] = tuple(
    (WIDTH - 1 - i) << 3 | col for i, col in enumerate(CENTRE_ORDER)
)
_ORDERS: dict[str, tuple[int, ...]] = {
    "left-to-right": tuple(range(WIDTH)),
    "centre": CENTRE_ORDER,
}

Negamax = Callable[[int, int, int, int, int, int], int]
# A call count negamax never reaches: with no limit and no reports it never looks at the clock.
_NEVER = 1 << 62


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


class _LimitReached(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Raised inside negamax to stop a solve at one of its limits."""

    def __init__(self, limit: Limit) -> None:
        super().__init__(limit)
        self.limit: Limit = limit


class _Budget:
    """The limits of one `Solver.solve`, looked at by negamax when its call count says so.

    `lower` and `upper` are the root's score interval, kept up to date by `_root_score`, so
    that a stop and a progress report can tell what is known.
    """

    __slots__ = ("clock", "deadline", "lower", "max_nodes", "progress", "upper")

    def __init__(
        self,
        clock: Clock,
        deadline: float | None,
        max_nodes: int | None,
        progress: Progress | None,
        interval: tuple[int, int],
    ) -> None:
        self.clock = clock
        self.deadline = deadline
        self.max_nodes = max_nodes
        self.progress = progress
        self.lower, self.upper = interval

    def next_check(self, nodes: int) -> int:
        """Return the call count at which negamax must call `check` next."""
        step = nodes + CHECK_EVERY
        if self.deadline is None and self.progress is None:
            step = _NEVER
        return step if self.max_nodes is None else min(step, self.max_nodes)

    def check(self, nodes: int) -> int:
        """Raise _LimitReached if a limit is reached, else report progress; return `next_check`."""
        if self.max_nodes is not None and nodes >= self.max_nodes:
            raise _LimitReached("nodes")
        if self.deadline is not None and self.clock() >= self.deadline:
            raise _LimitReached("time")
        if self.progress is not None:
            self.progress(self.lower, self.upper, nodes)
        return self.next_check(nodes)


def _winning_cells(stones: int, mask: int) -> int:
    """Return the empty cells where `stones` would complete four in a row (Pons, part 9).

    For each direction, a cell wins when the three cells on one side, or two on one side and
    one on the other, are `stones`. Cells above the board and sentinel bits are masked off.
    """
    # Vertical: only three below can matter.
    won = (stones << 1) & (stones << 2) & (stones << 3)
    for shift in (_H1, HEIGHT, _H2):  # horizontal, diagonal down-right, diagonal up-right
        pair = (stones << shift) & (stones << 2 * shift)
        won |= pair & ((stones << 3 * shift) | (stones >> shift))
        pair = (stones >> shift) & (stones >> 2 * shift)
        won |= pair & ((stones << shift) | (stones >> 3 * shift))
    return won & (BOARD ^ mask)


def _make_negamax(
    table: dict[int, int], table_size: int, budget: _Budget | None = None
) -> tuple[Negamax, Callable[[], int]]:
    """Return the solver's negamax bound to `table`, and a function that counts its calls.

    With a `budget`, negamax calls its `check` when the count reaches the budget's next check,
    which raises _LimitReached through the whole search to stop it; the table keeps only
    finished results, so it stays valid after a stop.

    negamax(current, mask, ply, alpha, beta, threat) requires that the side to move (whose
    stones are `current`) cannot win with its next stone; `threat` must be the opponent's
    winning cells, ``_winning_cells(current ^ mask, mask)``, which the parent has already
    computed when it scored the move. The result r is fail-soft: r <= alpha means the score is
    at most r, r >= beta means it is at least r, otherwise it is exactly r.
    Table entries are ``bound << 1 | 1`` for a lower bound and ``bound << 1`` for an upper one.

    The body inlines `_winning_cells` with the shifts of the 7x6 board (7 bits per column) and
    scores all candidate moves at once: copy c of the board, `_SPACING` bits apart in one int,
    holds our stones plus the move in column c, so one pass of shifts finds the winning cells
    after every move (Pons' move sorter, part 10, in a single big-int computation).
    """
    nodes = 0
    next_check = _NEVER if budget is None else budget.next_check(0)
    check = budget.check if budget is not None else None
    board = BOARD
    bottom = BOTTOM
    priority_columns = tuple(
        (key, COLUMN_MASKS[key & 7], _SPACING * (key & 7)) for key in _PRIORITY_KEYS
    )
    rep = sum(1 << (_SPACING * col) for col in range(WIDTH))
    spread = sum(COLUMN_MASKS[col] << (_SPACING * col) for col in range(WIDTH))
    column_masks = COLUMN_MASKS

    def negamax(cur: int, mask: int, ply: int, alpha: int, beta: int, threat: int) -> int:
        nonlocal nodes, next_check
        nodes += 1
        # One comparison per call: the clock is read only every CHECK_EVERY calls.
        if nodes >= next_check and check is not None:
            next_check = check(nodes)
        possible = (mask + bottom) & board
        forced = possible & threat
        if forced:
            if forced & (forced - 1):  # two threats to block at once: lost next move
                return -((CELLS - ply) >> 1)
            possible = forced
        # Never play under an opponent's winning cell.
        possible &= ~(threat >> 1)
        if not possible:
            return -((CELLS - ply) >> 1)
        if ply >= CELLS - 2:  # the last two stones cannot change a draw
            return 0
        # Bounds from the stones left: the opponent cannot win with its next stone (we play a
        # non-losing move), nor can we with ours (the caller guarantees it).
        low = -((CELLS - 2 - ply) >> 1)
        if alpha < low:
            alpha = low
            if alpha >= beta:
                return alpha
        high = (CELLS - 1 - ply) >> 1
        if beta > high:
            beta = high
            if alpha >= beta:
                return beta
        key = cur + mask
        entry = table.get(key)
        if entry is not None:
            bound = entry >> 1
            if entry & 1:
                if alpha < bound:
                    alpha = bound
                    if alpha >= beta:
                        return alpha
            elif beta > bound:
                beta = bound
                if alpha >= beta:
                    return beta
        free = board ^ mask
        opp = cur ^ mask
        ply += 1
        if possible & (possible - 1):
            # Move sorter: most winning cells after the move first, ties centre-first. Our
            # winning cells after a move are the child's `threat`.
            keys = []
            mine = (cur * rep) | ((possible * rep) & spread)
            won = (mine << 1) & (mine << 2) & (mine << 3)
            pair = (mine << 7) & (mine << 14)
            won |= pair & ((mine << 21) | (mine >> 7))
            pair = (mine >> 7) & (mine >> 14)
            won |= pair & ((mine << 7) | (mine >> 21))
            pair = (mine << 6) & (mine << 12)
            won |= pair & ((mine << 18) | (mine >> 6))
            pair = (mine >> 6) & (mine >> 12)
            won |= pair & ((mine << 6) | (mine >> 18))
            pair = (mine << 8) & (mine << 16)
            won |= pair & ((mine << 24) | (mine >> 8))
            pair = (mine >> 8) & (mine >> 16)
            won |= pair & ((mine << 8) | (mine >> 24))
            wins = [0] * WIDTH
            for prio, column, shift in priority_columns:
                if possible & column:
                    w = (won >> shift) & free
                    wins[prio & 7] = w
                    keys.append(w.bit_count() << 6 | prio)
            keys.sort(reverse=True)
            for k in keys:
                col = k & 7
                score = -negamax(
                    opp, mask | (possible & column_masks[col]), ply, -beta, -alpha, wins[col]
                )
                if score >= beta:
                    if len(table) >= table_size:
                        table.clear()
                    table[key] = score << 1 | 1
                    return score
                if score > alpha:  # noqa: PLR1730 - a call to max() costs more in this loop
                    alpha = score
        else:
            mine = cur | possible
            won = (mine << 1) & (mine << 2) & (mine << 3)
            pair = (mine << 7) & (mine << 14)
            won |= pair & ((mine << 21) | (mine >> 7))
            pair = (mine >> 7) & (mine >> 14)
            won |= pair & ((mine << 7) | (mine >> 21))
            pair = (mine << 6) & (mine << 12)
            won |= pair & ((mine << 18) | (mine >> 6))
            pair = (mine >> 6) & (mine >> 12)
            won |= pair & ((mine << 6) | (mine >> 18))
            pair = (mine << 8) & (mine << 16)
            won |= pair & ((mine << 24) | (mine >> 8))
            pair = (mine >> 8) & (mine >> 16)
            won |= pair & ((mine << 8) | (mine >> 24))
            score = -negamax(opp, mask | possible, ply, -beta, -alpha, won & free)
            if score >= beta:
                if len(table) >= table_size:
                    table.clear()
                table[key] = score << 1 | 1
                return score
            if score > alpha:  # noqa: PLR1730 - as above
                alpha = score
        if len(table) >= table_size:
            table.clear()
        table[key] = alpha << 1
        return alpha

    def count() -> int:
        return nodes

    return negamax, count


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

    def _searcher(self, budget: _Budget | None) -> tuple[Negamax, Callable[[], int]]:
        """Return the negamax of one `score` or `solve` and the count of its calls.

        The compiled solver (bots.core.connect4) overrides this, and the table with it; the
        root search, the best-move checks and the limits around it are shared.
        """
        return _make_negamax(self._table, self.table_size, budget)

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
            budget = _Budget(clock, deadline, max_nodes, progress, _score_range(ply, weak))
        negamax, count = self._searcher(budget)
        try:
            value = _root_score(negamax, cur, mask, ply, weak, budget)
        except _LimitReached as stop:
            assert budget is not None  # only a budget raises it
            self.nodes = count()
            bounds = (budget.lower, budget.upper)
            return SolveResult(0, (), self.nodes, clock() - start, weak, stop.limit, bounds)
        best: list[int] = []
        limit: Limit | None = None
        if not _is_finished(cur, mask):
            if weak and value < 0:
                best = [c for c in range(WIDTH) if not mask & TOP_MASKS[c]]
            else:
                try:
                    for c in range(WIDTH):
                        if not mask & TOP_MASKS[c] and _child_at_most(
                            negamax, cur, mask, ply, c, -value
                        ):
                            best.append(c)
                except _LimitReached as stop:
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


def _is_finished(cur: int, mask: int) -> bool:
    return mask == BOARD or has_four(cur ^ mask)


def _score_range(ply: int, weak: bool) -> tuple[int, int]:
    """Return the widest interval a score can lie in after `ply` stones."""
    if weak:
        return -1, 1
    return max(MIN_SCORE, -((CELLS - ply) >> 1)), min(MAX_SCORE, (CELLS + 1 - ply) >> 1)


def _root_score(
    negamax: Negamax, cur: int, mask: int, ply: int, weak: bool, budget: _Budget | None = None
) -> int:
    """Return the score of the root by null-window probes narrowing [min, max] (Pons, part 7).

    Each narrowing is written to `budget`, so that a stop can report the interval.
    """
    if has_four(cur ^ mask):  # the opponent has just won, with stone number `ply`
        return -1 if weak else -((CELLS + 2 - ply) >> 1)
    if mask == BOARD:
        return 0
    if _winning_cells(cur, mask) & (mask + BOTTOM):
        return 1 if weak else (CELLS + 1 - ply) >> 1
    threat = _winning_cells(cur ^ mask, mask)
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
    if _winning_cells(cur, mask) & move:
        return -((CELLS + 1 - ply) >> 1) <= bound
    child_cur, child_mask = cur ^ mask, mask | move
    if _winning_cells(child_cur, child_mask) & (child_mask + BOTTOM):
        return (CELLS - ply) >> 1 <= bound
    child_threat = _winning_cells(cur | move, child_mask)
    return negamax(child_cur, child_mask, ply + 1, bound, bound + 1, child_threat) <= bound


# --------------------------------------------------------------------------------------------
# Teaching versions (Pons, parts 3-5): no table, every call counted, immediate win first.
# --------------------------------------------------------------------------------------------


def negamax_plain(state: ConnectFourState) -> tuple[int, int]:
    """Return (score, nodes) by plain negamax over the whole tree (Pons, part 3).

    At each node: a full board is a draw; a playable column that wins at once scores
    (43 - ply) // 2; otherwise the best of the children, left to right. `nodes` counts every
    call, the root included. Exponential: only for positions near the end. Raises ValueError
    on a finished game.
    """
    nodes = 0

    def negamax(cur: int, mask: int, ply: int) -> int:
        nonlocal nodes
        nodes += 1
        if ply == CELLS:
            return 0
        if _winning_cells(cur, mask) & (mask + BOTTOM):
            return (CELLS + 1 - ply) >> 1
        best = -CELLS
        opp = cur ^ mask
        for col in range(WIDTH):
            if not mask & TOP_MASKS[col]:
                best = max(best, -negamax(opp, mask | (mask + BOTTOM_MASKS[col]), ply + 1))
        return best

    _require_unfinished(state)
    score = negamax(state.current, state.mask, state.ply)
    return score, nodes


def alphabeta_plain(
    state: ConnectFourState,
    order: Literal["left-to-right", "centre"] = "left-to-right",
    weak: bool = False,
) -> tuple[int, int]:
    """Return (score, nodes) by alpha-beta without a table (Pons, parts 4 and 5).

    At each node: a full board is a draw; a playable column that wins at once scores
    (43 - ply) // 2; beta is lowered to (41 - ply) // 2, the best score without an immediate
    win, returning at once when the window closes; then the children in `order` ("centre":
    4, 3, 5, 2, 6, 1, 7 in 1-based columns). The root window is [-21, 21], or [-1, 1] with
    `weak`, whose score is then only the sign. `nodes` counts every call, the root included.
    Raises ValueError on a finished game or an unknown order.
    """
    columns = _ORDERS.get(order)
    if columns is None:
        raise ValueError(f"order must be one of {', '.join(_ORDERS)}, not {order!r}")
    tops = [(TOP_MASKS[col], BOTTOM_MASKS[col]) for col in columns]
    nodes = 0

    def negamax(cur: int, mask: int, ply: int, alpha: int, beta: int) -> int:
        nonlocal nodes
        nodes += 1
        if ply == CELLS:
            return 0
        if _winning_cells(cur, mask) & (mask + BOTTOM):
            return (CELLS + 1 - ply) >> 1
        high = (CELLS - 1 - ply) >> 1
        if beta > high:
            beta = high
            if alpha >= beta:
                return beta
        opp = cur ^ mask
        for top, bottom in tops:
            if not mask & top:
                score = -negamax(opp, mask | (mask + bottom), ply + 1, -beta, -alpha)
                if score >= beta:
                    return score
                alpha = max(alpha, score)
        return alpha

    _require_unfinished(state)
    window = (-1, 1) if weak else (-(CELLS // 2), CELLS // 2)
    score = negamax(state.current, state.mask, state.ply, *window)
    return (max(-1, min(1, score)) if weak else score), nodes


def _require_unfinished(state: ConnectFourState) -> None:
    if _is_finished(state.current, state.mask):
        raise ValueError(f"the game {state.history!r} is already over")
