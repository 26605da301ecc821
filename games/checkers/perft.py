"""Checkers perft on raw bitboards.

A private fast path: the same move generator with no state objects, bulk counting at the last
ply, and the draw rules tracked exactly (`quiet` plies since the last irreversible move and
`history`, the positions since then, nearest first).
"""

from __future__ import annotations

from games.checkers.board import (
    ALL_DIRECTIONS,
    BLACK,
    CROWN_ROW,
    DRAW_PLIES,
    FORWARD,
    FORWARD_INDEXES,
    JUMPS,
    KING_INDEXES,
    REPETITIONS,
    VALID,
    WHITE,
)
from games.checkers.generation import generate_jumps, jumpers

# The positions since the last irreversible move, nearest first, as (black, white, kings, rest).
History = tuple[int, int, int, "History"] | None


def _repeats(black: int, white: int, kings: int, history: History) -> int:
    count = 1
    odd = True
    while history is not None:
        hb, hw, hk, history = history
        if not odd and hb == black and hw == white and hk == kings:
            count += 1
        odd = not odd
    return count


def _count(black: int, white: int, kings: int, turn: int) -> int:
    """Return the number of legal moves, draws aside, without building any of them."""
    empty = VALID ^ (black | white)
    if turn == BLACK:
        my_kings = black & kings
        capturers = black & ((white >> 4) & (empty >> 8) | (white >> 5) & (empty >> 10))
        if my_kings:
            capturers |= my_kings & ((white << 4) & (empty << 8) | (white << 5) & (empty << 10))
        if capturers:
            return _count_jumps(capturers, my_kings, white, empty, BLACK)
        count = ((black << 4) & empty).bit_count() + ((black << 5) & empty).bit_count()
        if my_kings:
            count += ((my_kings >> 4) & empty).bit_count() + ((my_kings >> 5) & empty).bit_count()
        return count
    my_kings = white & kings
    capturers = white & ((black << 4) & (empty << 8) | (black << 5) & (empty << 10))
    if my_kings:
        capturers |= my_kings & ((black >> 4) & (empty >> 8) | (black >> 5) & (empty >> 10))
    if capturers:
        return _count_jumps(capturers, my_kings, black, empty, WHITE)
    count = ((white >> 4) & empty).bit_count() + ((white >> 5) & empty).bit_count()
    if my_kings:
        count += ((my_kings << 4) & empty).bit_count() + ((my_kings << 5) & empty).bit_count()
    return count


def _is_drawn(black: int, white: int, kings: int, quiet: int, history: History) -> bool:
    return quiet >= 2 * REPETITIONS + 2 and (
        quiet >= DRAW_PLIES or _repeats(black, white, kings, history) >= REPETITIONS
    )


def perft_bitboards(
    black: int, white: int, kings: int, turn: int, depth: int, quiet: int, history: History
) -> int:
    """Perft on raw bitboards; `depth` >= 1."""
    if _is_drawn(black, white, kings, quiet, history):
        return 0
    if depth == 1:
        return _count(black, white, kings, turn)
    empty = VALID ^ (black | white)
    if turn == BLACK:
        mine, theirs = black, white
    else:
        mine, theirs = white, black
    my_kings = mine & kings
    child_depth = depth - 1
    other = 1 - turn
    total = 0
    capturers = jumpers(mine, my_kings, theirs, empty, turn)
    if capturers:
        crown = CROWN_ROW[turn]
        for move in generate_jumps(mine, my_kings, theirs, empty, turn, capturers):
            frm, to, captured = move.frm, move.to, move.captured
            new_kings = kings & ~captured
            if new_kings & frm:
                new_kings ^= frm ^ to
            elif to & crown:
                new_kings |= to
            if turn == BLACK:
                b, w = black ^ frm ^ to, white & ~captured
            else:
                b, w = black & ~captured, white ^ frm ^ to
            if child_depth == 1:
                total += _count(b, w, new_kings, other)
            else:
                total += perft_bitboards(b, w, new_kings, other, child_depth, 0, None)
        return total
    crown = CROWN_ROW[turn]
    here: History = (black, white, kings, history)
    men = mine & ~kings
    for pieces, directions, is_king in (
        (men, FORWARD[turn], False),
        (my_kings, ALL_DIRECTIONS, True),
    ):
        if not pieces:
            continue
        for d in directions:
            targets = ((pieces << d) if d > 0 else (pieces >> -d)) & empty
            while targets:
                to = targets & -targets
                targets ^= to
                moved = to | ((to >> d) if d > 0 else (to << -d))
                if turn == BLACK:
                    b, w = black ^ moved, white
                else:
                    b, w = black, white ^ moved
                if is_king:
                    new_kings = kings ^ moved
                    if child_depth == 1 and quiet + 1 < 2 * REPETITIONS + 2:
                        total += _count(b, w, new_kings, other)
                    else:
                        total += perft_bitboards(
                            b, w, new_kings, other, child_depth, quiet + 1, here
                        )
                else:
                    new_kings = kings | to if to & crown else kings
                    if child_depth == 1:
                        total += _count(b, w, new_kings, other)
                    else:
                        total += perft_bitboards(b, w, new_kings, other, child_depth, 0, None)
    return total


def _count_jumps(capturers: int, my_kings: int, theirs: int, empty: int, turn: int) -> int:
    """Return how many capture moves the pieces in `capturers` have, building none of them."""
    crown = CROWN_ROW[turn]
    man_indexes = FORWARD_INDEXES[turn]
    count = 0
    while capturers:
        low = capturers & -capturers
        capturers ^= low
        if my_kings & low:
            count += _count_paths(low.bit_length() - 1, theirs, empty | low, 0, KING_INDEXES)
        else:
            count += _count_paths(low.bit_length() - 1, theirs, empty | low, crown, man_indexes)
    return count


def _count_paths(b: int, theirs: int, empty: int, crown: int, indexes: tuple[int, ...]) -> int:
    """Count the complete jump paths from bit `b`; `crown` is 0 for a king (never crowns)."""
    entries = JUMPS[b]
    count = 0
    for i in indexes:
        mid, land, land_bit = entries[i]
        if theirs & mid and empty & land:
            if land & crown:
                count += 1
            else:
                count += _count_paths(land_bit, theirs & ~mid, empty, crown, indexes)
    return count or 1
