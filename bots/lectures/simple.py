"""The simplest players: a uniformly random move, and the lectures' one-level greedy search.

Source of the greedy search: CS 61B Lecture 22, "Backtracking searches, game trees",
`simpleFindMax`: make each legal move, give the resulting position a heuristic value, keep the
best. It looks one ply ahead and no further, so it takes an immediate win but does not see a
threat the opponent will carry out on the next move.
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable
from typing import Any

from bots.evaluation import StateFunction
from bots.result import SearchResult, SearchStats
from bots.scoring import ENGINE, Scoring
from games import State


def _terminal_result(state: State[Any], scoring: Scoring) -> SearchResult | None:
    """Return the result for a finished `state` (no move), or None while the game goes on."""
    outcome = state.outcome()
    if outcome is None:
        return None
    score = scoring.terminal(outcome, state.to_move, 0)
    return SearchResult(move=None, score=score, stats=SearchStats(nodes=1))


def random_move(state: State[Any], rng: random.Random) -> SearchResult:
    """Return a legal move of `state` drawn uniformly with `rng`; the score is 0.

    On a finished game the move is None and the score that of the outcome (ENGINE scoring).
    """
    finished = _terminal_result(state, ENGINE)
    if finished is not None:
        return finished
    move = rng.choice(state.legal_moves())
    stats = SearchStats(nodes=1, depth=1, pv=[state.format_move(move)])
    return SearchResult(move=move, score=0.0, pv=[move], stats=stats, best_moves=[move])


def greedy_move(
    state: State[Any],
    evaluate: StateFunction,
    *,
    scoring: Scoring = ENGINE,
    rng: random.Random | None = None,
) -> SearchResult:
    """Return the move whose resulting position scores best one ply ahead (`simpleFindMax`).

    A finished child scores `scoring.terminal(outcome, mover, 1)`; any other child scores
    `evaluate(child)` turned to the mover's view (evaluations score for the side to move, so
    negated when the turn passes). Scores are from the view of `state`'s side to move. Ties go to
    the first move in `state.legal_moves()` order, or to a move drawn with `rng` if one is given;
    `best_moves` lists every tied move. `stats.nodes` counts the root and each child,
    `stats.evaluations` each call of `evaluate` (one per unfinished child).
    """
    finished = _terminal_result(state, scoring)
    if finished is not None:
        return finished
    mover = state.to_move
    stats = SearchStats(nodes=1, depth=1)
    best_score = -float("inf")
    best_moves: list[Hashable] = []
    for move in state.legal_moves():
        child = state.apply_unchecked(move)
        stats.nodes += 1
        outcome = child.outcome()
        if outcome is not None:
            score = scoring.terminal(outcome, mover, 1)
        else:
            stats.evaluations += 1
            value = evaluate(child)
            if math.isnan(value):  # NaN compares false with everything and would drop the move
                raise ValueError(f"the evaluation returned NaN after {state.format_move(move)}")
            score = value if child.to_move == mover else -value
        if score > best_score:
            best_score, best_moves = score, [move]
        elif score == best_score:
            best_moves.append(move)
    move = best_moves[0] if rng is None else rng.choice(best_moves)
    stats.pv = [state.format_move(move)]
    return SearchResult(move=move, score=best_score, pv=[move], stats=stats, best_moves=best_moves)
