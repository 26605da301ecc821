"""The SPRT statistics: LLRs against fishtest's figures and a brute-force optimizer, the
constrained fits against their optimality conditions, and the test's properties."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from competition.stats.sprt import (
    MAX_ELO,
    NELO_PER_T,
    REGULARIZE,
    SprtError,
    SprtTest,
    Verdict,
    _fit_expected,
    _fit_t_value,
    elo_estimate,
    llr,
    llr_logistic,
    llr_normalized,
    logistic_score,
    pentanomial,
    trinomial,
)
from protocol.messages import MAX_SPRT_ELO

# fishtest's server/fishtest/stats/LLRcalc.py (LLR_normalized, LLR_logistic) at commit
# b8eecff220b562a0dc2c4e68d1fa02521e06d72c, run with scipy 1.17 on these counts. The last two
# rows: 1,000 drawn pairs (two bots that play alike) tell the normalized model almost nothing
# (with no spread its t-value is 0/0; only the regularized zero counts speak), the logistic
# model that the score is 1/2.
FISHTEST = [
    ("normalized", 0, 5, [10, 20, 50, 25, 12], 0.14736695923181115),
    ("normalized", 0, 2, [461, 7133, 14655, 7231, 473], 0.2851143581674393),
    ("logistic", 0, 5, [10, 20, 50, 25, 12], 0.1850223248024849),
    ("logistic", -1.75, 0.25, [461, 7133, 14655, 7231, 473], 4.787575280842855),
    ("normalized", 0, 5, [30, 40, 35], 0.08058589714601946),
    ("logistic", 0, 10, [30, 40, 45], 0.5897932266085006),
    ("normalized", 0, 10, [0, 0, 3, 0, 9], 0.4135926022660499),
    ("logistic", 0, 10, [0, 1, 0, 0, 0], -0.029227736512913376),
    ("normalized", -10, 0, [5, 0, 0, 0, 1], -0.15784021904716683),
    ("normalized", 0, 5, [0, 0, 1000, 0, 0], -0.40791524614064645),
    ("logistic", 0, 5, [0, 0, 1000, 0, 0], -14.48458061147533),
]


@pytest.mark.parametrize(("model", "elo0", "elo1", "counts", "expected"), FISHTEST)
def test_llr_matches_fishtest(
    model: str, elo0: float, elo1: float, counts: list[int], expected: float
) -> None:
    assert llr(model, elo0, elo1, counts) == pytest.approx(expected, rel=1e-9, abs=1e-12)  # type: ignore[arg-type]


def _brute_trinomial_llr(elo0: float, elo1: float, counts: list[int]) -> float:
    """The trinomial logistic LLR by a grid and golden-section search over the one free
    probability: with the mean score s fixed, the distribution is a line in w = P(win)."""

    def best(score: float) -> float:
        # p_win = w, p_draw = 2 (s - w), p_loss = 1 - w - 2 (s - w) = 1 - 2 s + w.
        low, high = max(0.0, 2 * score - 1), score

        def loglik(w: float) -> float:
            probs = (1 - 2 * score + w, 2 * (score - w), w)
            if min(probs) <= 0:
                return -math.inf
            return sum(n * math.log(p) for n, p in zip(counts, probs, strict=True))

        grid = np.linspace(low, high, 2001)[1:-1]
        values = [loglik(float(w)) for w in grid]
        i = int(np.argmax(values))
        a, b = float(grid[max(i - 1, 0)]), float(grid[min(i + 1, len(grid) - 1)])
        ratio = (math.sqrt(5) - 1) / 2
        for _ in range(200):
            c, d = b - ratio * (b - a), a + ratio * (b - a)
            if loglik(c) > loglik(d):
                b = d
            else:
                a = c
        return loglik((a + b) / 2)

    return best(logistic_score(elo1)) - best(logistic_score(elo0))


@pytest.mark.parametrize(
    ("elo0", "elo1", "counts"),
    [(0, 5, [40, 30, 45]), (-3, 1, [120, 300, 110]), (0, 20, [5, 2, 9]), (10, 40, [3, 50, 7])],
)
def test_trinomial_logistic_llr_matches_a_brute_force_search(
    elo0: float, elo1: float, counts: list[int]
) -> None:
    assert llr_logistic(elo0, elo1, counts) == pytest.approx(
        _brute_trinomial_llr(elo0, elo1, counts), abs=1e-9
    )


def _values(n: int) -> np.ndarray:
    return np.arange(n) / (n - 1)


@pytest.mark.parametrize("counts", [[3, 10, 25, 12, 5], [1, 1, 1, 1, 30], [9, 20, 4]])
@pytest.mark.parametrize("t", [-0.1, 0.0, 0.05, 0.3])
def test_t_value_fit_meets_its_constraint_and_is_stationary(counts: list[int], t: float) -> None:
    """Lagrange: at the constrained maximum, grad(sum n_i ln p_i) = n_i / p_i lies in the span
    of the gradients of sum p_i and of the t-value (checked by least squares)."""
    a = _values(len(counts))
    phat = np.array(counts, dtype=float) / sum(counts)
    p = np.array(_fit_t_value(list(a), list(phat), t))
    mu = float(p @ a)
    var = float(p @ (a - mu) ** 2)
    assert p.sum() == pytest.approx(1, abs=1e-12)
    assert (mu - 0.5) / math.sqrt(var) == pytest.approx(t, abs=1e-10)
    sigma = math.sqrt(var)
    # d t / d p_i = (a_i - 1/2) / sigma - (mu - 1/2) ((a_i - mu)^2 + ... ) / (2 sigma^3), with
    # var = sum p a^2 - mu^2, so d var / d p_i = a_i^2 - 2 mu a_i.
    dt = (a - 0.5) / sigma - (mu - 0.5) * (a**2 - 2 * mu * a) / (2 * sigma**3)
    grad = phat / p
    basis = np.stack([np.ones_like(a), dt], axis=1)
    coeffs, *_ = np.linalg.lstsq(basis, grad, rcond=None)
    assert np.abs(basis @ coeffs - grad).max() < 1e-8


@pytest.mark.parametrize("counts", [[3, 10, 25, 12, 5], [9, 20, 4]])
@pytest.mark.parametrize("score", [0.3, 0.5, 0.52])
def test_expected_score_fit_meets_its_constraint_and_is_stationary(
    counts: list[int], score: float
) -> None:
    a = _values(len(counts))
    phat = np.array(counts, dtype=float) / sum(counts)
    p = np.array(_fit_expected(list(a), list(phat), score))
    assert p.sum() == pytest.approx(1, abs=1e-12)
    assert float(p @ a) == pytest.approx(score, abs=1e-12)
    basis = np.stack([np.ones_like(a), a], axis=1)
    coeffs, *_ = np.linalg.lstsq(basis, phat / p, rcond=None)
    assert np.abs(basis @ coeffs - phat / p).max() < 1e-9


def test_normalized_elo_scale() -> None:
    assert pytest.approx(347.43558552260146) == NELO_PER_T
    assert logistic_score(400 * math.log10(3)) == pytest.approx(0.75)


counts5 = st.lists(st.integers(0, 40), min_size=5, max_size=5).filter(lambda c: sum(c) > 0)
counts3 = st.lists(st.integers(0, 60), min_size=3, max_size=3).filter(lambda c: sum(c) > 0)
models = st.sampled_from(["normalized", "logistic"])
hypotheses = st.tuples(st.integers(-20, 10), st.integers(1, 30)).map(lambda h: (h[0], h[0] + h[1]))


@settings(max_examples=150, deadline=None)
@given(model=models, counts=st.one_of(counts5, counts3), hyp=hypotheses, data=st.data())
def test_a_better_result_raises_the_llr(
    model: str, counts: list[int], hyp: tuple[int, int], data: st.DataObject
) -> None:
    """Turning one loss into a win (or one pair's score up a step) never lowers the LLR.

    Exactly so when no cell empties or fills. Otherwise up to the regularization of empty cells
    (REGULARIZE stands in for a zero count, as fishtest's does): emptying or filling a cell adds
    or drops its stand-in, which can move a small sample's LLR the other way by up to some 1e-4
    (7e-5 over every sample of at most 3 in a cell; [0, 0, 2, 0, 2] with one pair moved up,
    logistic, H0 -1, H1 0, moves by 1e-8).
    """
    elo0, elo1 = hyp
    movable = [i for i in range(len(counts) - 1) if counts[i]]
    if not movable:
        return
    i = data.draw(st.sampled_from(movable))
    step = len(counts) - 1 - i if len(counts) == 3 else 1
    better = list(counts)
    better[i] -= 1
    better[i + step] += 1
    before = llr(model, elo0, elo1, counts)  # type: ignore[arg-type]
    after = llr(model, elo0, elo1, better)  # type: ignore[arg-type]
    regularized = counts[i] == 1 or counts[i + step] == 0
    assert after >= before - (REGULARIZE / 10 if regularized else 1e-9)


@settings(max_examples=100, deadline=None)
@given(model=models, counts=st.one_of(counts5, counts3), hyp=hypotheses)
def test_llr_is_antisymmetric(model: str, counts: list[int], hyp: tuple[int, int]) -> None:
    """Swapping the hypotheses negates the LLR, and so does testing the other bot's side with
    them swapped: counts reversed, H0 at -elo1, H1 at -elo0."""
    elo0, elo1 = hyp
    value = llr(model, elo0, elo1, counts)  # type: ignore[arg-type]
    assert llr(model, elo1, elo0, counts) == pytest.approx(-value, abs=1e-9)  # type: ignore[arg-type]
    mirrored = llr(model, -elo1, -elo0, counts[::-1])  # type: ignore[arg-type]
    assert mirrored == pytest.approx(-value, abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(
    alpha=st.floats(0.001, 0.45),
    beta=st.floats(0.001, 0.45),
    llr_value=st.floats(-10, 10),
)
def test_bounds_and_decisions(alpha: float, beta: float, llr_value: float) -> None:
    test = SprtTest(0, 5, alpha, beta)
    assert test.lower_bound == pytest.approx(math.log(beta / (1 - alpha)))
    assert test.upper_bound == pytest.approx(math.log((1 - beta) / alpha))
    assert test.lower_bound < 0 < test.upper_bound
    verdict = test.decide(llr_value)
    if llr_value >= test.upper_bound:
        assert verdict is Verdict.H1
    elif llr_value <= test.lower_bound:
        assert verdict is Verdict.H0
    else:
        assert verdict is None


def test_fastchess_default_bounds() -> None:
    test = SprtTest.parse("elo0=0 elo1=5 alpha=0.05 beta=0.05")
    assert (test.lower_bound, test.upper_bound) == pytest.approx((-2.944438979, 2.944438979))
    assert test.model == "normalized"


def test_no_games_is_no_evidence() -> None:
    assert llr_normalized(0, 5, [0, 0, 0, 0, 0]) == 0
    assert llr_logistic(0, 5, [0, 0, 0]) == 0


def test_counts() -> None:
    assert pentanomial([0, 0.5, 1, 1, 2, 1.5]) == (1, 1, 2, 1, 1)
    assert trinomial([0, 0.5, 1, 1]) == (1, 1, 2)
    with pytest.raises(ValueError, match=r"0, 0\.5, 1, 1\.5 or 2"):
        pentanomial([0.25])


def test_elo_estimate() -> None:
    # Pairs 1.5 and 1.5: a mean score of 0.75 with no spread: 400 log10(3) Elo, no width.
    estimate = elo_estimate([0, 0, 0, 2, 0])
    assert estimate.elo == pytest.approx(400 * math.log10(3))
    assert estimate.lower == pytest.approx(estimate.elo)
    assert estimate.nelo == math.inf
    # Trinomial 10 wins, 10 losses: score 1/2, standard error 1/2 / sqrt(20).
    even = elo_estimate([10, 0, 10])
    assert even.elo == 0 and even.nelo == 0
    assert f"{even.elo:+.1f}" == "+0.0"  # not -0.0
    half = 1.959963984540054 * 0.5 / math.sqrt(20)
    assert even.upper == pytest.approx(-400 * math.log10(1 / (0.5 + half) - 1))
    assert even.lower == pytest.approx(-even.upper)
    assert elo_estimate([0, 0, 0, 0, 3]).elo == math.inf


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("elo0=5 elo1=0", "elo1 (0) must be greater than elo0 (5)"),
        ("elo0=0 elo1=0", "must be greater"),
        ("elo0=0 elo1=5 alpha=0", "alpha must be between 0 and 1"),
        ("elo0=0 elo1=5 beta=1", "beta must be between 0 and 1"),
        ("elo0=0 elo1=5 alpha=0.6 beta=0.5", "alpha + beta must be below 1"),
        ("elo0=0 elo1=5 gamma=1", "unknown SPRT setting 'gamma'"),
        ("elo0=0 elo0=1 elo1=5", "given twice"),
        ("elo1=5", "need elo0"),
        ("elo0=0 elo1=inf", "elo1 must be finite"),
        ("elo0=0 elo1=five", "elo1 must be a number"),
        ("elo0=0 elo1=5 model=bayes", "unknown model 'bayes'"),
        ("elo0=0 elo1", "KEY=VALUE"),
        ("elo0=0 elo1=250", "elo1 must lie within -200 and +200, not 250"),
        ("elo0=-201 elo1=0 model=logistic", "elo0 must lie within -200 and +200"),
    ],
)
def test_bad_settings_are_refused(text: str, message: str) -> None:
    with pytest.raises(SprtError, match=re.escape(message)):
        SprtTest.parse(text)


@settings(max_examples=60, deadline=None)
@given(
    model=models,
    counts=st.one_of(counts5, counts3),
    elo0=st.floats(-MAX_ELO, MAX_ELO),
    width=st.floats(0.5, 2 * MAX_ELO),
)
def test_every_test_the_settings_allow_has_an_llr(
    model: str, counts: list[int], elo0: float, width: float
) -> None:
    """Any elo0 < elo1 within MAX_ELO gives a finite LLR for any counts."""
    elo1 = min(elo0 + width, MAX_ELO)
    if elo1 <= elo0:
        return
    test = SprtTest(elo0, elo1, model=model)  # type: ignore[arg-type]
    assert math.isfinite(test.llr(counts))


def test_the_protocol_caps_sprt_settings_as_the_test_does() -> None:
    assert MAX_SPRT_ELO == MAX_ELO


def test_settings_parse_with_commas_and_read_back() -> None:
    test = SprtTest.parse("elo0=-1.5, elo1=2.5, alpha=0.1, beta=0.2, model=logistic")
    assert test == SprtTest(-1.5, 2.5, 0.1, 0.2, "logistic")
    assert SprtTest.parse(test.describe()) == test
