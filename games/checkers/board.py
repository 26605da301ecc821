"""The checkers board: colours, squares and their rows and columns, the bit layout, the
starting position, directions and the jump table, and the rule constants.

Square s (1-32) lives on bit ``(s - 1) + (s - 1) // 8``. The three "ghost" bits 8, 17 and 26
are never occupied, which makes every diagonal step a shift by 4 or 5 and every jump a shift by
8 or 10 on all rows; a step off the board lands on a ghost bit or outside the 35 used bits and
is masked away.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

BLACK: Final = 0
WHITE: Final = 1
COLOUR_NAMES: Final = ("Black", "White")

NUM_SQUARES: Final = 32
DRAW_PLIES: Final = 80
REPETITIONS: Final = 3

BIT_OF_SQUARE: Final = tuple([-1] + [(s - 1) + (s - 1) // 8 for s in range(1, 33)])
SQUARE_OF_BIT: Final = tuple(
    BIT_OF_SQUARE.index(b) if b in BIT_OF_SQUARE[1:] else 0 for b in range(35)
)
VALID: Final = sum(1 << BIT_OF_SQUARE[s] for s in range(1, 33))
BLACK_CROWN: Final = sum(1 << BIT_OF_SQUARE[s] for s in range(29, 33))
WHITE_CROWN: Final = sum(1 << BIT_OF_SQUARE[s] for s in range(1, 5))
CROWN_ROW: Final = (BLACK_CROWN, WHITE_CROWN)
START_BLACK: Final = sum(1 << BIT_OF_SQUARE[s] for s in range(1, 13))
START_WHITE: Final = sum(1 << BIT_OF_SQUARE[s] for s in range(21, 33))

# Directions as bit offsets: +4/+5 go down the board (toward square 32), -4/-5 go up.
DOWN: Final = (4, 5)
UP: Final = (-4, -5)
ALL_DIRECTIONS: Final = (4, 5, -4, -5)
FORWARD: Final = (DOWN, UP)  # men's directions, indexed by colour


def square_row(square: int) -> int:
    """Return the row (0 at the top, seen from White) of a square 1-32."""
    return (square - 1) // 4


def square_column(square: int) -> int:
    """Return the column (0 at the left, seen from White) of a square 1-32."""
    row = square_row(square)
    return 2 * ((square - 1) % 4) + (1 if row % 2 == 0 else 0)


def square_at(row: int, column: int) -> int | None:
    """Return the square number at (row, column), or None on a light square."""
    if not (0 <= row < 8 and 0 <= column < 8) or (row + column) % 2 == 0:
        return None
    return row * 4 + column // 2 + 1


def squares_of(mask: int) -> tuple[int, ...]:
    """Return the squares of the bits of `mask`, in ascending order."""
    squares = []
    while mask:
        low = mask & -mask
        squares.append(SQUARE_OF_BIT[low.bit_length() - 1])
        mask ^= low
    return tuple(sorted(squares))


def mask_of(squares: Sequence[int]) -> int:
    """Return the mask of the bits of `squares`."""
    mask = 0
    for s in squares:
        mask |= 1 << BIT_OF_SQUARE[s]
    return mask


def _build_jumps() -> tuple[tuple[tuple[int, int, int], ...], ...]:
    """For each bit and direction index: (mid mask, landing mask, landing bit), if on board."""
    table = []
    for b in range(35):
        entries = []
        for d in ALL_DIRECTIONS:
            mid, land = b + d, b + 2 * d
            if (VALID >> b) & 1 and 0 <= land < 35 and (VALID >> mid) & 1 and (VALID >> land) & 1:
                entries.append((1 << mid, 1 << land, land))
            else:
                entries.append((0, 0, -1))
        table.append(tuple(entries))
    return tuple(table)


JUMPS: Final = _build_jumps()
# Direction indexes into JUMPS entries: men of each colour use only their forward pair.
FORWARD_INDEXES: Final = ((0, 1), (2, 3))
KING_INDEXES: Final = (0, 1, 2, 3)
