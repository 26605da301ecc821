"""The exact Connect Four solver against Pons' test sets, the search oracles and brute force.

Data: ../shared/data/connect4/ (Pascal Pons, "Solving Connect 4", blog.gamesolver.org), read at
test time and skipped when absent. Golden numbers: ../shared/oracles/search.md.
"""

from __future__ import annotations

import itertools
import random
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bots.solvers.connect4 import (
    CENTRE_ORDER,
    CHECK_EVERY,
    MAX_SCORE,
    MIN_SCORE,
    Solver,
    SolveResult,
    solve,
)
from bots.solvers.connect4_lessons import alphabeta_plain, negamax_plain
from games.connect4 import ConnectFour, ConnectFourState
from tests.conftest import shared_file

GAME = ConnectFour()
# 42 plies with no four in a row (tests/games/test_connect4.py checks it independently).
DRAWN_GAME = "547125662261271266215743771576315353334444"


@cache
def lines(name: str) -> tuple[tuple[str, int], ...]:
    """Return the (move string, score) lines of a Pons test file."""
    path = shared_file(f"data/connect4/{name}")
    rows = []
    for line in path.read_text(encoding="ascii").splitlines():
        moves, score = line.split()
        rows.append((moves, int(score)))
    assert len(rows) == 1000
    return tuple(rows)


def sample(name: str, step: int) -> list[tuple[str, int]]:
    """Return every `step`-th line of a test file, from the first."""
    return list(lines(name)[::step])


def sign(value: int) -> int:
    return (value > 0) - (value < 0)


def position(moves: str) -> ConnectFourState:
    return GAME.parse_position(moves)


def child_scores(state: ConnectFourState, solver: Solver) -> dict[int, int]:
    """Return each legal move's exact score for the side to move at `state`.

    A move that ends the game scores by the oracle's rule: +(43 - ply) // 2 for a win, 0 for
    filling the board; any other move scores minus the solver's score of the child.
    """
    scores = {}
    for col in state.legal_moves():
        child = state.apply_unchecked(col)
        outcome = child.outcome()
        if outcome is None:
            scores[col] = -solver.score(child)
        else:
            scores[col] = 0 if outcome.winner is None else (43 - state.ply) // 2
    return scores


# --------------------------------------------------------------------------------------------
# Oracle examples
# --------------------------------------------------------------------------------------------


def test_oracle_example_win_with_fourth_stone() -> None:
    result = solve(position("4455"))
    assert result.score == 18
    # Columns 3 and 6 make three in a row on the bottom with both ends open.
    assert result.best_moves == (2, 5)
    assert result.nodes > 0


def test_oracle_example_loss() -> None:
    result = solve(position("44455554221"))
    assert result.score == -15
    scores = child_scores(position("44455554221"), Solver())
    assert result.best_moves == tuple(col for col, value in scores.items() if value == -15)


def test_scores_lie_between_the_extremes() -> None:
    assert (MIN_SCORE, MAX_SCORE) == (-18, 18)
    assert CENTRE_ORDER == (3, 2, 4, 1, 5, 0, 6)
    scores = [score for _, score in lines("Test_L2_R1")]
    assert min(scores) >= MIN_SCORE
    assert max(scores) <= MAX_SCORE


# --------------------------------------------------------------------------------------------
# Exact scores on samples of Pons' test sets
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "step"), [("Test_L3_R1", 5), ("Test_L2_R1", 5), ("Test_L2_R2", 33)]
)
def test_exact_scores_on_a_sample(name: str, step: int) -> None:
    solver = Solver()
    for moves, expected in sample(name, step):
        solver.reset()
        assert solver.score(position(moves)) == expected, moves


@pytest.mark.parametrize(
    ("name", "step"), [("Test_L3_R1", 5), ("Test_L2_R1", 5), ("Test_L2_R2", 33)]
)
def test_weak_signs_on_a_sample(name: str, step: int) -> None:
    solver = Solver()
    for moves, expected in sample(name, step):
        solver.reset()
        assert solver.score(position(moves), weak=True) == sign(expected), moves


def test_solve_agrees_with_score_and_counts_more_nodes() -> None:
    solver = Solver()
    for moves, expected in sample("Test_L2_R1", 50):
        solver.reset()
        solver.score(position(moves))
        score_nodes = solver.nodes
        solver.reset()
        result = solver.solve(position(moves))
        assert result.score == expected, moves
        assert result.nodes == solver.nodes >= score_nodes


def test_node_count_on_end_easy_matches_pons() -> None:
    # Pons' final solver explores about 51 positions per End-Easy line (search.md); the same
    # pruning (bounds, table, sorter, null windows around 0) must land there too.
    rows = lines("Test_L3_R1")
    solver = Solver()
    total = 0
    for moves, _ in rows:
        solver.reset()
        solver.score(position(moves))
        total += solver.nodes
    assert 50 <= total / len(rows) <= 53


def test_a_kept_table_gives_the_same_scores_in_any_order() -> None:
    rows = sample("Test_L2_R1", 10) + sample("Test_L3_R1", 10)
    random.Random(7).shuffle(rows)
    solver = Solver()  # never reset: entries from other positions stay and are reused
    for moves, expected in rows:
        assert solver.score(position(moves)) == expected, moves
        assert solver.score(position(moves), weak=True) == sign(expected), moves


def test_a_tiny_table_that_keeps_emptying_still_solves_exactly() -> None:
    solver = Solver(table_size=16)
    for moves, expected in sample("Test_L2_R1", 40):
        assert solver.score(position(moves)) == expected, moves
        assert 0 < solver.table_entries <= 16
    solver.reset()
    assert solver.table_entries == 0


def test_table_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="table_size"):
        Solver(table_size=0)


# --------------------------------------------------------------------------------------------
# Best moves
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "step"), [("Test_L3_R1", 20), ("Test_L2_R1", 20)])
def test_best_moves_are_exactly_the_optimal_moves(name: str, step: int) -> None:
    checker = Solver()
    for moves, expected in sample(name, step):
        state = position(moves)
        result = solve(state)
        scores = child_scores(state, checker)
        assert max(scores.values()) == expected == result.score, moves
        assert result.best_moves == tuple(c for c, v in sorted(scores.items()) if v == expected)


@pytest.mark.parametrize(("name", "step"), [("Test_L3_R1", 20), ("Test_L2_R1", 25)])
def test_weak_best_moves_keep_the_outcome(name: str, step: int) -> None:
    checker = Solver()
    for moves, expected in sample(name, step):
        state = position(moves)
        result = solve(state, weak=True)
        assert result.score == sign(expected), moves
        scores = child_scores(state, checker)
        keep = tuple(c for c, v in sorted(scores.items()) if sign(v) == sign(expected))
        assert result.best_moves == keep, moves


def test_a_finished_game_scores_its_result_with_no_moves() -> None:
    # The first player completes the bottom row with its fourth stone (stone 7 on the board).
    won = solve(position("4455667"))
    assert (won.score, won.best_moves) == (-18, ())
    assert solve(position("4455667"), weak=True).score == -1
    drawn = solve(position(DRAWN_GAME))
    assert (drawn.score, drawn.best_moves) == (0, ())


def test_seconds_come_from_the_clock_passed_in() -> None:
    ticks = iter([100.0, 102.5])
    result = solve(position("4455"), clock=lambda: next(ticks))
    assert result == SolveResult(18, (2, 5), result.nodes, 2.5, False)
    assert solve(position("4455")).seconds == 0.0


# --------------------------------------------------------------------------------------------
# Limits: a node budget, a deadline on the clock passed in, progress reports
# --------------------------------------------------------------------------------------------

# A middle-game position (12 stones) the solver settles in about 117,000 calls for its score and
# 146,000 with the best-move checks: big enough to stop early, small enough to solve in a test.
MIDDLE = "146411712567"


@cache
def middle_exact() -> SolveResult:
    return solve(position(MIDDLE))


@pytest.mark.parametrize("max_nodes", [1, 5_000, 30_000, 80_000])
def test_a_node_budget_stops_the_score_search_with_an_interval_holding_the_score(
    max_nodes: int,
) -> None:
    exact = middle_exact()
    result = solve(position(MIDDLE), max_nodes=max_nodes)
    assert result.limit == "nodes"
    assert result.nodes == max_nodes
    assert result.bounds is not None
    lower, upper = result.bounds
    assert MIN_SCORE <= lower <= exact.score <= upper <= MAX_SCORE
    assert lower < upper
    assert (result.score, result.best_moves) == (0, ())


def test_more_nodes_never_widen_the_interval() -> None:
    intervals = []
    for max_nodes in (5_000, 30_000, 80_000):
        bounds = solve(position(MIDDLE), max_nodes=max_nodes).bounds
        assert bounds is not None
        intervals.append(bounds)
    for (low, high), (next_low, next_high) in itertools.pairwise(intervals):
        assert low <= next_low and next_high <= high
    assert intervals[0] != intervals[-1]  # the budget matters: the search narrowed meanwhile


def test_a_weak_solve_stopped_early_bounds_the_sign() -> None:
    result = solve(position(MIDDLE), weak=True, max_nodes=2_000)
    assert result.limit == "nodes" and result.bounds is not None
    lower, upper = result.bounds
    assert -1 <= lower <= sign(middle_exact().score) <= upper <= 1


def test_a_budget_spent_on_the_best_moves_keeps_the_exact_score() -> None:
    exact = middle_exact()
    score_nodes = Solver()
    score_nodes.score(position(MIDDLE))
    budget = (score_nodes.nodes + exact.nodes) // 2  # the score is known, the checks are not
    result = solve(position(MIDDLE), max_nodes=budget)
    assert result.limit == "nodes" and result.bounds is None
    assert result.score == exact.score
    assert set(result.best_moves) < set(exact.best_moves)


def test_a_budget_large_enough_changes_nothing() -> None:
    exact = middle_exact()
    result = solve(position(MIDDLE), max_nodes=exact.nodes + 1)
    assert result == exact


def test_the_deadline_is_read_on_the_clock_passed_in() -> None:
    # Each read of this clock advances it by one second: the solve starts at 0 and must stop at
    # its fourth look at the clock, after 3 * CHECK_EVERY calls, whatever the machine.
    ticks = itertools.count()
    result = solve(position(MIDDLE), clock=lambda: float(next(ticks)), deadline=3.0)
    assert result.limit == "time"
    assert result.nodes == 3 * CHECK_EVERY
    assert result.bounds is not None
    lower, upper = result.bounds
    assert lower <= middle_exact().score <= upper


def test_a_deadline_needs_a_clock_and_a_budget_must_be_positive() -> None:
    with pytest.raises(ValueError, match="clock"):
        solve(position(MIDDLE), deadline=1.0)
    with pytest.raises(ValueError, match="max_nodes"):
        solve(position(MIDDLE), max_nodes=0)


def test_progress_reports_narrowing_intervals_and_growing_counts() -> None:
    reports: list[tuple[int, int, int]] = []
    solve(position(MIDDLE), progress=lambda low, high, nodes: reports.append((low, high, nodes)))
    exact = middle_exact()
    assert len(reports) == exact.nodes // CHECK_EVERY
    assert [nodes for _, _, nodes in reports] == [
        CHECK_EVERY * (i + 1) for i in range(len(reports))
    ]
    for (low, high, _), (next_low, next_high, _) in itertools.pairwise(reports):
        assert low <= next_low and next_high <= high
    # Before the first probe ends: with 6 stones each, either side wins at best with its 7th.
    assert reports[0][:2] == (-(22 - 7), 22 - 7)
    assert reports[-1][:2] == (exact.score, exact.score)  # the last reports list best moves


# --------------------------------------------------------------------------------------------
# Pons' teaching versions: node counts of ../shared/oracles/search.md on all of Test_L3_R1
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("order", "weak", "mean_nodes"),
    [
        ("left-to-right", False, 283.6),
        ("left-to-right", True, 222.9),
        ("centre", False, 139.7),
        ("centre", True, 107.1),
    ],
)
def test_alphabeta_node_counts(order: str, weak: bool, mean_nodes: float) -> None:
    rows = lines("Test_L3_R1")
    total = 0
    for moves, expected in rows:
        score, nodes = alphabeta_plain(position(moves), order, weak)  # type: ignore[arg-type]
        assert score == (sign(expected) if weak else expected), moves
        total += nodes
    assert round(total / len(rows), 1) == mean_nodes


def test_alphabeta_rejects_an_unknown_order() -> None:
    with pytest.raises(ValueError, match="order"):
        alphabeta_plain(position("4455"), "random")  # type: ignore[arg-type]


def test_plain_negamax_on_a_sample() -> None:
    for moves, expected in sample("Test_L3_R1", 50):
        score, nodes = negamax_plain(position(moves))
        assert score == expected, moves
        assert nodes >= 1


def test_plain_versions_refuse_a_finished_game() -> None:
    with pytest.raises(ValueError, match="already over"):
        negamax_plain(position("4455667"))
    with pytest.raises(ValueError, match="already over"):
        alphabeta_plain(position(DRAWN_GAME))


@pytest.mark.slow
def test_plain_negamax_node_count() -> None:
    rows = lines("Test_L3_R1")
    total = 0
    for moves, expected in rows:
        score, nodes = negamax_plain(position(moves))
        assert score == expected, moves
        total += nodes
    assert round(total / len(rows), 1) == 11_024.5


# --------------------------------------------------------------------------------------------
# Whole files (slow)
# --------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", ["Test_L3_R1", "Test_L2_R1"])
@pytest.mark.parametrize("weak", [False, True])
def test_every_line_of_the_file(name: str, weak: bool) -> None:
    solver = Solver()
    total = 0
    for moves, expected in lines(name):
        solver.reset()
        want = sign(expected) if weak else expected
        assert solver.score(position(moves), weak=weak) == want, moves
        total += solver.nodes
    if name == "Test_L2_R1" and not weak:
        # Pons' final solver: about 450 positions per Middle-Easy line (search.md).
        assert 430 <= total / 1000 <= 470


# --------------------------------------------------------------------------------------------
# Brute force on random endgames
# --------------------------------------------------------------------------------------------


def brute_force(state: ConnectFourState) -> int:
    """Return the exact score by negamax over the whole tree, through the State API only."""
    outcome = state.outcome()
    if outcome is not None:
        if outcome.winner is None:
            return 0
        # The opponent won with its last stone, number (ply + 1) // 2 of its own.
        return -(22 - (state.ply + 1) // 2)
    return max(-brute_force(state.apply_unchecked(col)) for col in state.legal_moves())


@st.composite
def endgames(draw: st.DrawFn) -> ConnectFourState:
    """Random playouts of 32 to 40 plies that never end the game."""
    target = draw(st.integers(min_value=32, max_value=40))
    state = GAME.initial_state()
    while state.ply < target:
        quiet = [col for col in state.legal_moves() if state.apply_unchecked(col).outcome() is None]
        if not quiet:  # every move ends the game: stop here, still unfinished
            break
        state = state.apply_unchecked(quiet[draw(st.integers(0, len(quiet) - 1))])
    return state


@settings(max_examples=60, deadline=None)
@given(endgames())
def test_solver_matches_brute_force(state: ConnectFourState) -> None:
    exact = brute_force(state)
    result = solve(state)
    assert result.score == exact
    assert solve(state, weak=True).score == sign(exact)
    best = tuple(
        col for col in state.legal_moves() if -brute_force(state.apply_unchecked(col)) == exact
    )
    assert result.best_moves == best
