"""Exact solving: tic-tac-toe, Nim against the nim-sum theory, checkers wins; the limits."""

from __future__ import annotations

import itertools
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bots.engine.search import MAX_PLY
from bots.lectures.alphabeta import alphabeta
from bots.lectures.negamax import negamax
from bots.scoring import ENGINE
from bots.solvers.nim import solve_nim
from bots.solvers.solution import SolveProgress
from bots.solvers.solve import CHECKERS_MAX_PIECES, NIM_SEARCH_OBJECTS, Solver, refuse, solve
from games import get_game
from games.nim import NimState

TICTACTOE = get_game("tictactoe")
CHECKERS = get_game("checkers")
CONNECT4 = get_game("connect4")


def test_tictactoe_is_a_draw_and_every_first_move_draws() -> None:
    solution = solve(TICTACTOE.initial_state())
    assert solution.value == "draw" and solution.score == 0
    assert (solution.lower, solution.upper, solution.limit) == (0, 0, None)
    assert sorted(solution.best_moves) == list(range(9))


def test_tictactoe_win_is_found_with_every_fastest_winning_move() -> None:
    # X on 1, O on 8 (cells row by row), X to move: a forced win (the MCTS oracle's position).
    state = TICTACTOE.initial_state().play("1", "8")
    solution = solve(state)
    assert solution.value == "win"
    assert 2 in solution.best_moves
    # Optimal means winning as fast as possible: compare distance-aware values of each move.
    values = {}
    for move in state.legal_moves():
        child = state.apply_unchecked(move)
        values[move] = -negamax(child, scoring=ENGINE).score
    fastest = max(values.values())
    assert ENGINE.is_win(fastest)
    # A child lost in p plies is a win in p + 1 plies from here.
    assert ENGINE.win - fastest + 1 == solution.plies
    assert sorted(solution.best_moves) == sorted(m for m, v in values.items() if v == fastest)


def nim_theory_wins(heaps: tuple[int, ...], misere: bool) -> bool:
    xor = 0
    for h in heaps:
        xor ^= h
    if misere and all(h <= 1 for h in heaps):
        return sum(heaps) % 2 == 0
    return xor != 0


@pytest.mark.parametrize("misere", [True, False])
def test_nim_solver_agrees_with_the_theory(misere: bool) -> None:
    solver = Solver()
    checked = 0
    for count in range(1, 5):
        for heaps in itertools.product(range(8), repeat=count):
            if sum(heaps) == 0:
                continue
            game = get_game(
                "nim", {"heaps": ",".join(map(str, heaps)), "misere": str(misere).lower()}
            )
            solution = solver.solve(game.initial_state())
            expected = "win" if nim_theory_wins(heaps, misere) else "loss"
            assert solution.value == expected, heaps
            if expected == "win":
                for move in solution.best_moves:  # every optimal move leaves a lost position
                    heap, take = move
                    after = list(heaps)
                    after[heap] -= take
                    assert not nim_theory_wins(tuple(after), misere), (heaps, move)
            checked += 1
    assert checked == 8 + 64 + 512 + 4096 - 4


def test_misere_nim_1357_is_lost_for_the_side_to_move() -> None:
    solution = solve(get_game("nim").initial_state())
    assert solution.value == "loss"
    assert solution.best_moves  # every move loses: all are "optimal" resistance


# Checkers positions with a short forced win, made by the team and certified below by a
# full-width search (the lecture's alpha-beta: no table, no ordering, no pruning shortcuts).
FORCED_WINS = {
    "B:W26:B22": 1,  # the jump takes White's last piece
    "B:WK20:BK13,K26,K24": 3,
    "B:W18:BK2,K16": 5,
    "W:WK2,K9,K1:BK8": 5,
    "W:WK23,K28:B3": 7,
    "B:WK4:BK17,K31,K24": 7,
}


@pytest.mark.parametrize("fen", sorted(FORCED_WINS))
def test_checkers_forced_wins(fen: str) -> None:
    state = CHECKERS.parse_position(fen)
    plies = FORCED_WINS[fen]
    certified = alphabeta(state, depth=plies, evaluate=lambda s: 0.0, scoring=ENGINE)
    assert certified.score == ENGINE.win - plies
    solution = solve(state)
    assert solution.value == "win"
    assert solution.plies == plies
    for move in solution.best_moves:
        child = state.apply_unchecked(move)
        if plies > 1:
            reply = alphabeta(child, depth=plies - 1, evaluate=lambda s: 0.0, scoring=ENGINE)
            assert reply.score == -(ENGINE.win - (plies - 1))
        else:
            assert child.is_terminal()


# --------------------------------------------------------------------------------------------
# The nim-sum theory
# --------------------------------------------------------------------------------------------


def nim(heaps: tuple[int, ...], misere: bool) -> NimState:
    game = get_game("nim", {"heaps": ",".join(map(str, heaps)), "misere": str(misere).lower()})
    state = game.initial_state()
    assert isinstance(state, NimState)
    return state


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=6), min_size=1, max_size=4).filter(any),
    st.booleans(),
)
def test_the_theory_agrees_with_the_search(heaps: list[int], misere: bool) -> None:
    state = nim(tuple(heaps), misere)
    solver = Solver()
    searched = solver.solve(state)
    assert searched.method == "search"  # small heaps: the search path, checked by the theory
    theory = solve_nim(state)
    assert theory.method == "nim-sum" and theory.limit is None
    assert (theory.value, theory.score) == (searched.value, searched.score)
    assert theory.lower == theory.upper == theory.score
    if theory.value == "win":
        # Every winning move: exactly the moves after which the search finds the opponent lost.
        winning = {
            move
            for move in state.legal_moves()
            if solver.solve(state.apply_unchecked(move)).value == "loss"
        }
        assert set(theory.best_moves) == winning
        assert set(searched.best_moves) <= winning  # the fastest wins are among them
    else:
        assert theory.best_moves == []


@pytest.mark.parametrize("misere", [True, False])
def test_large_nim_is_solved_by_theory_at_once(misere: bool) -> None:
    # 200 objects: a game longer than the engine's deepest ply, which the search cannot play.
    lost = solve(nim((100, 100), misere))
    assert (lost.value, lost.method, lost.best_moves, lost.plies) == ("loss", "nim-sum", [], None)
    won = solve(nim((100, 200, 300), misere))
    assert won.value == "win" and won.method == "nim-sum"
    assert won.best_moves == [(2, 300 - (100 ^ 200))]  # the only move to nim-sum 0
    assert sum((100, 200, 300)) > NIM_SEARCH_OBJECTS


def test_misere_theory_leaves_an_odd_number_of_single_objects() -> None:
    # Heaps 1,1,5. Normal play: take all 5, to nim-sum 0. Misère: that would leave two single
    # objects, a win for the opponent; the winner takes 4 and leaves three.
    assert solve_nim(nim((1, 1, 5), misere=False)).best_moves == [(2, 5)]
    misere = solve_nim(nim((1, 1, 5), misere=True))
    assert misere.value == "win"
    assert misere.best_moves == [(2, 4)]


# --------------------------------------------------------------------------------------------
# Limits: time on the clock passed in, a node budget, progress, refusals
# --------------------------------------------------------------------------------------------

# A Connect Four middle game (12 stones, score -3) solved in about 146,000 solver calls.
MIDDLE = "146411712567"


def test_connect4_from_the_start_stops_at_the_deadline_with_a_true_interval() -> None:
    start = time.perf_counter()
    solution = solve(CONNECT4.initial_state(), clock=time.perf_counter, deadline=start + 0.2)
    assert (solution.value, solution.limit, solution.method) == ("unknown", "time", "connect4")
    assert solution.lower <= 1 <= solution.upper  # the empty board scores +1 (oracles/search.md)
    assert (solution.score, solution.plies, solution.best_moves) == (0, None, [])


@pytest.mark.parametrize("max_nodes", [5_000, 50_000])
def test_a_node_limit_on_connect4_gives_an_interval_holding_the_exact_score(
    max_nodes: int,
) -> None:
    state = CONNECT4.parse_position(MIDDLE)
    reports: list[SolveProgress] = []
    stopped = solve(state, max_nodes=max_nodes, progress=reports.append)
    assert (stopped.value, stopped.limit, stopped.nodes) == ("unknown", "nodes", max_nodes)
    exact = solve(state)
    assert exact.limit is None and exact.lower == exact.upper == exact.score == -3
    assert stopped.lower <= exact.score <= stopped.upper
    assert stopped.lower < stopped.upper
    assert reports, "a solve of thousands of nodes reports progress"
    assert all(r.depth is None and r.lower <= exact.score <= r.upper for r in reports)
    assert [r.nodes for r in reports] == sorted(r.nodes for r in reports)
    assert reports[-1].nodes <= max_nodes


def test_checkers_node_limit_stops_the_proof_search_short_of_the_win() -> None:
    state = CHECKERS.parse_position("W:WK23,K28:B3")  # a win in 7 plies
    reports: list[SolveProgress] = []
    stopped = solve(state, max_nodes=300, progress=reports.append)
    assert (stopped.value, stopped.limit, stopped.nodes) == ("unknown", "nodes", 300)
    assert stopped.depth is not None and 1 <= stopped.depth < 7
    assert (stopped.lower, stopped.upper) == (-1, 1)
    assert [r.depth for r in reports] == list(range(1, stopped.depth + 1))
    assert solve(state).plies == 7


def test_checkers_limit_after_the_proof_keeps_the_value_and_some_best_moves() -> None:
    state = CHECKERS.parse_position("W:WK23,K28:B3")
    exact = solve(state)
    solution = solve(state, max_nodes=exact.nodes - 1)
    assert (solution.value, solution.plies, solution.limit) == ("win", 7, "nodes")
    # One node short: the search of the last move, 23-27 (optimal), is cut; the rest stand.
    assert solution.best_moves == exact.best_moves[:-1]


def test_checkers_without_a_proof_within_max_plies_says_how_far_it_looked() -> None:
    state = CHECKERS.parse_position("W:WK23,K28:B3")
    solution = solve(state, max_plies=5)
    assert (solution.value, solution.limit, solution.depth) == ("unknown", "plies", 5)


def test_a_checkers_deadline_is_read_on_the_clock_passed_in() -> None:
    ticks = itertools.count()  # one second per read: the deadline passes within a few reads
    solution = solve(
        CHECKERS.initial_state(), clock=lambda: float(next(ticks)), deadline=20.0, max_plies=60
    )
    assert (solution.value, solution.limit) == ("unknown", "time")
    assert solution.depth is not None and solution.depth < 60


def test_tictactoe_node_limit_bounds_the_draw() -> None:
    solution = solve(TICTACTOE.initial_state(), max_nodes=100)
    assert (solution.value, solution.limit, solution.nodes) == ("unknown", "nodes", 100)
    assert solution.lower <= 0 <= solution.upper


def test_tictactoe_reports_progress_after_each_root_move() -> None:
    reports: list[SolveProgress] = []
    solution = solve(TICTACTOE.initial_state(), progress=reports.append)
    assert solution.value == "draw"
    assert len(reports) == 9
    assert reports[-1].lower == 0 and reports[-1].nodes == solution.nodes


def test_no_limit_changes_nothing() -> None:
    state = CHECKERS.parse_position("B:WK20:BK13,K26,K24")
    plain = solve(state)
    limited = Solver(clock=time.perf_counter).solve(
        state, deadline=time.perf_counter() + 3600, max_nodes=10**9
    )
    assert (limited.value, limited.plies, limited.best_moves, limited.nodes) == (
        plain.value,
        plain.plies,
        plain.best_moves,
        plain.nodes,
    )
    assert limited.limit is None


def test_bad_limits_are_refused() -> None:
    with pytest.raises(ValueError, match="clock"):
        solve(TICTACTOE.initial_state(), deadline=1.0)
    with pytest.raises(ValueError, match="max_nodes"):
        solve(TICTACTOE.initial_state(), max_nodes=0)
    with pytest.raises(ValueError, match="max_plies"):
        solve(CHECKERS.initial_state(), max_plies=MAX_PLY + 1)


def test_checkers_beyond_the_piece_limit_is_refused_with_the_reason() -> None:
    reason = refuse(CHECKERS.initial_state())
    assert reason is not None
    assert "24 pieces" in reason and f"at most {CHECKERS_MAX_PIECES} pieces" in reason
    black = ",".join(f"K{square}" for square in range(1, CHECKERS_MAX_PIECES))
    at_the_limit = CHECKERS.parse_position(f"B:WK32:B{black}")
    assert refuse(at_the_limit) is None
    one_more = CHECKERS.parse_position(f"B:WK31,K32:B{black}")
    assert refuse(one_more) is not None
    for game in (CONNECT4, TICTACTOE, get_game("nim")):
        assert refuse(game.initial_state()) is None


def test_connect4_is_solved_by_the_compiled_solver(monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled solver answers, node for node as its Python reference would."""
    from bots.solvers import connect4 as connect4_solver

    state = CONNECT4.parse_position(MIDDLE)
    reference = connect4_solver.solve(state)

    def unused(*args: object) -> None:
        raise AssertionError("the Python solver's search ran")

    monkeypatch.setattr(connect4_solver, "make_negamax", unused)
    solution = solve(state)
    assert (solution.score, solution.nodes) == (reference.score, reference.nodes)
    assert solution.score == -3
    assert tuple(solution.best_moves) == reference.best_moves
