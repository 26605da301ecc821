"""Glicko-2 ratings: Glickman's "Example of the Glicko-2 system" (glicko.net/glicko/glicko2.pdf).

A `Rating` is a value on the Glicko scale (rating, deviation RD, volatility); `rate` returns a
player's rating after one rating period of games against opponents rated as they were at its
start. The server rates every game as it ends, as Lichess does: each game is a rating period
of its own, so both sides are rated against the other's rating from before the game.

The constants are Glickman's: a new player is 1500 / 350 / 0.06 and the system constant tau is
0.5 (his worked example's; he recommends 0.3 to 1.2, smaller for games where upsets are rare,
as between search bots). Pure: no I/O, no clock.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

SCALE = 173.7178
"""Glicko-2's factor between the Glicko scale and its own (400 / ln 10)."""
DEFAULT_RATING = 1500.0
DEFAULT_DEVIATION = 350.0
DEFAULT_VOLATILITY = 0.06
TAU = 0.5
"""The system constant: how much the volatility may change in one rating period."""
EPSILON = 0.000001
"""The convergence tolerance of the volatility's iteration (Glickman's step 5)."""


@dataclass(frozen=True)
class Rating:
    """A Glicko-2 rating on the Glicko scale: rating, deviation (RD) and volatility."""

    rating: float = DEFAULT_RATING
    deviation: float = DEFAULT_DEVIATION
    volatility: float = DEFAULT_VOLATILITY


@dataclass(frozen=True)
class Game:
    """One game of a rating period: the opponent's rating before it and the score (1, 0.5, 0)."""

    opponent: Rating
    score: float


def rate(player: Rating, games: Iterable[Game], tau: float = TAU) -> Rating:
    """Return `player`'s rating after a rating period of `games` (Glickman's steps 1 to 8).

    With no games, only the deviation grows (step 6), as for a player who sat the period out.
    """
    mu = (player.rating - DEFAULT_RATING) / SCALE
    phi = player.deviation / SCALE
    sigma = player.volatility
    played = [
        (
            (game.opponent.rating - DEFAULT_RATING) / SCALE,
            game.opponent.deviation / SCALE,
            game.score,
        )
        for game in games
    ]
    if not played:
        return Rating(player.rating, math.sqrt(phi**2 + sigma**2) * SCALE, sigma)
    inverse_v = 0.0
    improvement = 0.0
    for mu_j, phi_j, score in played:
        g = _g(phi_j)
        expected = _expected(mu, mu_j, phi_j)
        inverse_v += g**2 * expected * (1 - expected)
        improvement += g * (score - expected)
    v = 1 / inverse_v
    delta = v * improvement
    sigma = _volatility(phi, sigma, v, delta, tau)
    phi_star = math.sqrt(phi**2 + sigma**2)
    new_phi = 1 / math.sqrt(1 / phi_star**2 + 1 / v)
    new_mu = mu + new_phi**2 * improvement
    return Rating(new_mu * SCALE + DEFAULT_RATING, new_phi * SCALE, sigma)


def rate_game(first: Rating, second: Rating, score: float) -> tuple[Rating, Rating]:
    """Rate one game as its own rating period: `score` is `first`'s (1 win, 0.5 draw, 0 loss).

    Return both new ratings, each computed from the other's rating before the game.
    """
    return rate(first, [Game(second, score)]), rate(second, [Game(first, 1 - score)])


def _g(phi: float) -> float:
    return 1 / math.sqrt(1 + 3 * phi**2 / math.pi**2)


def _expected(mu: float, mu_j: float, phi_j: float) -> float:
    return 1 / (1 + math.exp(-_g(phi_j) * (mu - mu_j)))


def _volatility(phi: float, sigma: float, v: float, delta: float, tau: float) -> float:
    """Return the new volatility (step 5: the Illinois algorithm on f)."""
    a = math.log(sigma**2)

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta**2 - phi**2 - v - ex) / (2 * (phi**2 + v + ex) ** 2) - (x - a) / tau**2

    big_a = a
    if delta**2 > phi**2 + v:
        big_b = math.log(delta**2 - phi**2 - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > EPSILON:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2)
