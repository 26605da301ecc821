"""The teaching versions of the Connect Four solver (Pascal Pons' tutorial, parts 3-5): plain
negamax and alpha-beta without a table, an immediate-win check at every node and every call
counted; they reproduce the node counts the tutorial publishes.
"""

from __future__ import annotations

from typing import Literal

from bots.solvers.connect4_search import ORDERS, is_finished, winning_cells
from games.connect4 import (
    BOTTOM,
    BOTTOM_MASKS,
    CELLS,
    TOP_MASKS,
    WIDTH,
    ConnectFourState,
)


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
        if winning_cells(cur, mask) & (mask + BOTTOM):
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
    columns = ORDERS.get(order)
    if columns is None:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, not {order!r}")
    tops = [(TOP_MASKS[col], BOTTOM_MASKS[col]) for col in columns]
    nodes = 0

    def negamax(cur: int, mask: int, ply: int, alpha: int, beta: int) -> int:
        nonlocal nodes
        nodes += 1
        if ply == CELLS:
            return 0
        if winning_cells(cur, mask) & (mask + BOTTOM):
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
    if is_finished(state.current, state.mask):
        raise ValueError(f"the game {state.history!r} is already over")
