"""A tournament's result as plain text for the terminal."""

from __future__ import annotations

import math

from competition.report.result import TournamentResult
from competition.stats import format_table


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
                    f"{'-' if a == b else percent(result.los[a][b]):>5}" for b in order
                )
                lines.append(f"{a:<{width}} {cells}  ({i})")
    if result.paired:
        lines.extend(["", "Pentanomial Elo of the colour-swapped pairs (first over second, 95%):"])
        for p in result.paired:
            counts = " ".join(str(n) for n in p.counts)
            lines.append(
                f"{p.first} vs {p.second}: {p.pairs} pairs [{counts}] "
                f"Elo {elo_text(p.elo)} [{elo_text(p.lower)}, {elo_text(p.upper)}], "
                f"nElo {elo_text(p.nelo)}"
            )
    lines.extend(["", "Search (per move; nodes/s over all moves):"])
    lines.append(
        f"{'bot':<{width}} {'moves':>6} {'depth':>6} {'nodes':>10} {'nodes/s':>10} {'ms':>8}"
    )
    for entry in result.search.values():
        lines.append(
            f"{entry.bot:<{width}} {entry.moves:>6} {entry.mean_depth:>6.2f} "
            f"{entry.nodes_per_move:>10.1f} {rate(entry.nodes_per_second):>10} "
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
    engines = reported_engines(result)
    if engines:
        lines.extend(["", "Engines, as they named themselves:"])
        for bot, names in engines.items():
            lines.append(f"{bot}: {', '.join(names)}")
    return "\n".join(lines)


def reported_engines(result: TournamentResult) -> dict[str, list[str]]:
    """Each bot's engine names and versions as its program reported them, in the spec's order
    (several if a program changed between games, say rebuilt while a journal resumed)."""
    seen: dict[str, list[str]] = {bot: [] for bot in result.spec.bots}
    for record in result.records:
        for bot, engine in zip((record.first, record.second), record.engines, strict=True):
            if engine is not None and engine not in seen[bot]:
                seen[bot].append(engine)
    return {bot: names for bot, names in seen.items() if names}


def elo_text(value: float) -> str:
    """An Elo difference, signed and rounded (`+inf`/`-inf` where unbounded)."""
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    return f"{value:+.0f}"


def percent(value: float) -> str:
    """Return a probability as a whole percentage: 0.975 is 98%."""
    return f"{100.0 * value:.0f}%"


def rate(value: float | None) -> str:
    """Return a rate as a whole number, or - when unknown."""
    return "-" if value is None else f"{value:.0f}"
