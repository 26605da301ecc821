"""Nim solved by theory: the value of any position and every winning move, from the nim-sum."""

from __future__ import annotations

from collections.abc import Hashable

from bots.evaluation.nim import mover_wins_by_sum
from bots.solvers.solution import Solution, terminal_solution
from games.nim import NimState


def solve_nim(state: NimState) -> Solution:
    """Return the exact value of a Nim position by the nim-sum theory, and every winning move.

    Instant for any heaps (Bouton's theorem with the misère rule, bots.evaluation.nim). The
    theory gives no length of play: `plies` is None, `best_moves` holds every winning move
    (not only the fastest) and is empty in a lost position, where every move loses.
    """
    if state.is_terminal():
        return terminal_solution(state, "nim-sum")
    heaps, misere = state.heaps, state.game.misere
    nim_sum = 0
    for size in heaps:
        nim_sum ^= size
    large = sum(1 for size in heaps if size > 1)
    if not mover_wins_by_sum(nim_sum, large > 0, misere):
        return Solution("loss", -1, None, [], lower=-1, upper=-1, method="nim-sum")
    best: list[Hashable] = []
    for index, size in enumerate(heaps):
        # A move wins when it leaves a position lost for the opponent: the XOR 0 with a heap of
        # 2 or more, or (misère) only heaps of 0 and 1. Only these sizes can be left by one.
        for left in sorted({size ^ nim_sum, 0, 1}):
            if left < size:
                child_sum = nim_sum ^ size ^ left
                child_large = large - (size > 1) + (left > 1) > 0
                if not mover_wins_by_sum(child_sum, child_large, misere):
                    best.append((index, size - left))
    return Solution("win", 1, None, best, lower=1, upper=1, method="nim-sum")
