"""Glicko-2 against Glickman's worked example (glicko.net/glicko/glicko2.pdf)."""

from __future__ import annotations

import pytest

from competition.ratings import Game, Rating, rate, rate_game


def test_glickmans_worked_example() -> None:
    player = Rating(1500, 200, 0.06)
    games = [
        Game(Rating(1400, 30), 1),
        Game(Rating(1550, 100), 0),
        Game(Rating(1700, 300), 0),
    ]
    after = rate(player, games)
    assert after.rating == pytest.approx(1464.06, abs=0.01)
    assert after.deviation == pytest.approx(151.52, abs=0.01)
    assert after.volatility == pytest.approx(0.05999, abs=0.00001)


def test_a_period_without_games_only_widens_the_deviation() -> None:
    after = rate(Rating(1600, 100, 0.06), [])
    assert after.rating == 1600
    assert after.deviation == pytest.approx((100**2 + (0.06 * 173.7178) ** 2) ** 0.5)
    assert after.volatility == 0.06


def test_one_game_between_newcomers_moves_both_ratings_symmetrically() -> None:
    winner, loser = rate_game(Rating(), Rating(), 1)
    assert winner.rating > 1500 > loser.rating
    assert winner.rating - 1500 == pytest.approx(1500 - loser.rating)
    assert winner.deviation == pytest.approx(loser.deviation)
    assert winner.deviation < 350


def test_a_draw_between_equals_keeps_the_ratings() -> None:
    first, second = rate_game(Rating(1700, 80), Rating(1700, 80), 0.5)
    assert first.rating == pytest.approx(1700)
    assert second.rating == pytest.approx(1700)
