"""A Swiss tournament's games, round by round: each round paired from the results before it.

A round pairs every bot by competition.swiss (game pairs: each board plays one opening twice,
colours swapped) and numbers its games after the earlier rounds' (`games_per_round` each), so a
game's index says its round and board. The openings are drawn from the seed, one a round, each
used once before any is used twice. Everything is a pure function of the bots, the openings, the
seed and the results: the same results always give the same next round (a tournament resumed
after a crash pairs exactly as it would have).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from competition.openings import Opening, select_openings
from competition.schedule import GameTask
from competition.swiss import (
    BoardResult,
    Entrant,
    PlayedRound,
    SwissRules,
    pair_round,
)
from competition.swiss_standings import SwissStanding, swiss_standings

GAMES_PER_BOARD = 2
"""A board is a colour-swapped pair of games from one opening."""


class Scheduled(Protocol):
    """A game of a round as the standings read it: a GameTask, or a game stored by a server."""

    @property
    def index(self) -> int: ...

    @property
    def pair(self) -> int: ...

    @property
    def first(self) -> str: ...

    @property
    def second(self) -> str: ...


def boards_per_round(bots: int) -> int:
    """Return the boards of a round of `bots` (one sits out with the bye when they are odd)."""
    return bots // 2


def games_per_round(bots: int) -> int:
    return boards_per_round(bots) * GAMES_PER_BOARD


def rules(seed: int) -> SwissRules:
    """The Swiss rules every round uses: game pairs, a bye worth a win, the tournament's seed."""
    return SwissRules(game_pairs=True, seed=seed)


def swiss_round(
    bots: Sequence[str],
    openings: Sequence[Opening],
    seed: int,
    earlier: Sequence[Sequence[GameTask]],
    results: Mapping[int, float],
) -> list[GameTask]:
    """Return the games of the round after `earlier` (the rounds so far, each its games).

    `results` holds the first bot's score of each finished game by index; every game of the
    earlier rounds must be finished (ValueError names one that is not).
    """
    number = len(earlier)
    played = played_rounds(bots, earlier, results, complete=True)
    paired = pair_round([Entrant(bot) for bot in bots], played, rules(seed))
    opening = select_openings(openings, number + 1, seed)[number]
    base, board_base = number * games_per_round(len(bots)), number * boards_per_round(len(bots))
    tasks = []
    for board, pairing in enumerate(paired.pairings):
        for game, (first, second) in enumerate(
            ((pairing.first, pairing.second), (pairing.second, pairing.first))
        ):
            tasks.append(
                GameTask(
                    index=base + board * GAMES_PER_BOARD + game,
                    pair=board_base + board,
                    first=first,
                    second=second,
                    opening=opening,
                    pairing=board_base + board,
                    round=number,
                )
            )
    return tasks


def played_rounds(
    bots: Sequence[str],
    rounds: Sequence[Sequence[Scheduled]],
    results: Mapping[int, float],
    *,
    complete: bool = False,
) -> list[PlayedRound]:
    """Return `rounds` as competition.swiss reads them: each board's points so far (over its
    finished games) and the bye (the bot on no board of a round all of whose boards are given:
    a round whose games are still being started has no bye yet).

    With `complete`, a game without a result is an error (pairing needs whole rounds).
    """
    played = []
    for number, tasks in enumerate(rounds):
        boards: dict[int, list[Scheduled]] = {}
        for task in tasks:
            boards.setdefault(task.pair, []).append(task)
        results_of_round = []
        for games in boards.values():
            first, second = games[0].first, games[0].second
            points = {first: 0.0, second: 0.0}
            for game in games:
                score = results.get(game.index)
                if score is None:
                    if complete:
                        raise ValueError(
                            f"round {number + 1} is not over: game {game.index} has no result"
                        )
                    continue
                points[game.first] += score
                points[game.second] += 1.0 - score
            results_of_round.append(BoardResult(first, second, points[first], points[second]))
        on_boards = {task.first for task in tasks} | {task.second for task in tasks}
        whole = len(boards) == boards_per_round(len(bots))
        bye = next((bot for bot in bots if bot not in on_boards), None) if whole else None
        played.append(PlayedRound(tuple(results_of_round), bye))
    return played


def swiss_table(
    bots: Sequence[str],
    rounds: Sequence[Sequence[Scheduled]],
    results: Mapping[int, float],
    seed: int,
) -> tuple[SwissStanding, ...]:
    """Return the Swiss standings (score with byes, Buchholz, Sonneborn-Berger) of the games
    finished so far in `rounds`."""
    played = played_rounds(bots, rounds, results)
    return swiss_standings([Entrant(bot) for bot in bots], played, rules(seed))
