"""Texel tuning: fit an evaluation's feature weights to the results of games.

The model (Texel's, after the chess engine that made it popular): a position with feature
vector x (mine minus theirs, for the side to move) and evaluation e = w . x is won by the side
to move with probability sigmoid(K * e), where K converts the evaluation's units (hundredths of
a man, say) into log-odds. Each training position is labelled with the final result of its game
from the side to move's point of view (1 win, 0.5 draw, 0 loss).

`tune` fits in two steps, as Texel does:

1. the scale K for the starting weights (one variable: Newton's method on the loss), which
   gives the loss *before*: how well the old evaluation predicts results at its best scale;
2. the weights at that K, by Newton's method on the mean log loss (logistic regression: convex,
   so Newton with a backtracking line search converges to the global minimum) or Gauss-Newton
   on the mean squared error (Texel's original loss), optionally with a ridge penalty that
   pulls weights toward the starting ones (features seen in few positions stay put).

K and the weights are not separately identifiable (only K * w matters), so the fitted weights
are finally rescaled to keep one named weight (the man, in checkers) at its starting value, and
K is adjusted to match: the predictions and the loss are unchanged. Everything is deterministic
(no sampling); numpy does the linear algebra.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

__all__ = [
    "LOSSES",
    "Loss",
    "TexelFit",
    "TuningError",
    "fit_scale",
    "fit_weights",
    "loss",
    "sigmoid",
    "tune",
]

Loss = Literal["log", "mse"]
LOSSES: tuple[Loss, ...] = ("log", "mse")

Array = npt.NDArray[np.float64]

_EPS = 1e-12
"""Probabilities are clipped to [eps, 1 - eps] inside the log loss."""
MAX_ITERATIONS = 100
"""Newton steps at most, for the scale and for the weights."""
TOLERANCE = 1e-12
"""A step that lowers the loss by less than this (relative) ends the fit."""


class TuningError(ValueError):
    """Training data or options that cannot be fitted; the message says what is wrong."""


@dataclass(frozen=True, slots=True)
class TexelFit:
    """The result of `tune`.

    `weights` are the fitted weights (rescaled so that weights[anchor] equals the starting
    weight, when an anchor is given) and `scale` the K that goes with them; `initial_scale` is
    the best K for the starting weights. `loss_before` is the loss of the starting weights at
    `initial_scale`, `loss_after` that of the fitted weights at `scale`. `iterations` counts
    the Newton steps of the weight fit.
    """

    names: tuple[str, ...]
    weights: tuple[float, ...]
    scale: float
    initial_weights: tuple[float, ...]
    initial_scale: float
    loss_before: float
    loss_after: float
    loss_kind: Loss
    positions: int
    iterations: int

    def rounded(self) -> dict[str, int]:
        """Return the fitted weights rounded to integers, by feature name."""
        return {name: round(w) for name, w in zip(self.names, self.weights, strict=True)}


def sigmoid(z: Array) -> Array:
    """Return 1 / (1 + exp(-z)) elementwise, without overflow."""
    return np.asarray(0.5 * (1.0 + np.tanh(0.5 * z)), dtype=np.float64)


def _check(features: Array, results: Array) -> tuple[Array, Array]:
    x = np.asarray(features, dtype=np.float64)
    y = np.asarray(results, dtype=np.float64)
    if x.ndim != 2 or y.ndim != 1:
        raise TuningError(
            f"features must be a 2-d array (positions x features) and results a 1-d array, "
            f"got shapes {x.shape} and {y.shape}"
        )
    if x.shape[0] != y.shape[0]:
        raise TuningError(f"{x.shape[0]} feature rows but {y.shape[0]} results")
    if x.shape[0] == 0:
        raise TuningError("no positions to fit")
    if not np.all(np.isfinite(x)):
        raise TuningError("the features contain a value that is not finite")
    if not np.all((y >= 0.0) & (y <= 1.0)):
        raise TuningError("results must lie in [0, 1] (1 win, 0.5 draw, 0 loss)")
    return x, y


def loss(
    features: Array, results: Array, weights: Array, scale: float, kind: Loss = "log"
) -> float:
    """Return the mean loss of predicting `results` by sigmoid(scale * features @ weights).

    "log": the mean cross-entropy (log loss); "mse": the mean squared error (Texel's).
    """
    x, y = _check(features, results)
    return _loss(x @ np.asarray(weights, dtype=np.float64) * scale, y, kind)


def _loss(z: Array, y: Array, kind: Loss) -> float:
    p = sigmoid(z)
    if kind == "mse":
        return float(np.mean((p - y) ** 2))
    if kind == "log":
        p = np.clip(p, _EPS, 1.0 - _EPS)
        return float(-np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p)))
    raise TuningError(f"unknown loss {kind!r} (losses: {', '.join(LOSSES)})")


def _derivatives(z: Array, y: Array, kind: Loss) -> tuple[Array, Array]:
    """Return (dL/dz, curvature weight) per position: the gradient and the Gauss-Newton /
    Newton second-derivative factor of the mean loss with respect to each z, times n."""
    p = sigmoid(z)
    slope = p * (1.0 - p)
    if kind == "log":
        return p - y, slope
    # Squared error: d/dz (p - y)^2 = 2 (p - y) p'; Gauss-Newton curvature 2 p'^2.
    return 2.0 * (p - y) * slope, 2.0 * slope**2


def fit_scale(
    features: Array, results: Array, weights: Array, kind: Loss = "log", start: float | None = None
) -> float:
    """Return the K > 0 minimising the loss of sigmoid(K * features @ weights).

    Newton's method on log K (so K stays positive), with backtracking; `start` defaults to
    a K that maps the evaluations' spread to a couple of log-odds.
    """
    x, y = _check(features, results)
    e = x @ np.asarray(weights, dtype=np.float64)
    spread = float(np.std(e))
    if spread == 0.0:
        raise TuningError("the evaluation is constant on the data: no scale can be fitted")
    t = float(np.log(start if start is not None else 1.0 / spread))
    current = _loss(np.exp(t) * e, y, kind)
    for _ in range(MAX_ITERATIONS):
        k = float(np.exp(t))
        g_z, h_z = _derivatives(k * e, y, kind)
        # d/dt of z = e^t e is z itself.
        z_t = k * e
        grad = float(np.mean(g_z * z_t))
        hess = float(np.mean(h_z * z_t**2 + g_z * z_t))
        step = -grad / hess if hess > 0 else -np.sign(grad) * 0.5
        step = float(np.clip(step, -2.0, 2.0))
        improved = False
        for _ in range(40):
            candidate = _loss(np.exp(t + step) * e, y, kind)
            if candidate <= current:
                improved = True
                break
            step *= 0.5
        if not improved:
            break
        t += step
        gain = current - candidate
        current = candidate
        if gain <= TOLERANCE * max(1.0, abs(current)):
            break
    return float(np.exp(t))


def fit_weights(
    features: Array,
    results: Array,
    scale: float,
    initial: Array,
    kind: Loss = "log",
    ridge: float = 0.0,
    free: Sequence[bool] | None = None,
) -> tuple[Array, int]:
    """Return (weights, Newton steps) minimising loss + ridge * |K (w - initial)|^2 at scale K.

    `free[i]` False keeps weight i at its starting value (all free by default).

    Newton's method for the log loss (its exact Hessian; the problem is convex) and
    Gauss-Newton for the squared error, each step solved by least squares (a feature constant
    at 0 in the data keeps its starting weight) and accepted only if it lowers the objective.
    """
    x, y = _check(features, results)
    w0 = np.asarray(initial, dtype=np.float64)
    if w0.shape != (x.shape[1],):
        raise TuningError(f"{x.shape[1]} features but {w0.shape[0]} starting weights")
    if not (scale > 0 and np.isfinite(scale)):
        raise TuningError(f"the scale K must be positive and finite, not {scale}")
    if ridge < 0 or not np.isfinite(ridge):
        raise TuningError(f"the ridge penalty must be >= 0, not {ridge}")
    mask = np.ones(x.shape[1], dtype=bool) if free is None else np.asarray(free, dtype=bool)
    if mask.shape != w0.shape:
        raise TuningError(f"{x.shape[1]} features but {mask.shape[0]} free flags")
    # Work in b = K w (log-odds per unit of feature): better conditioned.
    b = w0 * scale
    b0 = b.copy()
    n = x.shape[0]

    def objective(beta: Array) -> float:
        return _loss(x @ beta, y, kind) + ridge * float(np.sum((beta - b0) ** 2))

    current = objective(b)
    steps = 0
    for _ in range(MAX_ITERATIONS):
        g_z, h_z = _derivatives(x @ b, y, kind)
        grad = x.T @ g_z / n + 2.0 * ridge * (b - b0)
        hess = (x * h_z[:, None]).T @ x / n + 2.0 * ridge * np.eye(x.shape[1])
        step = np.zeros_like(b)
        sub = np.ix_(mask, mask)
        step[mask] = -np.linalg.lstsq(hess[sub], grad[mask], rcond=None)[0]
        improved = False
        for _ in range(40):
            candidate = objective(b + step)
            if candidate <= current:
                improved = True
                break
            step = step * 0.5
        if not improved:
            break
        b = b + step
        steps += 1
        gain = current - candidate
        current = candidate
        if gain <= TOLERANCE * max(1.0, abs(current)):
            break
    return b / scale, steps


def tune(
    features: Array,
    results: Array,
    names: Sequence[str],
    initial: Sequence[float],
    *,
    kind: Loss = "log",
    ridge: float = 0.0,
    anchor: str | None = None,
    fixed: Sequence[str] = (),
) -> TexelFit:
    """Fit K for the `initial` weights, then the weights at that K; see the module docstring.

    `anchor` names the weight kept at its starting value by rescaling (the unit of the scale;
    None: no rescaling). `fixed` names weights kept exactly at their starting values
    (features that are plans rather than predictions, say); the anchor is then held too, and
    K and the free weights are refitted in turn. Raises TuningError for bad data or options.
    """
    x, y = _check(features, results)
    if kind not in LOSSES:
        raise TuningError(f"unknown loss {kind!r} (losses: {', '.join(LOSSES)})")
    if len(names) != x.shape[1] or len(initial) != x.shape[1]:
        raise TuningError(
            f"{x.shape[1]} feature columns, {len(names)} names, {len(initial)} starting weights"
        )
    w0 = np.asarray(initial, dtype=np.float64)
    k0 = fit_scale(x, y, w0, kind)
    before = _loss(k0 * (x @ w0), y, kind)
    unknown = [name for name in fixed if name not in names]
    if unknown:
        raise TuningError(f"fixed weights {unknown} are not features ({', '.join(names)})")
    if anchor is not None and anchor not in names:
        raise TuningError(f"anchor {anchor!r} is not a feature ({', '.join(names)})")
    if fixed:
        w, k, steps = _alternate(x, y, list(names), w0, k0, kind, ridge, anchor, fixed)
    else:
        w, steps = fit_weights(x, y, k0, w0, kind, ridge)
        k = k0
        if anchor is not None:
            i = list(names).index(anchor)
            if w[i] == 0 or w0[i] == 0 or np.sign(w[i]) != np.sign(w0[i]):
                raise TuningError(f"the fitted weight of {anchor!r} changed sign: cannot rescale")
            factor = w0[i] / w[i]
            w = w * factor
            k = k0 / factor
    after = _loss(k * (x @ w), y, kind)
    return TexelFit(
        names=tuple(names),
        weights=tuple(float(v) for v in w),
        scale=float(k),
        initial_weights=tuple(float(v) for v in w0),
        initial_scale=float(k0),
        loss_before=before,
        loss_after=after,
        loss_kind=kind,
        positions=int(x.shape[0]),
        iterations=steps,
    )


def _alternate(
    x: Array,
    y: Array,
    names: list[str],
    w0: Array,
    k0: float,
    kind: Loss,
    ridge: float,
    anchor: str | None,
    fixed: Sequence[str],
) -> tuple[Array, float, int]:
    """Fit with weights held exactly: the `fixed` ones and the anchor stay at their starting
    values, and K and the free weights are refitted in turn until the loss stops falling.
    Return (weights, K, Newton steps in all)."""
    held = set(fixed) | ({anchor} if anchor is not None else set())
    free = [name not in held for name in names]
    w, k = w0.copy(), k0
    current = _loss(k * (x @ w), y, kind)
    steps = 0
    for _ in range(MAX_ITERATIONS):
        w, taken = fit_weights(x, y, k, w, kind, ridge, free)
        steps += taken
        if anchor is not None:
            k = fit_scale(x, y, w, kind, start=k)
        value = _loss(k * (x @ w), y, kind)
        if current - value <= 1e-9 * max(1.0, abs(value)):
            break
        current = value
    return w, k, steps
