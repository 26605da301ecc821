"""Exact solving: the game-theoretic value of a position and every optimal move.

Tic-tac-toe and Nim are searched to the end (alpha-beta with a transposition table keyed on
the game's symmetries). Connect Four uses the dedicated solver (bots.connect4_solver).
Checkers is solved by a proof search: iterative deepening with unknown positions at the depth
limit scoring as draws, so the first depth showing a forced win or loss gives the shortest
win (and the longest resistance); within `max_plies` without a proof the value is "unknown".
A draw in checkers is not proved this way (cycles of king moves never end the search).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from bots.connect4_solver import Solver as ConnectFourSolver
from bots.engine import AlphaBetaEngine
from bots.knowledge import knowledge_for
from bots.result import Clock, no_clock
from bots.scoring import ENGINE
from games import State
from games.connect4 import ConnectFourState

DEFAULT_CHECKERS_PLIES = 30
SOLVER_TABLE_SIZE = 1 << 16
"""Slots of a solver's table: tic-tac-toe has 5,478 positions, misere Nim 1,3,5,7 has 384."""
UNLIMITED = 10_000
"""A depth no game here reaches (tic-tac-toe and Nim end long before); >= TO_THE_END."""


@dataclass(slots=True)
class Solution:
    """The solved value of a position for its side to move.

    `value` is "win", "loss", "draw" or "unknown" (no proof within the search limit).
    `score` is the Connect Four score convention for connect4 (from the side to move: +(22-k)
    for a win with its k-th stone, -(22-k) for a loss to the opponent's k-th stone, 0 draw),
    and +1 / 0 / -1 for the other games. `plies` is the length of the game under optimal play
    (the winner winning as fast as possible, the loser resisting as long as possible), None
    for a draw or an unknown value. `best_moves` holds every optimal move.
    """

    value: str
    score: int
    plies: int | None
    best_moves: list[Hashable] = field(default_factory=list)
    nodes: int = 0
    seconds: float = 0.0


def solve(
    state: State[Any],
    *,
    max_plies: int | None = None,
    clock: Clock = no_clock,
) -> Solution:
    """Return the exact value of `state` and every optimal move (a fresh `Solver`).

    `max_plies` bounds the proof search for checkers (default 30 plies); other games are
    always searched to the end.
    """
    return Solver(clock=clock).solve(state, max_plies=max_plies)


class Solver:
    """Solves positions, keeping one search table per game variant between positions."""

    def __init__(self, *, clock: Clock = no_clock) -> None:
        self.clock = clock
        self._engines: dict[Hashable, AlphaBetaEngine] = {}

    def solve(self, state: State[Any], *, max_plies: int | None = None) -> Solution:
        """Return the exact value of `state` and every optimal move (see `solve`)."""
        start = self.clock()
        if isinstance(state, ConnectFourState):
            solution = _solve_connect4(state)
        elif state.game.name == "checkers":
            solution = self._solve_by_proof(state, max_plies or DEFAULT_CHECKERS_PLIES)
        else:
            solution = self._solve_to_the_end(state)
        solution.seconds = self.clock() - start
        return solution

    def _engine(self, state: State[Any]) -> AlphaBetaEngine:
        game = state.game
        variant = game.rules_key()
        engine = self._engines.get(variant)
        if engine is None:
            # Full width, no quiescence: a proof counts every ply, so re-scoring the root's
            # children one ply shallower finds exactly the moves that keep the proof.
            knowledge = dataclasses.replace(knowledge_for(game), is_quiet=None)
            engine = AlphaBetaEngine(
                knowledge, _unknown_is_draw, tt=True, ordering=True, table_size=SOLVER_TABLE_SIZE
            )
            self._engines[variant] = engine
        return engine

    def _solve_to_the_end(self, state: State[Any]) -> Solution:
        if state.is_terminal():
            return _terminal_solution(state)
        scores, nodes = _children_scores(self._engine(state), state, UNLIMITED)
        best = max(scores)
        moves = [m for m, s in zip(state.legal_moves(), scores, strict=True) if s == best]
        value, score, plies = _value_of(best)
        return Solution(value, score, plies, moves, nodes)

    def _solve_by_proof(self, state: State[Any], max_plies: int) -> Solution:
        if state.is_terminal():
            return _terminal_solution(state)
        engine = self._engine(state)
        nodes = 0
        for depth in range(1, max_plies + 1):
            result = engine.search(state, depth)
            nodes += result.stats.nodes
            if ENGINE.is_win(abs(result.score)):
                value, score, plies = _value_of(result.score)
                scores, more = _children_scores(engine, state, depth - 1)
                best = max(scores)
                moves = [m for m, s in zip(state.legal_moves(), scores, strict=True) if s == best]
                return Solution(value, score, plies, moves, nodes + more)
        return Solution("unknown", 0, None, [], nodes)


def _solve_connect4(state: ConnectFourState) -> Solution:
    if state.is_terminal():
        return _terminal_solution(state)
    result = ConnectFourSolver().solve(state)
    score = result.score
    value = "win" if score > 0 else "loss" if score < 0 else "draw"
    plies = None
    mine = state.ply // 2  # stones the side to move has played
    if score > 0:  # it wins with its stone number 22 - score, on its own plies 1, 3, 5...
        plies = 2 * (22 - score - mine) - 1
    elif score < 0:  # the opponent wins with its stone number 22 + score, on plies 2, 4...
        plies = 2 * (22 + score - (state.ply - mine))
    return Solution(value, score, plies, list(result.best_moves), result.nodes)


def _terminal_solution(state: State[Any]) -> Solution:
    outcome = state.outcome()
    assert outcome is not None
    if outcome.winner is None:
        return Solution("draw", 0, 0)
    won = outcome.winner == state.to_move
    return Solution("win" if won else "loss", 1 if won else -1, 0)


def _value_of(score: float) -> tuple[str, int, int | None]:
    if ENGINE.is_win(score):
        return "win", 1, int(ENGINE.win - score)
    if ENGINE.is_loss(score):
        return "loss", -1, int(ENGINE.win + score)
    return "draw", 0, None


def _children_scores(
    engine: AlphaBetaEngine, state: State[Any], depth: int
) -> tuple[list[float], int]:
    """Score every root move exactly (a full-window search of each child); count the nodes."""
    scores = []
    nodes = 0
    for move in state.legal_moves():
        child = state.apply_unchecked(move)
        outcome = child.outcome()
        if outcome is not None:
            scores.append(ENGINE.terminal(outcome, state.to_move, 1))
        elif depth >= 1:
            result = engine.search(child, depth)
            nodes += result.stats.nodes
            scores.append(-_shift(result.score))
        else:  # no search left: an unfinished line counts as unknown, scored like a draw
            scores.append(0.0)
    return scores, nodes


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
