"""Game results, each bot's record against each opponent and in total, and their validation."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

WIN, DRAW, LOSS = 1, 0, -1


class StatsError(ValueError):
    """Games that cannot be rated as given; the message says what to change."""


@dataclass(frozen=True, slots=True)
class GameResult:
    """One finished game: `score` is the first mover's points (1, 0.5 or 0).

    `first` is the bot that moved first (in checkers, Black). Games that share a `pair` id
    are the colour-swapped games of one opening and are treated as one independent unit.
    """

    first: str
    second: str
    score: float
    pair: int | None = None


@dataclass(frozen=True, slots=True)
class Record:
    """Games, wins, draws, losses and points, from one bot's point of view."""

    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def points(self) -> float:
        """Return wins plus half the draws."""
        return self.wins + 0.5 * self.draws

    @property
    def score(self) -> float:
        """Return the points per game (0.0 without games)."""
        return self.points / self.games if self.games else 0.0

    def add(self, points: float) -> Record:
        """Return this record with one more game in which the bot scored `points`."""
        return Record(
            self.games + 1,
            self.wins + (points == 1.0),
            self.draws + (points == 0.5),
            self.losses + (points == 0.0),
        )


@dataclass(frozen=True)
class Crosstable:
    """Head-to-head records and totals; bots sorted by name.

    `head_to_head[(a, b)]` is a's record against b, present only when they played.
    """

    bots: tuple[str, ...]
    head_to_head: Mapping[tuple[str, str], Record]
    totals: Mapping[str, Record]


def build_crosstable(games: Iterable[GameResult]) -> Crosstable:
    """Count each bot's wins, draws and losses against each opponent and in total."""
    head: dict[tuple[str, str], Record] = {}
    totals: dict[str, Record] = {}
    for game in validated(games):
        for bot, other, points in (
            (game.first, game.second, game.score),
            (game.second, game.first, 1.0 - game.score),
        ):
            head[(bot, other)] = head.get((bot, other), Record()).add(points)
            totals[bot] = totals.get(bot, Record()).add(points)
    return Crosstable(tuple(sorted(totals)), head, totals)


def validated(games: Iterable[GameResult]) -> list[GameResult]:
    """Return the games as a list; StatsError for a score other than 1, 0.5 or 0, or self-play."""
    result = list(games)
    for game in result:
        if game.score not in (0.0, 0.5, 1.0):
            raise StatsError(f"score must be 1, 0.5 or 0 (first mover's points), got {game!r}")
        if game.first == game.second:
            raise StatsError(f"a bot cannot play itself: {game!r}")
    return result


def outcome_of(game: GameResult) -> int:
    """Return WIN, DRAW or LOSS: the game's outcome for its first mover."""
    return WIN if game.score == 1.0 else LOSS if game.score == 0.0 else DRAW


def outcomes_by_pair(
    games: Sequence[GameResult], index: Mapping[str, int]
) -> dict[tuple[int, int], set[int]]:
    """Return the outcomes seen for each (first, second) bot index pair."""
    seen: dict[tuple[int, int], set[int]] = {}
    for game in games:
        seen.setdefault((index[game.first], index[game.second]), set()).add(outcome_of(game))
    return seen
