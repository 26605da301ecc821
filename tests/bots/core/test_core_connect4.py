"""The compiled Connect Four core against Pons' test sets, the Python solver and games.perft.

The Python solver (bots.solvers.connect4) is the reference: the compiled one must give the same
scores, best moves and node counts, stop at the same calls under a node budget or a deadline
and report the same progress. Pons' sets (../shared/data/connect4/, skipped when absent) give
the published scores; perft is held to the pure-Python games.perft.
"""

from __future__ import annotations

import itertools
import random
from functools import cache
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bots.solvers import connect4 as connect4_solver
from bots.solvers import connect4_search
from bots.solvers.connect4 import CHECK_EVERY, SolveResult
from games import perft
from games.connect4 import BOARD, ConnectFour, ConnectFourState, has_four
from tests.conftest import shared_file

GAME = ConnectFour()
MIDDLE = "146411712567"
"""A 12-stone position settled in about 146,000 calls: big enough to stop early."""
DRAWN_GAME = "547125662261271266215743771576315353334444"


@pytest.fixture(scope="session")
def core() -> ModuleType:
    """The compiled core, loaded (or compiled, once per machine) for the whole session."""
    from bots.core import load

    load("connect4")
    import bots.core.connect4

    return bots.core.connect4


@cache
def lines(name: str) -> tuple[tuple[str, int], ...]:
    """Return the (move string, score) lines of a Pons test file."""
    rows = []
    for line in shared_file(f"data/connect4/{name}").read_text(encoding="ascii").splitlines():
        moves, score = line.split()
        rows.append((moves, int(score)))
    return tuple(rows)


def random_positions(seed: int, count: int, min_ply: int, max_ply: int) -> list[ConnectFourState]:
    """Positions of random games after `min_ply` to `max_ply` plies, finished games included."""
    rng = random.Random(seed)
    positions = []
    while len(positions) < count:
        state = GAME.initial_state()
        for _ in range(rng.randint(min_ply, max_ply)):
            moves = state.legal_moves()
            if not moves:
                break
            state = state.apply_unchecked(rng.choice(moves))
        positions.append(state)
    return positions


def same_solution(left: SolveResult, right: SolveResult) -> bool:
    """True when two results agree on everything but the time taken."""
    fields = ("score", "best_moves", "nodes", "weak", "limit", "bounds")
    return all(getattr(left, name) == getattr(right, name) for name in fields)


# -- perft -------------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", range(8))
def test_perft_from_the_start_equals_games_perft(core: ModuleType, depth: int) -> None:
    start = GAME.initial_state()
    assert core.perft(start, depth) == perft(start, depth)


def test_perft_counts_wins_as_leaves_and_nothing_below_them(core: ModuleType) -> None:
    won = GAME.parse_position("4455667")  # the first player has four in a row
    assert won.is_terminal()
    assert [core.perft(won, d) for d in range(3)] == [1, 0, 0]
    full = GAME.parse_position(DRAWN_GAME)
    assert [core.perft(full, d) for d in range(3)] == [1, 0, 0]
    with pytest.raises(ValueError, match="depth"):
        core.perft(full, -1)


def test_perft_of_random_positions_equals_games_perft(core: ModuleType) -> None:
    for state in random_positions(seed=7, count=60, min_ply=0, max_ply=42):
        for depth in range(5):
            assert core.perft(state, depth) == perft(state, depth), (state.history, depth)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 6), max_size=42), st.integers(0, 4))
def test_perft_property(core: ModuleType, columns: list[int], depth: int) -> None:
    state = GAME.initial_state()
    for col in columns:
        if col in state.legal_moves():
            state = state.apply_unchecked(col)
    assert core.perft(state, depth) == perft(state, depth)


@pytest.mark.slow
def test_deep_perft_from_the_start(core: ModuleType) -> None:
    # games.perft is too slow this deep; each level is the sum of its children's counts.
    start = GAME.initial_state()
    children = [start.apply_unchecked(m) for m in start.legal_moves()]
    assert core.perft(start, 9) == sum(core.perft(c, 8) for c in children)
    assert core.perft(start, 8) == perft(start, 8) == 5673234


def test_has_four_and_winning_cells_match_the_rules(core: ModuleType) -> None:
    for state in random_positions(seed=3, count=200, min_ply=0, max_ply=42):
        theirs = state.current ^ state.mask
        assert core.has_four(theirs) == has_four(theirs)
        free = BOARD ^ state.mask
        expected = connect4_search.winning_cells(state.current, state.mask)
        assert core.winning_cells(state.current, free) == expected


# -- the solver against Pons' sets -------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "step"),
    [("Test_L3_R1", 10), ("Test_L2_R1", 10), ("Test_L2_R2", 250), ("Test_L1_R1", 100)],
)
def test_scores_and_node_counts_on_a_sample(core: ModuleType, name: str, step: int) -> None:
    compiled, reference = core.Solver(), connect4_solver.Solver()
    for moves, score in lines(name)[::step]:
        state = GAME.parse_position(moves)
        for weak in (False, True):
            compiled.reset()
            reference.reset()
            expected = (score > 0) - (score < 0) if weak else score
            assert compiled.score(state, weak=weak) == expected, moves
            reference.score(state, weak=weak)
            assert compiled.nodes == reference.nodes, moves


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "limit"),
    [
        ("Test_L3_R1", 1000),
        ("Test_L2_R1", 1000),
        ("Test_L2_R2", 1000),
        ("Test_L1_R1", 1000),
        ("Test_L1_R2", 100),
        ("Test_L1_R3", 5),
    ],
)
def test_every_line_of_the_sets(core: ModuleType, name: str, limit: int) -> None:
    solver = core.Solver()
    wrong = []
    for moves, score in lines(name)[:limit]:
        solver.reset()
        if solver.score(GAME.parse_position(moves)) != score:
            wrong.append(moves)
    assert wrong == []


# -- the solver against the Python solver ------------------------------------------------------


@pytest.mark.parametrize("weak", [False, True])
def test_solve_equals_the_python_solver_on_random_positions(core: ModuleType, weak: bool) -> None:
    for state in random_positions(seed=11, count=40, min_ply=22, max_ply=42):
        compiled = core.Solver().solve(state, weak=weak)
        reference = connect4_solver.Solver().solve(state, weak=weak)
        assert same_solution(compiled, reference), state.history


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=24, max_size=42))
def test_solve_property(core: ModuleType, choices: list[int]) -> None:
    # Each choice picks among the legal moves, so the position has as many stones as choices
    # (unless the game ends first): at least 24, where the Python solver takes milliseconds.
    state = GAME.initial_state()
    for choice in choices:
        moves = state.legal_moves()
        if not moves:
            break
        state = state.apply_unchecked(moves[choice % len(moves)])
    compiled = core.Solver().solve(state)
    assert same_solution(compiled, connect4_solver.Solver().solve(state))


def test_a_kept_table_counts_as_the_python_one(core: ModuleType) -> None:
    # No reset between positions: later positions reuse the table, as in the Python solver.
    compiled, reference = core.Solver(), connect4_solver.Solver()
    for state in random_positions(seed=5, count=30, min_ply=16, max_ply=30):
        assert compiled.score(state) == reference.score(state)
        assert compiled.nodes == reference.nodes
        assert compiled.table_entries == reference.table_entries
    compiled.reset()
    assert compiled.table_entries == 0


@pytest.mark.parametrize("table_size", [1, 7, 1000])
def test_a_small_table_empties_as_the_python_one(core: ModuleType, table_size: int) -> None:
    compiled = core.Solver(table_size)
    reference = connect4_solver.Solver(table_size)
    for moves, _ in lines("Test_L2_R1")[:40:4]:
        state = GAME.parse_position(moves)
        assert same_solution(compiled.solve(state), reference.solve(state)), moves
        assert compiled.table_entries == reference.table_entries
    with pytest.raises(ValueError, match="table_size"):
        core.Solver(0)


@pytest.mark.parametrize("max_nodes", [1, 5_000, 30_000, 80_000, 140_000, 10**7])
def test_a_node_budget_stops_where_the_python_solver_stops(
    core: ModuleType, max_nodes: int
) -> None:
    state = GAME.parse_position(MIDDLE)
    for weak in (False, True):
        compiled = core.Solver().solve(state, weak=weak, max_nodes=max_nodes)
        reference = connect4_solver.Solver().solve(state, weak=weak, max_nodes=max_nodes)
        assert same_solution(compiled, reference)


def test_a_deadline_and_progress_as_the_python_solver(core: ModuleType) -> None:
    def run(solver: connect4_solver.Solver) -> tuple[SolveResult, list[tuple[int, int, int]]]:
        ticks = itertools.count()
        reports: list[tuple[int, int, int]] = []
        result = solver.solve(
            GAME.parse_position(MIDDLE),
            clock=lambda: float(next(ticks)),
            deadline=20.0,
            progress=lambda low, high, nodes: reports.append((low, high, nodes)),
        )
        return result, reports

    compiled, compiled_reports = run(core.Solver())
    reference, reference_reports = run(connect4_solver.Solver())
    # The clock reads 0 at the start, then 1, 2, ... 20 at the checks: the 20th stops.
    assert compiled.limit == "time" and compiled.nodes == 20 * CHECK_EVERY
    assert same_solution(compiled, reference)
    assert compiled_reports == reference_reports


def test_a_solve_stopped_leaves_a_table_that_still_solves_exactly(core: ModuleType) -> None:
    state = GAME.parse_position(MIDDLE)
    solver = core.Solver()
    assert solver.solve(state, max_nodes=30_000).limit == "nodes"
    assert solver.score(state) == connect4_solver.Solver().score(state)
