"""Exact values by the engine's search: to the end of the game, or by proof for checkers.

Tic-tac-toe and small Nim are searched to the end: every root move gets its exact score from a
full-window alpha-beta search with a transposition table keyed on the game's symmetries.
Checkers is solved by a proof search: iterative deepening with unknown positions at the depth
limit scoring as draws, so the first depth showing a forced win or loss gives the shortest win
(and the longest resistance); within `max_plies` without a proof the value is "unknown". Both
search through the solve's `Budget` and return what they know when it runs out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Iterator
from typing import Any

from bots.engine.search import AlphaBetaEngine
from bots.evaluation.knowledge import knowledge_for
from bots.result import Clock
from bots.scoring import ENGINE
from bots.solvers.budget import Budget, Stopped
from bots.solvers.solution import Limit, Solution
from games import State

SOLVER_TABLE_SIZE = 1 << 16
"""Slots of a solver's table: tic-tac-toe has 5,478 positions, misere Nim 1,3,5,7 has 384."""
UNLIMITED = 10_000
"""A depth no game here reaches (tic-tac-toe and Nim end long before); >= TO_THE_END."""


class ExactSearch:
    """Exact searches with the engine, keeping one search table per game variant."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._engines: dict[Hashable, AlphaBetaEngine] = {}

    def _engine(self, state: State[Any]) -> AlphaBetaEngine:
        game = state.game
        variant = game.rules_key()
        engine = self._engines.get(variant)
        if engine is None:
            # Full width, no quiescence: a proof counts every ply, so re-scoring the root's
            # children one ply shallower finds exactly the moves that keep the proof.
            knowledge = dataclasses.replace(knowledge_for(game), is_quiet=None)
            engine = AlphaBetaEngine(
                knowledge,
                _unknown_is_draw,
                tt=True,
                ordering=True,
                table_size=SOLVER_TABLE_SIZE,
                clock=self.clock,
            )
            self._engines[variant] = engine
        return engine

    def to_the_end(self, state: State[Any], budget: Budget) -> Solution:
        """Return the exact value of `state` and every optimal move, searched to the end."""
        scores: list[float] = []
        try:
            for score in _child_scores(self._engine(state), state, UNLIMITED, budget):
                scores.append(score)
                budget.report(_value_of(max(scores))[1], 1)
        except Stopped as stop:
            # The root is worth at least its best move searched so far.
            lower = _value_of(max(scores))[1] if scores else -1
            value, score = ("win", 1) if lower == 1 else ("unknown", 0)
            return Solution(
                value,
                score,
                None,
                [],
                budget.nodes,
                lower=lower,
                upper=1,
                method="search",
                limit=stop.limit,
            )
        best = max(scores)
        moves = [m for m, s in zip(state.legal_moves(), scores, strict=True) if s == best]
        value, score, plies = _value_of(best)
        return Solution(
            value, score, plies, moves, budget.nodes, lower=score, upper=score, method="search"
        )

    def by_proof(self, state: State[Any], max_plies: int, budget: Budget) -> Solution:
        """Return the value of `state` proved by iterative deepening to at most `max_plies`.

        The first depth that proves a forced win or loss gives the shortest one; without a
        proof the value is "unknown", with the depth the search completed.
        """
        engine = self._engine(state)
        completed = 0
        try:
            for depth in range(1, max_plies + 1):
                root = budget.search(engine, state, depth)
                if ENGINE.is_win(abs(root)):
                    return _proved(engine, state, depth, root, budget)
                completed = depth
                budget.report(-1, 1, completed)
        except Stopped as stop:
            return _no_proof(completed, budget.nodes, stop.limit)
        return _no_proof(max_plies, budget.nodes, "plies")


def _proved(
    engine: AlphaBetaEngine, state: State[Any], depth: int, root: float, budget: Budget
) -> Solution:
    """Return the Solution of a proof found at `depth`, listing the moves that keep it."""
    value, score, plies = _value_of(root)
    scores: list[float] = []
    limit: Limit | None = None
    try:
        for child_score in _child_scores(engine, state, depth - 1, budget):
            scores.append(child_score)
    except Stopped as stop:
        limit = stop.limit
    # A move is optimal when its exact score equals the root's; with every move scored, that is
    # the best of them.
    best = max(scores) if limit is None else root
    moves = [m for m, s in zip(state.legal_moves(), scores, strict=False) if s == best]
    return Solution(
        value,
        score,
        plies,
        moves,
        budget.nodes,
        lower=score,
        upper=score,
        method="proof",
        limit=limit,
    )


def _no_proof(depth: int, nodes: int, limit: Limit) -> Solution:
    return Solution(
        "unknown",
        0,
        None,
        [],
        nodes,
        lower=-1,
        upper=1,
        method="proof",
        limit=limit,
        depth=depth,
    )


def _value_of(score: float) -> tuple[str, int, int | None]:
    if ENGINE.is_win(score):
        return "win", 1, int(ENGINE.win - score)
    if ENGINE.is_loss(score):
        return "loss", -1, int(ENGINE.win + score)
    return "draw", 0, None


def _child_scores(
    engine: AlphaBetaEngine, state: State[Any], depth: int, budget: Budget
) -> Iterator[float]:
    """Yield the exact score of every root move in turn (a full-window search of each child).

    Raises Stopped at a limit; the scores yielded before it stay valid.
    """
    for move in state.legal_moves():
        child = state.apply_unchecked(move)
        outcome = child.outcome()
        if outcome is not None:
            yield ENGINE.terminal(outcome, state.to_move, 1)
        elif depth >= 1:
            yield -_shift(budget.search(engine, child, depth))
        else:  # no search left: an unfinished line counts as unknown, scored like a draw
            yield 0.0


def _shift(score: float) -> float:
    """Move a child's score one ply further from the root (wins and losses only)."""
    if ENGINE.is_win(score):
        return score - 1
    if ENGINE.is_loss(score):
        return score + 1
    return score


def _unknown_is_draw(state: State[Any]) -> float:
    """The proof search's horizon: a line not yet decided counts as a draw."""
    return 0.0
