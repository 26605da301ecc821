"""Davidson Elo ratings fitted to games: `fit_elo`, its `EloFit` and the LOS table."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from competition.stats.crosstable import (
    GameResult,
    StatsError,
    build_crosstable,
    outcomes_by_pair,
    validated,
)
from competition.stats.intervals import Optimum, unbounded_directions
from competition.stats.linalg import dot, quadratic
from competition.stats.model import (
    ELO_PER_NATURAL,
    build_model,
    evaluate,
    information_inverse,
    log_likelihood,
    maximise,
    rating_contrast,
    unit_meat,
)


@dataclass(frozen=True, slots=True)
class Rating:
    """One bot's Elo with its 95% interval, games, points and score fraction.

    `lower` is -inf (`upper` inf) when the games cannot bound that end of the interval.
    """

    bot: str
    elo: float
    lower: float
    upper: float
    games: int
    points: float
    score: float


@dataclass(frozen=True)
class EloFit:
    """The fitted Davidson model: ratings (best first), first-move advantage and draw parameter.

    Elo values are on the 400*log10 scale. `first_move_advantage` is in Elo, with its 95%
    interval (infinite ends as for ratings); `draw_nu` is Davidson's nu (0 when no game, real or
    virtual, was drawn). `units` counts the independent units behind the design effects (pairs
    plus unpaired games). `covariance` is the model-based covariance of the reported ratings
    (inverse information of the penalised likelihood) and `robust_covariance` the pair-level
    sandwich (the model's with fewer than two units), both in Elo squared. `superiority[(a, b)]`
    is the likelihood of superiority of a over b for two different bots, as `los` returns it.
    """

    ratings: tuple[Rating, ...]
    first_move_advantage: float
    first_move_interval: tuple[float, float]
    draw_nu: float
    anchor: str | None
    prior_draws: float
    log_likelihood: float
    iterations: int
    units: int
    covariance: Mapping[tuple[str, str], float] = field(repr=False)
    robust_covariance: Mapping[tuple[str, str], float] = field(repr=False)
    superiority: Mapping[tuple[str, str], float] = field(repr=False)

    @property
    def equal_draw_rate(self) -> float:
        """Return the model's draw probability between equal bots without first-move advantage."""
        return self.draw_nu / (2.0 + self.draw_nu)

    def rating(self, bot: str) -> Rating:
        """Return the rating of `bot`; KeyError names the rated bots when it is unknown."""
        for rating in self.ratings:
            if rating.bot == bot:
                return rating
        raise KeyError(f"no rating for {bot!r}; rated bots: {', '.join(self.bots)}")

    @property
    def bots(self) -> tuple[str, ...]:
        """Return the rated bots, best first."""
        return tuple(rating.bot for rating in self.ratings)

    def variance_of_difference(self, a: str, b: str) -> float:
        """Return the variance (Elo squared) of elo(a) - elo(b) that scales its uncertainty.

        The larger of the model-based and the pair-level (sandwich) variance: the model's times
        the design effect. A normal summary only; intervals and LOS come from the likelihood.
        """

        def of(cov: Mapping[tuple[str, str], float]) -> float:
            return max(0.0, cov[(a, a)] + cov[(b, b)] - 2.0 * cov[(a, b)])

        return max(of(self.covariance), of(self.robust_covariance))

    def los(self, a: str, b: str) -> float:
        """Return the likelihood of superiority P(elo_a > elo_b) (0.5 for a bot with itself).

        See the module docstring: the signed root of the likelihood ratio of elo_a = elo_b.
        """
        self.rating(a)
        self.rating(b)
        return 0.5 if a == b else self.superiority[(a, b)]


def fit_elo(
    games: Iterable[GameResult],
    *,
    anchor: str | None = None,
    prior_draws: float = 1.0,
    first_move_advantage: bool = True,
) -> EloFit:
    """Fit Davidson Elo ratings to all games by maximum (penalised) likelihood.

    `prior_draws` virtual draws per bot against the mean (and for the advantage and draw
    parameters, see the module docstring) keep estimates finite (0 for the pure MLE). With
    `first_move_advantage=False` the advantage is fixed at 0. Ratings have mean 0, or `anchor`
    has rating 0. Intervals are 95% profile-likelihood intervals widened by the pair-level
    design effect, infinite where the games cannot bound them. Raises StatsError for no games,
    bad scores, an unknown anchor, or a diverging fit.
    """
    if prior_draws < 0.0 or not math.isfinite(prior_draws):
        raise StatsError(f"prior_draws must be a finite number >= 0, got {prior_draws}")
    game_list = validated(games)
    if not game_list:
        raise StatsError("no games to rate; pass at least one GameResult")
    table = build_crosstable(game_list)
    bots = table.bots
    if anchor is not None and anchor not in table.totals:
        raise StatsError(f"anchor {anchor!r} played no game; choose one of: {', '.join(bots)}")
    index = {bot: i for i, bot in enumerate(bots)}
    model = build_model(game_list, index, prior_draws, first_move_advantage)
    params, iterations = maximise(model)
    value, _, hessian = evaluate(model, params, with_hessian=True)
    inverse = information_inverse(hessian)
    meat, units = unit_meat(model, game_list, index, params)
    optimum = Optimum(model, params, value, inverse, meat)
    free = unbounded_directions(
        len(bots), outcomes_by_pair(game_list, index), with_advantage=model.eta is not None
    )

    n, size = model.n, model.size
    anchor_index = None if anchor is None else index[anchor]
    contrasts = {bot: rating_contrast(n, size, index[bot], anchor_index) for bot in bots}
    ratings = []
    for bot in bots:
        low, high = optimum.interval(contrasts[bot], *free.rating_ends(index[bot], anchor_index))
        elo = dot(contrasts[bot], params) * ELO_PER_NATURAL
        record = table.totals[bot]
        ratings.append(
            Rating(
                bot, elo, low * ELO_PER_NATURAL, high * ELO_PER_NATURAL,
                record.games, record.points, record.score,
            )
        )  # fmt: skip
    ratings.sort(key=lambda rating: (-rating.elo, rating.bot))

    if model.eta is not None:
        advantage_contrast = [float(k == model.eta) for k in range(size)]
        advantage = params[model.eta] * ELO_PER_NATURAL
        low, high = optimum.interval(advantage_contrast, free.advantage_down, free.advantage_up)
        interval = (low * ELO_PER_NATURAL, high * ELO_PER_NATURAL)
    else:
        advantage, interval = 0.0, (0.0, 0.0)

    superiority = {}
    for a, b in itertools.combinations(bots, 2):
        i, j = index[a], index[b]
        difference = [x - y for x, y in zip(contrasts[a], contrasts[b], strict=True)]
        # Free on the far side of 0: the games cannot tell which one is better.
        far_side_free = free.rises[i][j] if dot(difference, params) > 0.0 else free.rises[j][i]
        superiority[(a, b)] = 0.5 if far_side_free else optimum.superiority(difference)
        superiority[(b, a)] = 1.0 - superiority[(a, b)]

    robust = optimum.sandwich()
    scale = ELO_PER_NATURAL * ELO_PER_NATURAL
    return EloFit(
        ratings=tuple(ratings),
        first_move_advantage=advantage,
        first_move_interval=interval,
        draw_nu=math.exp(params[model.kappa]) if model.kappa is not None else 0.0,
        anchor=anchor,
        prior_draws=prior_draws,
        log_likelihood=log_likelihood(model, params),
        iterations=iterations,
        units=units,
        covariance={
            (a, b): scale * quadratic(inverse, contrasts[a], contrasts[b])
            for a in bots
            for b in bots
        },
        robust_covariance={
            (a, b): scale * quadratic(robust, contrasts[a], contrasts[b])
            for a in bots
            for b in bots
        },
        superiority=superiority,
    )


def likelihood_of_superiority(fit: EloFit) -> dict[str, dict[str, float]]:
    """Return LOS[a][b] = P(elo_a > elo_b) for every pair of rated bots (0.5 on the diagonal)."""
    return {a: {b: fit.los(a, b) for b in fit.bots} for a in fit.bots}
