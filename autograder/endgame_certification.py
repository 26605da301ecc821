"""Certify a drawn position as a puzzle, as the judge (autograder.endgame_judge) would judge it:
a proved red win within the options' plies and nodes, its difficulty, and the endgame
database's agreement where one is given."""

from __future__ import annotations

from collections.abc import Sequence

from autograder.endgame_judge import fresh
from autograder.endgame_puzzle_options import GROW_NODES, Found, Material, PuzzleOptions
from autograder.endgame_suite import Difficulty, PuzzleError
from autograder.endgame_verdict import DEFAULT_MAX_PLIES, WIN_SLACK
from bots.egdb.probe import DatabaseSolver
from bots.solvers.solution import Solution
from bots.solvers.solve import Solver
from games.checkers import (
    CheckersMove,
    CheckersState,
    format_board,
    format_fen,
)


def proved_win(state: CheckersState, options: PuzzleOptions) -> bool:
    """Whether the proof search, started afresh, proves a red win within `options.max_plies`
    in at most GROW_NODES nodes (a step of `grow_position`'s walk)."""
    solution = Solver().solve(
        state, max_plies=options.max_plies, max_nodes=min(options.max_nodes, GROW_NODES)
    )
    return solution.value == "win" and solution.limit is None


def certify_new(
    state: CheckersState,
    material: Material,
    options: PuzzleOptions,
    checker: DatabaseSolver | None,
    seen: set[str],
) -> Found | None:
    """`certify` a position not yet in `seen` (then added to it); None for one seen before."""
    text = format_board(state)
    if text in seen:
        return None
    seen.add(text)
    return certify(state, material, options, checker)


def certify(
    state: CheckersState,
    material: Material,
    options: PuzzleOptions,
    checker: DatabaseSolver | None,
) -> Found | None:
    """Return the puzzle `state` makes if `options` keep it (module docstring), else None."""
    moves = state.legal_moves()
    if len(moves) < options.min_choices:
        return None
    prover = Solver()  # a fresh table: whether a position is kept depends on it alone
    solution = prover.solve(state, max_plies=options.max_plies, max_nodes=options.max_nodes)
    if solution.value != "win" or solution.plies is None or solution.limit is not None:
        return None
    plies = solution.plies
    if plies < options.min_plies:
        return None
    best = [m for m in solution.best_moves if isinstance(m, CheckersMove)]
    if options.max_best is not None and len(best) > options.max_best:
        return None
    nodes = _judge_nodes(prover, state, plies, best, solution.nodes, options.max_nodes)
    if nodes is None:
        return None
    branching = _branching(prover, state, plies, best[0])
    if branching < options.min_branching:
        return None
    egdb = checker is not None and checker.database.covers(state)
    if egdb:
        assert checker is not None
        _cross_check(checker, state, options.max_plies, solution)
    difficulty = Difficulty(branching=branching, best=len(best), nodes=nodes)
    return Found(format_board(state), plies, material, difficulty, egdb)


def _judge_nodes(
    prover: Solver,
    state: CheckersState,
    plies: int,
    best: Sequence[CheckersMove],
    spent: int,
    max_nodes: int,
) -> int | None:
    """Decide each of red's first moves that is not a fastest win as the judge does (autograder.
    endgame: within the fastest win plus WIN_SLACK plies); return the nodes of it all, or None
    when one of them takes more than `max_nodes`."""
    bound = min(plies - 1 + WIN_SLACK, DEFAULT_MAX_PLIES)
    total = spent
    for move in state.legal_moves():
        if move in best:
            continue
        reply = prover.solve(
            fresh(state.apply_unchecked(move)), max_plies=max(bound, 1), max_nodes=max_nodes
        )
        if reply.limit == "nodes":
            return None
        total += reply.nodes
    return total


def _branching(prover: Solver, state: CheckersState, plies: int, first: CheckersMove) -> float:
    """Return the mean number of legal moves per ply along the main line: `first`, then each
    side's first best move (the proof search's order), until the game ends."""
    counts = [len(state.legal_moves())]
    position = fresh(state.apply_unchecked(first))
    left = plies - 1
    while left > 0:
        counts.append(len(position.legal_moves()))
        solution = prover.solve(position, max_plies=left)
        assert solution.plies == left and solution.best_moves, (solution.value, left)
        move = solution.best_moves[0]
        assert isinstance(move, CheckersMove)
        position = fresh(position.apply_unchecked(move))
        left -= 1
    return round(sum(counts) / len(counts), 2)


def _cross_check(
    checker: DatabaseSolver, state: CheckersState, max_plies: int, proof: Solution
) -> None:
    """Raise PuzzleError unless the database's value, distance and best moves are the proof
    search's."""
    known = checker.solve(state, max_plies=max_plies)
    same = (known.value, known.plies) == (proof.value, proof.plies) and set(
        known.best_moves
    ) == set(proof.best_moves)
    if not same:
        raise PuzzleError(
            f"the endgame database and the proof search disagree on {format_fen(state)}: database "
            f"{known.value} in {known.plies} by {sorted(map(str, known.best_moves))}, proof "
            f"search {proof.value} in {proof.plies} by {sorted(map(str, proof.best_moves))}; "
            "check it with `arena egdb status` and rebuild what is damaged"
        )
