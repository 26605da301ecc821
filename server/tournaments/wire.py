"""A tournament's results on the wire: competition.standings' tables as protocol models.

The standings are computed once, in competition.standings (the same as the local report's); this
module only maps them to `TournamentStandings` and `BotPoints`, a match's result to a score,
and an SPRT's status (competition.sequential) to `SprtState`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from competition.sequential import SprtStatus, SprtTest
from competition.standings import (
    GameResult,
    Standing,
    compute_standings,
    crosstable_dict,
    rating_dict,
    tally_points,
)
from competition.swiss_schedule import games_per_round, swiss_table
from protocol.messages import (
    MAX_TOURNAMENT_BOTS,
    BotPoints,
    BotRating,
    HeadToHead,
    MatchResult,
    SprtEloEstimate,
    SprtSettings,
    SprtState,
    SwissStandingRow,
    TournamentGame,
    TournamentStandings,
)


def score_of_first(result: MatchResult) -> float:
    """Return seat 0's score in a match that ended with `result` (an abort counts as a draw)."""
    if result.winner is None:
        return 0.5
    return 1.0 if result.winner == 0 else 0.0


def standings(
    bots: Sequence[str], games: Sequence[TournamentGame], *, swiss_seed: int | None = None
) -> TournamentStandings:
    """Return points (best first, ties in `bots` order), ratings, crosstable and LOS; with
    `swiss_seed`, a Swiss tournament's table too (score with byes and its tie-breaks).

    competition.standings computes them from the finished games (Davidson Elo with its default
    prior); this maps them to the wire model. When no game is finished or the fit fails, only
    the points are given, and `rating_note` says why. A tournament of more than
    MAX_TOURNAMENT_BOTS bots (a large Swiss) gets no Elo fit, crosstable or LOS: each grows with
    the square of the bots (seconds to fit, megabytes to send).
    """
    results = _results(games)
    swiss = () if swiss_seed is None else _swiss_rows(bots, games, swiss_seed)
    if len(bots) > MAX_TOURNAMENT_BOTS:
        return TournamentStandings(
            points=points(bots, games),
            rating_note=f"no Elo fit, crosstable or LOS past {MAX_TOURNAMENT_BOTS} bots: the "
            "Swiss table ranks them",
            swiss=swiss,
        )
    table = compute_standings(bots, results)
    points_ = _wire_points(table.points)
    if not results:
        return TournamentStandings(
            points=points_, rating_note="no game is finished yet", swiss=swiss
        )
    if table.fit is None or table.los is None:
        return TournamentStandings(points=points_, rating_note=table.elo_error, swiss=swiss)
    return TournamentStandings(
        points=points_,
        swiss=swiss,
        ratings=tuple(BotRating(**rating_dict(rating)) for rating in table.fit.ratings),
        first_move_advantage=table.fit.first_move_advantage,
        crosstable={
            bot: {other: HeadToHead(**record) for other, record in row.items()}
            for bot, row in crosstable_dict(table.crosstable).items()
        },
        los={bot: dict(row) for bot, row in table.los.items()},
    )


def points(bots: Sequence[str], games: Iterable[TournamentGame]) -> tuple[BotPoints, ...]:
    """Return the points table of the finished `games` (cheap: no rating fit)."""
    return _wire_points(tally_points(bots, _results(games)))


def _swiss_rows(
    bots: Sequence[str], games: Sequence[TournamentGame], seed: int
) -> tuple[SwissStandingRow, ...]:
    """Return a Swiss tournament's table from its games so far (each knows its round)."""
    rounds: list[list[TournamentGame]] = []
    per_round = games_per_round(len(bots))
    for game in games:
        number = game.index // per_round
        while len(rounds) <= number:
            rounds.append([])
        rounds[number].append(game)
    results = {game.index: game.result for game in games if game.result is not None}
    return tuple(
        SwissStandingRow(
            rank=row.rank,
            bot=row.player,
            score=row.score,
            buchholz=row.buchholz,
            sonneborn_berger=row.sonneborn_berger,
            boards=row.boards,
            byes=row.byes,
        )
        for row in swiss_table(bots, rounds, results, seed)
    )


def _results(games: Iterable[TournamentGame]) -> list[GameResult]:
    """Return the finished games as competition.stats results."""
    return [GameResult(g.first, g.second, g.result, g.pair) for g in games if g.result is not None]


def _wire_points(rows: Sequence[Standing]) -> tuple[BotPoints, ...]:
    return tuple(
        BotPoints(
            bot=row.bot,
            points=row.points,
            games=row.games,
            wins=row.wins,
            draws=row.draws,
            losses=row.losses,
        )
        for row in rows
    )


def sprt_test(settings: SprtSettings) -> SprtTest:
    """Return the test `settings` describe (the wire model has checked them already)."""
    return SprtTest(settings.elo0, settings.elo1, settings.alpha, settings.beta, settings.model)


def sprt_state(status: SprtStatus) -> SprtState:
    """Return an SPRT's status as the wire's state."""
    data = status.to_dict()
    return SprtState(
        llr=status.llr,
        lower_bound=status.test.lower_bound,
        upper_bound=status.test.upper_bound,
        pairs=status.pairs,
        max_pairs=status.max_games // 2,
        pentanomial=status.pentanomial,
        wins=status.wins,
        draws=status.draws,
        losses=status.losses,
        verdict=data["verdict"],
        elo=None if data["elo"] is None else SprtEloEstimate(**data["elo"]),
    )
