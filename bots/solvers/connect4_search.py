"""The Connect Four solver's search: negamax with alpha-beta over raw ints, its table, move
sorter and the limits it looks at (bots.solvers.connect4 drives it; the module docstring there
gives the algorithm and its sources).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, TypeAlias

from bots.result import Clock
from games.connect4 import (
    BOARD,
    BOTTOM,
    CELLS,
    COLUMN_MASKS,
    HEIGHT,
    WIDTH,
    has_four,
)

CENTRE_ORDER: tuple[int, ...] = tuple(
    WIDTH // 2 + (1 - 2 * (i % 2)) * (i + 1) // 2 for i in range(WIDTH)
)
"""Columns (0-based) from the centre outwards: 3, 2, 4, 1, 5, 0, 6."""

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
ORDERS: dict[str, tuple[int, ...]] = {
    "left-to-right": tuple(range(WIDTH)),
    "centre": CENTRE_ORDER,
}

Negamax = Callable[[int, int, int, int, int, int], int]
# A call count negamax never reaches: with no limit and no reports it never looks at the clock.
_NEVER = 1 << 62


class LimitReached(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Raised inside negamax to stop a solve at one of its limits."""

    def __init__(self, limit: Limit) -> None:
        super().__init__(limit)
        self.limit: Limit = limit


class Budget:
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
        """Raise LimitReached if a limit is reached, else report progress; return `next_check`."""
        if self.max_nodes is not None and nodes >= self.max_nodes:
            raise LimitReached("nodes")
        if self.deadline is not None and self.clock() >= self.deadline:
            raise LimitReached("time")
        if self.progress is not None:
            self.progress(self.lower, self.upper, nodes)
        return self.next_check(nodes)


def winning_cells(stones: int, mask: int) -> int:
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


def make_negamax(
    table: dict[int, int], table_size: int, budget: Budget | None = None
) -> tuple[Negamax, Callable[[], int]]:
    """Return the solver's negamax bound to `table`, and a function that counts its calls.

    With a `budget`, negamax calls its `check` when the count reaches the budget's next check,
    which raises LimitReached through the whole search to stop it; the table keeps only
    finished results, so it stays valid after a stop.

    negamax(current, mask, ply, alpha, beta, threat) requires that the side to move (whose
    stones are `current`) cannot win with its next stone; `threat` must be the opponent's
    winning cells, ``winning_cells(current ^ mask, mask)``, which the parent has already
    computed when it scored the move. The result r is fail-soft: r <= alpha means the score is
    at most r, r >= beta means it is at least r, otherwise it is exactly r.
    Table entries are ``bound << 1 | 1`` for a lower bound and ``bound << 1`` for an upper one.

    The body inlines `winning_cells` with the shifts of the 7x6 board (7 bits per column) and
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


def is_finished(cur: int, mask: int) -> bool:
    return mask == BOARD or has_four(cur ^ mask)
