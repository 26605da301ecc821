"""The `engine` checkers evaluation: its fast path equals the reference features, the colour
symmetry, and hand-checked feature values."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bots.evaluation import checkers_endings, checkers_engine
from games import get_game
from games.checkers import CheckersState
from tests.bots.evaluation.test_evaluation import (
    _checkers_placement,
    _checkers_sample,
    _colours_swapped,
)

GAME = get_game("checkers")
ENGINE = checkers_endings.KNOWLEDGE.evaluation("engine")
POSITIONAL = checkers_engine.ENGINE_POSITIONAL


def parse(fen: str) -> CheckersState:
    state = GAME.parse_position(fen)
    assert isinstance(state, CheckersState)
    return state


def test_fast_equals_weighted_sum() -> None:
    count = 0
    for state in _checkers_sample():
        assert POSITIONAL(state) == POSITIONAL.weighted_sum(state), state
        assert ENGINE(state) == ENGINE.weighted_sum(state), state
        count += 1
    assert count > 3000


def test_sample_exercises_every_added_feature() -> None:
    seen = dict.fromkeys(checkers_engine.EXTRA_NAMES, 0)
    for state in _checkers_sample():
        for name in seen:
            seen[name] += POSITIONAL.explain(state)[name][0] != 0
    assert all(count >= 20 for count in seen.values()), seen


def test_rotation_with_colours_swapped() -> None:
    for state in _checkers_sample()[::3]:
        value = ENGINE(state)
        assert ENGINE(_colours_swapped(state, 1 - state.turn)) == value, state
        assert ENGINE(_colours_swapped(state, state.turn)) == -value, state


@settings(max_examples=300, deadline=None)
@given(st.randoms(use_true_random=False))
def test_random_placements(rng: random.Random) -> None:
    state = _checkers_placement(rng)
    assert ENGINE(state) == ENGINE.weighted_sum(state)
    assert POSITIONAL.explain(_colours_swapped(state, 1 - state.turn)) == POSITIONAL.explain(state)


@pytest.mark.parametrize(
    ("fen", "feature", "value"),
    [
        # White moves toward 1-4: the cone of its man on 11 is 7, 8, 2, 3 and 4 (not 1). Black's
        # man on 22 faces nothing, nor does one on 1 (11 is outside its cone).
        ("B:W11:B3,22", "runaway_men", 1),
        ("B:W11:B1,22", "runaway_men", 1),  # Black's 1 and 22 free, White's 11 free
        ("W:W11:B1,22", "runaway_men", -1),
        ("B:W26:B22", "runaway_men", 0),  # each blocks the other
        ("B:W30,32:B1,3,10", "bridge", 0),  # both bridges held
        ("B:W30,32:B1,3,K10", "bridge", 1),  # Black has a king: White's bridge no longer counts
        ("B:W30:B1,3", "bridge", 1),
        ("W:W30:B1,3", "bridge", -1),
        ("B:W20:B1,2,3", "exchange", 20),  # three pieces against one: 20 off, Black ahead
        ("W:W20:B1,2,3", "exchange", -20),
        ("B:W20,21:BK1", "exchange", 0),  # a king and two men: level
        ("B:W18:B14,9", "capture_threat", 1),  # 14 jumps 18 to 23; 18 over 14 lands on 9: held
        ("W:W18:B14,9", "capture_threat", -1),
        ("B:W18:B14,15", "capture_threat", 0),  # 14 jumps 18, and 18 jumps 14 (to 9)
        ("B:W18,27:B9,14", "men_row_2", 1),  # Black's 9 two rows out; White's 27 one row
        ("B:W18,27:B9,14", "men_row_3", 0),  # Black's 14 three rows out, White's 18 three
        ("W:W18,27:B9,14", "men_row_2", -1),
        ("B:W12:B3", "dog_holes", 1),  # White's man on 12 held by Black's 3
        ("B:W5,12:B1,3", "dog_holes", 2),
        ("B:W30:B21", "dog_holes", -1),  # Black's 21 held by White's 30
        ("W:W32,30:B28,21", "dog_holes", 2),
        ("B:W12:BK3", "dog_holes", 0),  # a king holds nothing
        ("B:WK15:BK14,K10,K1", "king_centre", 1),
        ("B:W18,27:B9,14", "crowded_advancement", 0),  # too few men
    ],
)
def test_feature_values(fen: str, feature: str, value: int) -> None:
    assert POSITIONAL.explain(parse(fen))[feature][0] == value
