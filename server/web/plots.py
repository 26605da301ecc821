"""The geometry of the pages' small plots, drawn by their templates as inline SVG (no script).

Each function turns numbers into coordinates in a fixed view box; the SVG scales to its box
with CSS, so the page fits a phone. Nothing here reads a database or decides a policy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from protocol.messages import BotRating

PLOT_WIDTH = 600
"""The view box's width; the label column is on its left."""

LABEL_WIDTH = 230
"""The width kept for the bots' names in the Elo plot."""

ROW_HEIGHT = 28


@dataclass(frozen=True)
class EloRow:
    """One bot's line in the Elo plot: its interval from `x1` to `x2`, its Elo at `x`.

    `open_low` / `open_high`: the interval is unbounded on that side (drawn to the edge).
    """

    bot: str
    y: float
    x: float
    x1: float
    x2: float
    open_low: bool
    open_high: bool
    label: str


@dataclass(frozen=True)
class EloPlot:
    """The Elo plot: one row per bot, the zero line, the axis' ends and their values."""

    width: int
    height: int
    rows: tuple[EloRow, ...]
    zero_x: float
    left: float
    right: float
    low: float
    high: float


def elo_plot(ratings: Sequence[BotRating]) -> EloPlot | None:
    """Return the plot of `ratings` (Elo, mean 0, with 95% intervals), or None without any."""
    if not ratings:
        return None
    values = [0.0]
    for rating in ratings:
        values += [v for v in (rating.elo, rating.lower, rating.upper) if v is not None]
    low, high = min(values), max(values)
    margin = max((high - low) * 0.1, 50.0)
    low, high = low - margin, high + margin
    left, right = float(LABEL_WIDTH), float(PLOT_WIDTH - 10)

    def x_of(value: float) -> float:
        return round(left + (value - low) / (high - low) * (right - left), 1)

    rows = tuple(
        EloRow(
            bot=rating.bot,
            y=ROW_HEIGHT * index + ROW_HEIGHT / 2,
            x=x_of(rating.elo),
            x1=left if rating.lower is None else x_of(rating.lower),
            x2=right if rating.upper is None else x_of(rating.upper),
            open_low=rating.lower is None,
            open_high=rating.upper is None,
            label=_interval_text(rating),
        )
        for index, rating in enumerate(ratings)
    )
    return EloPlot(
        width=PLOT_WIDTH,
        height=ROW_HEIGHT * len(rows) + 24,
        rows=rows,
        zero_x=x_of(0.0),
        left=left,
        right=right,
        low=round(low),
        high=round(high),
    )


def _interval_text(rating: BotRating) -> str:
    lower = "-inf" if rating.lower is None else f"{rating.lower:+.0f}"
    upper = "+inf" if rating.upper is None else f"{rating.upper:+.0f}"
    return f"{rating.elo:+.0f} [{lower}, {upper}]"


@dataclass(frozen=True)
class HistoryPlot:
    """A rating's history: the polyline of the rating from the start and after each rated
    match, the band of its deviation (a polygon), the axis' values and the matches counted."""

    width: int
    height: int
    line: str
    band: str
    low: float
    high: float
    matches: int


HISTORY_HEIGHT = 160


def history_plot(points: Sequence[tuple[float, float]]) -> HistoryPlot | None:
    """Return the plot of (rating, deviation), oldest first; None with fewer than two points."""
    if len(points) < 2:
        return None
    low = min(rating - deviation for rating, deviation in points)
    high = max(rating + deviation for rating, deviation in points)
    top, bottom, left, right = 8.0, HISTORY_HEIGHT - 8.0, 48.0, PLOT_WIDTH - 8.0

    def x_of(index: int) -> float:
        return round(left + index / (len(points) - 1) * (right - left), 1)

    def y_of(value: float) -> float:
        return round(bottom - (value - low) / (high - low) * (bottom - top), 1)

    line = " ".join(f"{x_of(i)},{y_of(r)}" for i, (r, _) in enumerate(points))
    upper = [f"{x_of(i)},{y_of(r + d)}" for i, (r, d) in enumerate(points)]
    lower = [f"{x_of(i)},{y_of(r - d)}" for i, (r, d) in enumerate(points)]
    return HistoryPlot(
        width=PLOT_WIDTH,
        height=HISTORY_HEIGHT,
        line=line,
        band=" ".join(upper + lower[::-1]),
        low=round(low),
        high=round(high),
        matches=len(points) - 1,
    )
