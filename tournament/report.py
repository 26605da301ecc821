"""Tournament results: standings, crosstable, Elo, LOS, search statistics and adjudications.

`summarize` turns a spec and its game records into a `TournamentResult`; the format functions
write it as JSON values (`result_json`), terminal text (`text_summary`) or a self-contained HTML
page with an inline SVG Elo plot (`html_report`). `write_records` writes each game as JSON and,
for checkers, all games as one PDN file (games.referee's PDN writer).

Points, crosstable, Elo and LOS come from tournament.standings, the computation the server's
tournaments show too: Elo is tournament.stats.fit_elo over all games (Davidson draws,
first-move advantage, profile-likelihood intervals widened by the colour-swapped pairs' design
effect, infinite where the games cannot bound them). When the games cannot be rated the result
keeps points and crosstable, and `elo_error` says why the ratings are missing.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from games import Game, GameError
from games.referee import MatchView, Result, ResultCode, Status, to_pdn
from tournament.openings import Opening
from tournament.runner import BotTotals, GameRecord, TournamentSpec
from tournament.standings import Standing, compute_standings
from tournament.stats import (
    UNBOUNDED_NOTE,
    Crosstable,
    EloFit,
    GameResult,
    crosstable_dict,
    fit_dict,
    format_elo,
    format_table,
    has_unbounded_interval,
)

__all__ = [
    "ADJUDICATIONS",
    "BotSearch",
    "Standing",
    "TournamentResult",
    "classify_reason",
    "elo_svg",
    "html_report",
    "result_json",
    "summarize",
    "text_summary",
    "write_records",
]

ADJUDICATIONS: Final = ("crash", "no move", "illegal", "time", "ply cap")
"""Ways a game ends other than by the rules, as counted per bot by `summarize`.

A bot is charged with the crash, missing move, illegal move or timeout that lost it the game;
a ply-cap draw counts for both bots.
"""

_ILLEGAL = re.compile(r"^(first|second) played |forfeits after")


@dataclass(frozen=True, slots=True)
class BotSearch:
    """One bot's search statistics summed over all its moves in all its games.

    Times are in seconds as measured by the runner around each move.
    """

    bot: str
    moves: int
    nodes: int
    seconds: float
    depth_sum: int

    @property
    def mean_depth(self) -> float:
        """Return the mean search depth per move (0 without moves)."""
        return self.depth_sum / self.moves if self.moves else 0.0

    @property
    def nodes_per_move(self) -> float:
        """Return total nodes over total moves (0 without moves)."""
        return self.nodes / self.moves if self.moves else 0.0

    @property
    def nodes_per_second(self) -> float | None:
        """Return total nodes over total seconds; None when no time was measured."""
        return self.nodes / self.seconds if self.seconds > 0.0 else None

    @property
    def seconds_per_move(self) -> float:
        """Return the mean seconds per move (0 without moves)."""
        return self.seconds / self.moves if self.moves else 0.0


@dataclass(frozen=True)
class TournamentResult:
    """Everything reported about a tournament.

    `standings` are best first by points (ties in the spec's order). `fit` is None when the
    games cannot be rated, and `elo_error` then says why. `search` and `adjudications` are keyed
    by bot in the spec's order; `adjudications[bot]` counts every name in ADJUDICATIONS.
    """

    spec: TournamentSpec
    records: tuple[GameRecord, ...]
    standings: tuple[Standing, ...]
    crosstable: Crosstable
    fit: EloFit | None
    elo_error: str | None
    search: Mapping[str, BotSearch]
    adjudications: Mapping[str, Mapping[str, int]]
    los: Mapping[str, Mapping[str, float]] | None = field(default=None)

    @property
    def order(self) -> tuple[str, ...]:
        """Return the bots best first: by Elo when rated, else by points."""
        return self.fit.bots if self.fit is not None else tuple(s.bot for s in self.standings)


def classify_reason(reason: str) -> str | None:
    """Return the ADJUDICATIONS name of a game's end `reason`, or None for a rules result."""
    if reason == "ply cap":
        return "ply cap"
    if reason.startswith("crash:"):
        return "crash"
    if reason.endswith("returned no move"):
        return "no move"
    if _ILLEGAL.search(reason):
        return "illegal"
    if "ran out of time" in reason or "ms per move" in reason:
        return "time"
    return None


def summarize(spec: TournamentSpec, records: Sequence[GameRecord]) -> TournamentResult:
    """Score the games: standings, crosstable, Elo fit with LOS, search stats, adjudications.

    Points, crosstable, fit and LOS are tournament.standings.compute_standings of the games
    (fit_elo's default fit); a StatsError of the fit leaves `fit` None with its message in
    `elo_error`. Bots of the spec that played no game appear with zero counts.
    """
    games = [GameResult(r.first, r.second, r.result, r.pair) for r in records]
    table = compute_standings(spec.bots, games)
    totals = {bot: BotTotals() for bot in table.bots}
    adjudications = {bot: dict.fromkeys(ADJUDICATIONS, 0) for bot in table.bots}
    for record in records:
        for bot, stats in ((record.first, record.stats[0]), (record.second, record.stats[1])):
            totals[bot].add(stats)
        kind = classify_reason(record.reason)
        if kind == "ply cap":
            adjudications[record.first][kind] += 1
            adjudications[record.second][kind] += 1
        elif kind is not None and record.result != 0.5:
            loser = record.second if record.result == 1.0 else record.first
            adjudications[loser][kind] += 1
    search = {
        bot: BotSearch(bot, t.moves, t.nodes, t.seconds, t.depth_sum) for bot, t in totals.items()
    }
    return TournamentResult(
        spec=spec,
        records=tuple(records),
        standings=table.points,
        crosstable=table.crosstable,
        fit=table.fit,
        elo_error=table.elo_error,
        search=search,
        adjudications=adjudications,
        los=table.los,
    )


# -- JSON ----------------------------------------------------------------------------------------


def result_json(result: TournamentResult) -> dict[str, Any]:
    """Return the result as JSON values (no NaN or infinity: unknown numbers are None).

    Keys: spec, standings (best first), crosstable (a -> b -> record, only pairs that met),
    elo (None when unrated, with elo_error), los (a -> b -> P(elo_a > elo_b), or None), search,
    adjudications, games (every GameRecord.to_dict, which GameRecord.from_dict reads back).
    """
    return {
        "spec": result.spec.to_dict(),
        "standings": [
            {
                "bot": s.bot,
                "points": s.points,
                "wins": s.wins,
                "draws": s.draws,
                "losses": s.losses,
                "games": s.games,
                "score": s.score,
            }
            for s in result.standings
        ],
        "crosstable": crosstable_dict(result.crosstable),
        "elo": None if result.fit is None else fit_dict(result.fit),
        "elo_error": result.elo_error,
        "los": None if result.los is None else {a: dict(row) for a, row in result.los.items()},
        "search": [
            {
                "bot": s.bot,
                "moves": s.moves,
                "nodes": s.nodes,
                "seconds": s.seconds,
                "mean_depth": s.mean_depth,
                "nodes_per_move": s.nodes_per_move,
                "nodes_per_second": s.nodes_per_second,
                "seconds_per_move": s.seconds_per_move,
            }
            for s in result.search.values()
        ],
        "adjudications": {bot: dict(kinds) for bot, kinds in result.adjudications.items()},
        "games": [record.to_dict() for record in result.records],
    }


# -- game records --------------------------------------------------------------------------------


def write_records(
    directory: Path | str,
    spec: TournamentSpec,
    records: Sequence[GameRecord],
    openings: Iterable[Opening] = (),
) -> list[Path]:
    """Write every game as JSON (game-0001.json, ...) and, for checkers, all as games.pdn.

    Each JSON file is the record's `to_dict` plus `game`, `options` and `start_position` (the
    opening's position text, or None for the standard start). `openings` are the tournament's
    openings, looked up by name to find a game's start position; a game whose opening is not
    among them is taken to start from the standard start. PDN games carry Event, Round (the
    game number), Black (first), White (second) and, from a set position, FEN. Creates
    `directory` if needed and returns the paths written. ValueError if a move does not replay.
    """
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    starts = {o.name: o.position for o in openings}
    game = spec.build_game()
    width = max(4, len(str(len(records))))
    written = []
    pdn_games = []
    for record in records:
        position = starts.get(record.opening)
        data = {
            "game": spec.game,
            "options": dict(spec.options),
            "start_position": position,
            **record.to_dict(),
        }
        path = folder / f"game-{record.index + 1:0{width}d}.json"
        path.write_text(json.dumps(data, indent=2, allow_nan=False) + "\n", encoding="utf-8")
        written.append(path)
        if game.name == "checkers":
            pdn_games.append(_pdn(game, spec, record, position))
    if pdn_games:
        path = folder / "games.pdn"
        path.write_text("\n".join(pdn_games), encoding="utf-8")
        written.append(path)
    return written


def _pdn(game: Game, spec: TournamentSpec, record: GameRecord, position: str | None) -> str:
    start = game.position_or_initial(position)
    state = start
    for number, text in enumerate(record.moves, start=1):
        try:
            state = state.apply(state.parse_move(text))
        except GameError as exc:
            raise ValueError(
                f"game {record.index + 1}: move {number} {text!r} does not replay: {exc}"
            ) from exc
    winner = None if record.result == 0.5 else 0 if record.result == 1.0 else 1
    view = MatchView(
        game=game.name,
        start_position=game.format_position(start),
        position=game.format_position(state),
        moves=record.moves,
        to_move=None,
        clocks_ms=None,
        legal_moves=(),
        status=Status.FINISHED,
        # to_pdn reads only the winner and the words; the runner keeps no result code.
        result=Result(winner, ResultCode.RULES, record.reason),
        seq=len(record.moves),
        illegal_counts=(0, 0),
        draw_offer=None,
        time_control=None,
    )
    headers = {
        "Event": f"Arena {spec.format} tournament",
        "Round": str(record.index + 1),
        "Black": record.first,
        "White": record.second,
    }
    return to_pdn(view, headers)


# -- text ----------------------------------------------------------------------------------------


def text_summary(result: TournamentResult) -> str:
    """Return standings, Elo table (or why it is missing), LOS, search stats as plain text."""
    spec = result.spec
    lines = [f"{spec.game} {spec.format}: {len(result.records)} games", ""]
    width = max(4, *(len(s.bot) for s in result.standings))
    lines.append(f"{'#':>2} {'bot':<{width}} {'points':>6} {'W':>4} {'D':>4} {'L':>4} {'games':>5}")
    for rank, s in enumerate(result.standings, start=1):
        lines.append(
            f"{rank:>2} {s.bot:<{width}} {s.points:>6g} {s.wins:>4} {s.draws:>4} {s.losses:>4} "
            f"{s.games:>5}"
        )
    lines.append("")
    if result.fit is None:
        lines.append(f"Elo: not rated: {result.elo_error}")
    else:
        lines.append("Elo (95% intervals) and crosstable (points/games against each):")
        lines.append(format_table(result.crosstable, result.fit))
        if result.los is not None:
            lines.extend(["", "Likelihood of superiority (row better than column):"])
            order = result.fit.bots
            lines.append(f"{'':<{width}} " + " ".join(f"{i + 1:>5}" for i in range(len(order))))
            for i, a in enumerate(order, start=1):
                cells = " ".join(
                    f"{'-' if a == b else _percent(result.los[a][b]):>5}" for b in order
                )
                lines.append(f"{a:<{width}} {cells}  ({i})")
    lines.extend(["", "Search (per move; nodes/s over all moves):"])
    lines.append(
        f"{'bot':<{width}} {'moves':>6} {'depth':>6} {'nodes':>10} {'nodes/s':>10} {'ms':>8}"
    )
    for entry in result.search.values():
        lines.append(
            f"{entry.bot:<{width}} {entry.moves:>6} {entry.mean_depth:>6.2f} "
            f"{entry.nodes_per_move:>10.1f} {_rate(entry.nodes_per_second):>10} "
            f"{1000.0 * entry.seconds_per_move:>8.2f}"
        )
    adjudicated = {
        bot: {kind: n for kind, n in kinds.items() if n}
        for bot, kinds in result.adjudications.items()
    }
    if any(adjudicated.values()):
        lines.extend(["", "Adjudicated games (charged to the loser; ply cap to both):"])
        for bot, kinds in adjudicated.items():
            if kinds:
                lines.append(f"{bot}: " + ", ".join(f"{k} {n}" for k, n in kinds.items()))
    return "\n".join(lines)


def _percent(value: float) -> str:
    return f"{100.0 * value:.0f}%"


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


# -- HTML ----------------------------------------------------------------------------------------

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: right; }
th.bot, td.bot { text-align: left; font-family: monospace; }
caption { text-align: left; font-weight: bold; margin-bottom: 0.3em; }
.note { color: #555; }
svg text { font-family: monospace; font-size: 12px; }
"""


def html_report(result: TournamentResult) -> str:
    """Return a self-contained HTML page: spec, ratings, crosstable, LOS, search, Elo plot.

    No scripts and no external assets; every bot spec and reason is HTML-escaped.
    """
    spec = result.spec
    title = f"Arena tournament: {spec.game} {spec.format}, {len(result.records)} games"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        _spec_table(spec),
        _standings_table(result),
    ]
    if result.fit is None:
        parts.append(f'<p class="note">No Elo ratings: {_e(result.elo_error or "")}</p>')
    else:
        parts.extend([_ratings_table(result.fit), "<h2>Elo</h2>", elo_svg(result.fit)])
    parts.append(_crosstable_html(result))
    if result.fit is not None and result.los is not None:
        parts.append(_los_table(result.fit.bots, result.los))
    parts.append(_search_table(result))
    parts.append(_adjudication_table(result))
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _row(cells: Iterable[str], header: bool = False, bot: str | None = None) -> str:
    tag = "th" if header else "td"
    head = "" if bot is None else f'<{tag} class="bot">{_e(bot)}</{tag}>'
    return "<tr>" + head + "".join(f"<{tag}>{c}</{tag}>" for c in cells) + "</tr>"


def _spec_table(spec: TournamentSpec) -> str:
    rows = [
        ("game", spec.game),
        ("options", ", ".join(f"{k}={v}" for k, v in spec.options) or "-"),
        ("format", spec.format),
        ("bots", ", ".join(spec.bots)),
        ("games per pairing", spec.games_per_pairing),
        ("seed", spec.seed),
        ("ply cap", spec.ply_cap),
        ("move time", "bots' own limits" if spec.move_time is None else f"{spec.move_time} s"),
    ]
    body = "".join(
        f'<tr><th class="bot">{_e(k)}</th><td class="bot">{_e(v)}</td></tr>' for k, v in rows
    )
    return f"<table><caption>Specification</caption>{body}</table>"


def _standings_table(result: TournamentResult) -> str:
    rows = [_row(["points", "W", "D", "L", "games"], header=True, bot="bot")]
    for s in result.standings:
        rows.append(
            _row(
                [f"{s.points:g}", str(s.wins), str(s.draws), str(s.losses), str(s.games)], bot=s.bot
            )
        )
    return f"<table><caption>Points</caption>{''.join(rows)}</table>"


def _ratings_table(fit: EloFit) -> str:
    rows = [_row(["Elo", "95% interval", "games", "points", "score"], header=True, bot="bot")]
    for r in fit.ratings:
        rows.append(
            _row(
                [
                    f"{r.elo:.1f}",
                    f"[{format_elo(r.lower)}, {format_elo(r.upper)}]",
                    str(r.games),
                    f"{r.points:g}",
                    f"{100.0 * r.score:.1f}%",
                ],
                bot=r.bot,
            )
        )
    low, high = fit.first_move_interval
    note = (
        f"First-move advantage {fit.first_move_advantage:.1f} Elo "
        f"[{format_elo(low)}, {format_elo(high)}]; draw parameter nu {fit.draw_nu:.3f} "
        f"(equal-bot draw rate {100.0 * fit.equal_draw_rate:.1f}%); 95% profile-likelihood "
        f"intervals, widened by the design effect of {fit.units} independent units "
        "(colour-swapped pairs)."
    )
    if has_unbounded_interval(fit):
        note += f" {UNBOUNDED_NOTE}."
    return (
        f"<table><caption>Elo ratings (Davidson model, maximum likelihood)</caption>"
        f'{"".join(rows)}</table><p class="note">{_e(note)}</p>'
    )


def _crosstable_html(result: TournamentResult) -> str:
    order = result.order
    head = [_row([str(i) for i in range(1, len(order) + 1)], header=True, bot="bot")]
    rows = []
    for i, a in enumerate(order, start=1):
        cells = []
        for b in order:
            rec = result.crosstable.head_to_head.get((a, b))
            cells.append("-" if a == b else "." if rec is None else f"{rec.points:g}/{rec.games}")
        rows.append(_row(cells, bot=f"{i}. {a}"))
    return (
        "<table><caption>Crosstable (row's points / games against column)</caption>"
        f"{''.join(head + rows)}</table>"
    )


def _los_table(order: Sequence[str], los: Mapping[str, Mapping[str, float]]) -> str:
    head = [_row([str(i) for i in range(1, len(order) + 1)], header=True, bot="bot")]
    rows = [
        _row(
            ["-" if a == b else _percent(los[a][b]) for b in order],
            bot=f"{i}. {a}",
        )
        for i, a in enumerate(order, start=1)
    ]
    return (
        "<table><caption>Likelihood of superiority: P(row's Elo &gt; column's)</caption>"
        f"{''.join(head + rows)}</table>"
    )


def _search_table(result: TournamentResult) -> str:
    rows = [
        _row(["moves", "mean depth", "nodes/move", "nodes/s", "ms/move"], header=True, bot="bot")
    ]
    for s in result.search.values():
        rows.append(
            _row(
                [
                    str(s.moves),
                    f"{s.mean_depth:.2f}",
                    f"{s.nodes_per_move:.1f}",
                    _rate(s.nodes_per_second),
                    f"{1000.0 * s.seconds_per_move:.2f}",
                ],
                bot=s.bot,
            )
        )
    return f"<table><caption>Search statistics</caption>{''.join(rows)}</table>"


def _adjudication_table(result: TournamentResult) -> str:
    rows = [_row([_e(kind) for kind in ADJUDICATIONS], header=True, bot="bot")]
    for bot, kinds in result.adjudications.items():
        rows.append(_row([str(kinds[kind]) for kind in ADJUDICATIONS], bot=bot))
    return (
        "<table><caption>Adjudicated games (charged to the loser; ply cap to both)</caption>"
        f"{''.join(rows)}</table>"
    )


def elo_svg(fit: EloFit, width: int = 640) -> str:
    """Return an inline SVG: each bot's Elo (one circle per bot) with its 95% interval bar.

    Bots best first, top to bottom. An infinite bound is drawn to the plot's edge, dashed.
    """
    ratings = fit.ratings
    label_width = min(280, 8 + 7 * max(len(r.bot) for r in ratings))
    row, top, bottom = 24, 12, 32
    height = top + row * len(ratings) + bottom
    left, right = label_width + 10, width - 16
    values = [r.elo for r in ratings] + [
        v for r in ratings for v in (r.lower, r.upper) if math.isfinite(v)
    ]
    low, high = min(values), max(values)
    if high - low < 1.0:
        low, high = low - 50.0, high + 50.0
    pad = 0.05 * (high - low)
    low, high = low - pad, high + pad

    def x(value: float) -> float:
        value = min(max(value, low), high)
        return left + (value - low) / (high - low) * (right - left)

    axis_y = top + row * len(ratings) + 4
    parts = [
        f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        'aria-label="Elo ratings with 95% intervals">',
        f'<line x1="{left}" y1="{axis_y}" x2="{right}" y2="{axis_y}" stroke="#444"/>',
    ]
    step = _tick_step(high - low)
    for n in range(math.ceil(low / step), math.floor(high / step) + 1):
        tick = n * step
        tx = x(tick)
        parts.append(
            f'<line x1="{tx:.1f}" y1="{top - 4}" x2="{tx:.1f}" y2="{axis_y}" '
            f'stroke="{"#888" if n == 0 else "#ddd"}"/>'
            f'<text x="{tx:.1f}" y="{axis_y + 16}" text-anchor="middle">{tick:g}</text>'
        )
    for i, r in enumerate(ratings):
        y = top + row * i + row / 2
        dashed = not (math.isfinite(r.lower) and math.isfinite(r.upper))
        dash = ' stroke-dasharray="4 3"' if dashed else ""
        parts.append(
            f'<text x="{label_width}" y="{y + 4:.1f}" text-anchor="end">{_e(r.bot)}</text>'
            f'<line x1="{x(r.lower):.1f}" y1="{y:.1f}" x2="{x(r.upper):.1f}" y2="{y:.1f}" '
            f'stroke="#36c" stroke-width="2"{dash}/>'
            f'<circle cx="{x(r.elo):.1f}" cy="{y:.1f}" r="4" fill="#c33">'
            f"<title>{_e(r.bot)}: {r.elo:.1f} Elo [{format_elo(r.lower)}, "
            f"{format_elo(r.upper)}]</title></circle>"
        )
    parts.append("</svg>")
    return "\n".join(parts)


def _tick_step(span: float) -> float:
    """Return a 1, 2 or 5 times a power of ten step giving about five ticks over `span`."""
    raw = span / 5.0
    power = 10.0 ** math.floor(math.log10(raw))
    for factor in (1.0, 2.0, 5.0, 10.0):
        if factor * power >= raw:
            return factor * power
    return 10.0 * power
