"""Checkers against two independent implementations: open-spiel and pydraughts.

Both are test-only oracles (see tests/games/checkers_oracles.py for how each differs from the
official rules and how those positions are excluded). Each test skips when its library is not
installed.
"""

from __future__ import annotations

import random

import pytest

from games import get_game
from games.checkers import CheckersState
from tests.games import checkers_oracles as oracles

GAME = get_game("checkers")

needs_openspiel = pytest.mark.skipif(
    not oracles.openspiel_available(), reason="open-spiel (pyspiel) is not installed"
)
needs_pydraughts = pytest.mark.skipif(
    not oracles.pydraughts_available(), reason="pydraughts is not installed"
)


def arena_moves(fen: str) -> list[str]:
    state = GAME.parse_position(fen)
    assert isinstance(state, CheckersState)
    return sorted(state.format_move(m) for m in state.legal_moves())


def random_fen(rng: random.Random) -> str:
    """A made-up position: random men and kings (no man on its own crowning row)."""
    squares = rng.sample(range(1, 33), rng.randint(2, 16))
    white: list[str] = []
    black: list[str] = []
    for i, s in enumerate(squares):
        colour = "BW"[i] if i < 2 else rng.choice("BW")
        king = rng.random() < 0.4 or (colour == "B" and s >= 29) or (colour == "W" and s <= 4)
        (black if colour == "B" else white).append(("K" if king else "") + str(s))
    return f"{rng.choice('BW')}:W{','.join(white)}:B{','.join(black)}"


def compare_playouts(positions: list[tuple[str, list[str]]]) -> None:
    mismatches = [(fen, moves, arena_moves(fen)) for fen, moves in positions]
    mismatches = [m for m in mismatches if m[1] != m[2]]
    assert not mismatches, f"{len(mismatches)} positions differ, first: {mismatches[0]}"


@needs_openspiel
def test_legal_moves_match_openspiel_over_random_games() -> None:
    positions = list(oracles.openspiel_random_playout_positions(seed=2026, n_positions=10000))
    assert len(positions) == 10000
    assert any(not moves for _, moves in positions), "some games should reach a win"
    assert any("x" in m for _, moves in positions for m in moves)
    compare_playouts(positions)


@pytest.mark.slow
@needs_openspiel
def test_legal_moves_match_openspiel_over_many_random_games() -> None:
    compare_playouts(list(oracles.openspiel_random_playout_positions(seed=7, n_positions=40000)))


@needs_pydraughts
def test_legal_moves_match_pydraughts_over_random_games() -> None:
    compare_playouts(list(oracles.pydraughts_random_playout_positions(seed=11, n_positions=600)))


@needs_pydraughts
def test_made_up_positions_match_pydraughts() -> None:
    rng = random.Random(5)
    checked = 0
    for _ in range(1500):
        fen = random_fen(rng)
        assert arena_moves(fen) == oracles.pydraughts_legal_moves(fen), fen
        checked += 1
    assert checked == 1500


@needs_openspiel
def test_made_up_positions_match_openspiel() -> None:
    rng = random.Random(6)
    checked = 0
    for _ in range(250):
        fen = random_fen(rng)
        if oracles.openspiel_disagrees_with_rules(fen):
            continue
        assert arena_moves(fen) == oracles.openspiel_legal_moves(fen), fen
        checked += 1
    assert checked >= 200


@needs_pydraughts
def test_positions_after_each_move_match_pydraughts() -> None:
    """Play random games move by move in both; the resulting positions agree every ply."""
    rng = random.Random(3)
    plies = 0
    for _game in range(8):
        board = oracles.pydraughts_board(oracles.START_FEN)
        state = GAME.initial_state()
        while not board.is_over() and plies < 2000:
            moves = dict(oracles._pydraughts_moves(board))
            assert sorted(moves) == sorted(state.format_move(m) for m in state.legal_moves())
            if not moves:
                break
            text = rng.choice(sorted(moves))
            board.push(moves[text])
            state = state.play(text)
            assert GAME.format_position(state) == oracles.pydraughts_fen(board)
            plies += 1
        assert board.is_over() == state.is_terminal()
    assert plies > 300


@needs_openspiel
def test_perft_of_made_up_positions_matches_openspiel() -> None:
    rng = random.Random(8)
    checked = 0
    while checked < 25:
        fen = random_fen(rng)
        if oracles.openspiel_disagrees_with_rules(fen):
            continue
        assert GAME.parse_position(fen).perft(3) == oracles.openspiel_perft(fen, 3), fen
        checked += 1
