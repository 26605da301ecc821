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

Errors: games that share a `pair` id (the two colour-swapped games of one opening) form one
independent unit; an unpaired game is its own unit. The covariance of the estimates is the
cluster-robust sandwich A^-1 B A^-1, with A the negative Hessian of the penalised
log-likelihood and B = G/(G-1) * sum over the G units of the outer product of each unit's
log-likelihood gradient (centred on their mean, which the prior moves off zero). This is the
pair-level ("pentanomial") error: the correlation between the two games of an opening is
measured, not assumed away. It needs no random numbers.
Intervals are 95% normal intervals; the likelihood of superiority is the normal probability
that one rating exceeds another, from the covariance of the two.

Ratings are reported centred to mean 0, or shifted so that an `anchor` bot has rating 0 (its
interval is then [0, 0] and the others' intervals are those of their difference from it).
With fewer than two units the intervals are infinite and every LOS is 0.5.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

ELO_PER_NATURAL = 400.0 / math.log(10.0)
"""Elo points per natural-log unit of the win/loss odds ratio."""

Z95 = NormalDist().inv_cdf(0.975)

_MAX_ITERATIONS = 500
_MAX_NATURAL = 60.0  # about 10,000 Elo: beyond this the estimate is diverging, not converging
_TOLERANCE = 1e-11
_MAX_VARIANCE = 1e6  # natural units squared: a standard error of 170,000 Elo is no estimate
_DIVERGES = (
    "the fit diverges (a bot won or lost every game, the first mover always won or lost, or "
    "every game was drawn); use prior_draws > 0 to keep it finite"
)


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
    """One bot's Elo with its 95% interval, games, points and score fraction."""

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

    Elo values are on the 400*log10 scale. `first_move_advantage` is in Elo; `draw_nu` is
    Davidson's nu (0 when no game, real or virtual, was drawn). `units` counts the independent
    units behind the intervals (pairs plus unpaired games); with fewer than two the intervals
    are infinite.
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
        """Return the variance (Elo squared) of elo(a) - elo(b) from the pair-level covariance."""
        cov = self.covariance
        variance = cov[(a, a)] + cov[(b, b)] - 2.0 * cov[(a, b)]
        return math.inf if math.isnan(variance) else max(0.0, variance)

    def los(self, a: str, b: str) -> float:
        """Return the likelihood of superiority P(elo_a > elo_b) under the normal approximation.

        0.5 when the variance is unknown (fewer than two independent units).
        """
        diff = self.rating(a).elo - self.rating(b).elo
        variance = self.variance_of_difference(a, b)
        if math.isinf(variance):
            return 0.5
        if variance == 0.0:
            return 0.5 if diff == 0.0 else float(diff > 0.0)
        return NormalDist().cdf(diff / math.sqrt(variance))


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
    has rating 0. Raises StatsError for no games, bad scores, an unknown anchor,
    or a diverging fit.
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
    n = len(bots)
    eta = n if first_move_advantage else None
    has_draws = prior_draws > 0.0 or any(game.score == 0.5 for game in game_list)
    kappa = n + (eta is not None) if has_draws else None
    size = n + (eta is not None) + (kappa is not None)

    real_terms = [_game_term(game, index, eta) for game in game_list]
    terms = _merged(real_terms) + _prior_terms(n, eta, kappa, prior_draws)
    params, iterations = _maximise(terms, size, n, kappa)
    _, _, hessian = _evaluate(terms, params, n, kappa)

    units: dict[tuple[str, int], list[float]] = {}
    for i, (game, term) in enumerate(zip(game_list, real_terms, strict=True)):
        key = ("pair", game.pair) if game.pair is not None else ("game", i)
        gradient = units.setdefault(key, [0.0] * size)
        _accumulate(term, params, kappa, gradient, None)
    covariance_natural = _sandwich(_information_inverse(hessian), list(units.values()), size)

    shift = params[index[anchor]] if anchor is not None else 0.0
    elo = [(params[i] - shift) * ELO_PER_NATURAL for i in range(n)]
    covariance: dict[tuple[str, str], float] = {}
    for a in bots:
        for b in bots:
            covariance[(a, b)] = _anchored_covariance(
                covariance_natural, index[a], index[b], None if anchor is None else index[anchor]
            )
    ratings = []
    for bot in bots:
        half = Z95 * math.sqrt(max(0.0, covariance[(bot, bot)]))
        value_elo = elo[index[bot]]
        record = table.totals[bot]
        ratings.append(
            Rating(
                bot, value_elo, value_elo - half, value_elo + half,
                record.games, record.points, record.score,
            )
        )  # fmt: skip
    ratings.sort(key=lambda rating: (-rating.elo, rating.bot))

    if eta is not None:
        advantage = params[eta] * ELO_PER_NATURAL
        half = Z95 * math.sqrt(max(0.0, covariance_natural[eta][eta])) * ELO_PER_NATURAL
        interval = (advantage - half, advantage + half)
    else:
        advantage, interval = 0.0, (0.0, 0.0)
    log_likelihood = sum(_log_probability(term, params, kappa) for term in real_terms)
    return EloFit(
        ratings=tuple(ratings),
        first_move_advantage=advantage,
        first_move_interval=interval,
        draw_nu=math.exp(params[kappa]) if kappa is not None else 0.0,
        anchor=anchor,
        prior_draws=prior_draws,
        log_likelihood=log_likelihood,
        iterations=iterations,
        units=len(units),
        covariance=covariance,
    )


def likelihood_of_superiority(fit: EloFit) -> dict[str, dict[str, float]]:
    """Return LOS[a][b] = P(elo_a > elo_b) for every pair of rated bots (0.5 on the diagonal)."""
    return {a: {b: fit.los(a, b) for b in fit.bots} for a in fit.bots}


def to_dict(crosstable: Crosstable, fit: EloFit) -> dict[str, Any]:
    """Return crosstable, ratings, model parameters and LOS as a JSON-able dict.

    Infinite interval bounds (fewer than two independent units) become None.
    """
    return {
        "model": "davidson",
        "scale": "elo (400*log10)",
        "anchor": fit.anchor,
        "prior_draws": fit.prior_draws,
        "units": fit.units,
        "iterations": fit.iterations,
        "log_likelihood": fit.log_likelihood,
        "first_move_advantage": {
            "elo": fit.first_move_advantage,
            "lower": _finite_or_none(fit.first_move_interval[0]),
            "upper": _finite_or_none(fit.first_move_interval[1]),
        },
        "draw": {"nu": fit.draw_nu, "equal_draw_rate": fit.equal_draw_rate},
        "ratings": [
            {
                "bot": r.bot,
                "elo": r.elo,
                "lower": _finite_or_none(r.lower),
                "upper": _finite_or_none(r.upper),
                "games": r.games,
                "points": r.points,
                "score": r.score,
            }
            for r in fit.ratings
        ],
        "crosstable": {
            a: {
                b: _record_dict(crosstable.head_to_head[(a, b)])
                for b in crosstable.bots
                if (a, b) in crosstable.head_to_head
            }
            for a in crosstable.bots
        },
        "totals": {bot: _record_dict(crosstable.totals[bot]) for bot in crosstable.bots},
        "los": likelihood_of_superiority(fit),
    }


def format_table(crosstable: Crosstable, fit: EloFit) -> str:
    """Return ratings (best first) with the crosstable as text: points/games per opponent."""
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
        interval = f"[{_format_elo(r.lower)}, {_format_elo(r.upper)}]"
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
        f"[{_format_elo(low)}, {_format_elo(high)}]; draw nu {fit.draw_nu:.3f} "
        f"(equal-bot draw rate {100.0 * fit.equal_draw_rate:.1f}%); "
        f"{fit.units} independent units"
    )
    return "\n".join(lines)


# --- model internals: a term is one game outcome (possibly weighted) as a linear x ------------


@dataclass(frozen=True, slots=True)
class _Term:
    coefficients: tuple[tuple[int, float], ...]  # x = sum(c * params[i])
    outcome: int  # +1 first wins, 0 draw, -1 first loses
    weight: float
    logistic: bool = False  # Bradley-Terry likelihood (nu = 0) whatever the fitted nu


def _validated(games: Iterable[GameResult]) -> list[GameResult]:
    result = list(games)
    for game in result:
        if game.score not in (0.0, 0.5, 1.0):
            raise StatsError(f"score must be 1, 0.5 or 0 (first mover's points), got {game!r}")
        if game.first == game.second:
            raise StatsError(f"a bot cannot play itself: {game!r}")
    return result


def _game_term(game: GameResult, index: Mapping[str, int], eta: int | None) -> _Term:
    coefficients = [(index[game.first], 1.0), (index[game.second], -1.0)]
    if eta is not None:
        coefficients.append((eta, 1.0))
    outcome = 1 if game.score == 1.0 else -1 if game.score == 0.0 else 0
    return _Term(tuple(coefficients), outcome, 1.0)


def _merged(terms: Sequence[_Term]) -> list[_Term]:
    counts: dict[tuple[tuple[tuple[int, float], ...], int], float] = {}
    for term in terms:
        key = (term.coefficients, term.outcome)
        counts[key] = counts.get(key, 0.0) + term.weight
    return [_Term(coefficients, outcome, w) for (coefficients, outcome), w in counts.items()]


def _virtual_draw(coefficients: tuple[tuple[int, float], ...], weight: float) -> list[_Term]:
    """Return a logistic draw at x: half a win and half a loss, independent of nu."""
    return [
        _Term(coefficients, 1, weight / 2.0, logistic=True),
        _Term(coefficients, -1, weight / 2.0, logistic=True),
    ]


def _prior_terms(n: int, eta: int | None, kappa: int | None, prior_draws: float) -> list[_Term]:
    if prior_draws == 0.0:
        return []
    terms = []
    for bot in range(n):
        against_mean = tuple((j, float(j == bot) - 1.0 / n) for j in range(n))
        terms += _virtual_draw(against_mean, prior_draws)
    if eta is not None:
        terms += _virtual_draw(((eta, 1.0),), prior_draws)
    if kappa is not None:
        terms += [_Term((), outcome, prior_draws / 3.0) for outcome in (1, 0, -1)]
    return terms


def _outcome_derivatives(
    x: float, log_nu: float | None, outcome: int
) -> tuple[float, float, float, float, float, float]:
    """Return log P(outcome) and its first and second derivatives in (x, log nu)."""
    half = x / 2.0
    top = max(half, -half) if log_nu is None else max(half, -half, log_nu)
    win, loss = math.exp(half - top), math.exp(-half - top)
    draw = 0.0 if log_nu is None else math.exp(log_nu - top)
    total = win + loss + draw
    pw, pl, pd = win / total, loss / total, draw / total
    log_z = top + math.log(total)
    linear = half if outcome == 1 else -half if outcome == -1 else (log_nu or 0.0)
    mean_x = (pw - pl) / 2.0  # d log Z / dx
    dx = (0.5 if outcome == 1 else -0.5 if outcome == -1 else 0.0) - mean_x
    dk = (1.0 if outcome == 0 else 0.0) - pd
    dxx = -((pw + pl) / 4.0 - mean_x * mean_x)
    dxk = mean_x * pd
    dkk = -(pd - pd * pd)
    return linear - log_z, dx, dk, dxx, dxk, dkk


def _x_of(term: _Term, params: Sequence[float]) -> float:
    return sum(c * params[i] for i, c in term.coefficients)


def _log_probability(term: _Term, params: Sequence[float], kappa: int | None) -> float:
    log_nu = params[kappa] if kappa is not None and not term.logistic else None
    return term.weight * _outcome_derivatives(_x_of(term, params), log_nu, term.outcome)[0]


def _accumulate(
    term: _Term,
    params: Sequence[float],
    kappa: int | None,
    gradient: list[float],
    hessian: list[list[float]] | None,
) -> float:
    if term.logistic:
        kappa = None
    log_nu = params[kappa] if kappa is not None else None
    logp, dx, dk, dxx, dxk, dkk = _outcome_derivatives(_x_of(term, params), log_nu, term.outcome)
    w = term.weight
    for i, ci in term.coefficients:
        gradient[i] += w * ci * dx
    if kappa is not None:
        gradient[kappa] += w * dk
    if hessian is not None:
        for i, ci in term.coefficients:
            row = hessian[i]
            for j, cj in term.coefficients:
                row[j] += w * ci * cj * dxx
            if kappa is not None:
                row[kappa] += w * ci * dxk
                hessian[kappa][i] += w * ci * dxk
        if kappa is not None:
            hessian[kappa][kappa] += w * dkk
    return w * logp


def _evaluate(
    terms: Sequence[_Term], params: Sequence[float], n: int, kappa: int | None
) -> tuple[float, list[float], list[list[float]]]:
    """Return the penalised log-likelihood, its gradient and Hessian.

    The penalty -(sum of ratings)^2 / 2 fixes the gauge at mean 0 without moving the optimum,
    because everything else depends on rating differences only.
    """
    size = len(params)
    gradient = [0.0] * size
    hessian = [[0.0] * size for _ in range(size)]
    value = sum(_accumulate(term, params, kappa, gradient, hessian) for term in terms)
    total = sum(params[:n])
    value -= total * total / 2.0
    for i in range(n):
        gradient[i] -= total
        for j in range(n):
            hessian[i][j] -= 1.0
    return value, gradient, hessian


def _maximise(
    terms: Sequence[_Term], size: int, n: int, kappa: int | None
) -> tuple[list[float], int]:
    params = [0.0] * size
    value, gradient, hessian = _evaluate(terms, params, n, kappa)
    for iteration in range(1, _MAX_ITERATIONS + 1):
        negative = [[-h for h in row] for row in hessian]
        step = _solve(negative, [gradient])[0]
        scale = 1.0
        while True:
            trial = [p + scale * s for p, s in zip(params, step, strict=True)]
            trial_value = _evaluate_value(terms, trial, n, kappa)
            if trial_value >= value - 1e-12 * abs(value) or scale < 1e-10:
                break
            scale /= 2.0
        moved = max(abs(scale * s) for s in step)
        params = trial
        if max(abs(p) for p in params) > _MAX_NATURAL:
            raise StatsError(_DIVERGES)
        value, gradient, hessian = _evaluate(terms, params, n, kappa)
        if moved < _TOLERANCE:
            return params, iteration
    raise StatsError(
        f"the rating fit did not converge in {_MAX_ITERATIONS} Newton steps; use prior_draws > 0"
    )


def _evaluate_value(
    terms: Sequence[_Term], params: Sequence[float], n: int, kappa: int | None
) -> float:
    total = sum(params[:n])
    return sum(_log_probability(term, params, kappa) for term in terms) - total * total / 2.0


def _solve(matrix: Sequence[Sequence[float]], rhs: Sequence[Sequence[float]]) -> list[list[float]]:
    """Solve matrix @ x = b for each b in `rhs` by Gaussian elimination with partial pivoting."""
    size = len(matrix)
    augmented = [list(row) + [b[i] for b in rhs] for i, row in enumerate(matrix)]
    for col in range(size):
        pivot = max(range(col, size), key=lambda r: abs(augmented[r][col]))
        if abs(augmented[pivot][col]) < 1e-300:
            raise StatsError(
                "the rating model is not identifiable from these games (a parameter has no "
                "information); use prior_draws > 0 or first_move_advantage=False"
            )
        augmented[col], augmented[pivot] = augmented[pivot], augmented[col]
        pivot_row = augmented[col]
        for r in range(size):
            if r != col and augmented[r][col] != 0.0:
                factor = augmented[r][col] / pivot_row[col]
                row = augmented[r]
                for c in range(col, len(row)):
                    row[c] -= factor * pivot_row[c]
    return [
        [augmented[i][size + k] / augmented[i][i] for i in range(size)] for k in range(len(rhs))
    ]


def _information_inverse(hessian: Sequence[Sequence[float]]) -> list[list[float]]:
    """Return A^-1 for A = -hessian; StatsError when a direction has (almost) no curvature.

    Vanishing curvature at the end of the Newton iterations means the optimum is at infinity:
    the likelihood keeps rising, ever more slowly, as some estimate grows without bound.
    """
    size = len(hessian)
    negative = [[-h for h in row] for row in hessian]
    identity = [[float(i == j) for j in range(size)] for i in range(size)]
    inverse = _solve(negative, identity)  # columns of A^-1; A is symmetric
    if any(not 0.0 < inverse[i][i] < _MAX_VARIANCE for i in range(size)):
        raise StatsError(_DIVERGES)
    return inverse


def _sandwich(
    inverse: Sequence[Sequence[float]], unit_gradients: Sequence[Sequence[float]], size: int
) -> list[list[float]]:
    """Return A^-1 B A^-1: the cluster-robust covariance over independent units."""
    count = len(unit_gradients)
    if count < 2:
        return [[math.inf] * size for _ in range(size)]
    correction = count / (count - 1.0)
    # Centred: with the prior the unit gradients need not sum to zero at the optimum.
    mean = [sum(g[i] for g in unit_gradients) / count for i in range(size)]
    meat = [[0.0] * size for _ in range(size)]
    for raw in unit_gradients:
        g = [value - centre for value, centre in zip(raw, mean, strict=True)]
        for i in range(size):
            if g[i] != 0.0:
                row = meat[i]
                for j in range(size):
                    row[j] += correction * g[i] * g[j]
    left = [
        [sum(inverse[k][i] * meat[k][j] for k in range(size)) for j in range(size)]
        for i in range(size)
    ]
    return [
        [sum(left[i][k] * inverse[k][j] for k in range(size)) for j in range(size)]
        for i in range(size)
    ]


def _anchored_covariance(
    cov: Sequence[Sequence[float]], a: int, b: int, anchor: int | None
) -> float:
    """Return cov(elo_a - elo_anchor, elo_b - elo_anchor) in Elo squared."""
    if anchor is None:
        value = cov[a][b]
    else:
        value = cov[a][b] - cov[a][anchor] - cov[anchor][b] + cov[anchor][anchor]
    if math.isnan(value):  # inf - inf: fewer than two units
        value = math.inf
    return value * ELO_PER_NATURAL * ELO_PER_NATURAL


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _record_dict(record: Record) -> dict[str, float]:
    return {
        "games": record.games,
        "wins": record.wins,
        "draws": record.draws,
        "losses": record.losses,
        "points": record.points,
    }


def _format_cell(record: Record | None) -> str:
    if record is None:
        return "."
    return f"{record.points:g}/{record.games}"


def _format_elo(value: float) -> str:
    return f"{value:.0f}" if math.isfinite(value) else "inf" if value > 0 else "-inf"
