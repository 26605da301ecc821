"""The penalised Davidson log-likelihood and its Newton fits, free and constrained.

Parameters are the n ratings in natural units, then the first-move advantage eta and log nu
when present; the prior's virtual games and a gauge penalty (mean rating 0) are part of the
likelihood maximised (see competition.stats).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from competition.stats.crosstable import DRAW, LOSS, WIN, GameResult, StatsError, outcome_of
from competition.stats.linalg import dot, negated, solve

ELO_PER_NATURAL = 400.0 / math.log(10.0)
"""Elo points per natural-log unit of the win/loss odds ratio."""


MAX_ITERATIONS = 500


MAX_NATURAL = 60.0  # about 10,000 Elo: beyond this the estimate is diverging, not converging


TOLERANCE = 1e-11


DECREMENT = 1e-13  # log-likelihood still to gain when a constrained fit stops


MAX_VARIANCE = 1e6  # natural units squared: a standard error of 170,000 Elo is no estimate


DIVERGES = (
    "the fit diverges (a bot won or lost every game, the first mover always won or lost, or "
    "every game was drawn); use prior_draws > 0 to keep it finite"
)


@dataclass(frozen=True, slots=True)
class Tally:
    """The games one bot (`first`) played as first mover against another, by outcome."""

    first: int
    second: int
    wins: float
    draws: float
    losses: float


@dataclass(frozen=True, slots=True)
class Group:
    """Virtual games at one linear x = sum(c * params[i]), counted by outcome."""

    coefficients: tuple[tuple[int, float], ...]
    wins: float
    draws: float
    losses: float
    logistic: bool = False  # Bradley-Terry likelihood (nu = 0) whatever the fitted nu


@dataclass(frozen=True)
class Model:
    """The penalised log-likelihood: real games, the prior's virtual games and the gauge.

    Parameters are the n ratings (natural units), then eta and log nu when present.
    """

    n: int
    eta: int | None
    kappa: int | None
    games: tuple[Tally, ...]
    virtual: tuple[Group, ...]
    against_mean: float  # virtual logistic draws of every bot against the mean of all

    @property
    def size(self) -> int:
        """Return the number of parameters."""
        return self.n + (self.eta is not None) + (self.kappa is not None)


def build_model(
    games: Sequence[GameResult],
    index: Mapping[str, int],
    prior_draws: float,
    first_move_advantage: bool,
) -> Model:
    """Return the likelihood of `games` (bots numbered by `index`) with its prior."""
    n = len(index)
    eta = n if first_move_advantage else None
    has_draws = prior_draws > 0.0 or any(game.score == 0.5 for game in games)
    kappa = n + (eta is not None) if has_draws else None
    counts: dict[tuple[int, int], list[float]] = {}
    for game in games:
        tally = counts.setdefault((index[game.first], index[game.second]), [0.0, 0.0, 0.0])
        tally[(WIN, DRAW, LOSS).index(outcome_of(game))] += 1.0
    tallies = tuple(
        Tally(first, second, wins, draws, losses)
        for (first, second), (wins, draws, losses) in counts.items()
    )
    virtual: list[Group] = []
    if prior_draws > 0.0:
        half = prior_draws / 2.0
        if eta is not None:
            virtual.append(Group(((eta, 1.0),), half, 0.0, half, logistic=True))
        if kappa is not None:
            third = prior_draws / 3.0
            virtual.append(Group((), third, third, third))
    return Model(n, eta, kappa, tallies, tuple(virtual), prior_draws)


def outcome_derivatives(
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


def game_x(model: Model, params: Sequence[float], first: int, second: int) -> float:
    """Return x = theta_first - theta_second + eta (natural units) at `params`."""
    advantage = params[model.eta] if model.eta is not None else 0.0
    return params[first] - params[second] + advantage


def log_nu_of(model: Model, params: Sequence[float]) -> float | None:
    """Return log nu at `params`, or None when the model has no draws."""
    return params[model.kappa] if model.kappa is not None else None


def log_likelihood(model: Model, params: Sequence[float]) -> float:
    """Return the log-likelihood of the real games (no prior, no gauge penalty)."""
    log_nu = log_nu_of(model, params)
    return sum(
        outcome_derivatives(
            game_x(model, params, t.first, t.second), log_nu, t.wins, t.draws, t.losses
        )[0]
        for t in model.games
    )


def _add_games(
    model: Model, params: Sequence[float], gradient: list[float], hessian: list[list[float]]
) -> float:
    """Add the real games' gradient (and Hessian, unless empty) in place; return their value.

    Written out per parameter rather than looping over coefficients: this is the inner loop of
    every fit and profile.
    """
    eta, kappa = model.eta, model.kappa
    log_nu = log_nu_of(model, params)
    value = 0.0
    for t in model.games:
        first, second = t.first, t.second
        v, dx, dk, dxx, dxk, dkk = outcome_derivatives(
            game_x(model, params, first, second), log_nu, t.wins, t.draws, t.losses
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


def evaluate(
    model: Model, params: Sequence[float], *, with_hessian: bool
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
        log_nu = None if group.logistic else log_nu_of(model, params)
        kappa = None if log_nu is None else model.kappa
        x = sum(c * params[i] for i, c in group.coefficients)
        v, dx, dk, dxx, dxk, dkk = outcome_derivatives(
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
            v, dxs[b], _, dxxs[b], _, _ = outcome_derivatives(
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


def line_search(
    model: Model, params: Sequence[float], step: Sequence[float], value: float
) -> tuple[list[float], float, tuple[float, list[float], list[list[float]]]]:
    """Return params + s * step for the first s in 1, 1/2, 1/4, ... that does not lose value
    (the last tried below 1e-10 when none does), that s, and the evaluation there."""
    scale = 1.0
    while True:
        trial = [p + scale * s for p, s in zip(params, step, strict=True)]
        # With the Hessian: the full step is nearly always taken, and then it is needed next.
        evaluation = evaluate(model, trial, with_hessian=True)
        if evaluation[0] >= value - 1e-12 * abs(value) or scale < 1e-10:
            return trial, scale, evaluation
        scale /= 2.0


def maximise(model: Model) -> tuple[list[float], int]:
    """Return the maximiser of the penalised log-likelihood and the Newton steps taken."""
    params = [0.0] * model.size
    value, gradient, hessian = evaluate(model, params, with_hessian=True)
    for iteration in range(1, MAX_ITERATIONS + 1):
        step = solve(negated(hessian), [gradient])[0]
        params, scale, (value, gradient, hessian) = line_search(model, params, step, value)
        if max(abs(p) for p in params) > MAX_NATURAL:
            raise StatsError(DIVERGES)
        if max(abs(scale * s) for s in step) < TOLERANCE:
            return params, iteration
    raise StatsError(
        f"the rating fit did not converge in {MAX_ITERATIONS} Newton steps; use prior_draws > 0"
    )


def constrained_maximum(
    model: Model, start: Sequence[float], contrast: Sequence[float]
) -> tuple[list[float], float, float, list[float]]:
    """Maximise the penalised log-likelihood over the params p with contrast.p = contrast.start.

    Return the maximising p, the maximum, its derivative in contrast.p (the profile's slope)
    and the derivative of p in contrast.p (the tangent of the profile path).
    """
    params = list(start)
    value, gradient, hessian = evaluate(model, params, with_hessian=True)
    for _ in range(MAX_ITERATIONS):
        # Newton step on the Lagrangian: A step = gradient + mu c with c.step = 0.
        free, along = solve(negated(hessian), [gradient, contrast])
        curvature = dot(contrast, along)
        slope = dot(contrast, free) / curvature
        step = [f - slope * a for f, a in zip(free, along, strict=True)]
        # gradient.step is the Newton decrement (twice the value still to gain): stop when the
        # maximum is known far more closely than the deviances computed from it need.
        if dot(gradient, step) < DECREMENT:
            return params, value, slope, [a / curvature for a in along]
        params, _, (value, gradient, hessian) = line_search(model, params, step, value)
    raise StatsError(
        f"a profile-likelihood fit did not converge in {MAX_ITERATIONS} Newton steps; "
        "use prior_draws > 0"
    )


def information_inverse(hessian: Sequence[Sequence[float]]) -> list[list[float]]:
    """Return A^-1 for A = -hessian; StatsError when a direction has (almost) no curvature.

    Vanishing curvature at the end of the Newton iterations means the optimum is at infinity:
    the likelihood keeps rising, ever more slowly, as some estimate grows without bound.
    """
    size = len(hessian)
    identity = [[float(i == j) for j in range(size)] for i in range(size)]
    inverse = solve(negated(hessian), identity)  # columns of A^-1; A is symmetric
    if any(not 0.0 < inverse[i][i] < MAX_VARIANCE for i in range(size)):
        raise StatsError(DIVERGES)
    return inverse


def unit_meat(
    model: Model, games: Sequence[GameResult], index: Mapping[str, int], params: Sequence[float]
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
        outcome = outcome_of(game)
        _, dx, dk, _, _, _ = outcome_derivatives(
            game_x(model, params, first, second),
            log_nu_of(model, params),
            float(outcome == WIN),
            float(outcome == DRAW),
            float(outcome == LOSS),
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


def rating_contrast(n: int, size: int, bot: int, anchor: int | None) -> list[float]:
    """Return c with c.params = the rating of `bot` (natural units), centred or anchored."""
    contrast = [0.0] * size
    for j in range(n):
        contrast[j] = -1.0 / n if anchor is None else -float(j == anchor)
    contrast[bot] += 1.0
    return contrast
