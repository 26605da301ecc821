"""The sequential probability ratio test: is bot A stronger than bot B by elo0 or by elo1?

This is the generalized SPRT of fishtest and fastchess. Games come in colour-swapped pairs
(one opening, each bot once with each colour); a pair scores 0, 0.5, 1, 1.5 or 2 for A, so
the evidence is the pentanomial count of pairs by score (LL, LD, DD or WL, WD, WW). Unpaired
games give the trinomial count (L, D, W). Either way the outcomes are scores a_i (per game,
0 to 1) with unknown probabilities p_i, and a hypothesis fixes one number of that
distribution:

- `logistic`: the expected score mu = 1 / (1 + 10^(-elo / 400));
- `normalized` (fastchess's default): the t-value (mu - 1/2) / sigma, with sigma the standard
  deviation of a game's score (of a pair's, over sqrt(2), for pairs), as normalized Elo
  nElo = t * 800 / ln 10: a difference measured in how many games it takes to see it.

The log-likelihood ratio of H1 over H0 compares the counts' best fits under each constraint,
LLR = N * sum_i phat_i ln(p1_i / p0_i), with p0, p1 the maximum-likelihood distributions that
meet H0's and H1's constraint (Van den Bergh, "A generalized SPRT", support_MLE_multinomial.pdf
and normalized_elo_practical.pdf). For the expected score s the maximum is
p_i = phat_i / (1 + x (a_i - s)), x the root of sum_i phat_i (a_i - s) / (1 + x (a_i - s)) = 0
(the "secular equation", one root where every 1 + x (a_i - s) > 0). For the t-value t the
maximum is a fixed point: with mu, sigma of the current estimate, the same form with
a_i - 1/2 - t sigma (1 + ((a_i - mu) / sigma)^2) / 2 in place of a_i - s. A count of zero is
replaced by 0.001 (as fishtest does) so that both fits exist.

The test stops at the first LLR <= ln(beta / (1 - alpha)) (H0 accepted) or
>= ln((1 - beta) / alpha) (H1 accepted): alpha is the chance of accepting H1 when H0 holds,
beta that of accepting H0 when H1 holds.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from enum import Enum
from typing import Any, Literal

__all__ = [
    "MODELS",
    "NELO_PER_T",
    "EloEstimate",
    "Model",
    "SprtError",
    "SprtTest",
    "Verdict",
    "elo_estimate",
    "llr",
    "llr_logistic",
    "llr_normalized",
    "logistic_score",
    "pentanomial",
    "trinomial",
]

Model = Literal["normalized", "logistic"]
MODELS: tuple[Model, ...] = ("normalized", "logistic")

NELO_PER_T = 800 / math.log(10)
"""Normalized Elo per unit of t-value (per game): nElo = t * 800 / ln 10, about 347.4."""
MAX_ELO = 200
"""The largest |elo0| and |elo1| a test takes. The normalized model's fit has no solution
beyond about 231 normalized Elo with pairs (340 with single games) whatever the counts; the
same cap for the logistic model keeps the two alike."""

REGULARIZE = 1e-3
"""What a zero count becomes, so that the constrained fits exist (fishtest's value)."""

_Z95 = 1.959963984540054
"""The standard normal quantile of 97.5%."""


class SprtError(ValueError):
    """SPRT settings that make no test: elo1 <= elo0, alpha or beta outside (0, 1), ..."""


class Verdict(Enum):
    """What the test concluded."""

    H1 = "H1"
    H0 = "H0"
    INCONCLUSIVE = "inconclusive"


def logistic_score(elo: float) -> float:
    """Return the expected score of a bot `elo` logistic Elo stronger: 1 / (1 + 10^(-elo/400))."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def pentanomial(pair_scores: Iterable[float]) -> tuple[int, int, int, int, int]:
    """Return the counts of pairs scoring 0, 0.5, 1, 1.5 and 2 (ValueError for another score)."""
    counts = [0] * 5
    for score in pair_scores:
        slot = score * 2
        if slot not in (0, 1, 2, 3, 4):
            raise ValueError(f"a pair of games scores 0, 0.5, 1, 1.5 or 2, not {score!r}")
        counts[int(slot)] += 1
    return counts[0], counts[1], counts[2], counts[3], counts[4]


def trinomial(game_scores: Iterable[float]) -> tuple[int, int, int]:
    """Return the counts of games lost, drawn and won (ValueError for another score)."""
    counts = [0] * 3
    for score in game_scores:
        slot = score * 2
        if slot not in (0, 1, 2):
            raise ValueError(f"a game scores 0, 0.5 or 1, not {score!r}")
        counts[int(slot)] += 1
    return counts[0], counts[1], counts[2]


def _distribution(counts: Sequence[float]) -> tuple[float, list[float], list[float]]:
    """Return (N, scores a_i, frequencies phat_i) of 3 or 5 counts, zeros regularized."""
    if len(counts) not in (3, 5):
        raise ValueError(f"counts are trinomial (3) or pentanomial (5), not {len(counts)}")
    if any(c < 0 for c in counts):
        raise ValueError(f"counts cannot be negative: {list(counts)}")
    filled = [c if c > 0 else REGULARIZE for c in counts]
    total = sum(filled)
    last = len(counts) - 1
    return total, [i / last for i in range(len(counts))], [c / total for c in filled]


def _moments(values: Sequence[float], probs: Sequence[float]) -> tuple[float, float]:
    mean = sum(p * a for a, p in zip(values, probs, strict=True))
    return mean, sum(p * (a - mean) ** 2 for a, p in zip(values, probs, strict=True))


def _secular_root(shifts: Sequence[float], probs: Sequence[float]) -> float:
    """Return the x with sum_i p_i c_i / (1 + x c_i) = 0 where every 1 + x c_i > 0.

    The sum falls strictly with x on that interval, from +inf to -inf, when the shifts c_i
    take both signs (and the p_i are positive); bisection finds the root to the last bit.
    """
    low_shift, high_shift = min(shifts), max(shifts)
    if not (low_shift < 0 < high_shift):
        raise ValueError("the constraint is outside the scores' range: no distribution meets it")
    low, high = -1.0 / high_shift, -1.0 / low_shift

    def total(x: float) -> float:
        return sum(p * c / (1.0 + x * c) for c, p in zip(shifts, probs, strict=True))

    for _ in range(200):
        middle = (low + high) / 2
        if middle in (low, high):
            break
        if total(middle) > 0:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def _fit_expected(values: Sequence[float], probs: Sequence[float], score: float) -> list[float]:
    """Return the most likely distribution on `values` with expected score `score`."""
    shifts = [a - score for a in values]
    x = _secular_root(shifts, probs)
    return [p / (1.0 + x * c) for c, p in zip(shifts, probs, strict=True)]


def _fit_t_value(values: Sequence[float], probs: Sequence[float], t: float) -> list[float]:
    """Return the most likely distribution on `values` with (mu - 1/2) / sigma equal to `t`."""
    fit = [1.0 / len(values)] * len(values)
    for _ in range(100):
        mean, variance = _moments(values, fit)
        sigma = math.sqrt(variance)
        shifts = [a - 0.5 - t * sigma * (1 + ((a - mean) / sigma) ** 2) / 2 for a in values]
        x = _secular_root(shifts, probs)
        new = [p / (1.0 + x * c) for c, p in zip(shifts, probs, strict=True)]
        moved = max(abs(n - o) for n, o in zip(new, fit, strict=True))
        fit = new
        if moved < 1e-13:
            break
    return fit


def _log_ratio(probs: Sequence[float], fit0: Sequence[float], fit1: Sequence[float]) -> float:
    return sum(
        p * (math.log(q1) - math.log(q0)) for p, q0, q1 in zip(probs, fit0, fit1, strict=True)
    )


def llr_logistic(elo0: float, elo1: float, counts: Sequence[float]) -> float:
    """Return the generalized LLR of logistic Elo elo1 over elo0 for trinomial or pentanomial
    `counts` (L, D, W or LL, LD, DD+WL, WD, WW). No games: 0."""
    if not any(counts):
        return 0.0
    total, values, probs = _distribution(counts)
    fits = [_fit_expected(values, probs, logistic_score(elo)) for elo in (elo0, elo1)]
    return total * _log_ratio(probs, fits[0], fits[1])


def llr_normalized(nelo0: float, nelo1: float, counts: Sequence[float]) -> float:
    """Return the generalized LLR of normalized Elo nelo1 over nelo0 for trinomial or
    pentanomial `counts`. A pair's t-value is sqrt(2) times a game's. No games: 0."""
    if not any(counts):
        return 0.0
    total, values, probs = _distribution(counts)
    per_unit = math.sqrt(2) if len(counts) == 5 else 1.0
    fits = [_fit_t_value(values, probs, nelo / NELO_PER_T * per_unit) for nelo in (nelo0, nelo1)]
    return total * _log_ratio(probs, fits[0], fits[1])


def llr(model: Model, elo0: float, elo1: float, counts: Sequence[float]) -> float:
    """Return the generalized LLR of elo1 over elo0 in `model`'s Elo for `counts`."""
    if model == "logistic":
        return llr_logistic(elo0, elo1, counts)
    if model == "normalized":
        return llr_normalized(elo0, elo1, counts)
    raise SprtError(f"unknown Elo model {model!r} (models: {', '.join(MODELS)})")


@dataclass(frozen=True, slots=True)
class EloEstimate:
    """The Elo difference the counts show, with a 95% interval (normal approximation).

    `elo` is logistic Elo from the mean score, `nelo` normalized Elo; the interval is the mean
    score plus or minus 1.96 standard errors, mapped to Elo (infinite where it leaves (0, 1)).
    A sequential test's estimate is biased away from zero (it stops on a run of luck); the
    interval does not correct for that.
    """

    elo: float
    lower: float
    upper: float
    nelo: float
    score: float


def _elo_of(score: float) -> float:
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return 400.0 * math.log10(score / (1.0 - score))


def elo_estimate(counts: Sequence[int]) -> EloEstimate:
    """Return the Elo estimate of trinomial or pentanomial `counts` (ValueError without games)."""
    if len(counts) not in (3, 5):
        raise ValueError(f"counts are trinomial (3) or pentanomial (5), not {len(counts)}")
    units = sum(counts)
    if units <= 0:
        raise ValueError("no games: nothing to estimate")
    last = len(counts) - 1
    values = [i / last for i in range(len(counts))]
    mean, variance = _moments(values, [c / units for c in counts])
    half = _Z95 * math.sqrt(variance / units)
    per_game_sigma = math.sqrt(variance * (2 if len(counts) == 5 else 1))
    nelo = (
        (mean - 0.5) / per_game_sigma * NELO_PER_T
        if per_game_sigma > 0
        else math.copysign(math.inf, mean - 0.5)
        if mean != 0.5
        else 0.0
    )
    return EloEstimate(_elo_of(mean), _elo_of(mean - half), _elo_of(mean + half), nelo, mean)


_SETTING = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")


@dataclass(frozen=True, slots=True)
class SprtTest:
    """One test: H0 (the difference is elo0) against H1 (it is elo1), with error rates.

    Construction checks the settings and raises SprtError naming what is wrong.
    """

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: Model = "normalized"

    def __post_init__(self) -> None:
        for name in ("elo0", "elo1", "alpha", "beta"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise SprtError(f"{name} must be a number, not {value!r}")
            if not math.isfinite(value):
                raise SprtError(f"{name} must be finite, not {value}")
        for name in ("elo0", "elo1"):
            value = getattr(self, name)
            if abs(value) > MAX_ELO:
                raise SprtError(
                    f"{name} must lie within -{MAX_ELO} and +{MAX_ELO}, not {value:g}: a test "
                    "of a larger difference decides in a handful of games (play a plain match)"
                )
        if self.elo1 <= self.elo0:
            raise SprtError(f"elo1 ({self.elo1:g}) must be greater than elo0 ({self.elo0:g})")
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0 < value < 1:
                raise SprtError(f"{name} must be between 0 and 1 (exclusive), not {value:g}")
        if self.alpha + self.beta >= 1:
            raise SprtError(
                f"alpha + beta must be below 1 (got {self.alpha:g} + {self.beta:g}): "
                "a test that errs that often decides nothing"
            )
        if self.model not in MODELS:
            raise SprtError(f"unknown model {self.model!r} (models: {', '.join(MODELS)})")

    @classmethod
    def parse(cls, text: str) -> SprtTest:
        """Return the test `text` sets: KEY=VALUE words (spaces or commas between them).

        Keys: elo0 and elo1 (required), alpha and beta (0.05 by default), model
        (normalized or logistic). Raises SprtError for anything else.
        """
        words = [w for w in re.split(r"[\s,]+", text.strip()) if w]
        values: dict[str, Any] = {}
        keys = ("elo0", "elo1", "alpha", "beta", "model")
        for word in words:
            found = _SETTING.match(word)
            if found is None:
                raise SprtError(f"SPRT settings are KEY=VALUE words, not {word!r}")
            key, raw = found.group(1), found.group(2)
            if key not in keys:
                raise SprtError(f"unknown SPRT setting {key!r} (settings: {', '.join(keys)})")
            if key in values:
                raise SprtError(f"SPRT setting {key!r} is given twice")
            if key == "model":
                values[key] = raw
                continue
            try:
                values[key] = float(raw)
            except ValueError:
                raise SprtError(f"SPRT setting {key} must be a number, not {raw!r}") from None
        missing = [k for k in ("elo0", "elo1") if k not in values]
        if missing:
            raise SprtError(f"SPRT settings need {' and '.join(missing)} (e.g. elo0=0 elo1=5)")
        return cls(**values)

    @property
    def lower_bound(self) -> float:
        """ln(beta / (1 - alpha)): at or below it, H0 is accepted."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper_bound(self) -> float:
        """ln((1 - beta) / alpha): at or above it, H1 is accepted."""
        return math.log((1 - self.beta) / self.alpha)

    def llr(self, counts: Sequence[float]) -> float:
        """Return the LLR of H1 over H0 for trinomial or pentanomial `counts`."""
        return llr(self.model, self.elo0, self.elo1, counts)

    def decide(self, llr_value: float) -> Verdict | None:
        """Return the verdict an LLR reaches, or None while it is between the bounds."""
        if llr_value >= self.upper_bound:
            return Verdict.H1
        if llr_value <= self.lower_bound:
            return Verdict.H0
        return None

    def describe(self) -> str:
        """Return the settings as `parse` reads them."""
        return (
            f"elo0={self.elo0:g} elo1={self.elo1:g} alpha={self.alpha:g} beta={self.beta:g} "
            f"model={self.model}"
        )

    def to_dict(self) -> dict[str, Any]:
        """Return the settings as plain JSON values."""
        return asdict(self)
