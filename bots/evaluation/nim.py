"""Nim evaluation: the exact game value from the nim-sum (Bouton's theorem).

Normal play: the side to move wins iff the XOR of the heap sizes is not 0. Misère play: the
same, except when no heap has more than one object; then the side to move wins iff the number
of heaps of size 1 is even (that is, iff the XOR is 0); Bouton (1901).

The value of an impartial game from the mover's point of view depends only on the multiset of
non-empty heaps, not on which player is to move: the canonical key is the sorted non-zero
heap sizes, so a transposition table keyed on it must store values from the side to move's
point of view (negamax style), as every evaluation here does.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Final, cast

from bots.evaluation import Evaluation, Feature, Knowledge, StateFunction
from games import State
from games.nim import NimMove, NimState

WIN_VALUE: Final = 1000
"""The score of a won position for the side to move; a lost one scores -WIN_VALUE. Exact, yet
well below bots.scoring.WIN, so a search still prefers wins it has actually reached."""


def mover_wins(heaps: tuple[int, ...], misere: bool) -> bool:
    """Return True if the side to move wins `heaps` with perfect play under the given rule."""
    nim_sum = 0
    large = False
    for size in heaps:
        nim_sum ^= size
        if size > 1:
            large = True
    return mover_wins_by_sum(nim_sum, large, misere)


def mover_wins_by_sum(nim_sum: int, large: bool, misere: bool) -> bool:
    """Return `mover_wins` for heaps whose XOR is `nim_sum`, `large` if any has 2 or more.

    The two numbers decide the game, so a caller that updates them move by move (the nim-sum
    solver in bots.solvers.solve) scores each move in constant time.
    """
    if misere and not large:
        # Only heaps of 0 or 1 left: the XOR is the parity of the ones, and the mover wins
        # when it is even (the opponent then takes the last object).
        return nim_sum == 0
    return nim_sum != 0


def mover_outcome(state: NimState) -> int:
    """Return +1 if the side to move wins with perfect play, else -1."""
    return 1 if mover_wins(state.heaps, state.game.misere) else -1


NIMSUM = Evaluation(
    "nimsum",
    (
        Feature(
            "mover_wins",
            WIN_VALUE,
            cast(StateFunction, mover_outcome),
            "+1 if the side to move wins under the game's rule (nim-sum theory), else -1",
        ),
    ),
    "exact: +1000 if the side to move wins with perfect play, -1000 if it loses",
)


def canonical_key(state: NimState) -> Hashable:
    """Return the sorted sizes of the non-empty heaps (heap order and the mover do not matter)."""
    return tuple(sorted(size for size in state.heaps if size))


def move_order(state: NimState, move: NimMove) -> int:
    """Return 1 for a move that leaves the opponent a lost position, else 0 (higher first)."""
    index, count = move
    heaps = state.heaps
    child = (*heaps[:index], heaps[index] - count, *heaps[index + 1 :])
    return 0 if mover_wins(child, state.game.misere) else 1


KNOWLEDGE: Final = Knowledge(
    game="nim",
    evaluations={NIMSUM.name: NIMSUM},
    default_evaluation=NIMSUM.name,
    move_order=cast(Callable[[State[Any], Any], float], move_order),
    is_quiet=None,
    canonical_key=cast(Callable[[State[Any]], Hashable], canonical_key),
    is_capture=None,
    notes={
        "scale": "exact: +1000 won, -1000 lost, for the side to move",
        "symmetry": "canonical_key ignores heap order, empty heaps and the side to move: "
        "store values from the side to move's point of view",
    },
)
