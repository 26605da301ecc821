"""Exact solving: the game-theoretic value of a position and every optimal move.

Tic-tac-toe and Nim are searched to the end (alpha-beta with a transposition table keyed on
the game's symmetries). Nim with more than NIM_SEARCH_OBJECTS objects is solved by the nim-sum
theory instead (bots.solvers.nim): exact and instant for any heaps, but without the length of play.
Connect Four uses the dedicated solver compiled (bots.core.connect4, loaded at the first Connect
Four solve: compiling it once per machine takes seconds); bots.solvers.connect4 is the same
algorithm in plain Python, its reference.
Checkers is solved by a proof search: iterative deepening with unknown positions at the depth
limit scoring as draws, so the first depth showing a forced win or loss gives the shortest
win (and the longest resistance); within `max_plies` without a proof the value is "unknown".
A draw in checkers is not proved this way (cycles of king moves never end the search).

Every solve may be given a deadline on the solver's clock, a node budget and a progress
callback; a limit never raises: the solve returns what it knows (see `Solution`). `refuse`
says beforehand which positions are hopeless for this solver.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Iterator
from typing import Any

from bots.common import SearchTimeout
from bots.engine.search import MAX_PLY, AlphaBetaEngine
from bots.evaluation.knowledge import knowledge_for
from bots.result import Clock, no_clock
from bots.scoring import ENGINE
from bots.solvers.nim import solve_nim
from bots.solvers.solution import (
    Limit,
    Method,
    Progress,
    Solution,
    SolveProgress,
    terminal_solution,
)
from games import State
from games.checkers import CheckersState
from games.connect4 import ConnectFourState
from games.nim import NimState

DEFAULT_CHECKERS_PLIES = 30
CHECKERS_MAX_PIECES = 12
"""The most pieces `refuse` lets the checkers proof search try. Measured with a 60 s limit: no
game position of 6 to 14 pieces and no balanced one of 7 or more was decided; lopsided ones
were, less and less often beyond 10 pieces (docs/BOTS.md)."""
NIM_SEARCH_OBJECTS = 36
"""Nim with more objects than this is solved by theory: the search may take over a second, and a
game longer than the engine's MAX_PLY plies cannot be searched at all."""
SOLVER_TABLE_SIZE = 1 << 16
"""Slots of a solver's table: tic-tac-toe has 5,478 positions, misere Nim 1,3,5,7 has 384."""
UNLIMITED = 10_000
"""A depth no game here reaches (tic-tac-toe and Nim end long before); >= TO_THE_END."""


def solve(
    state: State[Any],
    *,
    max_plies: int | None = None,
    clock: Clock = no_clock,
    deadline: float | None = None,
    max_nodes: int | None = None,
    progress: Progress | None = None,
) -> Solution:
    """Return the exact value of `state` and every optimal move (a fresh `Solver`).

    `max_plies` bounds the proof search for checkers (default 30 plies); other games are
    always searched to the end. The limits and `progress` are those of `Solver.solve`.
    """
    return Solver(clock=clock).solve(
        state, max_plies=max_plies, deadline=deadline, max_nodes=max_nodes, progress=progress
    )


def refuse(state: State[Any]) -> str | None:
    """Return why solving `state` is hopeless for this solver, or None if it is worth a try.

    Checkers with more than CHECKERS_MAX_PIECES pieces is refused: a proof needs the game to
    end within the depth searched (about 15 to 20 plies in a minute), which it practically never
    does with that many pieces, and a draw is never proved. Every other position may be
    tried; the limits of `Solver.solve` bound the time it takes.
    """
    if isinstance(state, CheckersState):
        pieces = (state.black | state.white).bit_count()
        if pieces > CHECKERS_MAX_PIECES:
            return (
                f"checkers with {pieces} pieces is beyond this solver: its proof search "
                f"proves forced wins and losses only in endgames of at most "
                f"{CHECKERS_MAX_PIECES} pieces, and never proves a draw"
            )
    return None


class Solver:
    """Solves positions, keeping one search table per game variant between positions."""

    def __init__(self, *, clock: Clock = no_clock) -> None:
        self.clock = clock
        self._engines: dict[Hashable, AlphaBetaEngine] = {}

    def solve(
        self,
        state: State[Any],
        *,
        max_plies: int | None = None,
        deadline: float | None = None,
        max_nodes: int | None = None,
        progress: Progress | None = None,
    ) -> Solution:
        """Return the exact value of `state` and every optimal move (see `solve`).

        Limits (none by default): the solve stops when the solver's clock reaches `deadline`
        (a time on that clock, so a real clock must be passed to the Solver) or after
        `max_nodes` nodes, and returns what it knows with `limit` set (see `Solution`).
        `progress` is called with a `SolveProgress` as the solve advances: every few thousand
        nodes for Connect Four, after each proof depth for checkers, after each root move
        elsewhere. Raises ValueError for `max_plies` above MAX_PLY or `max_nodes` below 1.
        """
        if max_plies is not None and max_plies > MAX_PLY:
            raise ValueError(f"max_plies must be at most {MAX_PLY}, not {max_plies}")
        if max_nodes is not None and max_nodes < 1:
            raise ValueError(f"max_nodes must be at least 1, not {max_nodes}")
        if deadline is not None and self.clock is no_clock:
            raise ValueError("a deadline needs a clock: create the Solver with one")
        budget = _Budget(self.clock, deadline, max_nodes, progress)
        method = _method_of(state)
        if state.is_terminal():
            solution = terminal_solution(state, method)
        elif isinstance(state, ConnectFourState):
            solution = _solve_connect4(state, budget)
        elif method == "proof":
            solution = self._solve_by_proof(state, max_plies or DEFAULT_CHECKERS_PLIES, budget)
        elif isinstance(state, NimState) and method == "nim-sum":
            solution = solve_nim(state)
        else:
            solution = self._solve_to_the_end(state, budget)
        solution.seconds = self.clock() - budget.start
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
                knowledge,
                _unknown_is_draw,
                tt=True,
                ordering=True,
                table_size=SOLVER_TABLE_SIZE,
                clock=self.clock,
            )
            self._engines[variant] = engine
        return engine

    def _solve_to_the_end(self, state: State[Any], budget: _Budget) -> Solution:
        scores: list[float] = []
        try:
            for score in _child_scores(self._engine(state), state, UNLIMITED, budget):
                scores.append(score)
                budget.report(_value_of(max(scores))[1], 1)
        except _Stopped as stop:
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

    def _solve_by_proof(self, state: State[Any], max_plies: int, budget: _Budget) -> Solution:
        engine = self._engine(state)
        completed = 0
        try:
            for depth in range(1, max_plies + 1):
                root = budget.search(engine, state, depth)
                if ENGINE.is_win(abs(root)):
                    return _proved(engine, state, depth, root, budget)
                completed = depth
                budget.report(-1, 1, completed)
        except _Stopped as stop:
            return _no_proof(completed, budget.nodes, stop.limit)
        return _no_proof(max_plies, budget.nodes, "plies")


class _Stopped(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Raised inside a solve when one of its limits is reached."""

    def __init__(self, limit: Limit) -> None:
        super().__init__(limit)
        self.limit: Limit = limit


class _Budget:
    """The limits, node count and progress reports of one solve."""

    def __init__(
        self,
        clock: Clock,
        deadline: float | None,
        max_nodes: int | None,
        progress: Progress | None,
    ) -> None:
        self.clock = clock
        self.deadline = deadline
        self.max_nodes = max_nodes
        self.progress = progress
        self.start = clock()
        self.nodes = 0

    def search(self, engine: AlphaBetaEngine, state: State[Any], depth: int) -> float:
        """Return the engine's score of `state` at `depth`, counting its nodes.

        Raises _Stopped when the deadline passes or the node budget runs out first.
        """
        left = None if self.max_nodes is None else self.max_nodes - self.nodes
        if left is not None and left <= 0:
            raise _Stopped("nodes")
        try:
            result = engine.search(state, depth, deadline=self.deadline, max_nodes=left)
        except SearchTimeout as timeout:
            searched = timeout.args[0].nodes
            self.nodes += searched
            raise _Stopped("nodes" if left is not None and searched >= left else "time") from None
        self.nodes += result.stats.nodes
        return result.score

    def report(self, lower: int, upper: int, depth: int | None = None) -> None:
        """Tell the progress callback, if any, what is known now."""
        if self.progress is not None:
            seconds = self.clock() - self.start
            self.progress(SolveProgress(lower, upper, depth, self.nodes, seconds))


def _method_of(state: State[Any]) -> Method:
    if isinstance(state, ConnectFourState):
        return "connect4"
    if isinstance(state, CheckersState):
        return "proof"
    if isinstance(state, NimState) and sum(state.heaps) > NIM_SEARCH_OBJECTS:
        return "nim-sum"
    return "search"


def _solve_connect4(state: ConnectFourState, budget: _Budget) -> Solution:
    progress = budget.progress

    def report(lower: int, upper: int, nodes: int) -> None:
        assert progress is not None  # passed to the solver only then
        progress(SolveProgress(lower, upper, None, nodes, budget.clock() - budget.start))

    # The compiled solver imports numba: only a Connect Four solve pays for it.
    from bots.core import load  # noqa: PLC0415 - see above

    load("connect4")
    from bots.core.connect4 import Solver as ConnectFourSolver  # noqa: PLC0415 - see above

    result = ConnectFourSolver().solve(
        state,
        clock=budget.clock,
        deadline=budget.deadline,
        max_nodes=budget.max_nodes,
        progress=report if progress is not None else None,
    )
    score = result.score
    if result.bounds is not None:
        lower, upper = result.bounds
        if lower < upper:
            return Solution(
                "unknown",
                0,
                None,
                [],
                result.nodes,
                lower=lower,
                upper=upper,
                method="connect4",
                limit=result.limit,
            )
        score = lower
    value = "win" if score > 0 else "loss" if score < 0 else "draw"
    plies = None
    mine = state.ply // 2  # stones the side to move has played
    if score > 0:  # it wins with its stone number 22 - score, on its own plies 1, 3, 5...
        plies = 2 * (22 - score - mine) - 1
    elif score < 0:  # the opponent wins with its stone number 22 + score, on plies 2, 4...
        plies = 2 * (22 + score - (state.ply - mine))
    return Solution(
        value,
        score,
        plies,
        list(result.best_moves),
        result.nodes,
        lower=score,
        upper=score,
        method="connect4",
        limit=result.limit,
    )


def _proved(
    engine: AlphaBetaEngine, state: State[Any], depth: int, root: float, budget: _Budget
) -> Solution:
    """Return the Solution of a proof found at `depth`, listing the moves that keep it."""
    value, score, plies = _value_of(root)
    scores: list[float] = []
    limit: Limit | None = None
    try:
        for child_score in _child_scores(engine, state, depth - 1, budget):
            scores.append(child_score)
    except _Stopped as stop:
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
    engine: AlphaBetaEngine, state: State[Any], depth: int, budget: _Budget
) -> Iterator[float]:
    """Yield the exact score of every root move in turn (a full-window search of each child).

    Raises _Stopped at a limit; the scores yielded before it stay valid.
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
