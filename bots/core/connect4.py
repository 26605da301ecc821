"""Connect Four compiled: the rules on Pons' bitboard, perft, and the exact solver's search.

The position is games.connect4's: `current` (the stones of the side to move) and `mask` (all
stones), 7 bits a column from column 0 in the lowest bits, the seventh bit of each column an
always-empty sentinel. Every integer is an int64 (the boards use 49 bits).

The solver is bots.solvers.connect4's negamax, node for node: the same pruning, table entries,
move order and call count, so the scores, the node counts and the points where a deadline or
a node budget stops a search are the same. Its root search (the null-window probes), its
best-move checks and its limits are the Python solver's own code: `Solver` overrides only the
search under them. The search is a loop over an explicit stack in one int64 buffer rather than
a recursion, so that it can stop after any call and go on from there: the Python side looks
at the clock and reports progress at the very calls the Python solver does (every CHECK_EVERY),
and a search without limits runs to its end without ever coming back.

The buffer holds a header, a frame per ply of the search (its window, its moves in sorted
order and each move's winning cells), the transposition table (open addressing, the whole key
kept, so a lookup answers exactly as the Python solver's dict) and the list of the table's
used slots, so that emptying the table costs its entries, not its size.

Every compiled function has an explicit signature: numba compiles them at import and caches
the machine code, and a recursive function loaded from the cache needs one. A recursive
function never passes itself a literal either: loaded from the cache, it would crash.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt
from numba import njit, types

from bots.core.bits import popcount as _popcount
from bots.solvers import connect4 as connect4_solver
from bots.solvers import connect4_search
from bots.solvers.connect4 import CENTRE_ORDER, DEFAULT_TABLE_SIZE
from games.connect4 import BOARD, BOTTOM, CELLS, COLUMN_MASKS, H1, WIDTH, ConnectFourState

Buffer = npt.NDArray[np.int64]
i8 = types.int64
i8a = types.Array(types.int64, 1, "C")

# The header of the search buffer.
_NODES = 0  # negamax calls since the searcher was made
_NEXT_CHECK = 1  # the call count at which the search stops for the Python side
_ENTRIES = 2  # positions in the table
_TABLE_SIZE = 3  # positions the table holds before it is emptied
_CAPACITY_MASK = 4  # slots of the table, minus one (a power of two)
_SP = 5  # frames on the stack
_PAUSED = 6  # 1 when the search stopped inside a call it has counted but not searched
_RESULT = 7  # the value of the finished search
_ARGS = 8  # the call being entered: current, mask, ply, alpha, beta, threat
_FRAMES = 16

# A frame: the position's key and window, its moves and the one being searched.
_KEY = 0
_ALPHA = 1
_BETA = 2
_COUNT = 3  # moves to search
_INDEX = 4  # the move being searched
_OPP = 5  # the opponent's stones, the children's `current`
_MASK = 6
_POSSIBLE = 7  # the moves, one bit each
_CHILD_PLY = 8
_ORDER = 9  # the sort keys of the moves, best first; a key's low 3 bits are its column
_WINS = 16  # by column: our winning cells after playing there, the child's `threat`
_FRAME = 24
_MAX_FRAMES = CELLS + 2
_TABLE_AT = _FRAMES + _MAX_FRAMES * _FRAME

_NEVER = 1 << 62
"""A call count no search reaches: a search without limits never stops for the Python side."""
_HASH = -7046029254386353131
"""Fibonacci hashing's multiplier (2^64 / golden ratio) as an int64: it spreads the keys."""
_BIAS = 64
"""Added to a bound in a table entry so that its low byte is positive."""

COLUMNS = np.array(COLUMN_MASKS, np.int64)
CENTRE = np.array(CENTRE_ORDER, np.int64)
PRIORITIES = np.array([(WIDTH - 1 - i) << 3 | col for i, col in enumerate(CENTRE_ORDER)], np.int64)
"""The low bits of a move's sort key as bots.solvers.connect4 makes them: ties go centre-first."""


@njit(types.boolean(i8), cache=True)
def has_four(stones: int) -> bool:
    """True when the bitboard `stones` holds four in a row (games.connect4.has_four)."""
    m = stones & (stones >> H1)
    if (m & (m >> (2 * H1))) != 0:
        return True
    m = stones & (stones >> (H1 - 1))
    if (m & (m >> (2 * (H1 - 1)))) != 0:
        return True
    m = stones & (stones >> (H1 + 1))
    if (m & (m >> (2 * (H1 + 1)))) != 0:
        return True
    m = stones & (stones >> 1)
    return (m & (m >> 2)) != 0


@njit(i8(i8, i8), cache=True)
def winning_cells(stones: int, free: int) -> int:
    """Return the cells of `free` where `stones` would complete four in a row.

    bots.solvers.connect4._winning_cells with `free` the empty cells: three in a line on one
    side, or two on one side and one on the other, in each direction.
    """
    won = (stones << 1) & (stones << 2) & (stones << 3)
    for shift in (H1, H1 - 1, H1 + 1):
        pair = (stones << shift) & (stones << (2 * shift))
        won |= pair & ((stones << (3 * shift)) | (stones >> shift))
        pair = (stones >> shift) & (stones >> (2 * shift))
        won |= pair & ((stones << shift) | (stones >> (3 * shift)))
    return won & free


# -- perft -------------------------------------------------------------------------------------


@njit(i8(i8, i8, i8), cache=True)
def _perft(current: int, mask: int, depth: int) -> int:
    """Count the leaves `depth` >= 1 plies below a position whose game is not over."""
    possible = (mask + BOTTOM) & BOARD
    if depth == 1:
        return _popcount(possible)
    child_depth = depth - 1
    opponent = current ^ mask
    total = 0
    while possible != 0:
        move = possible & -possible
        possible ^= move
        # A winning move ends the game: its subtree has no leaf below it.
        if not has_four(current | move):
            total += _perft(opponent, mask | move, child_depth)
    return total


def perft(state: ConnectFourState, depth: int) -> int:
    """Return perft(`state`, `depth`) as games.perft counts it."""
    if depth < 0:
        raise ValueError(f"perft depth must be >= 0, not {depth}")
    if depth == 0:
        return 1
    if has_four(state.current ^ state.mask):
        return 0
    return int(_perft(state.current, state.mask, depth))


# -- the solver's table ------------------------------------------------------------------------


@njit(i8(i8a, i8), cache=True)
def _slot(buf: Buffer, key: int) -> int:
    """Return the table slot holding `key`, or the empty slot where it would go."""
    capacity_mask: int = buf[_CAPACITY_MASK]
    slot = ((key * _HASH) >> 24) & capacity_mask
    while True:
        entry = buf[_TABLE_AT + slot]
        if entry == 0 or (entry >> 8) == key:
            return slot
        slot = (slot + 1) & capacity_mask


@njit(types.void(i8a), cache=True)
def _clear(buf: Buffer) -> None:
    """Empty the table, visiting only the slots in use."""
    log = _TABLE_AT + buf[_CAPACITY_MASK] + 1
    for i in range(buf[_ENTRIES]):
        buf[_TABLE_AT + buf[log + i]] = 0
    buf[_ENTRIES] = 0


@njit(types.void(i8a, i8, i8, i8), cache=True)
def _store(buf: Buffer, key: int, bound: int, lower: int) -> None:
    """Store a bound of the position `key` (`lower` 1: a lower bound, 0: an upper bound).

    As the Python solver's dict: a full table is emptied first, a key stored again replaced.
    """
    if buf[_ENTRIES] >= buf[_TABLE_SIZE]:
        _clear(buf)
    slot = _slot(buf, key)
    if buf[_TABLE_AT + slot] == 0:
        log = _TABLE_AT + buf[_CAPACITY_MASK] + 1
        buf[log + buf[_ENTRIES]] = slot
        buf[_ENTRIES] += 1
    buf[_TABLE_AT + slot] = (key << 8) | ((bound + _BIAS) << 1) | lower


# -- the solver's search -----------------------------------------------------------------------


@njit(types.void(i8a, i8, i8, i8, i8, i8, i8), cache=True)
def _enter(
    buf: Buffer, current: int, mask: int, ply: int, alpha: int, beta: int, threat: int
) -> None:
    """Set up a search of negamax(current, mask, ply, alpha, beta, threat) for `_run`."""
    buf[_SP] = 0
    buf[_PAUSED] = 0
    buf[_ARGS] = current
    buf[_ARGS + 1] = mask
    buf[_ARGS + 2] = ply
    buf[_ARGS + 3] = alpha
    buf[_ARGS + 4] = beta
    buf[_ARGS + 5] = threat


@njit(i8(i8a), cache=True)
def _run(buf: Buffer) -> int:
    """Search on from where the buffer says; return 1 when done (the value in the buffer's
    result), 0 when the call count reached the buffer's next check (`_run` again goes on).

    bots.solvers.connect4_search.make_negamax's negamax, with its recursion on the buffer's stack:
    a call is entered with its arguments in locals; a position that needs its moves searched
    pushes a frame and enters its first child; a value is returned to the frame on top.
    """
    nodes = buf[_NODES]
    next_check = buf[_NEXT_CHECK]
    sp = buf[_SP]
    current = buf[_ARGS]
    mask = buf[_ARGS + 1]
    ply = buf[_ARGS + 2]
    alpha = buf[_ARGS + 3]
    beta = buf[_ARGS + 4]
    threat = buf[_ARGS + 5]
    counted = buf[_PAUSED] == 1
    buf[_PAUSED] = 0
    calling = True
    value = 0
    while True:
        if calling:
            if not counted:
                nodes += 1
                if nodes >= next_check:
                    buf[_NODES] = nodes
                    buf[_SP] = sp
                    buf[_PAUSED] = 1
                    buf[_ARGS] = current
                    buf[_ARGS + 1] = mask
                    buf[_ARGS + 2] = ply
                    buf[_ARGS + 3] = alpha
                    buf[_ARGS + 4] = beta
                    buf[_ARGS + 5] = threat
                    return 0
            counted = False
            calling = False
            possible = (mask + BOTTOM) & BOARD
            forced = possible & threat
            if forced != 0:
                if (forced & (forced - 1)) != 0:  # two threats to block: lost next move
                    value = -((CELLS - ply) >> 1)
                    continue
                possible = forced
            possible &= ~(threat >> 1)  # never play under the opponent's winning cell
            if possible == 0:
                value = -((CELLS - ply) >> 1)
                continue
            if ply >= CELLS - 2:
                value = 0
                continue
            low = -((CELLS - 2 - ply) >> 1)
            if alpha < low:
                alpha = low
                if alpha >= beta:
                    value = alpha
                    continue
            high = (CELLS - 1 - ply) >> 1
            if beta > high:
                beta = high
                if alpha >= beta:
                    value = beta
                    continue
            key = current + mask
            entry = buf[_TABLE_AT + _slot(buf, key)]
            if entry != 0:
                bound = ((entry & 255) >> 1) - _BIAS
                if (entry & 1) != 0:
                    if alpha < bound:
                        alpha = bound
                        if alpha >= beta:
                            value = alpha
                            continue
                elif beta > bound:
                    beta = bound
                    if alpha >= beta:
                        value = beta
                        continue
            free = BOARD ^ mask
            f = _FRAMES + sp * _FRAME
            count = 0
            if (possible & (possible - 1)) != 0:
                # Most winning cells after the move first, ties centre-first (insertion sort).
                for i in range(WIDTH):
                    col = CENTRE[i]
                    move = possible & COLUMNS[col]
                    if move != 0:
                        wins = winning_cells(current | move, free)
                        buf[f + _WINS + col] = wins
                        sort_key = (_popcount(wins) << 6) | PRIORITIES[i]
                        j = count
                        while j > 0 and buf[f + _ORDER + j - 1] < sort_key:
                            buf[f + _ORDER + j] = buf[f + _ORDER + j - 1]
                            j -= 1
                        buf[f + _ORDER + j] = sort_key
                        count += 1
            else:
                col = _popcount(possible - 1) // H1
                buf[f + _WINS + col] = winning_cells(current | possible, free)
                buf[f + _ORDER] = col
                count = 1
            buf[f + _KEY] = key
            buf[f + _ALPHA] = alpha
            buf[f + _BETA] = beta
            buf[f + _COUNT] = count
            buf[f + _INDEX] = 0
            buf[f + _OPP] = current ^ mask
            buf[f + _MASK] = mask
            buf[f + _POSSIBLE] = possible
            buf[f + _CHILD_PLY] = ply + 1
            sp += 1
            col = buf[f + _ORDER] & 7
            current = buf[f + _OPP]
            mask = mask | (possible & COLUMNS[col])
            ply = ply + 1
            alpha, beta = -beta, -alpha
            threat = buf[f + _WINS + col]
            calling = True
            continue
        # A value returns to the frame on top, or ends the search.
        if sp == 0:
            buf[_NODES] = nodes
            buf[_SP] = 0
            buf[_RESULT] = value
            return 1
        f = _FRAMES + (sp - 1) * _FRAME
        score = -value
        beta = buf[f + _BETA]
        if score >= beta:
            _store(buf, buf[f + _KEY], score, 1)
            value = score
            sp -= 1
            continue
        alpha = buf[f + _ALPHA]
        if score > alpha:
            alpha = score
            buf[f + _ALPHA] = alpha
        index = buf[f + _INDEX] + 1
        if index < buf[f + _COUNT]:
            buf[f + _INDEX] = index
            col = buf[f + _ORDER + index] & 7
            current = buf[f + _OPP]
            mask = buf[f + _MASK] | (buf[f + _POSSIBLE] & COLUMNS[col])
            ply = buf[f + _CHILD_PLY]
            alpha, beta = -beta, -alpha
            threat = buf[f + _WINS + col]
            calling = True
            continue
        _store(buf, buf[f + _KEY], alpha, 0)
        value = alpha
        sp -= 1


@njit(i8(i8a, i8, i8, i8, types.boolean), cache=True)
def _score(buf: Buffer, current: int, mask: int, ply: int, weak: bool) -> int:
    """Return the score of a position by null-window probes, searching without limits.

    bots.solvers.connect4._root_score, compiled: the same probes in the same order.
    """
    if has_four(current ^ mask):  # the opponent has just won, with stone number `ply`
        return -1 if weak else -((CELLS + 2 - ply) >> 1)
    if mask == BOARD:
        return 0
    free = BOARD ^ mask
    if (winning_cells(current, free) & (mask + BOTTOM)) != 0:
        return 1 if weak else (CELLS + 1 - ply) >> 1
    threat = winning_cells(current ^ mask, free)
    if weak:
        low = -1
        high = 1
    else:
        low = -((CELLS - ply) >> 1)
        high = (CELLS + 1 - ply) >> 1
    while low < high:
        med = low + (high - low) // 2
        if med <= 0 and -(-low // 2) < med:
            med = -(-low // 2)
        elif med >= 0 and high // 2 > med:
            med = high // 2
        _enter(buf, current, mask, ply, med, med + 1, threat)
        _run(buf)
        result = buf[_RESULT]
        if result <= med:
            high = result
        else:
            low = result
    return max(-1, min(1, low)) if weak else low


class Solver(connect4_solver.Solver):
    """bots.solvers.connect4.Solver with its search compiled: the same scores, best moves,
    node counts, limits and progress reports, the table kept between positions the same way.

    The table is a buffer of 24 bytes a position of `table_size` (24 MB by default), allocated
    and written with the solver (about 5 ms). Not thread-safe: one solver per thread.
    """

    __slots__ = ("_buf",)

    def __init__(self, table_size: int = DEFAULT_TABLE_SIZE) -> None:
        super().__init__(table_size)
        capacity = 1 << max(1, (2 * table_size - 1).bit_length())
        buf = np.zeros(_TABLE_AT + capacity + table_size, np.int64)
        # Write every page now (a few ms): the system maps a fresh buffer's pages at their first
        # write, which would otherwise cost the first searches up to ms each.
        buf.fill(0)
        buf[_TABLE_SIZE] = table_size
        buf[_CAPACITY_MASK] = capacity - 1
        self._buf = buf

    @property
    def table_entries(self) -> int:
        """The number of positions in the transposition table."""
        return int(self._buf[_ENTRIES])

    def reset(self) -> None:
        """Empty the transposition table."""
        _clear(self._buf)

    def score(self, state: ConnectFourState, *, weak: bool = False) -> int:
        """Return the exact score of `state` from the side to move (the sign only with `weak`).

        The score alone, as in Pons' test protocol, in one compiled call; `nodes` then holds
        the negamax calls.
        """
        buf = self._buf
        buf[_NODES] = 0
        buf[_NEXT_CHECK] = _NEVER
        value = _score(buf, state.current, state.mask, state.ply, weak)
        self.nodes = int(buf[_NODES])
        return int(value)

    def _searcher(
        self, budget: connect4_search.Budget | None
    ) -> tuple[connect4_search.Negamax, Callable[[], int]]:
        buf = self._buf
        buf[_NODES] = 0
        buf[_NEXT_CHECK] = _NEVER if budget is None else budget.next_check(0)
        check = None if budget is None else budget.check

        def negamax(current: int, mask: int, ply: int, alpha: int, beta: int, threat: int) -> int:
            _enter(buf, current, mask, ply, alpha, beta, threat)
            while not _run(buf):
                # Only a budget sets a check below _NEVER; its check may raise to stop.
                assert check is not None
                buf[_NEXT_CHECK] = check(int(buf[_NODES]))
            return int(buf[_RESULT])

        def count() -> int:
            return int(buf[_NODES])

        return negamax, count


__all__ = ["Solver", "has_four", "perft", "winning_cells"]
