"""What the compiled engine searches (checkers_search, connect4_search) share.

Both are bots.engine.search's negamax on an int64 buffer of their own layout; these are the pieces
that do not depend on the game: the control words' order, counting a node against the stop
flag and the node limit, the transposition table's entry word and its bounds, mate scores
stored from the node, depth-preferred replacement with generations, the triangular principal
variation, killers and the stable insertion of the move ordering.

Every function here takes the offsets of its game's layout as arguments and is compiled with
its callers (lazily: only compiled code calls them, and the callers' constants fold in). The
control words come in the same order in both layouts, from an offset `control` of each, so
that bots.engine.compiled reads either search's by the same names.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic
from numba.np.numpy_support import carray

from bots.scoring import WIN

Buffer = npt.NDArray[np.int64]
i8 = types.int64

CHECK_EVERY = 64
"""Nodes between two looks at the stop flag (bots.engine.search.CHECK_EVERY)."""
INF = 1 << 50
"""Beyond every score (the root's window)."""
MATE_ZONE = WIN - 10_000
"""Scores beyond this are wins or losses by distance (bots.scoring.ENGINE)."""
TT_MOVE_BONUS = 1_000_000_000_000
KILLER_BONUS = 1_000_000
STATIC_WEIGHT = 10 * KILLER_BONUS
EXACT = 0
LOWER = 1
UPPER = 2
NO_CUT = -(1 << 62)
"""`table_cut`'s answer when the entry does not end the node."""

# -- the control words, from the layout's `control` ---------------------------------------------

STOP = 0
"""Set (by another thread) to end the search at its next check."""
NODES = 1
EVALUATIONS = 2
TT_HITS = 3
CUTOFFS = 4
NODE_LIMIT = 5
"""The node whose visit ends the search (-1: none), as bots.engine.search's `max_nodes`."""
ABORTED = 6
GENERATION = 7
TT_MASK = 8
USE_TT = 9
ORDERING = 10

# -- a table entry's data word: score << 32 | depth << 16 | flag << 12 | move --------------------

MOVE_BITS = 0xFFF
"""The stored move (a generation index or a column)."""
DEPTH_SHIFT = 16
DEPTH_BITS = 0xFFFF
"""The depth searched (bots.engine.search.TO_THE_END and beyond fit)."""
FLAG_SHIFT = 12
SCORE_SHIFT = 32


@intrinsic
def _pointer(typing_context: object, address: types.Integer) -> tuple[object, object]:
    """The int64 address of an int64 array's data as a pointer (for an uncounted view)."""

    def codegen(
        context: Any, builder: ir.IRBuilder, signature: Any, args: list[ir.Value]
    ) -> ir.Value:
        return builder.inttoptr(args[0], context.get_value_type(signature.return_type))

    return types.CPointer(i8)(i8), codegen  # type: ignore[no-untyped-call]


@njit(cache=True)
def uncounted(buf: Buffer) -> Buffer:
    """A view of `buf` without numba's reference count, for the recursion (the caller holds the
    array): passing the array itself costs two atomic operations a call."""
    address = buf.ctypes.data
    view: Buffer = carray(_pointer(address), buf.size)  # type: ignore[call-arg]  # typing context
    return view


@njit(cache=True)
def start_search(buf: Buffer, control: int) -> None:
    """Zero the counters and ABORTED of the layout whose control words begin at `control`."""
    buf[control + NODES] = 0
    buf[control + EVALUATIONS] = 0
    buf[control + TT_HITS] = 0
    buf[control + CUTOFFS] = 0
    buf[control + ABORTED] = 0


@njit(cache=True)
def enter(buf: Buffer, control: int) -> bool:
    """Count a node; True (and ABORTED set) when the stop flag, read every CHECK_EVERY nodes,
    or the node limit ends the search here."""
    nodes = buf[control + NODES] + 1
    buf[control + NODES] = nodes
    if (nodes % CHECK_EVERY == 1 and buf[control + STOP] != 0) or nodes == buf[
        control + NODE_LIMIT
    ]:
        buf[control + ABORTED] = 1
        return True
    return False


# -- the transposition table --------------------------------------------------------------------


@njit(cache=True)
def entry_move(data: int) -> int:
    """The move of an entry's data word."""
    move: int = data & MOVE_BITS
    return move


@njit(cache=True)
def entry_depth(data: int) -> int:
    """The depth an entry's data word was searched to."""
    depth: int = (data >> DEPTH_SHIFT) & DEPTH_BITS
    return depth


@njit(cache=True)
def table_cut(data: int, ply: int, alpha: int, beta: int) -> int:
    """The score of an entry (mate scores counted from this node, `ply` below the root) when its
    bound ends the node in the window (alpha, beta); NO_CUT otherwise."""
    score: int = data >> SCORE_SHIFT
    if score > MATE_ZONE:
        score -= ply
    elif score < -MATE_ZONE:
        score += ply
    flag = (data >> FLAG_SHIFT) & 3
    if flag == EXACT or (flag == LOWER and score >= beta) or (flag == UPPER and score <= alpha):
        return score
    return NO_CUT


@njit(cache=True)
def table_store(
    buf: Buffer,
    data_at: int,
    generation: int,
    left: int,
    best: int,
    alpha_start: int,
    beta: int,
    ply: int,
    move: int,
) -> bool:
    """Store a node's result in the entry whose data word is at `data_at` (its generation word
    next), unless it holds a deeper search of this generation; True when it stored (the caller
    writes its key).

    The bound comes from the node's window (`alpha_start`, `beta`); a mate score is stored from
    the node, as bots.engine.search stores it.
    """
    old = buf[data_at + 1]
    if old != 0 and old == generation and left < entry_depth(buf[data_at]):
        return False
    if best <= alpha_start:
        flag = UPPER
    elif best >= beta:
        flag = LOWER
    else:
        flag = EXACT
    stored = best
    if stored > MATE_ZONE:
        stored += ply
    elif stored < -MATE_ZONE:
        stored -= ply
    buf[data_at] = (stored << SCORE_SHIFT) | (left << DEPTH_SHIFT) | (flag << FLAG_SHIFT) | move
    buf[data_at + 1] = generation
    return True


# -- the principal variation, killers, the ordering ---------------------------------------------


@njit(cache=True)
def raise_pv(buf: Buffer, pv: int, pv_length: int, stride: int, ply: int, move: int) -> None:
    """Make `move` and the variation below it the principal variation of `ply` (row `ply` of
    the triangle at `pv`, rows `stride` words apart, lengths at `pv_length`)."""
    row = pv + ply * stride
    below = buf[pv_length + ply + 1]
    buf[row] = move
    for t in range(below):
        buf[row + 1 + t] = buf[row + stride + t]
    buf[pv_length + ply] = below + 1


@njit(cache=True)
def remember_killer(buf: Buffer, killers: int, move: int) -> None:
    """Make `move` the first of the two killers at `killers`, the former first the second."""
    if buf[killers] != move:
        buf[killers + 1] = buf[killers]
        buf[killers] = move


@njit(cache=True)
def insert(buf: Buffer, order: int, values: int, n: int, move: int, value: int) -> None:
    """Insert `move` of ordering `value` into the `n` moves at `order` (their values at
    `values`), best first and stable: after every move of a value at least its own."""
    j = n
    while j > 0 and buf[values + j - 1] < value:
        buf[values + j] = buf[values + j - 1]
        buf[order + j] = buf[order + j - 1]
        j -= 1
    buf[values + j] = value
    buf[order + j] = move


def principal_variation(buf: Buffer, pv_length: int, pv: int) -> list[int]:
    """The root's principal variation (row 0 of the triangle at `pv`), as stored moves."""
    length = int(buf[pv_length])
    return [int(move) for move in buf[pv : pv + length]]
