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

This module picks the method for a position; the searches to the end and by proof are
bots.solvers.search's, the limits of one solve bots.solvers.budget's.
"""

from __future__ import annotations

from typing import Any

from bots.engine.search import MAX_PLY
from bots.result import Clock, no_clock
from bots.solvers.budget import Budget
from bots.solvers.nim import solve_nim
from bots.solvers.search import ExactSearch
from bots.solvers.solution import Method, Progress, Solution, SolveProgress, terminal_solution
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
        self._search = ExactSearch(clock)

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
        budget = Budget(self.clock, deadline, max_nodes, progress)
        method = _method_of(state)
        if state.is_terminal():
            solution = terminal_solution(state, method)
        elif isinstance(state, ConnectFourState):
            solution = _solve_connect4(state, budget)
        elif method == "proof":
            solution = self._search.by_proof(state, max_plies or DEFAULT_CHECKERS_PLIES, budget)
        elif isinstance(state, NimState) and method == "nim-sum":
            solution = solve_nim(state)
        else:
            solution = self._search.to_the_end(state, budget)
        solution.seconds = self.clock() - budget.start
        return solution


def _method_of(state: State[Any]) -> Method:
    if isinstance(state, ConnectFourState):
        return "connect4"
    if isinstance(state, CheckersState):
        return "proof"
    if isinstance(state, NimState) and sum(state.heaps) > NIM_SEARCH_OBJECTS:
        return "nim-sum"
    return "search"


def _solve_connect4(state: ConnectFourState, budget: Budget) -> Solution:
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
