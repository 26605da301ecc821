"""Texel tuning (competition.tuning): recovers known weights, lowers the loss, is deterministic."""

from __future__ import annotations

import numpy as np
import pytest

from competition.tuning import TuningError, fit_scale, fit_weights, loss, sigmoid, tune

NAMES = ("men", "kings", "advance", "rare")
TRUE_WEIGHTS = np.array([100.0, 230.0, 7.0, -40.0])
TRUE_SCALE = 0.004


def _features(n: int, seed: int) -> np.ndarray:
    """Integer feature rows like checkers': material differences, a count, a rare feature."""
    rng = np.random.default_rng(seed)
    return np.column_stack(
        [
            rng.integers(-3, 4, n),
            rng.integers(-2, 3, n),
            rng.integers(-20, 21, n),
            rng.integers(-1, 2, n) * (rng.random(n) < 0.2),
        ]
    ).astype(np.float64)


def _expected_results(x: np.ndarray) -> np.ndarray:
    return sigmoid(TRUE_SCALE * (x @ TRUE_WEIGHTS))


def test_recovers_weights_from_expected_results_exactly() -> None:
    # Labels equal to the model's own probabilities: the log loss is minimal at the truth.
    x = _features(4000, seed=1)
    y = _expected_results(x)
    fit = tune(x, y, NAMES, [100.0, 200.0, 3.0, 0.0], anchor="men")
    assert fit.weights == pytest.approx(tuple(TRUE_WEIGHTS), rel=1e-5, abs=1e-4)
    assert fit.scale == pytest.approx(TRUE_SCALE, rel=1e-6)
    assert fit.loss_after < fit.loss_before
    assert fit.rounded() == {"men": 100, "kings": 230, "advance": 7, "rare": -40}


@pytest.mark.parametrize("kind", ["log", "mse"])
def test_recovers_weights_from_sampled_results(kind: str) -> None:
    # Win/draw/loss labels drawn from the model: recovery within sampling error.
    x = _features(20000, seed=2)
    rng = np.random.default_rng(3)
    p = _expected_results(x)
    # Win p - d/2, draw d, loss 1 - p - d/2: the expected score is p, with many draws.
    d = 0.8 * np.minimum(p, 1 - p)
    u = rng.random(len(p))
    y = np.where(u < p - d / 2, 1.0, np.where(u < p + d / 2, 0.5, 0.0))
    fit = tune(x, y, NAMES, [100.0, 200.0, 3.0, 0.0], kind=kind, anchor="men")  # type: ignore[arg-type]
    assert fit.weights[1] == pytest.approx(230.0, rel=0.1)
    assert fit.weights[2] == pytest.approx(7.0, abs=1.5)
    assert fit.weights[3] == pytest.approx(-40.0, abs=15.0)
    assert fit.scale == pytest.approx(TRUE_SCALE, rel=0.15)


def test_scale_fit_finds_the_true_scale_and_lowers_the_loss() -> None:
    x = _features(3000, seed=4)
    y = _expected_results(x)
    k = fit_scale(x, y, TRUE_WEIGHTS, start=0.05)
    assert k == pytest.approx(TRUE_SCALE, rel=1e-6)
    assert loss(x, y, TRUE_WEIGHTS, k) < loss(x, y, TRUE_WEIGHTS, 0.05)


@pytest.mark.parametrize("kind", ["log", "mse"])
def test_weight_fit_never_raises_the_loss(kind: str) -> None:
    x = _features(2000, seed=5)
    rng = np.random.default_rng(6)
    y = (rng.random(2000) < _expected_results(x)).astype(np.float64)
    start = np.array([100.0, 150.0, 0.0, 10.0])
    before = loss(x, y, start, TRUE_SCALE, kind)  # type: ignore[arg-type]
    weights, steps = fit_weights(x, y, TRUE_SCALE, start, kind)  # type: ignore[arg-type]
    after = loss(x, y, weights, TRUE_SCALE, kind)  # type: ignore[arg-type]
    assert steps >= 1
    assert after < before


def test_ridge_pulls_toward_the_start_and_unseen_features_keep_their_weight() -> None:
    x = _features(3000, seed=7)
    x[:, 3] = 0.0  # the rare feature never occurs
    y = _expected_results(x)
    start = np.array([100.0, 200.0, 3.0, 55.0])
    free, _ = fit_weights(x, y, TRUE_SCALE, start)
    held, _ = fit_weights(x, y, TRUE_SCALE, start, ridge=1.0)
    assert free[3] == pytest.approx(55.0)
    assert abs(held[1] - 200.0) < abs(free[1] - 200.0)


def test_fixed_weights_keep_their_start_and_the_rest_still_fit() -> None:
    x = _features(4000, seed=11)
    y = _expected_results(x)
    fit = tune(x, y, NAMES, [100.0, 200.0, 3.0, -40.0], anchor="men", fixed=("rare",))
    # Fixed and anchor weights stay exactly; K and the others are refitted to the truth.
    assert fit.weights[0] == 100.0
    assert fit.weights[3] == -40.0
    assert fit.weights[1:3] == pytest.approx((230.0, 7.0), rel=1e-4)
    assert fit.scale == pytest.approx(TRUE_SCALE, rel=1e-3)
    assert fit.loss_after < fit.loss_before
    with pytest.raises(TuningError, match=r"fixed weights \['pawn'\] are not features"):
        tune(x, y, NAMES, [100.0, 200.0, 3.0, -40.0], fixed=("pawn",))


def test_deterministic() -> None:
    x = _features(1500, seed=8)
    y = (np.random.default_rng(9).random(1500) < _expected_results(x)).astype(np.float64)
    first = tune(x, y, NAMES, [100.0, 200.0, 3.0, 0.0], anchor="men")
    second = tune(x.copy(), y.copy(), NAMES, [100.0, 200.0, 3.0, 0.0], anchor="men")
    assert first == second


@pytest.mark.parametrize(
    ("x", "y", "match"),
    [
        (np.zeros((3, 2)), np.zeros(2), "3 feature rows but 2 results"),
        (np.zeros(3), np.zeros(3), "2-d array"),
        (np.ones((2, 2)), np.array([0.0, 1.5]), r"results must lie in \[0, 1\]"),
        (np.zeros((0, 2)), np.zeros(0), "no positions"),
        (np.array([[1.0, np.nan]]), np.array([1.0]), "not finite"),
    ],
)
def test_bad_data_is_named(x: np.ndarray, y: np.ndarray, match: str) -> None:
    with pytest.raises(TuningError, match=match):
        tune(x, y, ("a", "b"), [1.0, 1.0])


def test_bad_options_are_named() -> None:
    x = _features(100, seed=10)
    y = _expected_results(x)
    with pytest.raises(TuningError, match="4 feature columns, 2 names"):
        tune(x, y, ("a", "b"), [1.0, 1.0])
    with pytest.raises(TuningError, match="anchor 'pawn' is not a feature"):
        tune(x, y, NAMES, list(TRUE_WEIGHTS), anchor="pawn")
    with pytest.raises(TuningError, match="unknown loss"):
        tune(x, y, NAMES, list(TRUE_WEIGHTS), kind="hinge")  # type: ignore[arg-type]
    with pytest.raises(TuningError, match="constant"):
        fit_scale(x, y, np.zeros(4))
