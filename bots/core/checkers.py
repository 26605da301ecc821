"""English draughts compiled: move generation, making moves, the draw rules and perft.

The position is games.checkers's: bitboards of Black, White and kings on the 35-bit layout
(square s on bit ``(s - 1) + (s - 1) // 8``), and the side to move (0 Black, 1 White). Every
integer is an int64 (the boards use 35 bits): mixing in unsigned integers would turn numba's
arithmetic into floats.

Moves are generated into one preallocated int64 buffer, in the order games.checkers generates
them. Each move is a record of REC integers: the from-mask, the to-mask, the mask of captured
pieces, the number of landings of a capture, then the bits it lands on in turn (a step has no
landings recorded: it lands on its to-mask). The buffer holds a move area per remaining depth
and, for the draw rules, the positions since the last capture or man move, so the recursion
passes integers and the one buffer, never arrays of its own.

The recursive functions and those Python calls have explicit signatures: numba compiles
them at import and caches the machine code (a recursive function loaded from the cache needs
one, and never passes itself a literal: loaded from the cache, it would crash). The helpers
only compiled code calls are compiled lazily, with their first caller, and linked into its
cached code, so a warm start loads a few functions, not every one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from numba import njit, types

from bots.core.bits import popcount as _popcount
from games.checkers import (
    BLACK_CROWN,
    DRAW_PLIES,
    JUMPS,
    REPETITIONS,
    SQUARE_OF_BIT,
    VALID,
    WHITE_CROWN,
    CheckersMove,
    CheckersState,
)

Buffer = npt.NDArray[np.int64]
i8 = types.int64
i8a = types.Array(types.int64, 1, "C")
# numba's types are partly typed: its tuple types' constructor is not.
POSITION = types.UniTuple(i8, 4)  # type: ignore[no-untyped-call]
CHILD = types.UniTuple(i8, 5)  # type: ignore[no-untyped-call]

MAX_MOVES = 256
"""Moves a position may have; a position with more is refused (none arises in play)."""

MAX_LANDINGS = 18
"""The landings of the longest capture: each captures a piece on one of the 18 inner squares."""

REC = 4 + MAX_LANDINGS
"""Integers per move record: from, to, captured, number of landings, the landing bits."""

AREA = MAX_LANDINGS + MAX_MOVES * REC
"""Integers per move area: the path of the capture being followed, then the records."""

_QUIET_CHECK = 2 * REPETITIONS + 2
"""Plies without a capture or man move before a draw is possible (as `CheckersState.outcome`
checks them, games.checkers.state)."""

# Jumps by bit and direction (4, 5, -4, -5): the bit jumped over and the bit landed on, or -1.
JUMP_MID = np.array(
    [(m.bit_length() - 1) if m else -1 for entries in JUMPS for m, _, _ in entries], np.int64
)
JUMP_LAND = np.array([land for entries in JUMPS for _, _, land in entries], np.int64)


@njit(cache=True)
def _jumpers(mine: int, my_kings: int, theirs: int, empty: int, turn: int) -> int:
    """Return the pieces of `mine` that can jump (games.checkers.generation.jumpers)."""
    down = ((theirs >> 4) & (empty >> 8)) | ((theirs >> 5) & (empty >> 10))
    up = ((theirs << 4) & (empty << 8)) | ((theirs << 5) & (empty << 10))
    if turn == 0:
        return (mine & down) | (my_kings & up)
    return (mine & up) | (my_kings & down)


@njit(cache=True)
def _emit(buf: Buffer, area: int, n: int, frm: int, to: int, captured: int, landings: int) -> int:
    """Write the move record number `n` of the area at `area`; return the new count."""
    if n >= MAX_MOVES:
        raise IndexError("a checkers position with more moves than the core's buffer holds")
    r = area + MAX_LANDINGS + n * REC
    buf[r] = frm
    buf[r + 1] = to
    buf[r + 2] = captured
    buf[r + 3] = landings
    for j in range(landings):
        buf[r + 4 + j] = buf[area + j]
    return n + 1


@njit(i8(i8a, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8), cache=True)
def _extend_jump(
    buf: Buffer,
    area: int,
    n: int,
    frm: int,
    b: int,
    king: int,
    theirs: int,
    empty: int,
    captured: int,
    crown: int,
    directions: int,
    landings: int,
) -> int:
    """Record every complete capture that continues from bit `b` (as
    games.checkers.generation extends a jump).

    `crown` is 0 for a king, which is never crowned; a man crowned ends its move there.
    """
    extended = False
    for i in range(4):
        if (directions >> i) & 1 == 0:
            continue
        mid = JUMP_MID[4 * b + i]
        if mid < 0:
            continue
        mid_mask = 1 << mid
        land = JUMP_LAND[4 * b + i]
        land_mask = 1 << land
        if (theirs & mid_mask) != 0 and (empty & land_mask) != 0:
            extended = True
            buf[area + landings] = land
            if (land_mask & crown) != 0:
                n = _emit(buf, area, n, frm, land_mask, captured | mid_mask, landings + 1)
            else:
                n = _extend_jump(
                    buf,
                    area,
                    n,
                    frm,
                    land,
                    king,
                    theirs & ~mid_mask,
                    empty,
                    captured | mid_mask,
                    crown,
                    directions,
                    landings + 1,
                )
    if not extended and captured != 0:
        n = _emit(buf, area, n, frm, 1 << b, captured, landings)
    return n


@njit(cache=True)
def _steps(buf: Buffer, area: int, n: int, pieces: int, empty: int, shift: int, up: int) -> int:
    """Record the steps of `pieces` by `shift` bits, down the board or (`up` 1) up it."""
    targets = ((pieces << shift) if up == 0 else (pieces >> shift)) & empty
    while targets != 0:
        to = targets & -targets
        targets ^= to
        frm = (to >> shift) if up == 0 else (to << shift)
        n = _emit(buf, area, n, frm, to, 0, 0)
    return n


@njit(cache=True)
def generate(buf: Buffer, area: int, black: int, white: int, kings: int, turn: int) -> int:
    """Write the moves of the side to move into the area at `area`; return how many.

    Captures are compulsory and each complete multi-jump is one move; the order is
    games.checkers's (captures by piece then direction, else steps by direction).
    """
    empty = VALID ^ (black | white)
    if turn == 0:
        mine = black
        theirs = white
        crown = BLACK_CROWN
    else:
        mine = white
        theirs = black
        crown = WHITE_CROWN
    my_kings = mine & kings
    jumpers = _jumpers(mine, my_kings, theirs, empty, turn)
    n = 0
    if jumpers != 0:
        men_directions = 0b0011 if turn == 0 else 0b1100
        king_directions = 0b1111
        no_crown = 0
        no_capture = 0
        start = 0
        while jumpers != 0:
            low = jumpers & -jumpers
            jumpers ^= low
            b = _popcount(low - 1)
            if (my_kings & low) != 0:
                n = _extend_jump(
                    buf,
                    area,
                    n,
                    low,
                    b,
                    1,
                    theirs,
                    empty | low,
                    no_capture,
                    no_crown,
                    king_directions,
                    start,
                )
            else:
                n = _extend_jump(
                    buf,
                    area,
                    n,
                    low,
                    b,
                    0,
                    theirs,
                    empty | low,
                    no_capture,
                    crown,
                    men_directions,
                    start,
                )
        return n
    forward = 1 if turn == 1 else 0
    backward = 1 - forward
    n = _steps(buf, area, n, mine, empty, 4, forward)
    n = _steps(buf, area, n, mine, empty, 5, forward)
    if my_kings != 0:
        n = _steps(buf, area, n, my_kings, empty, 4, backward)
        n = _steps(buf, area, n, my_kings, empty, 5, backward)
    return n


@njit(i8(i8, i8, i8, i8, i8), cache=True)
def _count_paths(b: int, theirs: int, empty: int, crown: int, directions: int) -> int:
    """Count the complete captures from bit `b`, building none (as
    games.checkers.perft counts them)."""
    count = 0
    for i in range(4):
        if (directions >> i) & 1 == 0:
            continue
        mid = JUMP_MID[4 * b + i]
        if mid < 0:
            continue
        mid_mask = 1 << mid
        land = JUMP_LAND[4 * b + i]
        land_mask = 1 << land
        if (theirs & mid_mask) != 0 and (empty & land_mask) != 0:
            if (land_mask & crown) != 0:
                count += 1
            else:
                count += _count_paths(land, theirs & ~mid_mask, empty, crown, directions)
    return count if count != 0 else 1


@njit(cache=True)
def count_moves(black: int, white: int, kings: int, turn: int) -> int:
    """Return the number of moves of the side to move, building none of them."""
    empty = VALID ^ (black | white)
    if turn == 0:
        mine = black
        theirs = white
        crown = BLACK_CROWN
        men_directions = 0b0011
    else:
        mine = white
        theirs = black
        crown = WHITE_CROWN
        men_directions = 0b1100
    my_kings = mine & kings
    jumpers = _jumpers(mine, my_kings, theirs, empty, turn)
    if jumpers != 0:
        count = 0
        no_crown = 0
        king_directions = 0b1111
        while jumpers != 0:
            low = jumpers & -jumpers
            jumpers ^= low
            b = _popcount(low - 1)
            if (my_kings & low) != 0:
                count += _count_paths(b, theirs, empty | low, no_crown, king_directions)
            else:
                count += _count_paths(b, theirs, empty | low, crown, men_directions)
        return count
    if turn == 0:
        count = _popcount((mine << 4) & empty) + _popcount((mine << 5) & empty)
        if my_kings != 0:
            count += _popcount((my_kings >> 4) & empty) + _popcount((my_kings >> 5) & empty)
    else:
        count = _popcount((mine >> 4) & empty) + _popcount((mine >> 5) & empty)
        if my_kings != 0:
            count += _popcount((my_kings << 4) & empty) + _popcount((my_kings << 5) & empty)
    return count


@njit(cache=True)
def _child(
    black: int,
    white: int,
    kings: int,
    turn: int,
    frm: int,
    to: int,
    captured: int,
    quiet: int,
    base: int,
    top: int,
) -> tuple[int, int, int, int, int]:
    """Return the child's black, white, kings, plies without a capture or man move, and first
    history slot (its parent, this position, is slot `top`)."""
    new_kings = kings & ~captured
    child_quiet = 0
    child_base = top + 1
    if (new_kings & frm) != 0:
        new_kings ^= frm ^ to
        if captured == 0:
            child_quiet = quiet + 1
            child_base = base
    elif (to & (BLACK_CROWN if turn == 0 else WHITE_CROWN)) != 0:
        new_kings |= to
    if turn == 0:
        return black ^ frm ^ to, white & ~captured, new_kings, child_quiet, child_base
    return black & ~captured, white ^ frm ^ to, new_kings, child_quiet, child_base


@njit(POSITION(i8, i8, i8, i8, i8, i8, i8), cache=True)
def make_move(
    black: int, white: int, kings: int, turn: int, frm: int, to: int, captured: int
) -> tuple[int, int, int, int]:
    """Return (black, white, kings, turn) after the move (as
    `CheckersState.apply_unchecked`)."""
    b, w, k, _, _ = _child(black, white, kings, turn, frm, to, captured, 0, 0, 0)
    return b, w, k, 1 - turn


@njit(cache=True)
def is_drawn(
    buf: Buffer, black: int, white: int, kings: int, quiet: int, base: int, top: int
) -> bool:
    """True when the position is drawn by the 80-ply rule or threefold repetition.

    `quiet` counts the plies since the last capture or man move; the positions since then
    are in the buffer's history slots `base` to `top - 1` (slot i at 3 i), the latest last.
    """
    if quiet < _QUIET_CHECK:
        return False
    if quiet >= DRAW_PLIES:
        return True
    seen = 1
    slot = top - 2
    while slot >= base:
        if buf[3 * slot] == black and buf[3 * slot + 1] == white and buf[3 * slot + 2] == kings:
            seen += 1
        slot -= 2
    return seen >= REPETITIONS


@njit(i8(i8a, i8, i8, i8, i8, i8, i8, i8, i8, i8), cache=True)
def _perft(
    buf: Buffer,
    moves_at: int,
    black: int,
    white: int,
    kings: int,
    turn: int,
    depth: int,
    quiet: int,
    base: int,
    top: int,
) -> int:
    """Count the leaves `depth` >= 1 plies below; this position is history slot `top`."""
    if is_drawn(buf, black, white, kings, quiet, base, top):
        return 0
    if depth == 1:
        return count_moves(black, white, kings, turn)
    buf[3 * top] = black
    buf[3 * top + 1] = white
    buf[3 * top + 2] = kings
    empty = VALID ^ (black | white)
    mine = black if turn == 0 else white
    theirs = white if turn == 0 else black
    my_kings = mine & kings
    other = 1 - turn
    child_depth = depth - 1
    total = 0
    # Captures are generated into the buffer; steps are walked straight off the bitboards.
    if _jumpers(mine, my_kings, theirs, empty, turn) != 0:
        area = moves_at + depth * AREA
        n = generate(buf, area, black, white, kings, turn)
        for i in range(n):
            r = area + MAX_LANDINGS + i * REC
            b, w, k, child_quiet, child_base = _child(
                black, white, kings, turn, buf[r], buf[r + 1], buf[r + 2], quiet, base, top
            )
            if child_depth == 1:
                total += count_moves(b, w, k, other)
            else:
                total += _perft(
                    buf, moves_at, b, w, k, other, child_depth, child_quiet, child_base, top + 1
                )
        return total
    for j in range(4):
        # Men's and kings' forward steps by 4 and 5 bits, then kings' backward ones.
        pieces = mine if j < 2 else my_kings
        shift = 4 + (j & 1)
        down = (j < 2) == (turn == 0)
        targets = ((pieces << shift) if down else (pieces >> shift)) & empty
        while targets != 0:
            to = targets & -targets
            targets ^= to
            frm = (to >> shift) if down else (to << shift)
            b, w, k, child_quiet, child_base = _child(
                black, white, kings, turn, frm, to, 0, quiet, base, top
            )
            if child_depth == 1 and child_quiet < _QUIET_CHECK:
                total += count_moves(b, w, k, other)
            else:
                total += _perft(
                    buf, moves_at, b, w, k, other, child_depth, child_quiet, child_base, top + 1
                )
    return total


# -- from Python -------------------------------------------------------------------------------


def _history(state: CheckersState) -> list[CheckersState]:
    """The positions since the last capture or man move, earliest first, `state` last."""
    chain = [state]
    node = state.prev
    while node is not None:
        chain.append(node)
        node = node.prev
    chain.reverse()
    return chain


def _buffer(state: CheckersState, depth: int) -> tuple[Buffer, int, int]:
    """Return a buffer holding the history of `state`, the offset of its move areas, and the
    slot of `state` in the history."""
    chain = _history(state)
    slots = len(chain) + depth + 1
    moves_at = 3 * slots
    buf = np.empty(moves_at + (depth + 1) * AREA, np.int64)
    for slot, node in enumerate(chain):
        buf[3 * slot : 3 * slot + 3] = (node.black, node.white, node.kings)
    return buf, moves_at, len(chain) - 1


def perft(state: CheckersState, depth: int) -> int:
    """Return perft(`state`, `depth`) as games.perft counts it, draws by history included."""
    if depth < 0:
        raise ValueError(f"perft depth must be >= 0, not {depth}")
    if depth == 0:
        return 1
    buf, moves_at, top = _buffer(state, depth)
    return int(
        _perft(
            buf,
            moves_at,
            state.black,
            state.white,
            state.kings,
            state.turn,
            depth,
            state.quiet,
            0,
            top,
        )
    )


def _move_of(record: Sequence[int]) -> CheckersMove:
    """Return the CheckersMove of one move record, checking its masks against its path."""
    frm, to, captured, landings = record[:4]
    lands = record[4 : 4 + landings] if landings else [to.bit_length() - 1]
    path = (SQUARE_OF_BIT[frm.bit_length() - 1], *(SQUARE_OF_BIT[bit] for bit in lands))
    move = CheckersMove(path, captured)
    if move.frm != frm or move.to != to:
        raise RuntimeError(f"the compiled move record {record[:4]} disagrees with its path {path}")
    return move


def legal_moves(state: CheckersState) -> tuple[CheckersMove, ...]:
    """Return the legal moves of `state` from the compiled generator, in its order; none when
    the position is drawn by the history (as CheckersState.legal_moves)."""
    buf, moves_at, top = _buffer(state, 0)
    if is_drawn(buf, state.black, state.white, state.kings, state.quiet, 0, top):
        return ()
    n = generate(buf, moves_at, state.black, state.white, state.kings, state.turn)
    records = buf[moves_at + MAX_LANDINGS : moves_at + MAX_LANDINGS + n * REC].reshape(n, REC)
    return tuple(_move_of([int(v) for v in record]) for record in records)


def play(state: CheckersState, move: CheckersMove) -> tuple[int, int, int, int]:
    """Return (black, white, kings, turn) after `move` as the compiled core makes it."""
    result = make_move(
        state.black, state.white, state.kings, state.turn, move.frm, move.to, move.captured
    )
    return (int(result[0]), int(result[1]), int(result[2]), int(result[3]))


__all__ = ["count_moves", "generate", "legal_moves", "make_move", "perft", "play"]
