"""Tic-tac-toe evaluation (open lines) and the board's eight symmetries.

A line (row, column or diagonal) is open for a player when it holds none of the opponent's
marks: the lecture's "length-3 runs left open". Empty lines are open for both and cancel out
of "mine minus theirs", so the evaluation counts lines holding one or two of a player's marks
and nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Final, cast

from bots.evaluation import Evaluation, Feature, Knowledge, StateFunction
from games import State
from games.tictactoe import FULL, LINES, SIZE, TicTacToeState

SINGLE: Final = 1
"""Per open line holding one of the player's marks."""
DOUBLE: Final = 4
"""Per open line holding two: a threat to win on the next move, worth more than two singles."""


def _for_tictactoe(function: Callable[[TicTacToeState], float]) -> StateFunction:
    """Type a tic-tac-toe measure as a StateFunction: Knowledge only hands it its own states."""
    return cast(StateFunction, function)


def _sides(state: TicTacToeState) -> tuple[int, int]:
    """Return (my marks, their marks) as 9-bit masks."""
    return (state.x, state.o) if state.to_move == 0 else (state.o, state.x)


def _open_lines(state: TicTacToeState, marks: int) -> int:
    """Return the open lines holding exactly `marks` of my marks, minus theirs."""
    mine, theirs = _sides(state)
    count = 0
    for line in LINES:
        if not line & theirs and (line & mine).bit_count() == marks:
            count += 1
        if not line & mine and (line & theirs).bit_count() == marks:
            count -= 1
    return count


def singles(state: TicTacToeState) -> int:
    """Open lines with one of my marks, minus theirs."""
    return _open_lines(state, 1)


def doubles(state: TicTacToeState) -> int:
    """Open lines with two of my marks, minus theirs."""
    return _open_lines(state, 2)


# Per 9-bit mask: 8-bit sets of lines (bit i for LINES[i]) that the mask meets in exactly one
# cell, in exactly two cells, and not at all.
_ONE: Final = tuple(
    sum(1 << i for i, line in enumerate(LINES) if (m & line).bit_count() == 1)
    for m in range(FULL + 1)
)
_TWO: Final = tuple(
    sum(1 << i for i, line in enumerate(LINES) if (m & line).bit_count() == 2)
    for m in range(FULL + 1)
)
_MISSED: Final = tuple(
    sum(1 << i for i, line in enumerate(LINES) if not m & line) for m in range(FULL + 1)
)


def _lines_fast(state: TicTacToeState) -> int:
    """Return the "lines" evaluation's weighted sum with three table lookups per side."""
    if state.to_move == 0:
        mine, theirs = state.x, state.o
    else:
        mine, theirs = state.o, state.x
    open_for_me = _MISSED[theirs]
    open_for_them = _MISSED[mine]
    return SINGLE * (
        (_ONE[mine] & open_for_me).bit_count() - (_ONE[theirs] & open_for_them).bit_count()
    ) + DOUBLE * (
        (_TWO[mine] & open_for_me).bit_count() - (_TWO[theirs] & open_for_them).bit_count()
    )


LINES_EVALUATION = Evaluation(
    "lines",
    (
        Feature("singles", SINGLE, _for_tictactoe(singles), "open lines with one of my marks"),
        Feature("doubles", DOUBLE, _for_tictactoe(doubles), "open lines with two of my marks"),
    ),
    "open lines weighted by the marks in them (1 and 4), mine minus theirs",
    fast=_for_tictactoe(_lines_fast),
)


def _transform(cell: int, symmetry: int) -> int:
    """Return where `cell` goes under symmetry 0-7 (4 rotations, then each one reflected)."""
    row, col = divmod(cell, 3)
    if symmetry >= 4:
        col = 2 - col
    for _ in range(symmetry % 4):
        row, col = col, 2 - row
    return 3 * row + col


SYMMETRIES: Final = tuple(tuple(_transform(cell, s) for cell in range(SIZE)) for s in range(8))
"""The eight cell permutations of the board; SYMMETRIES[0] is the identity."""

# Per symmetry, the image of every 9-bit mask, so a key's image is two lookups.
_IMAGES: Final = tuple(
    tuple(sum(1 << perm[c] for c in range(SIZE) if m >> c & 1) for m in range(FULL + 1))
    for perm in SYMMETRIES
)


def canonical_key(state: TicTacToeState) -> Hashable:
    """Return the least of the keys (x | o << 9) of the position's eight symmetric images.

    The side to move follows from the counts, which symmetries keep. Images have equal values,
    but a move stored under this key is a cell of the image with the least key.
    """
    x, o = state.x, state.o
    return min(image[x] | image[o] << SIZE for image in _IMAGES)


_CELL_ORDER: Final = (1, 0, 1, 0, 2, 0, 1, 0, 1)


def move_order(_state: State[Any], move: int) -> int:
    """Return a static ordering score, higher first: centre 2, corners 1, edges 0."""
    return _CELL_ORDER[move]


KNOWLEDGE: Final = Knowledge(
    game="tictactoe",
    evaluations={LINES_EVALUATION.name: LINES_EVALUATION},
    default_evaluation=LINES_EVALUATION.name,
    move_order=move_order,
    is_quiet=None,
    canonical_key=cast(Callable[[State[Any]], Hashable], canonical_key),
    is_capture=None,
    notes={
        "scale": "single 1, double 4 per open line",
        "symmetry": "canonical_key merges the 8 images; stored moves must be mapped back",
    },
)
