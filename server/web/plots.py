"""The geometry of the pages' small plots, drawn by their templates as inline SVG (no script),
and the texts of a match's search statistics beside its score graph.

Each function turns numbers into coordinates in a fixed view box; the SVG scales to its box
with CSS, so the page fits a phone. Nothing here reads a database or decides a policy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from protocol.messages import BotRating, RecordedMove, SearchInfo

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


# Search statistics of a match's moves -----------------------------------------------------------

SCORE_HEIGHT = 240
"""The score graph's view box height (its width is PLOT_WIDTH)."""

SCORE_MARGIN = 10.0


@dataclass(frozen=True)
class ScorePoint:
    """One scored move in the score graph: where it is drawn and what it says."""

    ply: int
    seat: int
    x: float
    y: float
    proven: bool
    label: str


@dataclass(frozen=True)
class ScorePlot:
    """The score graph of a match: the first seat's view of each scored move's score, each
    bot's scores scaled by its own largest (their units differ), a proven result at the edge.

    `line` is the polyline through the points; `zero_y` the line of an even game.
    """

    width: int
    height: int
    line: str
    points: tuple[ScorePoint, ...]
    zero_y: float
    plies: int


def score_value(search: SearchInfo, scale: float) -> float | None:
    """Return a move's score in [-1, 1] from its mover's view: a proven win 1, a loss -1, a
    draw 0, else the score over `scale` (its bot's largest); None without a score."""
    if search.outcome is not None:
        return {"win": 1.0, "draw": 0.0, "loss": -1.0}[search.outcome]
    if search.score is None:
        return None
    return max(-1.0, min(1.0, search.score / scale))


def score_scales(moves: Sequence[RecordedMove]) -> tuple[float, float]:
    """Return each seat's largest unproven |score| (1 when it has none, or only zeros)."""
    scales = [0.0, 0.0]
    for move in moves:
        search = move.search
        if search is not None and search.outcome is None and search.score is not None:
            scales[move.seat] = max(scales[move.seat], abs(search.score))
    return (scales[0] or 1.0, scales[1] or 1.0)


def score_plot(moves: Sequence[RecordedMove]) -> ScorePlot | None:
    """Return the score graph of a match's moves; None when no move has a score.

    The page script (static/search.js) draws the same graph again as moves arrive: keep the
    geometry of the two alike.
    """
    scales = score_scales(moves)
    top, bottom = SCORE_MARGIN, SCORE_HEIGHT - SCORE_MARGIN
    left, right = SCORE_MARGIN, PLOT_WIDTH - SCORE_MARGIN
    middle = (top + bottom) / 2
    last = max(len(moves) - 1, 1)
    points = []
    for index, move in enumerate(moves):
        if move.search is None:
            continue
        value = score_value(move.search, scales[move.seat])
        if value is None:
            continue
        first_view = value if move.seat == 0 else -value
        points.append(
            ScorePoint(
                ply=move.ply,
                seat=move.seat,
                x=round(left + index / last * (right - left), 1),
                y=round(middle - first_view * (bottom - top) / 2, 1),
                proven=move.search.outcome is not None,
                label=f"{move.ply}. {move.move}: {score_text(move.search)}",
            )
        )
    if not points:
        return None
    return ScorePlot(
        width=PLOT_WIDTH,
        height=SCORE_HEIGHT,
        line=" ".join(f"{p.x},{p.y}" for p in points),
        points=tuple(points),
        zero_y=middle,
        plies=len(moves),
    )


def score_text(search: SearchInfo) -> str:
    """Return a move's score as the page shows it: `+35`, `-0.39`, `win in 5`, `draw`."""
    if search.outcome is not None:
        plies = search.outcome_plies
        return search.outcome if plies is None else f"{search.outcome} in {plies}"
    score = search.score
    if score is None:
        return "no score"
    if score == 0:
        return "0"
    if score.is_integer():
        return f"{int(score):+d}"
    return f"{score:+.2f}"


def search_summary(search: SearchInfo) -> str:
    """Return the line the move list shows for a move's search: depth, nodes, score."""
    return f"depth {search.depth} · {search.nodes:,} nodes · {score_text(search)}"


def search_rows(search: SearchInfo) -> tuple[tuple[str, str], ...]:
    """Return the label and value of each statistic a move's search reported."""
    rows = [("Depth", str(search.depth))]
    if search.seldepth is not None:
        rows[0] = ("Depth", f"{search.depth} (selective {search.seldepth})")
    rows.append(("Nodes", f"{search.nodes:,}"))
    if search.nps is not None:
        rows.append(("Nodes per second", f"{search.nps:,}"))
    if search.time_ms is not None:
        rows.append(("Search time", f"{search.time_ms / 1000:.3f} s"))
    rows.append(("Score", score_text(search)))
    if search.pv:
        rows.append(("Principal variation", " ".join(search.pv)))
    return tuple(rows)


@dataclass(frozen=True)
class MoveSearch:
    """What the match page shows of one move's search: its line in the move list, its rows in
    the statistics panel, and its JSON for the page script."""

    summary: str
    rows: tuple[tuple[str, str], ...]
    json: str


@dataclass(frozen=True)
class SearchView:
    """The search statistics of a match's page: each move's (by ply) and the score graph."""

    moves: dict[int, MoveSearch]
    plot: ScorePlot | None


def search_view(moves: Sequence[RecordedMove]) -> SearchView:
    """Return the search statistics the match page shows for `moves`."""
    shown = {
        move.ply: MoveSearch(
            summary=search_summary(move.search),
            rows=search_rows(move.search),
            json=move.search.model_dump_json(exclude_defaults=True),
        )
        for move in moves
        if move.search is not None
    }
    return SearchView(moves=shown, plot=score_plot(moves))
