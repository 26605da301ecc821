"""Perft counted once per position (tic-tac-toe, Nim) against the line-by-line reference."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import get_game
from games.base import perft_by_position, perft_generic

VARIANTS = [
    ("tictactoe", {}),
    ("nim", {}),
    ("nim", {"misere": "false"}),
    ("nim", {"heaps": "2,3,4", "misere": "true"}),
]


@pytest.mark.parametrize(("name", "options"), VARIANTS)
def test_perft_equals_the_line_by_line_count(name: str, options: dict[str, str]) -> None:
    start = get_game(name, options).initial_state()
    for depth in range(7):
        assert start.perft(depth) == perft_generic(start, depth)


def test_tictactoe_counts_every_line_of_nine_plies() -> None:
    # 127,872 lines fill the board: of the 255,168 games, those that end at the ninth move.
    start = get_game("tictactoe").initial_state()
    assert start.perft(9) == 127_872
    assert start.perft(10) == 0
    with pytest.raises(ValueError, match="depth"):
        start.perft(-1)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 30), max_size=6), st.integers(0, 5))
def test_perft_property_on_nim_positions(choices: list[int], depth: int) -> None:
    state = get_game("nim", {"heaps": "2,3,4,5"}).initial_state()
    for choice in choices:
        moves = state.legal_moves()
        if not moves:
            break
        state = state.apply_unchecked(moves[choice % len(moves)])
    assert perft_by_position(state, depth) == perft_generic(state, depth)
