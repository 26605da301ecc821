"""A tournament's result as a self-contained HTML page with an inline SVG Elo plot."""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence

from competition.report.result import ADJUDICATIONS, TournamentResult
from competition.report.text import elo_text, percent, rate
from competition.runner import TournamentSpec
from competition.stats import UNBOUNDED_NOTE, EloFit, format_elo, has_unbounded_interval
from competition.swiss_standings import SwissStanding

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: right; }
th.bot, td.bot { text-align: left; font-family: monospace; }
caption { text-align: left; font-weight: bold; margin-bottom: 0.3em; }
.note { color: #555; }
svg text { font-family: monospace; font-size: 12px; }
"""


def html_report(result: TournamentResult, swiss: Sequence[SwissStanding] = ()) -> str:
    """Return a self-contained HTML page: spec, ratings, crosstable, LOS, search, Elo plot.

    `swiss`: a Swiss tournament's table, shown first. No scripts and no external assets; every
    bot spec and reason is HTML-escaped.
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
    ]
    if swiss:
        parts.append(_swiss_table(swiss))
    parts.append(_standings_table(result))
    if result.fit is None:
        parts.append(f'<p class="note">No Elo ratings: {_e(result.elo_error or "")}</p>')
    else:
        parts.extend([_ratings_table(result.fit), "<h2>Elo</h2>", elo_svg(result.fit)])
    parts.append(_crosstable_html(result))
    if result.fit is not None and result.los is not None:
        parts.append(_los_table(result.fit.bots, result.los))
    parts.append(_paired_table(result))
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
        *([] if spec.rounds is None else [("rounds", spec.rounds)]),
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


def _swiss_table(table: Sequence[SwissStanding]) -> str:
    rows = [_row(["score", "Buchholz", "Sonneborn-Berger", "boards", "byes"], header=True,
                 bot="bot")]  # fmt: skip
    for s in table:
        cells = [f"{s.score:g}", f"{s.buchholz:g}", f"{s.sonneborn_berger:g}", str(s.boards)]
        rows.append(_row([*cells, str(s.byes)], bot=s.player))
    caption = "Swiss table (score with byes; ties broken by Buchholz, then Sonneborn-Berger)"
    return f"<table><caption>{caption}</caption>{''.join(rows)}</table>"


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
            ["-" if a == b else percent(los[a][b]) for b in order],
            bot=f"{i}. {a}",
        )
        for i, a in enumerate(order, start=1)
    ]
    return (
        "<table><caption>Likelihood of superiority: P(row's Elo &gt; column's)</caption>"
        f"{''.join(head + rows)}</table>"
    )


def _paired_table(result: TournamentResult) -> str:
    if not result.paired:
        return ""
    header = ("first", "second", "pairs", "0 / ½ / 1 / 1½ / 2", "Elo", "95% interval", "nElo")
    rows = [_row(header, True)]
    for p in result.paired:
        cells = (
            _e(p.first),
            _e(p.second),
            str(p.pairs),
            " / ".join(str(n) for n in p.counts),
            elo_text(p.elo),
            f"{elo_text(p.lower)} to {elo_text(p.upper)}",
            elo_text(p.nelo),
        )
        rows.append(_row(cells))
    return (
        "<h2>Colour-swapped pairs</h2>"
        '<p class="note">Pentanomial Elo of the first bot over the second, from pairs of games '
        "on one opening with colours swapped (each pair scored 0 to 2).</p>"
        f"<table>{''.join(rows)}</table>"
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
                    rate(s.nodes_per_second),
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
