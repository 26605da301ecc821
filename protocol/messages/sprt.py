"""A tournament's sequential probability ratio test: its settings and where it stands."""

from __future__ import annotations

from typing import Annotated, Literal, Self

from pydantic import Field, Strict, model_validator

from protocol.messages.base import Count, WireModel
from protocol.messages.versioning import SINCE

MAX_SPRT_PAIRS = 5000
"""The most colour-swapped pairs an SPRT tournament may be capped at (10,000 games)."""
MAX_SPRT_ELO = 200
"""The largest Elo difference (either sign) an SPRT hypothesis may name: a test asks about a
few Elo, and beyond about 250 normalized Elo some counts meet no constraint of the test."""

SprtElo = Annotated[float, Field(allow_inf_nan=False, ge=-MAX_SPRT_ELO, le=MAX_SPRT_ELO)]
SprtRate = Annotated[float, Field(allow_inf_nan=False, gt=0, lt=0.5)]
SprtModel = Literal["normalized", "logistic"]
"""How an SPRT reads an Elo difference: `normalized` Elo (fastchess's default: measured in how
many games it takes to see it) or `logistic` Elo (the expected score 1 / (1 + 10^(-elo/400)))."""
SprtVerdict = Literal["H0", "H1", "inconclusive"]
"""What an SPRT concluded: `H1` the first bot is stronger by elo1, `H0` it is not stronger by
elo0, `inconclusive` the cap was reached first."""


class SprtSettings(WireModel):
    """A sequential probability ratio test between a tournament's two bots (since 1.3).

    H0 says the first bot is `elo0` Elo stronger than the second, H1 `elo1` (elo0 < elo1);
    `alpha` is the chance of accepting H1 when H0 holds, `beta` that of accepting H0 when H1
    holds. The bots play colour-swapped pairs until the test decides, or `max_pairs` pairs
    (inconclusive). The settings and maths are those of `arena match --sprt`.
    """

    elo0: SprtElo
    elo1: SprtElo
    alpha: SprtRate = 0.05
    beta: SprtRate = 0.05
    model: SprtModel = "normalized"
    max_pairs: Annotated[int, Strict(), Field(ge=1, le=MAX_SPRT_PAIRS)] = 1000

    @model_validator(mode="after")
    def _elo1_above_elo0(self) -> Self:
        if self.elo1 <= self.elo0:
            raise ValueError(f"elo1 ({self.elo1:g}) must be greater than elo0 ({self.elo0:g})")
        return self


FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
"""A number that is neither infinite nor NaN (JSON has neither)."""


class SprtEloEstimate(WireModel):
    """The Elo difference an SPRT's counted pairs show, with its 95% interval (None:
    unbounded); `nelo` is normalized Elo. A sequential test's estimate leans away from zero
    (it stops on a run of luck); the interval does not correct for that."""

    elo: FiniteFloat | None = None
    lower: FiniteFloat | None = None
    upper: FiniteFloat | None = None
    nelo: FiniteFloat | None = None


class SprtState(WireModel):
    """Where a tournament's SPRT stands (since 1.3), seen from the first bot.

    Pairs count in schedule order, each once both its games have ended and every earlier pair
    has counted; none counts after the verdict (games under way then end, uncounted).
    `pentanomial` counts the pairs scoring 0, 0.5, 1, 1.5 and 2; `wins`, `draws`, `losses` the
    games of those pairs. The test accepts H0 when `llr` <= `lower_bound`, H1 when `llr` >=
    `upper_bound`; `verdict` is None while it runs.
    """

    llr: FiniteFloat
    lower_bound: FiniteFloat
    upper_bound: FiniteFloat
    pairs: Count
    max_pairs: Count
    pentanomial: tuple[Count, Count, Count, Count, Count]
    wins: Count
    draws: Count
    losses: Count
    verdict: SprtVerdict | None = None
    elo: SprtEloEstimate | None = None


SprtStateField = Annotated[
    SprtState | None,
    Field(
        json_schema_extra={SINCE: "1.3"},
        description="The SPRT's state, for a tournament with `sprt` settings (else None).",
    ),
]
