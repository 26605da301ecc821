"""Tournament standings: points, wins, draws and losses, the crosstable, Elo with intervals, LOS.

The one standings computation of Arena: the local report (competition.report) shows it and the
server's tournaments (server.tournaments) map it to their wire models, so both rank the same
games the same way. `tally_points` is the cheap part (counts only); `compute_standings` adds
the Elo fit of competition.stats, which takes up to a few tenths of a second for the largest
tournaments: call it where a caller asked for ratings, and off an event loop.

It re-exports what a caller needs to feed it and to write its result as JSON values
(`GameResult`, `rating_dict`, `crosstable_dict`): the server reaches the statistics only
through this module (an import-linter contract), so it cannot compute them a second way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from competition.stats import (
    Crosstable,
    EloFit,
    GameResult,
    StatsError,
    build_crosstable,
    crosstable_dict,
    fit_elo,
    likelihood_of_superiority,
    rating_dict,
)

__all__ = [
    "GameResult",
    "Standing",
    "Standings",
    "compute_standings",
    "crosstable_dict",
    "rating_dict",
    "tally_points",
]


@dataclass(frozen=True, slots=True)
class Standing:
    """One bot's games, wins, draws, losses and points over the games given."""

    bot: str
    games: int
    wins: int
    draws: int
    losses: int
    points: float

    @property
    def score(self) -> float:
        """Return the points per game (0.0 without games)."""
        return self.points / self.games if self.games else 0.0


@dataclass(frozen=True)
class Standings:
    """Points (best first), crosstable, and the Elo fit with its LOS when the games allow one.

    `bots` are the bots given, then those that played without being given, in order of their
    first game: the order of ties in `points`. `fit` and `los` are None when the games cannot
    be rated (no game, say), and `elo_error` then says why. `los[a][b]` is P(elo_a > elo_b),
    0.5 on the diagonal, keyed best first.
    """

    bots: tuple[str, ...]
    points: tuple[Standing, ...]
    crosstable: Crosstable
    fit: EloFit | None
    elo_error: str | None
    los: Mapping[str, Mapping[str, float]] | None


def tally_points(bots: Sequence[str], games: Iterable[GameResult]) -> tuple[Standing, ...]:
    """Return every bot's points and counts, best first by points, ties in `bots` order.

    Bots in `bots` without games have zero counts; bots that played but are not in `bots`
    follow them in order of their first game. No rating is fitted: cheap for every game.
    StatsError for a game with a score other than 1, 0.5 or 0, or a bot playing itself.
    """
    results = list(games)
    return _points(_all_bots(bots, results), build_crosstable(results))


def compute_standings(bots: Sequence[str], games: Iterable[GameResult]) -> Standings:
    """Return points (as `tally_points`), crosstable, Elo fit and LOS of the finished `games`.

    The fit is fit_elo's default (one virtual draw per bot as prior, first-move advantage,
    intervals widened over the colour-swapped pairs); a StatsError of the fit leaves `fit` and
    `los` None with its message in `elo_error`. StatsError for games that are not valid results,
    as `tally_points`.
    """
    results = list(games)
    table = build_crosstable(results)
    every = _all_bots(bots, results)
    points = _points(every, table)
    try:
        fit = fit_elo(results)
        los = likelihood_of_superiority(fit)
    except StatsError as error:
        return Standings(every, points, table, None, str(error), None)
    return Standings(every, points, table, fit, None, los)


def _all_bots(bots: Sequence[str], games: Sequence[GameResult]) -> tuple[str, ...]:
    """Return `bots`, then the bots of `games` not among them in order of their first game."""
    every = dict.fromkeys(bots)
    for game in games:
        every.update(dict.fromkeys((game.first, game.second)))
    return tuple(every)


def _points(bots: Sequence[str], table: Crosstable) -> tuple[Standing, ...]:
    rows = []
    for bot in bots:
        record = table.totals.get(bot)
        if record is None:
            rows.append(Standing(bot, 0, 0, 0, 0, 0.0))
        else:
            rows.append(
                Standing(bot, record.games, record.wins, record.draws, record.losses, record.points)
            )
    rows.sort(key=lambda row: -row.points)  # stable: ties keep the given order
    return tuple(rows)
