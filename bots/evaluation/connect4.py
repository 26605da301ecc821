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

# -- threats: playable threats, dead threats and the odd/even rule -------------------------------
#
# The "lines" evaluation scores a position the same whoever is to move, so a search that stops
# with the root player to move (even depths) and one that stops with the opponent to move (odd
# depths) misjudge in opposite directions: depth 2 played even with depth 4. "threats" reads
# threats the way Allis' threat analysis does (Allis 1988, "A knowledge-based approach of
# connect-four", rules of zugzwang control):
#
# - immediate: the side to move with a threat on a playable cell wins with its next move; the
#   side to move facing two playable threats (or one with another threat right above it) loses.
# - a threat on a playable cell that is not the side to move's is blocked at once, so only the
#   threats not yet playable count as lasting; of those, a threat above the opponent's lasting
#   threat in the same column is dead (that column is settled below it);
# - zugzwang: filling the board column by column, the first player gets the odd rows (1, 3, 5
#   from the bottom) and the second the even rows. The first player with a live odd threat is
#   winning; otherwise the second player with a live even threat is.
# - stacked: two threats one above the other win once the column reaches them.

IMMEDIATE: Final = 2048
"""The side to move wins next move (+), or cannot stop the opponent's next move (-)."""
ZUGZWANG: Final = 192
"""The odd/even verdict: the first player's live odd threat, else the second's live even one."""
STACKED: Final = 96
"""Per live threat with another threat of the same player right above it."""
LIVE_THREAT: Final = 24
"""Per lasting threat (not playable now) that is not above an opponent's lasting threat."""
GOOD_LIVE_THREAT: Final = 40
"""Bonus per live threat on its owner's parity rows (odd for the first, even for the second)."""


def _playable_cells(state: ConnectFourState) -> set[tuple[int, int]]:
    """Return the cell each non-full column would take next."""
    cells = set()
    for col in range(WIDTH):
        for row in range(HEIGHT):
            if not state.mask & _bit(col, row):
                cells.add((col, row))
                break
    return cells


def _lasting_threats(state: ConnectFourState) -> tuple[set[tuple[int, int]], set[tuple[int, int]]]:
    """Return (mine, theirs): each side's threat cells that are not playable now."""
    mine, theirs = _sides(state)
    playable = _playable_cells(state)
    return (
        set(_threat_cells(state, mine)) - playable,
        set(_threat_cells(state, theirs)) - playable,
    )


def _live(own: set[tuple[int, int]], other: set[tuple[int, int]]) -> set[tuple[int, int]]:
    """Return the threats of `own` with no threat of `other` lower in the same column."""
    return {(col, row) for col, row in own if not any(c == col and r < row for c, r in other)}


def _good_row(row: int, player: int) -> bool:
    """True for a 0-based row on `player`'s parity: rows 1, 3, 5 (1-based) for the first."""
    return row % 2 == player


def immediate(state: ConnectFourState) -> int:
    """+1 if the side to move can win at once; -1 if it cannot but cannot stop the opponent's
    win either (two playable threats, or one with the opponent's threat right above it); else 0.
    """
    mine, theirs = _sides(state)
    playable = _playable_cells(state)
    if playable & set(_threat_cells(state, mine)):
        return 1
    their_threats = set(_threat_cells(state, theirs))
    forced = playable & their_threats
    if len(forced) >= 2 or any((col, row + 1) in their_threats for col, row in forced):
        return -1
    return 0


def live_threats(state: ConnectFourState) -> int:
    """My lasting threats not above one of theirs in the same column, minus theirs."""
    mine, theirs = _lasting_threats(state)
    return len(_live(mine, theirs)) - len(_live(theirs, mine))


def good_live_threats(state: ConnectFourState) -> int:
    """My live threats on my parity rows, minus their live threats on theirs."""
    mine, theirs = _lasting_threats(state)
    me = state.to_move
    return sum(1 for _, row in _live(mine, theirs) if _good_row(row, me)) - sum(
        1 for _, row in _live(theirs, mine) if _good_row(row, 1 - me)
    )


def stacked(state: ConnectFourState) -> int:
    """My live threats with another lasting threat of mine right above, minus theirs."""
    mine, theirs = _lasting_threats(state)
    return sum(1 for col, row in _live(mine, theirs) if (col, row + 1) in mine) - sum(
        1 for col, row in _live(theirs, mine) if (col, row + 1) in theirs
    )


def zugzwang(state: ConnectFourState) -> int:
    """The odd/even verdict for the side to move: +1 winning, -1 losing, 0 open.

    The first player wins by zugzwang with a live threat on an odd row (1-based); failing that,
    the second player does with a live threat on an even row.
    """
    mine, theirs = _lasting_threats(state)
    me = state.to_move
    live = (_live(mine, theirs), _live(theirs, mine))  # (the side to move's, the other's)
    first, second = (live[0], live[1]) if me == 0 else (live[1], live[0])
    if any(_good_row(row, 0) for _, row in first):
        verdict = 1
    elif any(_good_row(row, 1) for _, row in second):
        verdict = -1
    else:
        verdict = 0
    return verdict if me == 0 else -verdict


_ROWS_ABOVE_BOTTOM: Final = HEIGHT - 1


def _above(cells: int) -> int:
    """Return every cell above one of `cells` in its column (the sentinel row stops the fill)."""
    filled = (cells << 1) & BOARD
    for _ in range(_ROWS_ABOVE_BOTTOM - 1):
        filled |= (filled << 1) & BOARD
    return filled


def settle(state: ConnectFourState) -> tuple[ConnectFourState, int]:
    """Return the position after the forced blocks, and +1 or -1: whose view it is scored from.

    The threat-space extension of "threats", reference version: while the side to move has no
    win of its own on a playable cell and the opponent has exactly one, the block is forced, so
    it is played. The sign is +1 when the settled position has the same side to move as
    `state` (an even number of blocks), else -1.
    """
    sign = 1
    while state.legal_moves():
        mine, theirs = _sides(state)
        playable = _playable_cells(state)
        if playable & set(_threat_cells(state, mine)):
            break
        forced = playable & set(_threat_cells(state, theirs))
        if len(forced) != 1:
            break
        ((col, _),) = forced
        state = state.apply_unchecked(col)
        sign = -sign
    return state, sign


def _after_forced_blocks(measure: Callable[[ConnectFourState], int]) -> StateFunction:
    """Return `measure` taken on the settled position, from the side to move of the original."""

    def settled(state: ConnectFourState) -> int:
        final, sign = settle(state)
        return sign * measure(final)

    settled.__doc__ = f"{measure.__name__}, after the forced blocks (see settle)."
    return _for_connect4(settled)


def _threats_fast(state: ConnectFourState) -> int:
    """Return the "threats" evaluation's weighted sum, computed on the bitboards."""
    mine = state.current
    mask = state.mask
    ply = state.ply
    sign = 1
    # The forced blocks (see settle), on the bitboards.
    while True:
        theirs = mine ^ mask
        empty = BOARD ^ mask
        playable = (mask + BOTTOM) & BOARD
        if not playable or has_four(theirs) or threat_mask(mine, empty) & playable:
            break
        forced = threat_mask(theirs, empty) & playable
        if not forced or forced & (forced - 1):
            break
        mine, mask, ply, sign = theirs, mask | forced, ply + 1, -sign
    return sign * _threats_bits(mine, mask, ply)


def _threats_bits(mine: int, mask: int, ply: int) -> int:
    """Return the static "threats" sum for the side to move holding `mine`, `ply` plies in."""
    theirs = mine ^ mask
    empty = BOARD ^ mask
    playable = (mask + BOTTOM) & BOARD
    my_threats = threat_mask(mine, empty)
    their_threats = threat_mask(theirs, empty)
    if my_threats & playable:
        now = 1
    else:
        forced = their_threats & playable
        now = -1 if forced & (forced - 1) or (forced << 1) & their_threats else 0
    my_lasting = my_threats & ~playable
    their_lasting = their_threats & ~playable
    my_live = my_lasting & ~_above(their_lasting)
    their_live = their_lasting & ~_above(my_lasting)
    me = ply & 1
    my_good = my_live & GOOD_ROWS[me]
    their_good = their_live & GOOD_ROWS[1 - me]
    first_good, second_good = (my_good, their_good) if me == 0 else (their_good, my_good)
    verdict = 1 if first_good else -1 if second_good else 0
    stones = mine | theirs << LANE
    return (
        _line_score(stones, (BOARD ^ theirs) | (BOARD ^ mine) << LANE)
        + IMMEDIATE * now
        + ZUGZWANG * (verdict if me == 0 else -verdict)
        + STACKED
        * (
            (my_live & (my_lasting >> 1)).bit_count()
            - (their_live & (their_lasting >> 1)).bit_count()
        )
        + LIVE_THREAT * (my_live.bit_count() - their_live.bit_count())
        + GOOD_LIVE_THREAT * (my_good.bit_count() - their_good.bit_count())
    )


THREATS = Evaluation(
    "threats",
    (
        Feature(
            "singles", SINGLE, _after_forced_blocks(singles), "open windows with one of my stones"
        ),
        Feature(
            "doubles", DOUBLE, _after_forced_blocks(doubles), "open windows with two of my stones"
        ),
        Feature(
            "triples", TRIPLE, _after_forced_blocks(triples), "open windows with three of my stones"
        ),
        Feature(
            "immediate",
            IMMEDIATE,
            _after_forced_blocks(immediate),
            "+1: I win next move; -1: I cannot stop their win next move",
        ),
        Feature(
            "zugzwang",
            ZUGZWANG,
            _after_forced_blocks(zugzwang),
            "odd/even rule: first player's live odd threat, else second's live even threat",
        ),
        Feature(
            "stacked",
            STACKED,
            _after_forced_blocks(stacked),
            "my live threats with another of mine right above",
        ),
        Feature(
            "live_threats",
            LIVE_THREAT,
            _after_forced_blocks(live_threats),
            "my threats not playable now and not above one of theirs",
        ),
        Feature(
            "good_live_threats",
            GOOD_LIVE_THREAT,
            _after_forced_blocks(good_live_threats),
            "my live threats on my parity rows (odd for the first player, even for the second)",
        ),
    ),
    "Allis-style threat analysis after the forced blocks: playable threats for the side to "
    "move, dead threats, the odd/even rule, stacked threats, plus the open windows of 'lines'",
    fast=_for_connect4(_threats_fast),
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
    evaluations={THREATS.name: THREATS, LINES.name: LINES},
    default_evaluation=THREATS.name,
    move_order=move_order,
    is_quiet=None,
    canonical_key=cast(Callable[[State[Any]], Hashable], canonical_key),
    is_capture=None,
    notes={
        "scale": "threats: windows 1/4/8, live threat 24, good-parity +40, stacked 96, "
        "zugzwang 192, immediate 2048; lines: a single 1, double 4, triple 8, threat 16, "
        "good-parity threat +16",
        "symmetry": "canonical_key merges mirror images; stored moves must be mirrored back",
    },
)
