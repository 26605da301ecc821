"""A tournament's result: standings, crosstable, Elo, LOS, search statistics, adjudications.

`summarize` turns a spec and its game records into a `TournamentResult`; `result_json` writes it
as JSON values.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from competition.runner import BotTotals, GameRecord, TournamentSpec
from competition.standings import Standing, compute_standings
from competition.stats import Crosstable, EloFit, GameResult, crosstable_dict, fit_dict
from competition.stats.sprt import elo_estimate, pentanomial
from games.match import ResultCode

ADJUDICATIONS: Final = ("bot failure", "illegal", "time", "ply cap")
"""Ways a game ends other than by the rules, as counted per bot by `summarize`.

A bot is charged with the failure (a crash or no move), illegal move or timeout that lost it
the game; a ply-cap draw counts for both bots.
"""

_ADJUDICATION_OF: Final[Mapping[ResultCode, str]] = {
    ResultCode.BOT_FAILURE: "bot failure",
    ResultCode.FORFEIT: "illegal",
    ResultCode.TIMEOUT: "time",
    ResultCode.PLY_CAP: "ply cap",
}


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
    paired: tuple[PairedElo, ...] = ()
    """The pentanomial Elo of each two bots from their colour-swapped pairs (paired_elo)."""

    @property
    def order(self) -> tuple[str, ...]:
        """Return the bots best first: by Elo when rated, else by points."""
        return self.fit.bots if self.fit is not None else tuple(s.bot for s in self.standings)


@dataclass(frozen=True)
class PairedElo:
    """The Elo of `first` over `second` from their colour-swapped pairs of games (the
    pentanomial model, as fishtest and fastchess report it: each pair scored 0, 1/2, ..., 2 for
    `first`), with its 95% interval. Only pairs whose two games were both between them and both
    finished count; `pairs` counts them and `counts` holds how many scored 0, 1/2, 1, 3/2, 2."""

    first: str
    second: str
    pairs: int
    counts: tuple[int, int, int, int, int]
    elo: float
    lower: float
    upper: float
    nelo: float


def paired_elo(spec: TournamentSpec, records: Sequence[GameRecord]) -> tuple[PairedElo, ...]:
    """Return the pentanomial Elo of each two bots of `spec` (in the spec's order) that played
    complete colour-swapped pairs, from `records`."""
    by_pair: dict[int, list[GameRecord]] = {}
    for record in records:
        by_pair.setdefault(record.pair, []).append(record)
    scores: dict[tuple[str, str], list[float]] = {}
    rank = {bot: i for i, bot in enumerate(spec.bots)}
    for games in by_pair.values():
        if len(games) != 2:
            continue
        one, other = games
        bots = {one.first, one.second}
        if bots != {other.first, other.second} or len(bots) != 2 or one.first == other.first:
            continue
        first, second = sorted(bots, key=lambda bot: rank.get(bot, len(rank)))
        scores.setdefault((first, second), []).append(one.score_of(first) + other.score_of(first))
    estimates = []
    for (first, second), pair_scores in sorted(
        scores.items(), key=lambda item: (rank.get(item[0][0], 0), rank.get(item[0][1], 0))
    ):
        counts = pentanomial(pair_scores)
        estimate = elo_estimate(counts)
        estimates.append(
            PairedElo(
                first,
                second,
                len(pair_scores),
                counts,
                estimate.elo,
                estimate.lower,
                estimate.upper,
                estimate.nelo,
            )
        )
    return tuple(estimates)


def adjudication_of(code: ResultCode) -> str | None:
    """Return the ADJUDICATIONS name of a game's result `code`, or None for another ending
    (the rules', a resignation, an agreement)."""
    return _ADJUDICATION_OF.get(code)


def summarize(spec: TournamentSpec, records: Sequence[GameRecord]) -> TournamentResult:
    """Score the games: standings, crosstable, Elo fit with LOS, search stats, adjudications.

    Points, crosstable, fit and LOS are competition.standings.compute_standings of the games
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
        kind = adjudication_of(record.code)
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
        paired=paired_elo(spec, records),
    )


def result_json(result: TournamentResult) -> dict[str, Any]:
    """Return the result as JSON values (no NaN or infinity: unknown numbers are None).

    Keys: spec, standings (best first), crosstable (a -> b -> record, only pairs that met),
    elo (None when unrated, with elo_error), los (a -> b -> P(elo_a > elo_b), or None),
    paired_elo (the pentanomial Elo of each two bots' colour-swapped pairs), search, adjudications,
    games (every GameRecord.to_dict, which GameRecord.from_dict reads back).
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
        "paired_elo": [
            {
                "first": p.first,
                "second": p.second,
                "pairs": p.pairs,
                "pentanomial": list(p.counts),
                "elo": _finite(p.elo),
                "lower": _finite(p.lower),
                "upper": _finite(p.upper),
                "nelo": _finite(p.nelo),
            }
            for p in result.paired
        ],
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


def _finite(value: float) -> float | None:
    """`value`, or None where JSON has no number for it (an infinite or undefined Elo)."""
    return value if math.isfinite(value) else None
