"""Exact solving: tic-tac-toe, Nim against the nim-sum theory, checkers wins."""

from __future__ import annotations

import itertools

import pytest

from bots.alphabeta import alphabeta
from bots.negamax import negamax
from bots.scoring import ENGINE
from bots.solve import Solver, solve
from games import get_game

TICTACTOE = get_game("tictactoe")
CHECKERS = get_game("checkers")


def test_tictactoe_is_a_draw_and_every_first_move_draws() -> None:
    solution = solve(TICTACTOE.initial_state())
    assert solution.value == "draw" and solution.score == 0
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
