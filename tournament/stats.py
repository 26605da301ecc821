"""Tournament statistics: crosstable, Elo ratings by maximum likelihood, intervals and LOS.

The rating model is Davidson's (1970) extension of Bradley-Terry with draws, plus a first-move
advantage. For a game in which bot i moves first against bot j, with

    x = theta_i - theta_j + eta        (theta = elo * ln(10) / 400, eta = first-move advantage)

the outcome probabilities are

    P(first wins) = e^(x/2) / Z,   P(draw) = nu / Z,   P(first loses) = e^(-x/2) / Z,
    Z = e^(x/2) + e^(-x/2) + nu.

So P(win) / P(loss) = 10^(elo difference / 400) exactly, and with nu = 0 (no draws) the model is
plain Bradley-Terry / logistic Elo: P(win) = 1 / (1 + 10^(-(elo_i - elo_j + advantage) / 400)).
With draws, a draw counts as neither half a win nor half a loss, so the same score fraction
maps to a larger Elo difference than in the logistic formula (draws are evidence of closeness
only through nu). The log-likelihood is jointly concave in (theta, eta, log nu), and it is
maximised by damped Newton steps.

Prior (weight w = `prior_draws`, default 1): every bot plays w virtual drawn games against a
phantom rated at the mean of all bots, the draw counted as half a win and half a loss in the
logistic (Bradley-Terry) likelihood, so the pull does not depend on nu; the first-move advantage
gets w such virtual draws between equal bots (x = eta); and nu gets w virtual games between
equal bots without advantage split evenly into win, draw and loss (prior mode nu = 1). This
keeps every estimate finite (a bot that wins every game, a first mover that always wins, no
draws or only draws) and shrinks little: a few virtual games against dozens of real ones. With
`prior_draws=0` the fit is the pure maximum likelihood estimate: nu is 0 when no game was drawn,
and the fit diverges (StatsError) when a bot wins or loses every game.

Intervals are profile-likelihood (likelihood-ratio) intervals of the penalised likelihood, the
one the estimates maximise (prior included): the 95% interval of a rating holds every value at
which the log-likelihood, maximised over all the other parameters, is within
deff * chi2(1 df, 95%) / 2 = deff * 1.92 of the maximum. They are as asymmetric as the
likelihood is, cost a few constrained Newton fits each and use no random numbers.

deff is the pair-level design effect of that rating, floored at 1: the cluster-robust sandwich
variance A^-1 B A^-1 over the model-based variance A^-1, with A the negative Hessian of the
penalised log-likelihood and B = G/(G-1) * sum over the G independent units of the outer
product of each unit's log-likelihood gradient (centred on their mean, which the prior moves off
zero). Games that share a `pair` id (the two colour-swapped games of one opening) form one unit;
an unpaired game is its own unit; with fewer than two units deff is 1. So games that hang
together within a pair (a bot that wins both colours of the openings it knows) widen the
interval, and it is never narrower than the model's. The sandwich alone is not enough: when
every pair splits the same way (four games, each pair won twice by the same bot) all units'
centred gradients vanish and it collapses to a zero-width interval.

An end of an interval is unbounded (infinite here, None in `to_dict`) when the games alone
cannot bound it, whatever the prior says: when some direction that moves that rating towards
that end, with the other ratings, the advantage and nu free, makes no game less likely. A bot
that never lost has no upper bound (its draws do not bound it: nu can grow with the gap), one
that never won no lower bound; when every game was drawn, or every first mover won, nothing is
bounded. This is decided exactly, as linear constraints on such directions solved by shortest
paths, not by a cut-off.

The likelihood of superiority P(elo_a > elo_b) is Phi(sign(d) * sqrt(D0 / deff)), with d the
estimated difference and D0 the profile deviance of elo_a - elo_b = 0 (the signed root of the
likelihood ratio): LOS exceeds 97.5% exactly when the 95% interval of the difference excludes 0.
It is 0.5 when the games cannot bound the difference on the far side of 0.

Ratings are reported centred to mean 0, or shifted so that an `anchor` bot has rating 0 (its
interval is then [0, 0] and the others' intervals are those of their difference from it).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from statistics import NormalDist
from typing import Any

ELO_PER_NATURAL = 400.0 / math.log(10.0)
"""Elo points per natural-log unit of the win/loss odds ratio."""

Z95 = NormalDist().inv_cdf(0.975)
CHI2_95 = Z95 * Z95
"""The 95% quantile of chi-square with 1 degree of freedom: the likelihood-ratio cut."""

_MAX_ITERATIONS = 500
_MAX_NATURAL = 60.0  # about 10,000 Elo: beyond this the estimate is diverging, not converging
_TOLERANCE = 1e-11
_ROOT_TOLERANCE = 1e-9  # of the signed root of the deviance: far below an Elo
_DECREMENT = 1e-13  # log-likelihood still to gain when a constrained fit stops
_MAX_VARIANCE = 1e6  # natural units squared: a standard error of 170,000 Elo is no estimate
_DIVERGES = (
    "the fit diverges (a bot won or lost every game, the first mover always won or lost, or "
    "every game was drawn); use prior_draws > 0 to keep it finite"
)

_WIN, _DRAW, _LOSS = 1, 0, -1


class StatsError(ValueError):
    """Games that cannot be rated as given; the message says what to change."""


@dataclass(frozen=True, slots=True)
class GameResult:
    """One finished game: `score` is the first mover's points (1, 0.5 or 0).

    `first` is the bot that moved first (in checkers, Black). Games that share a `pair` id
    are the colour-swapped games of one opening and are treated as one independent unit.
    """

    first: str
    second: str
    score: float
    pair: int | None = None


@dataclass(frozen=True, slots=True)
class Record:
    """Games, wins, draws, losses and points, from one bot's point of view."""

    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def points(self) -> float:
        """Return wins plus half the draws."""
        return self.wins + 0.5 * self.draws

    @property
    def score(self) -> float:
        """Return the points per game (0.0 without games)."""
        return self.points / self.games if self.games else 0.0

    def add(self, points: float) -> Record:
        """Return this record with one more game in which the bot scored `points`."""
        return Record(
            self.games + 1,
            self.wins + (points == 1.0),
            self.draws + (points == 0.5),
            self.losses + (points == 0.0),
        )


@dataclass(frozen=True)
class Crosstable:
    """Head-to-head records and totals; bots sorted by name.

    `head_to_head[(a, b)]` is a's record against b, present only when they played.
    """

    bots: tuple[str, ...]
    head_to_head: Mapping[tuple[str, str], Record]
    totals: Mapping[str, Record]


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


def build_crosstable(games: Iterable[GameResult]) -> Crosstable:
    """Count each bot's wins, draws and losses against each opponent and in total."""
    head: dict[tuple[str, str], Record] = {}
    totals: dict[str, Record] = {}
    for game in _validated(games):
        for bot, other, points in (
            (game.first, game.second, game.score),
            (game.second, game.first, 1.0 - game.score),
        ):
            head[(bot, other)] = head.get((bot, other), Record()).add(points)
            totals[bot] = totals.get(bot, Record()).add(points)
    return Crosstable(tuple(sorted(totals)), head, totals)


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
    game_list = _validated(games)
    if not game_list:
        raise StatsError("no games to rate; pass at least one GameResult")
    table = build_crosstable(game_list)
    bots = table.bots
    if anchor is not None and anchor not in table.totals:
        raise StatsError(f"anchor {anchor!r} played no game; choose one of: {', '.join(bots)}")
    index = {bot: i for i, bot in enumerate(bots)}
    model = _build_model(game_list, index, prior_draws, first_move_advantage)
    params, iterations = _maximise(model)
    value, _, hessian = _evaluate(model, params, with_hessian=True)
    inverse = _information_inverse(hessian)
    meat, units = _meat(model, game_list, index, params)
    optimum = _Optimum(model, params, value, inverse, meat)
    free = _unbounded_directions(
        len(bots), _outcomes(game_list, index), with_advantage=model.eta is not None
    )

    n, size = model.n, model.size
    anchor_index = None if anchor is None else index[anchor]
    contrasts = {bot: _rating_contrast(n, size, index[bot], anchor_index) for bot in bots}
    ratings = []
    for bot in bots:
        low, high = optimum.interval(contrasts[bot], *free.rating_ends(index[bot], anchor_index))
        elo = _dot(contrasts[bot], params) * ELO_PER_NATURAL
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
        far_side_free = free.rises[i][j] if _dot(difference, params) > 0.0 else free.rises[j][i]
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
        log_likelihood=_log_likelihood(model, params),
        iterations=iterations,
        units=units,
        covariance={
            (a, b): scale * _quadratic(inverse, contrasts[a], contrasts[b])
            for a in bots
            for b in bots
        },
        robust_covariance={
            (a, b): scale * _quadratic(robust, contrasts[a], contrasts[b])
            for a in bots
            for b in bots
        },
        superiority=superiority,
    )


def likelihood_of_superiority(fit: EloFit) -> dict[str, dict[str, float]]:
    """Return LOS[a][b] = P(elo_a > elo_b) for every pair of rated bots (0.5 on the diagonal)."""
    return {a: {b: fit.los(a, b) for b in fit.bots} for a in fit.bots}


def to_dict(crosstable: Crosstable, fit: EloFit) -> dict[str, Any]:
    """Return crosstable, ratings, model parameters and LOS as a JSON-able dict.

    `fit_dict` with the fit's iterations and log-likelihood, `crosstable_dict`, each bot's
    totals (`record_dict`) and LOS. Infinite interval ends (the games cannot bound them) become
    None.
    """
    return {
        **fit_dict(fit),
        "iterations": fit.iterations,
        "log_likelihood": fit.log_likelihood,
        "crosstable": crosstable_dict(crosstable),
        "totals": {bot: record_dict(crosstable.totals[bot]) for bot in crosstable.bots},
        "los": likelihood_of_superiority(fit),
    }


def fit_dict(fit: EloFit) -> dict[str, Any]:
    """Return the model, its parameters and the ratings (best first) as JSON values.

    Keys: model, scale, anchor, prior_draws, units, first_move_advantage (elo, lower, upper),
    draw (nu, equal_draw_rate) and ratings (`rating_dict` each). Infinite ends become None.
    """
    low, high = fit.first_move_interval
    return {
        "model": "davidson",
        "scale": "elo (400*log10)",
        "anchor": fit.anchor,
        "prior_draws": fit.prior_draws,
        "units": fit.units,
        "first_move_advantage": {
            "elo": fit.first_move_advantage,
            "lower": finite_or_none(low),
            "upper": finite_or_none(high),
        },
        "draw": {"nu": fit.draw_nu, "equal_draw_rate": fit.equal_draw_rate},
        "ratings": [rating_dict(r) for r in fit.ratings],
    }


def rating_dict(rating: Rating) -> dict[str, Any]:
    """Return bot, elo, lower, upper, games, points and score; an infinite end becomes None."""
    return {
        "bot": rating.bot,
        "elo": rating.elo,
        "lower": finite_or_none(rating.lower),
        "upper": finite_or_none(rating.upper),
        "games": rating.games,
        "points": rating.points,
        "score": rating.score,
    }


def crosstable_dict(crosstable: Crosstable) -> dict[str, dict[str, dict[str, float]]]:
    """Return a -> b -> a's `record_dict` against b, only for bots that met, sorted by name."""
    return {
        a: {
            b: record_dict(crosstable.head_to_head[(a, b)])
            for b in crosstable.bots
            if (a, b) in crosstable.head_to_head
        }
        for a in crosstable.bots
    }


def record_dict(record: Record) -> dict[str, float]:
    """Return games, wins, draws, losses and points."""
    return {
        "games": record.games,
        "wins": record.wins,
        "draws": record.draws,
        "losses": record.losses,
        "points": record.points,
    }


def finite_or_none(value: float) -> float | None:
    """Return `value`, or None when it is infinite (JSON has no infinity)."""
    return value if math.isfinite(value) else None


UNBOUNDED_NOTE = (
    "-inf/inf: these games cannot bound that end of the interval "
    "(as when a bot won every game, or every game was drawn)"
)
"""What an infinite interval end means, for reports that show one."""


def has_unbounded_interval(fit: EloFit) -> bool:
    """Return whether any rating or the first-move advantage has an infinite interval end."""
    ends = [end for r in fit.ratings for end in (r.lower, r.upper)]
    return not all(math.isfinite(end) for end in [*ends, *fit.first_move_interval])


def format_table(crosstable: Crosstable, fit: EloFit) -> str:
    """Return ratings (best first) with the crosstable as text: points/games per opponent.

    Infinite interval ends are written -inf and inf, with a line saying what they mean.
    """
    order = fit.bots
    width = max(4, *(len(bot) for bot in order))
    cells = {
        (a, b): _format_cell(crosstable.head_to_head.get((a, b))) for a in order for b in order
    }
    cell_width = max(5, *(len(cell) for cell in cells.values()))
    header = (
        f"{'#':>2} {'bot':<{width}} {'elo':>7} {'95% interval':>17} {'games':>5} {'score':>6} "
        + " ".join(f"{i + 1!s:>{cell_width}}" for i in range(len(order)))
    )
    lines = [header]
    for rank, bot in enumerate(order, start=1):
        r = fit.rating(bot)
        interval = f"[{format_elo(r.lower)}, {format_elo(r.upper)}]"
        row = " ".join(
            f"{'-' if bot == other else cells[(bot, other)]:>{cell_width}}" for other in order
        )
        lines.append(
            f"{rank:>2} {bot:<{width}} {r.elo:>7.1f} {interval:>17} {r.games:>5} "
            f"{100.0 * r.score:>5.1f}% {row}"
        )
    low, high = fit.first_move_interval
    lines.append(
        f"first-move advantage {fit.first_move_advantage:.1f} Elo "
        f"[{format_elo(low)}, {format_elo(high)}]; draw nu {fit.draw_nu:.3f} "
        f"(equal-bot draw rate {100.0 * fit.equal_draw_rate:.1f}%); "
        f"{fit.units} independent units"
    )
    if has_unbounded_interval(fit):
        lines.append(UNBOUNDED_NOTE)
    return "\n".join(lines)


# --- model internals ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Tally:
    """The games one bot (`first`) played as first mover against another, by outcome."""

    first: int
    second: int
    wins: float
    draws: float
    losses: float


@dataclass(frozen=True, slots=True)
class _Group:
    """Virtual games at one linear x = sum(c * params[i]), counted by outcome."""

    coefficients: tuple[tuple[int, float], ...]
    wins: float
    draws: float
    losses: float
    logistic: bool = False  # Bradley-Terry likelihood (nu = 0) whatever the fitted nu


@dataclass(frozen=True)
class _Model:
    """The penalised log-likelihood: real games, the prior's virtual games and the gauge.

    Parameters are the n ratings (natural units), then eta and log nu when present.
    """

    n: int
    eta: int | None
    kappa: int | None
    games: tuple[_Tally, ...]
    virtual: tuple[_Group, ...]
    against_mean: float  # virtual logistic draws of every bot against the mean of all

    @property
    def size(self) -> int:
        return self.n + (self.eta is not None) + (self.kappa is not None)


def _validated(games: Iterable[GameResult]) -> list[GameResult]:
    result = list(games)
    for game in result:
        if game.score not in (0.0, 0.5, 1.0):
            raise StatsError(f"score must be 1, 0.5 or 0 (first mover's points), got {game!r}")
        if game.first == game.second:
            raise StatsError(f"a bot cannot play itself: {game!r}")
    return result


def _outcome(game: GameResult) -> int:
    return _WIN if game.score == 1.0 else _LOSS if game.score == 0.0 else _DRAW


def _outcomes(
    games: Sequence[GameResult], index: Mapping[str, int]
) -> dict[tuple[int, int], set[int]]:
    """Return the outcomes seen for each (first, second) bot index pair."""
    seen: dict[tuple[int, int], set[int]] = {}
    for game in games:
        seen.setdefault((index[game.first], index[game.second]), set()).add(_outcome(game))
    return seen


def _build_model(
    games: Sequence[GameResult],
    index: Mapping[str, int],
    prior_draws: float,
    first_move_advantage: bool,
) -> _Model:
    n = len(index)
    eta = n if first_move_advantage else None
    has_draws = prior_draws > 0.0 or any(game.score == 0.5 for game in games)
    kappa = n + (eta is not None) if has_draws else None
    counts: dict[tuple[int, int], list[float]] = {}
    for game in games:
        tally = counts.setdefault((index[game.first], index[game.second]), [0.0, 0.0, 0.0])
        tally[(_WIN, _DRAW, _LOSS).index(_outcome(game))] += 1.0
    tallies = tuple(
        _Tally(first, second, wins, draws, losses)
        for (first, second), (wins, draws, losses) in counts.items()
    )
    virtual: list[_Group] = []
    if prior_draws > 0.0:
        half = prior_draws / 2.0
        if eta is not None:
            virtual.append(_Group(((eta, 1.0),), half, 0.0, half, logistic=True))
        if kappa is not None:
            third = prior_draws / 3.0
            virtual.append(_Group((), third, third, third))
    return _Model(n, eta, kappa, tallies, tuple(virtual), prior_draws)


def _outcome_derivatives(
    x: float, log_nu: float | None, wins: float, draws: float, losses: float
) -> tuple[float, float, float, float, float, float]:
    """Return the log-likelihood of these outcome counts at (x, log nu), with its first and
    second derivatives in x and log nu: value, dx, dk, dxx, dxk, dkk."""
    half = x / 2.0
    top = max(half, -half) if log_nu is None else max(half, -half, log_nu)
    win, loss = math.exp(half - top), math.exp(-half - top)
    draw = 0.0 if log_nu is None else math.exp(log_nu - top)
    total = win + loss + draw
    pw, pl, pd = win / total, loss / total, draw / total
    count = wins + draws + losses
    value = (wins - losses) * half - count * (top + math.log(total))
    if log_nu is not None:
        value += draws * log_nu
    mean_x = (pw - pl) / 2.0  # d log Z / dx
    dx = (wins - losses) / 2.0 - count * mean_x
    dk = draws - count * pd
    dxx = -count * ((pw + pl) / 4.0 - mean_x * mean_x)
    dxk = count * mean_x * pd
    dkk = -count * (pd - pd * pd)
    return value, dx, dk, dxx, dxk, dkk


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def _game_x(model: _Model, params: Sequence[float], first: int, second: int) -> float:
    advantage = params[model.eta] if model.eta is not None else 0.0
    return params[first] - params[second] + advantage


def _log_nu(model: _Model, params: Sequence[float]) -> float | None:
    return params[model.kappa] if model.kappa is not None else None


def _log_likelihood(model: _Model, params: Sequence[float]) -> float:
    """Return the log-likelihood of the real games (no prior, no gauge penalty)."""
    log_nu = _log_nu(model, params)
    return sum(
        _outcome_derivatives(
            _game_x(model, params, t.first, t.second), log_nu, t.wins, t.draws, t.losses
        )[0]
        for t in model.games
    )


def _add_games(
    model: _Model, params: Sequence[float], gradient: list[float], hessian: list[list[float]]
) -> float:
    """Add the real games' gradient (and Hessian, unless empty) in place; return their value.

    Written out per parameter rather than looping over coefficients: this is the inner loop of
    every fit and profile.
    """
    eta, kappa = model.eta, model.kappa
    log_nu = _log_nu(model, params)
    value = 0.0
    for t in model.games:
        first, second = t.first, t.second
        v, dx, dk, dxx, dxk, dkk = _outcome_derivatives(
            _game_x(model, params, first, second), log_nu, t.wins, t.draws, t.losses
        )
        value += v
        gradient[first] += dx
        gradient[second] -= dx
        if eta is not None:
            gradient[eta] += dx
        if kappa is not None:
            gradient[kappa] += dk
        if not hessian:
            continue
        row_first, row_second = hessian[first], hessian[second]
        row_first[first] += dxx
        row_second[second] += dxx
        row_first[second] -= dxx
        row_second[first] -= dxx
        if eta is not None:
            row_first[eta] += dxx
            row_second[eta] -= dxx
            hessian[eta][eta] += dxx
        if kappa is not None:
            row_first[kappa] += dxk
            row_second[kappa] -= dxk
            hessian[kappa][kappa] += dkk
            if eta is not None:
                hessian[eta][kappa] += dxk
    if hessian:  # only the upper rows of eta and log nu were summed above
        for i, j in itertools.combinations(range(model.size), 2):
            if j >= model.n:
                hessian[j][i] = hessian[i][j]
    return value


def _evaluate(
    model: _Model, params: Sequence[float], *, with_hessian: bool
) -> tuple[float, list[float], list[list[float]]]:
    """Return the penalised log-likelihood, its gradient and (when asked) its Hessian.

    The penalty -(sum of ratings)^2 / 2 fixes the gauge at mean 0 without moving the optimum,
    because everything else depends on rating differences only. Without `with_hessian` the
    Hessian returned is empty.
    """
    size, n = model.size, model.n
    gradient = [0.0] * size
    hessian = [[0.0] * size for _ in range(size)] if with_hessian else []
    value = _add_games(model, params, gradient, hessian)
    for group in model.virtual:
        log_nu = None if group.logistic else _log_nu(model, params)
        kappa = None if log_nu is None else model.kappa
        x = sum(c * params[i] for i, c in group.coefficients)
        v, dx, dk, dxx, dxk, dkk = _outcome_derivatives(
            x, log_nu, group.wins, group.draws, group.losses
        )
        value += v
        for i, ci in group.coefficients:
            gradient[i] += ci * dx
        if kappa is not None:
            gradient[kappa] += dk
        if with_hessian:
            for i, ci in group.coefficients:
                row = hessian[i]
                for j, cj in group.coefficients:
                    row[j] += ci * cj * dxx
                if kappa is not None:
                    row[kappa] += ci * dxk
                    hessian[kappa][i] += ci * dxk
            if kappa is not None:
                hessian[kappa][kappa] += dkk
    total = sum(params[:n])
    value -= total * total / 2.0
    # The prior against the mean: x_b = theta_b - mean, so each term's Hessian is
    # dxx_b (e_b - 1/n)(e_b - 1/n)^T, summed here in O(n^2) rather than O(n^3).
    dxs, dxxs = [0.0] * n, [0.0] * n
    if model.against_mean > 0.0:
        half, mean = model.against_mean / 2.0, total / n
        for b in range(n):
            v, dxs[b], _, dxxs[b], _, _ = _outcome_derivatives(
                params[b] - mean, None, half, 0.0, half
            )
            value += v
    mean_dx, mean_dxx = sum(dxs) / n, sum(dxxs) / (n * n)
    for i in range(n):
        gradient[i] += dxs[i] - mean_dx - total
        if with_hessian:
            row = hessian[i]
            for j in range(n):
                row[j] += mean_dxx - (dxxs[i] + dxxs[j]) / n - 1.0
            row[i] += dxxs[i]
    return value, gradient, hessian


def _line_search(
    model: _Model, params: Sequence[float], step: Sequence[float], value: float
) -> tuple[list[float], float, tuple[float, list[float], list[list[float]]]]:
    """Return params + s * step for the first s in 1, 1/2, 1/4, ... that does not lose value
    (the last tried below 1e-10 when none does), that s, and the evaluation there."""
    scale = 1.0
    while True:
        trial = [p + scale * s for p, s in zip(params, step, strict=True)]
        # With the Hessian: the full step is nearly always taken, and then it is needed next.
        evaluation = _evaluate(model, trial, with_hessian=True)
        if evaluation[0] >= value - 1e-12 * abs(value) or scale < 1e-10:
            return trial, scale, evaluation
        scale /= 2.0


def _maximise(model: _Model) -> tuple[list[float], int]:
    params = [0.0] * model.size
    value, gradient, hessian = _evaluate(model, params, with_hessian=True)
    for iteration in range(1, _MAX_ITERATIONS + 1):
        step = _solve(_negated(hessian), [gradient])[0]
        params, scale, (value, gradient, hessian) = _line_search(model, params, step, value)
        if max(abs(p) for p in params) > _MAX_NATURAL:
            raise StatsError(_DIVERGES)
        if max(abs(scale * s) for s in step) < _TOLERANCE:
            return params, iteration
    raise StatsError(
        f"the rating fit did not converge in {_MAX_ITERATIONS} Newton steps; use prior_draws > 0"
    )


def _constrained_maximum(
    model: _Model, start: Sequence[float], contrast: Sequence[float]
) -> tuple[list[float], float, float, list[float]]:
    """Maximise the penalised log-likelihood over the params p with contrast.p = contrast.start.

    Return the maximising p, the maximum, its derivative in contrast.p (the profile's slope)
    and the derivative of p in contrast.p (the tangent of the profile path).
    """
    params = list(start)
    value, gradient, hessian = _evaluate(model, params, with_hessian=True)
    for _ in range(_MAX_ITERATIONS):
        # Newton step on the Lagrangian: A step = gradient + mu c with c.step = 0.
        free, along = _solve(_negated(hessian), [gradient, contrast])
        curvature = _dot(contrast, along)
        slope = _dot(contrast, free) / curvature
        step = [f - slope * a for f, a in zip(free, along, strict=True)]
        # gradient.step is the Newton decrement (twice the value still to gain): stop when the
        # maximum is known far more closely than the deviances computed from it need.
        if _dot(gradient, step) < _DECREMENT:
            return params, value, slope, [a / curvature for a in along]
        params, _, (value, gradient, hessian) = _line_search(model, params, step, value)
    raise StatsError(
        f"a profile-likelihood fit did not converge in {_MAX_ITERATIONS} Newton steps; "
        "use prior_draws > 0"
    )


def _negated(matrix: Sequence[Sequence[float]]) -> list[list[float]]:
    return [[-h for h in row] for row in matrix]


def _solve(matrix: Sequence[Sequence[float]], rhs: Sequence[Sequence[float]]) -> list[list[float]]:
    """Solve matrix @ x = b for each b in `rhs`; `matrix` must be symmetric positive definite.

    By Cholesky factorisation: the matrices solved here are negative Hessians of a concave
    log-likelihood made strictly concave by the gauge penalty (and the prior). A pivot that is
    not positive means a parameter without information.
    """
    size = len(matrix)
    lower = [[0.0] * size for _ in range(size)]
    for i in range(size):
        row = lower[i]
        for j in range(i + 1):
            other = lower[j]
            rest = matrix[i][j] - sum(row[k] * other[k] for k in range(j))
            if i != j:
                row[j] = rest / other[j]
            elif rest > 0.0:
                row[i] = math.sqrt(rest)
            else:
                raise StatsError(
                    "the rating model is not identifiable from these games (a parameter has no "
                    "information); use prior_draws > 0 or first_move_advantage=False"
                )
    solutions = []
    for b in rhs:
        y = [0.0] * size
        for i in range(size):
            row = lower[i]
            y[i] = (b[i] - sum(row[k] * y[k] for k in range(i))) / row[i]
        x = [0.0] * size
        for i in reversed(range(size)):
            x[i] = (y[i] - sum(lower[k][i] * x[k] for k in range(i + 1, size))) / lower[i][i]
        solutions.append(x)
    return solutions


def _information_inverse(hessian: Sequence[Sequence[float]]) -> list[list[float]]:
    """Return A^-1 for A = -hessian; StatsError when a direction has (almost) no curvature.

    Vanishing curvature at the end of the Newton iterations means the optimum is at infinity:
    the likelihood keeps rising, ever more slowly, as some estimate grows without bound.
    """
    size = len(hessian)
    identity = [[float(i == j) for j in range(size)] for i in range(size)]
    inverse = _solve(_negated(hessian), identity)  # columns of A^-1; A is symmetric
    if any(not 0.0 < inverse[i][i] < _MAX_VARIANCE for i in range(size)):
        raise StatsError(_DIVERGES)
    return inverse


def _meat(
    model: _Model, games: Sequence[GameResult], index: Mapping[str, int], params: Sequence[float]
) -> tuple[list[list[float]] | None, int]:
    """Return B = G/(G-1) * sum of outer products of the G units' centred gradients, and G.

    B is None with fewer than two units. Each unit's gradient is sparse (two ratings, eta and
    log nu per game), so B = G/(G-1) (sum g g^T - G mean mean^T) is summed sparsely.
    """
    units: dict[tuple[str, int], dict[int, float]] = {}
    for number, game in enumerate(games):
        key = ("pair", game.pair) if game.pair is not None else ("game", number)
        gradient = units.setdefault(key, {})
        first, second = index[game.first], index[game.second]
        outcome = _outcome(game)
        _, dx, dk, _, _, _ = _outcome_derivatives(
            _game_x(model, params, first, second),
            _log_nu(model, params),
            float(outcome == _WIN),
            float(outcome == _DRAW),
            float(outcome == _LOSS),
        )
        coefficients = [(first, 1.0), (second, -1.0)]
        if model.eta is not None:
            coefficients.append((model.eta, 1.0))
        for i, c in coefficients:
            gradient[i] = gradient.get(i, 0.0) + c * dx
        if model.kappa is not None:
            gradient[model.kappa] = gradient.get(model.kappa, 0.0) + dk
    count, size = len(units), model.size
    if count < 2:
        return None, count
    # Centred: with the prior the unit gradients need not sum to zero at the optimum.
    mean = [0.0] * size
    meat = [[0.0] * size for _ in range(size)]
    for gradient in units.values():
        for i, gi in gradient.items():
            mean[i] += gi / count
            row = meat[i]
            for j, gj in gradient.items():
                row[j] += gi * gj
    correction = count / (count - 1.0)
    for i in range(size):
        for j in range(size):
            meat[i][j] = correction * (meat[i][j] - count * mean[i] * mean[j])
    return meat, count


def _quadratic(matrix: Sequence[Sequence[float]], a: Sequence[float], b: Sequence[float]) -> float:
    return sum(ai * _dot(row, b) for ai, row in zip(a, matrix, strict=True) if ai != 0.0)


def _product(matrix: Sequence[Sequence[float]], vector: Sequence[float]) -> list[float]:
    return [_dot(row, vector) for row in matrix]


def _rating_contrast(n: int, size: int, bot: int, anchor: int | None) -> list[float]:
    """Return c with c.params = the rating of `bot` (natural units), centred or anchored."""
    contrast = [0.0] * size
    for j in range(n):
        contrast[j] = -1.0 / n if anchor is None else -float(j == anchor)
    contrast[bot] += 1.0
    return contrast


@dataclass(frozen=True)
class _Optimum:
    """The penalised fit: its model, maximiser, maximum, A^-1 and B (None: under two units)."""

    model: _Model
    params: list[float]
    value: float
    inverse: list[list[float]]
    meat: list[list[float]] | None

    def sandwich(self) -> list[list[float]]:
        """Return A^-1 B A^-1, or A^-1 with fewer than two units."""
        if self.meat is None:
            return self.inverse
        left = [_product(self.meat, column) for column in self.inverse]  # B A^-1, transposed
        return [_product(self.inverse, row) for row in left]

    def design_effect(self, contrast: Sequence[float]) -> float:
        """Return the sandwich variance of contrast.params over the model's, at least 1."""
        if self.meat is None:
            return 1.0
        along = _product(self.inverse, contrast)
        return max(1.0, _quadratic(self.meat, along, along) / _dot(contrast, along))

    def deviance(self, contrast: Sequence[float], target: float) -> float:
        """Return the profile deviance of contrast.params = target."""
        centre = _dot(contrast, self.params)
        along = _product(self.inverse, contrast)
        shift = (target - centre) / _dot(contrast, along)
        start = [p + shift * a for p, a in zip(self.params, along, strict=True)]
        value = _constrained_maximum(self.model, start, contrast)[1]
        return max(0.0, 2.0 * (self.value - value))

    def interval(
        self, contrast: Sequence[float], low_free: bool, high_free: bool
    ) -> tuple[float, float]:
        """Return the 95% interval of contrast.params (natural units); free ends are infinite."""
        centre = _dot(contrast, self.params)
        if not any(contrast):
            return centre, centre
        cut = CHI2_95 * self.design_effect(contrast)
        low = -math.inf if low_free else self._bound(contrast, -1.0, cut)
        high = math.inf if high_free else self._bound(contrast, 1.0, cut)
        return low, high

    def superiority(self, difference: Sequence[float]) -> float:
        """Return Phi of the signed root of the deviance of difference.params = 0 over deff."""
        centre = _dot(difference, self.params)
        root = math.sqrt(self.deviance(difference, 0.0) / self.design_effect(difference))
        return NormalDist().cdf(math.copysign(root, centre))

    def _bound(self, contrast: Sequence[float], side: float, cut: float) -> float:
        """Return where the profile deviance of contrast.params reaches `cut` on `side` (+-1).

        Newton steps on the signed root of the deviance, which is nearly linear in the
        contrast, safeguarded by bisection once the end is bracketed; each point is a
        constrained fit warm-started along the tangent of the profile path.
        """
        centre = _dot(contrast, self.params)
        along = _product(self.inverse, contrast)
        variance = _dot(contrast, along)
        target = math.sqrt(cut)
        point, point_at = self.params, centre
        tangent = [a / variance for a in along]
        distance, below, above = target * math.sqrt(variance), 0.0, math.inf
        for _ in range(_MAX_ITERATIONS):
            at = centre + side * distance
            start = [p + (at - point_at) * t for p, t in zip(point, tangent, strict=True)]
            point, value, slope, tangent = _constrained_maximum(self.model, start, contrast)
            point_at = at
            root = math.sqrt(max(0.0, 2.0 * (self.value - value)))
            if abs(root - target) < _ROOT_TOLERANCE:
                return at
            if root < target:
                below = distance
            else:
                above = distance
            rate = -side * slope / root if root > 0.0 else 0.0  # d root / d distance
            guess = distance + (target - root) / rate if rate > 0.0 else math.inf
            if above < math.inf:
                distance = guess if below < guess < above else (below + above) / 2.0
                if above - below < _TOLERANCE:
                    return at
            else:
                # Not bracketed yet: grow at most fourfold, and give up past _MAX_NATURAL.
                distance = min(guess, 4.0 * distance) if guess > distance else 2.0 * distance
                if distance > _MAX_NATURAL:
                    if below >= _MAX_NATURAL:
                        return side * math.inf
                    distance = _MAX_NATURAL
        return side * math.inf


# --- which interval ends the games cannot bound ------------------------------------------------


@dataclass
class _Unbounded:
    """Directions in which the games' likelihood never falls (asymptotically).

    `rises[b][a]`: elo_a - elo_b can grow without bound; `centred_up[i]`/`centred_down[i]`:
    bot i's centred rating can rise/fall without bound; `advantage_up`/`advantage_down`: the
    first-move advantage can.
    """

    rises: list[list[bool]]
    centred_up: list[bool]
    centred_down: list[bool]
    advantage_up: bool = False
    advantage_down: bool = False

    def rating_ends(self, bot: int, anchor: int | None) -> tuple[bool, bool]:
        """Return whether the reported rating of `bot` can fall, and rise, without bound."""
        if anchor is None:
            return self.centred_down[bot], self.centred_up[bot]
        return self.rises[bot][anchor], self.rises[anchor][bot]


def _unbounded_directions(
    n: int, outcomes: Mapping[tuple[int, int], set[int]], *, with_advantage: bool
) -> _Unbounded:
    """Return which contrasts the real games cannot bound, by asymptotic slopes of the likelihood.

    Along a direction (d ratings, h advantage, k log nu), a game with x' = d_first - d_second + h
    has an asymptotic log-likelihood slope >= 0 exactly when: won, x' >= max(0, 2k); lost,
    x' <= -max(0, 2k); drawn, |x'| <= 2k. The likelihood is concave, so a direction in which
    every game's slope is >= 0 never lowers it, and a contrast that such a direction increases
    is unbounded above by the games (the profile deviance tends to 0), else bounded (it tends
    to infinity). With draws k >= 0; without, k can fall freely and only x' >= 0 (won) and
    x' <= 0 (lost) remain. The directions form a cone: its slice k = 0 for h in {-1, 0, 1}, and
    (with draws) its slice 2k = 1 at the vertices' h = p/q (a cycle of bounds +-1 fixes h, so
    |p| <= n, 1 <= q <= n). For fixed h and k the constraints are differences of ratings, and
    the largest d_a - d_b is the shortest path from b to a (Floyd-Warshall, exact integers).
    """
    result = _Unbounded(
        rises=[[False] * n for _ in range(n)], centred_up=[False] * n, centred_down=[False] * n
    )
    slices = [(h, 0) for h in ((-1, 0, 1) if with_advantage else (0,))]
    has_draws = any(_DRAW in seen for seen in outcomes.values())
    if has_draws and not any({_WIN, _LOSS} <= seen for seen in outcomes.values()):
        advantages = (
            sorted({Fraction(p, q) for q in range(1, n + 1) for p in range(-n, n + 1)})
            if with_advantage
            else [Fraction(0)]
        )
        # All weights times the denominator q: h = p/q becomes p and 2k = 1 becomes q.
        slices += [(h.numerator, h.denominator) for h in advantages]
    for numerator, margin in slices:
        distances = _shortest_paths(n, _difference_constraints(outcomes, numerator, margin))
        if distances is None:
            continue
        for a in range(n):
            for b in range(n):
                if distances[b][a] > 0:
                    result.rises[b][a] = True
            if sum(distances[u][a] for u in range(n)) > 0:
                result.centred_up[a] = True
            if sum(distances[a][u] for u in range(n)) > 0:
                result.centred_down[a] = True
        result.advantage_up |= numerator > 0
        result.advantage_down |= numerator < 0
    return result


def _difference_constraints(
    outcomes: Mapping[tuple[int, int], set[int]], h: int, margin: int
) -> list[tuple[int, int, int]]:
    """Return edges (u, v, w) meaning d_v - d_u <= w for x' = d_first - d_second + h."""
    edges = []
    for (first, second), seen in outcomes.items():
        if _WIN in seen:  # x' >= margin
            edges.append((first, second, h - margin))
        if _LOSS in seen:  # x' <= -margin
            edges.append((second, first, -h - margin))
        if _DRAW in seen:  # -margin <= x' <= margin
            edges.append((second, first, margin - h))
            edges.append((first, second, margin + h))
    return edges


def _shortest_paths(n: int, edges: Iterable[tuple[int, int, int]]) -> list[list[float]] | None:
    """Return all shortest path lengths (inf: no path), or None when a cycle is negative."""
    distances: list[list[float]] = [
        [0.0 if i == j else math.inf for j in range(n)] for i in range(n)
    ]
    for u, v, w in edges:
        distances[u][v] = min(distances[u][v], w)
    for k in range(n):
        via = distances[k]
        for i in range(n):
            to_k = distances[i][k]
            if to_k == math.inf:
                continue
            row = distances[i]
            for j in range(n):
                row[j] = min(row[j], to_k + via[j])
    if any(distances[i][i] < 0 for i in range(n)):
        return None
    return distances


def _format_cell(record: Record | None) -> str:
    if record is None:
        return "."
    return f"{record.points:g}/{record.games}"


def format_elo(value: float) -> str:
    """Return an Elo value or interval end rounded to a whole number, or inf or -inf."""
    return f"{value:.0f}" if math.isfinite(value) else "inf" if value > 0 else "-inf"
