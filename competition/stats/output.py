"""A fit and crosstable as JSON values and as a text table."""

from __future__ import annotations

import math
from typing import Any

from competition.stats.crosstable import Crosstable, Record
from competition.stats.elo import EloFit, Rating, likelihood_of_superiority


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


def _format_cell(record: Record | None) -> str:
    if record is None:
        return "."
    return f"{record.points:g}/{record.games}"


def format_elo(value: float) -> str:
    """Return an Elo value or interval end rounded to a whole number, or inf or -inf."""
    return f"{value:.0f}" if math.isfinite(value) else "inf" if value > 0 else "-inf"
