"""The house engine's Connect Four search compiled: negamax alpha-beta, node for node
bots.engine.search's.

`bots.engine.search.AlphaBetaEngine` stays the reference; this is the same algorithm on
games.connect4's bitboard (`current`: the side to move's stones, `mask`: all stones), so that
for the same position, depth, table and ordering state it visits the same nodes in the same
order and returns the same score, move, principal variation and counts:

- depth semantics: `left` plies, then the evaluation (Connect Four has no quiescence);
- terminal scores of bots.scoring.ENGINE (a loss `ply - WIN`, a full board 0);
- the transposition table of bots.engine.table under bots.evaluation.connect4.canonical_key (the
  smaller Pons key of the position and its mirror image; a key below 2**61 hashes to itself,
  so its slot is `key & mask` in both tables), EXACT / LOWER / UPPER, only an entry of exactly
  this depth ends a node, mate scores stored from the node, depth-preferred replacement with
  generations; the stored move is a column, used as the Python engine uses it (unmirrored);
- move ordering: the table move, the centre-first column order (weighted 10,000,000), killers
  (+1,000,000), history (left * left per cut-off, per side and column), ties left to right;
- the evaluations `threats` and `lines` of bots.evaluation.connect4, in integers, one side at
  a time where the Python version packs both sides in lanes of one integer.

Everything lives in one int64 buffer per engine (`new_buffer`): the control words (counters,
node limit, stop flag), killers and history, the principal variation table, the move order per
ply, and the transposition table. The stop flag is written by another thread while the search
runs without the GIL; it is read every CHECK_EVERY nodes, and an aborted search unwinds with
ABORTED set. Moves are columns (0-6) everywhere.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit, types

from bots.core import search as shared
from bots.core.bits import popcount as _popcount
from bots.core.connect4 import has_four, winning_cells
from bots.core.search import (
    INF,
    KILLER_BONUS,
    MATE_ZONE,
    NO_CUT,
    STATIC_WEIGHT,
    TT_MOVE_BONUS,
    enter,
    entry_depth,
    entry_move,
    insert,
    raise_pv,
    remember_killer,
    start_search,
    table_cut,
    table_store,
    uncounted,
)
from bots.evaluation import connect4 as evaluation
from bots.scoring import WIN
from games.connect4 import BOARD, BOTTOM, CELLS, H1, HEIGHT, WIDTH, ConnectFourState

Buffer = npt.NDArray[np.int64]
i8 = types.int64
i8a = types.Array(types.int64, 1, "C")

PLIES = CELLS + 1
"""Plies a search can reach below its root, the root included (a full board ends it)."""
TO_THE_END = 1000
"""bots.engine.search.TO_THE_END: from this depth on, table entries are exact to the end."""
MAX_DEPTH = shared.DEPTH_BITS
"""The deepest search the table's depth field holds."""
THREATS = 0
LINES = 1
"""The evaluations, by kind."""

# -- the buffer's layout ------------------------------------------------------------------------

CONTROL = 0
"""The control words of bots.core.search, at CONTROL + each."""
STOP = CONTROL + shared.STOP
NODES = CONTROL + shared.NODES
EVALUATIONS = CONTROL + shared.EVALUATIONS
TT_HITS = CONTROL + shared.TT_HITS
CUTOFFS = CONTROL + shared.CUTOFFS
NODE_LIMIT = CONTROL + shared.NODE_LIMIT
ABORTED = CONTROL + shared.ABORTED
GENERATION = CONTROL + shared.GENERATION
TT_MASK = CONTROL + shared.TT_MASK
USE_TT = CONTROL + shared.USE_TT
ORDERING = CONTROL + shared.ORDERING
KIND = CONTROL + 11
"""The evaluation: THREATS or LINES."""
CONTROL_WORDS = 16

KILLERS = CONTROL_WORDS
"""Two killer columns per ply (-1: none)."""
HISTORY = KILLERS + 2 * PLIES
"""History per side and column: side * WIDTH + column."""
PV_STRIDE = PLIES + 1
PV_LENGTH = HISTORY + 2 * WIDTH
PV = PV_LENGTH + PV_STRIDE
"""The triangular principal variation: per ply, the columns of its moves."""
ORDER = PV + PV_STRIDE * PV_STRIDE
"""Per ply: its moves in search order (WIDTH columns), then their ordering values."""
TABLE = ORDER + PLIES * 2 * WIDTH
ENTRY = 3
"""Words per table slot: the key, the data word of bots.core.search (the move a column), the
generation (0: empty)."""

_COLUMN_ORDER = np.array(evaluation._COLUMN_ORDER, np.int64)
_COLUMN_BLOCKS = np.array(evaluation._COLUMN_BLOCKS, np.int64)
_GOOD_ROWS = np.array(evaluation.GOOD_ROWS, np.int64)
_SINGLE = evaluation.SINGLE
_AT_LEAST_TWO = evaluation.DOUBLE - evaluation.SINGLE
_EXACTLY_THREE = evaluation.TRIPLE - evaluation.DOUBLE
_THREAT = evaluation.THREAT
_GOOD_THREAT = evaluation.GOOD_THREAT
_IMMEDIATE = evaluation.IMMEDIATE
_ZUGZWANG = evaluation.ZUGZWANG
_STACKED = evaluation.STACKED
_LIVE_THREAT = evaluation.LIVE_THREAT
_GOOD_LIVE_THREAT = evaluation.GOOD_LIVE_THREAT
_ROWS_ABOVE_BOTTOM = HEIGHT - 1


# -- the table's key ----------------------------------------------------------------------------


@njit(i8(i8), cache=True)
def canonical_key(key: int) -> int:
    """The smaller of the Pons key `key` and its mirror image's (connect4.canonical_key)."""
    mirrored: int = (
        ((key & _COLUMN_BLOCKS[0]) << 6 * H1)
        | ((key & _COLUMN_BLOCKS[1]) << 4 * H1)
        | ((key & _COLUMN_BLOCKS[2]) << 2 * H1)
        | (key & _COLUMN_BLOCKS[3])
        | ((key & _COLUMN_BLOCKS[4]) >> 2 * H1)
        | ((key & _COLUMN_BLOCKS[5]) >> 4 * H1)
        | ((key & _COLUMN_BLOCKS[6]) >> 6 * H1)
    )
    return key if key <= mirrored else mirrored


# -- evaluations --------------------------------------------------------------------------------


@njit(cache=True)
def _line_score(stones: int, free: int) -> int:
    """The weighted open windows of one side (connect4._line_score on one lane)."""
    total = 0
    for shift in (1, H1, HEIGHT, H1 + 1):
        double_shift = 2 * shift
        pair = free & (free >> shift)
        windows = pair & (pair >> double_shift)
        next_stones = stones >> shift
        odd_pair = stones ^ next_stones
        both = stones & next_stones
        far_odd = odd_pair >> double_shift
        low = odd_pair ^ far_odd
        two = windows & (both | (both >> double_shift) | (odd_pair & far_odd))
        total += (
            _SINGLE * _popcount(windows & (low | two))
            + _AT_LEAST_TWO * _popcount(two)
            + _EXACTLY_THREE * _popcount(two & low)
        )
    return total


@njit(cache=True)
def _lines_of_sides(mine: int, theirs: int) -> int:
    """Both sides' weighted open windows, mine minus theirs."""
    return _line_score(mine, BOARD ^ theirs) - _line_score(theirs, BOARD ^ mine)


@njit(i8(i8, i8, i8), cache=True)
def lines(current: int, mask: int, ply: int) -> int:
    """The "lines" evaluation (connect4._lines_fast) for the side to move."""
    theirs = current ^ mask
    empty = BOARD ^ mask
    my_threats = winning_cells(current, empty)
    their_threats = winning_cells(theirs, empty)
    me = ply & 1
    return (
        _lines_of_sides(current, theirs)
        + _THREAT * (_popcount(my_threats) - _popcount(their_threats))
        + _GOOD_THREAT
        * (_popcount(my_threats & _GOOD_ROWS[me]) - _popcount(their_threats & _GOOD_ROWS[1 - me]))
    )


@njit(cache=True)
def _above(cells: int) -> int:
    """Every cell above one of `cells` in its column (connect4._above)."""
    filled = (cells << 1) & BOARD
    for _ in range(_ROWS_ABOVE_BOTTOM - 1):
        filled |= (filled << 1) & BOARD
    return filled


@njit(cache=True)
def _threats_bits(mine: int, mask: int, ply: int) -> int:
    """The static "threats" sum for the side to move (connect4._threats_bits)."""
    theirs = mine ^ mask
    empty = BOARD ^ mask
    playable = (mask + BOTTOM) & BOARD
    my_threats = winning_cells(mine, empty)
    their_threats = winning_cells(theirs, empty)
    if (my_threats & playable) != 0:
        now = 1
    else:
        forced = their_threats & playable
        now = -1 if (forced & (forced - 1)) != 0 or ((forced << 1) & their_threats) != 0 else 0
    my_lasting = my_threats & ~playable
    their_lasting = their_threats & ~playable
    my_live = my_lasting & ~_above(their_lasting)
    their_live = their_lasting & ~_above(my_lasting)
    me = ply & 1
    my_good = my_live & _GOOD_ROWS[me]
    their_good = their_live & _GOOD_ROWS[1 - me]
    if me == 0:
        first_good = my_good
        second_good = their_good
    else:
        first_good = their_good
        second_good = my_good
    verdict = 1 if first_good != 0 else -1 if second_good != 0 else 0
    return (
        _lines_of_sides(mine, theirs)
        + _IMMEDIATE * now
        + _ZUGZWANG * (verdict if me == 0 else -verdict)
        + _STACKED
        * (_popcount(my_live & (my_lasting >> 1)) - _popcount(their_live & (their_lasting >> 1)))
        + _LIVE_THREAT * (_popcount(my_live) - _popcount(their_live))
        + _GOOD_LIVE_THREAT * (_popcount(my_good) - _popcount(their_good))
    )


@njit(i8(i8, i8, i8), cache=True)
def threats(current: int, mask: int, ply: int) -> int:
    """The "threats" evaluation (connect4._threats_fast): after the forced blocks."""
    mine = current
    sign = 1
    while True:
        theirs = mine ^ mask
        empty = BOARD ^ mask
        playable = (mask + BOTTOM) & BOARD
        if playable == 0 or has_four(theirs) or (winning_cells(mine, empty) & playable) != 0:
            break
        forced = winning_cells(theirs, empty) & playable
        if forced == 0 or (forced & (forced - 1)) != 0:
            break
        mine = theirs
        mask |= forced
        ply += 1
        sign = -sign
    return sign * _threats_bits(mine, mask, ply)


@njit(i8(i8a, i8, i8, i8), cache=True)
def evaluate(buf: Buffer, current: int, mask: int, ply: int) -> int:
    """The buffer's evaluation of a non-terminal position `ply` stones in, for the side to move."""
    if buf[KIND] == LINES:
        return lines(current, mask, ply)
    return threats(current, mask, ply)


# -- the search ---------------------------------------------------------------------------------


@njit(cache=True)
def _order(buf: Buffer, order: int, mask: int, tt_move: int, side: int, ply: int) -> int:
    """Write the playable columns in search order at `order` and return how many: the table
    move, then by static order, killers and history, ties left to right (engine._ordered)."""
    values = order + WIDTH
    killer_a = buf[KILLERS + 2 * ply]
    killer_b = buf[KILLERS + 2 * ply + 1]
    history = HISTORY + WIDTH * side
    possible = (mask + BOTTOM) & BOARD
    n = 0
    for col in range(WIDTH):
        if (possible >> (col * H1)) & ((1 << H1) - 1) == 0:
            continue
        if col == tt_move:
            value = TT_MOVE_BONUS
        else:
            value = _COLUMN_ORDER[col] * STATIC_WEIGHT
            if col in (killer_a, killer_b):
                value += KILLER_BONUS
            value += buf[history + col]
        insert(buf, order, values, n, col, value)
        n += 1
    return n


@njit(i8(i8a, i8, i8, i8, i8, i8, i8, i8), cache=True, nogil=True)
def _negamax(
    buf: Buffer, current: int, mask: int, stones: int, left: int, alpha: int, beta: int, ply: int
) -> int:
    """Search a node (bots.engine.search's negamax) `stones` stones in, `ply` plies below the
    root."""
    if enter(buf, CONTROL):
        return 0
    buf[PV_LENGTH + ply] = 0
    if has_four(current ^ mask):
        return ply - WIN
    if mask == BOARD:
        return 0
    if left <= 0:
        buf[EVALUATIONS] += 1
        return evaluate(buf, current, mask, stones)
    alpha_start = alpha
    tt_move = -1
    use_tt = buf[USE_TT] != 0
    slot = 0
    key = 0
    if use_tt:
        key = canonical_key(current + mask)
        slot = TABLE + ENTRY * (key & buf[TT_MASK])
        if buf[slot + 2] != 0 and buf[slot] == key:
            buf[TT_HITS] += 1
            data = buf[slot + 1]
            tt_move = entry_move(data)
            depth = entry_depth(data)
            if ply > 0 and (depth == left or (left >= TO_THE_END and depth >= TO_THE_END)):
                score = table_cut(data, ply, alpha, beta)
                if score != NO_CUT:
                    return score
    order = ORDER + ply * 2 * WIDTH
    side = stones & 1
    ordering = buf[ORDERING] != 0
    possible = (mask + BOTTOM) & BOARD
    n = 0
    if ordering:
        n = _order(buf, order, mask, tt_move, side, ply)
    else:
        listed = False
        for col in range(WIDTH):
            if (possible >> (col * H1)) & ((1 << H1) - 1) != 0:
                buf[order + n] = col
                n += 1
                listed = listed or col == tt_move
        if listed and n > 1:
            # The table move first, the others in their order.
            j = 0
            while buf[order + j] != tt_move:
                j += 1
            while j > 0:
                buf[order + j] = buf[order + j - 1]
                j -= 1
            buf[order] = tt_move
    child_left = left - 1
    child_ply = ply + 1
    child_stones = stones + 1
    best = -INF
    best_move = buf[order]
    for j in range(n):
        col = buf[order + j]
        child_mask = mask | (mask + (1 << (col * H1)))
        score = -_negamax(
            buf, current ^ mask, child_mask, child_stones, child_left, -beta, -alpha, child_ply
        )
        if buf[ABORTED] != 0:
            return 0
        if score > best:
            best = score
            best_move = col
            if score > alpha:
                alpha = score
                raise_pv(buf, PV, PV_LENGTH, PV_STRIDE, ply, col)
                if alpha >= beta:
                    buf[CUTOFFS] += 1
                    if ordering:
                        remember_killer(buf, KILLERS + 2 * ply, col)
                        buf[HISTORY + WIDTH * side + col] += left * left
                    break
    if use_tt and table_store(
        buf, slot + 1, buf[GENERATION], left, best, alpha_start, beta, ply, best_move
    ):
        buf[slot] = key
    return best


@njit(i8(i8a, i8, i8, i8, i8), cache=True, nogil=True)
def search(buf: Buffer, current: int, mask: int, stones: int, depth: int) -> int:
    """Search the root (`stones` stones in) to `depth`; return its score. The counters start at
    0; ABORTED says whether the stop or the node limit ended it."""
    start_search(buf, CONTROL)
    alpha = -INF
    beta = INF
    ply = 0
    score: int = _negamax(uncounted(buf), current, mask, stones, depth, alpha, beta, ply)
    return score


# -- from Python --------------------------------------------------------------------------------


def new_buffer(table_size: int, kind: int) -> Buffer:
    """Return an engine's buffer evaluating with `kind` (THREATS or LINES), with a table of
    `table_size` slots (a power of two; 0: no table) and empty killers, history and table."""
    buf = np.zeros(TABLE + ENTRY * max(table_size, 1), np.int64)
    buf[TT_MASK] = max(table_size, 1) - 1
    buf[KIND] = kind
    buf[KILLERS : KILLERS + 2 * PLIES] = -1
    return buf


def principal_variation(buf: Buffer) -> list[int]:
    """The root's principal variation, as columns."""
    return shared.principal_variation(buf, PV_LENGTH, PV)


def root_order(buf: Buffer, state: ConnectFourState) -> list[int]:
    """The root's columns in the order of bots.engine.search._ordered at ply 0 without a table move
    (iterative deepening's move when no iteration completed)."""
    tt_move = -1
    ply = 0
    n = _order(buf, ORDER, state.mask, tt_move, state.ply & 1, ply)
    return [int(col) for col in buf[ORDER : ORDER + n]]


__all__ = [
    "INF",
    "MATE_ZONE",
    "evaluate",
    "lines",
    "new_buffer",
    "principal_variation",
    "root_order",
    "search",
    "threats",
]
