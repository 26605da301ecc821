"""Connect Four evaluation: open lines and threats, for the side to move.

A window is one of the 69 runs of four cells (24 across, 21 up, 12 on each diagonal). A window
is open for a player when it holds none of the opponent's stones; an open window with 1, 2 or
3 of the player's stones is a single, double or triple. A threat is an empty cell that would
complete four in a row for a player.

Threat parity (the simple form of Allis' rule): with the board filling up column by column,
zugzwang lets the first player realise threats on odd rows (1, 3, 5 counted from the bottom)
and the second player on even rows (2, 4, 6). Each player's threats on its own parity rows
earn a bonus on top of the plain threat count.

Every feature is mine minus theirs, the first player being whoever moved first (the parity
term depends on it), and is unchanged by the left-right mirror, the game's symmetry. The
evaluation is meant for non-terminal positions (where neither side has four in a row).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Final, cast

from bots.evaluation import Evaluation, Feature, Knowledge, StateFunction
from games import State
from games.connect4 import BOARD, BOTTOM, H1, HEIGHT, WIDTH, ConnectFourState, has_four

SINGLE: Final = 1
"""Per open window with one stone: room to build lines later."""
DOUBLE: Final = 4
"""Per open window with two stones: one stone away from a triple."""
TRIPLE: Final = 8
"""Per open window with three stones (its empty cell is a threat, scored again below)."""
THREAT: Final = 16
"""Per empty cell that would complete a four: the opponent can never play under it carelessly."""
GOOD_THREAT: Final = 16
"""Bonus per threat on the player's own parity rows (odd rows for the first player, even for
the second), the threats that zugzwang tends to make good by the end of the game."""

_CELLS = tuple((col, row) for col in range(WIDTH) for row in range(HEIGHT))


def _bit(col: int, row: int) -> int:
    return 1 << (col * H1 + row)


def _windows() -> tuple[tuple[tuple[int, int], ...], ...]:
    """Return every run of four cells as (column, row) pairs, row 0 at the bottom."""
    windows = []
    for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
        for col, row in _CELLS:
            cells = tuple((col + i * dc, row + i * dr) for i in range(4))
            if all(0 <= c < WIDTH and 0 <= r < HEIGHT for c, r in cells):
                windows.append(cells)
    return tuple(windows)


WINDOWS: Final = _windows()
WINDOW_MASKS: Final = tuple(sum(_bit(c, r) for c, r in w) for w in WINDOWS)

# Rows 1, 3, 5 (bit rows 0, 2, 4) for the first player; rows 2, 4, 6 for the second.
GOOD_ROWS: Final = (BOTTOM * 0b010101, BOTTOM * 0b101010)

# Shifts along the four directions (up, across, the two diagonals), with twice the shift.
_DIRECTIONS: Final = ((1, 2), (H1, 2 * H1), (HEIGHT, 2 * HEIGHT), (H1 + 1, 2 * (H1 + 1)))


def _for_connect4(function: Callable[[ConnectFourState], float]) -> StateFunction:
    """Type a Connect Four measure as a StateFunction: Knowledge only hands it its own states."""
    return cast(StateFunction, function)


def _sides(state: ConnectFourState) -> tuple[int, int]:
    """Return (my stones, their stones) as bitboards."""
    return state.current, state.current ^ state.mask


# -- reference features, window by window ----------------------------------------------------------


def _open_windows(state: ConnectFourState, stones: int) -> int:
    """Return how many open windows hold exactly `stones` stones, mine minus theirs."""
    mine, theirs = _sides(state)
    count = 0
    for mask in WINDOW_MASKS:
        if not mask & theirs and (mask & mine).bit_count() == stones:
            count += 1
        if not mask & mine and (mask & theirs).bit_count() == stones:
            count -= 1
    return count


def singles(state: ConnectFourState) -> int:
    """Open windows with one of my stones, minus theirs."""
    return _open_windows(state, 1)


def doubles(state: ConnectFourState) -> int:
    """Open windows with two of my stones, minus theirs."""
    return _open_windows(state, 2)


def triples(state: ConnectFourState) -> int:
    """Open windows with three of my stones, minus theirs."""
    return _open_windows(state, 3)


def _threat_cells(state: ConnectFourState, stones: int) -> list[tuple[int, int]]:
    """Return the empty cells where a stone would give `stones` four in a row."""
    return [
        (col, row)
        for col, row in _CELLS
        if not state.mask & _bit(col, row) and has_four(stones | _bit(col, row))
    ]


def threats(state: ConnectFourState) -> int:
    """Empty cells that would complete a four for me, minus those for them."""
    mine, theirs = _sides(state)
    return len(_threat_cells(state, mine)) - len(_threat_cells(state, theirs))


def good_threats(state: ConnectFourState) -> int:
    """My threats on my parity rows, minus theirs on theirs (1-based rows, from the bottom).

    The first player's good rows are the odd ones, the second player's the even ones.
    """
    mine, theirs = _sides(state)
    me = state.to_move
    mine_good = sum(1 for _, row in _threat_cells(state, mine) if row % 2 == me)
    theirs_good = sum(1 for _, row in _threat_cells(state, theirs) if row % 2 != me)
    return mine_good - theirs_good


# -- fused bitboard version ------------------------------------------------------------------------

LANE: Final = 128
"""The fast path packs my stones in bits 0-48 and theirs LANE bits higher, so one shift works on
both sides at once. Shifts of up to 24 bits never carry one side's cells into the other's."""
_LOW_LANE: Final = (1 << LANE) - 1
_GOOD_LANES: Final = (
    GOOD_ROWS[0] | GOOD_ROWS[1] << LANE,  # first player to move: odd rows mine, even theirs
    GOOD_ROWS[1] | GOOD_ROWS[0] << LANE,
)
# SINGLE*n1 + DOUBLE*n2 + TRIPLE*n3 as weights on "one or more", "two or more" and "three".
_AT_LEAST_ONE: Final = SINGLE
_AT_LEAST_TWO: Final = DOUBLE - SINGLE
_EXACTLY_THREE: Final = TRIPLE - DOUBLE


def _lane_difference(bits: int) -> int:
    """Return the set bits in the low lane minus those in the high lane."""
    return (bits & _LOW_LANE).bit_count() - (bits >> LANE).bit_count()


def _line_score(stones: int, free: int) -> int:
    """Return the weighted open windows, low lane minus high lane.

    `stones` holds each side's stones in its lane and `free` each side's cells without an
    opponent stone. A bit b stands for the window starting at b in one direction; the window's
    stones are added bitwise (half adders) into a low bit and a "two or more" bit. A four would
    read as two, but non-terminal positions have none.
    """
    total = 0
    for shift, double_shift in _DIRECTIONS:
        pair = free & (free >> shift)
        windows = pair & (pair >> double_shift)
        next_stones = stones >> shift
        odd_pair = stones ^ next_stones
        both = stones & next_stones
        far_odd = odd_pair >> double_shift
        low = odd_pair ^ far_odd
        two = windows & (both | (both >> double_shift) | (odd_pair & far_odd))
        total += (
            _AT_LEAST_ONE * _lane_difference(windows & (low | two))
            + _AT_LEAST_TWO * _lane_difference(two)
            + _EXACTLY_THREE * _lane_difference(two & low)
        )
    return total


def threat_mask(stones: int, empty: int) -> int:
    """Return the cells of `empty` where a stone would give `stones` four in a row.

    Pascal Pons' shifts: the always-empty sentinel row stops runs wrapping across columns.
    Works lane by lane on packed boards too.
    """
    found = (stones << 1) & (stones << 2) & (stones << 3)
    for shift in (H1, HEIGHT, H1 + 1):
        pair = (stones << shift) & (stones << 2 * shift)
        found |= pair & (stones << 3 * shift)
        found |= pair & (stones >> shift)
        pair = (stones >> shift) & (stones >> 2 * shift)
        found |= pair & (stones << shift)
        found |= pair & (stones >> 3 * shift)
    return found & empty


def _lines_fast(state: ConnectFourState) -> int:
    """Return the "lines" evaluation's weighted sum, computed on the bitboards."""
    mine = state.current
    mask = state.mask
    theirs = mine ^ mask
    empty = BOARD ^ mask
    stones = mine | theirs << LANE
    found = threat_mask(stones, empty | empty << LANE)
    return (
        _line_score(stones, (BOARD ^ theirs) | (BOARD ^ mine) << LANE)
        + THREAT * _lane_difference(found)
        + GOOD_THREAT * _lane_difference(found & _GOOD_LANES[state.ply & 1])
    )


LINES = Evaluation(
    "lines",
    (
        Feature("singles", SINGLE, _for_connect4(singles), "open windows with one of my stones"),
        Feature("doubles", DOUBLE, _for_connect4(doubles), "open windows with two of my stones"),
        Feature("triples", TRIPLE, _for_connect4(triples), "open windows with three of my stones"),
        Feature("threats", THREAT, _for_connect4(threats), "empty cells that complete my four"),
        Feature(
            "good_threats",
            GOOD_THREAT,
            _for_connect4(good_threats),
            "my threats on my parity rows (odd for the first player, even for the second)",
        ),
    ),
    "open windows weighted by their stones, plus threats with a parity bonus, mine minus theirs",
    fast=_for_connect4(_lines_fast),
)

# Centre first, then outward, left before right: columns 4, 3, 5, 2, 6, 1, 7 (1-based).
_COLUMN_ORDER: Final = (1, 3, 5, 6, 4, 2, 0)
_COLUMN_BLOCKS: Final = tuple(((1 << H1) - 1) << (col * H1) for col in range(WIDTH))


def move_order(_state: State[Any], move: int) -> int:
    """Return a static ordering score, higher first: the centre column, then outward."""
    return _COLUMN_ORDER[move]


def mirror_key(key: int) -> int:
    """Return the Pons key (current + mask) of the left-right mirror image of a position.

    The key keeps each column in its own 7 bits, so mirroring swaps those blocks.
    """
    c0, c1, c2, c3, c4, c5, c6 = _COLUMN_BLOCKS
    return (
        (key & c0) << 6 * H1
        | (key & c1) << 4 * H1
        | (key & c2) << 2 * H1
        | key & c3
        | (key & c4) >> 2 * H1
        | (key & c5) >> 4 * H1
        | (key & c6) >> 6 * H1
    )


def canonical_key(state: ConnectFourState) -> Hashable:
    """Return the smaller of the Pons keys of the position and of its mirror image.

    Mirror images have equal values, but a best move stored under this key belongs to
    whichever image has the smaller key: mirror it (column c <-> 6 - c) before use.
    """
    key = state.current + state.mask
    return min(key, mirror_key(key))


KNOWLEDGE: Final = Knowledge(
    game="connect4",
    evaluations={LINES.name: LINES},
    default_evaluation=LINES.name,
    move_order=move_order,
    is_quiet=None,
    canonical_key=cast(Callable[[State[Any]], Hashable], canonical_key),
    is_capture=None,
    notes={
        "scale": "a single 1, double 4, triple 8, threat 16, good-parity threat +16",
        "symmetry": "canonical_key merges mirror images; stored moves must be mirrored back",
    },
)
