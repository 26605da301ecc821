"""`arena tournament --format swiss`: a Swiss tournament played in-process, round by round.

Each round is paired by competition.swiss_schedule from the results of the rounds before it,
by the server's Swiss rules: every board is one opening played twice, colours swapped, and with
an odd number of bots one sits the round out with a bye worth a won board (2 points). A round's
games are played by competition.runner's workers, then the next round is paired. With a journal
every finished game is written as it ends; a rerun pairs the rounds played again from their
stored results (the same boards: a pairing is a pure function of the bots, the seed and the
results) and plays on. The module imports competition at once: cli.tournament imports it only
when a Swiss tournament runs.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from competition.game import make_bot
from competition.journal import Journal, JournalError
from competition.openings import Opening, select_openings
from competition.runner import (
    BotFactory,
    GameRecord,
    GameTask,
    TournamentError,
    TournamentSpec,
    play_tasks,
)
from competition.schedule import most_swiss_rounds
from competition.swiss_schedule import GAMES_PER_BOARD, games_per_round, rules, swiss_round
from competition.swiss_schedule import swiss_table as pure_swiss_table
from competition.swiss_standings import SwissStanding

BYE_POINTS = rules(0).bye_points * GAMES_PER_BOARD
"""What a bye scores: a won board, both its games."""


def default_rounds(bots: int) -> int:
    """Return the rounds a Swiss tournament of `bots` plays unless told: ceil(log2(bots)), the
    fewest after which a bot that wins every board is alone at the top (at least 1, at most
    most_swiss_rounds)."""
    if bots < 2:
        return 1
    return min(max(1, math.ceil(math.log2(bots))), most_swiss_rounds(bots))


@dataclass(frozen=True, slots=True)
class SwissBoard:
    """One board of a round: `first` has the first colour in its first game, `games` are the
    indexes of its two games (the second with colours swapped), and the points are each bot's
    over the board's finished games."""

    number: int
    first: str
    second: str
    games: tuple[int, ...]
    first_points: float
    second_points: float


@dataclass(frozen=True, slots=True)
class SwissRound:
    """A round played: its number (from 1), opening, boards from the top, and the bye."""

    number: int
    opening: str
    boards: tuple[SwissBoard, ...]
    bye: str | None

    def to_dict(self) -> dict[str, Any]:
        """Return the round as plain JSON values."""
        return {
            "round": self.number,
            "opening": self.opening,
            "boards": [
                {
                    "board": board.number,
                    "first": board.first,
                    "second": board.second,
                    "games": list(board.games),
                    "first_points": board.first_points,
                    "second_points": board.second_points,
                }
                for board in self.boards
            ],
            "bye": self.bye,
        }


@dataclass(frozen=True, slots=True)
class SwissPlayed:
    """A Swiss tournament's games by round (as paired) and every game's record."""

    spec: TournamentSpec
    rounds: tuple[tuple[GameTask, ...], ...]
    records: tuple[GameRecord, ...]

    def round_numbers(self) -> dict[int, int]:
        """Return each game's round (from 1) by its index."""
        return {task.index: number for number, tasks in enumerate(self.rounds, 1) for task in tasks}

    def round_results(self) -> list[SwissRound]:
        """Return every round's boards with their points, and its bye."""
        scores = {record.index: record.result for record in self.records}
        return [round_result(self.spec.bots, tasks, scores) for tasks in self.rounds]

    def table(self) -> tuple[SwissStanding, ...]:
        """Return the Swiss table: score with byes, Buchholz, Sonneborn-Berger."""
        scores = {record.index: record.result for record in self.records}
        return pure_swiss_table(self.spec.bots, self.rounds, scores, self.spec.seed)


def round_result(
    bots: Sequence[str], tasks: Sequence[GameTask], scores: dict[int, float]
) -> SwissRound:
    """Return the round of `tasks` with the points of its finished games (`scores`: the first
    bot's score by game index)."""
    boards: dict[int, list[GameTask]] = {}
    for task in tasks:
        boards.setdefault(task.pair, []).append(task)
    played = []
    for number, games in enumerate(boards.values(), 1):
        first, second = games[0].first, games[0].second
        points = {first: 0.0, second: 0.0}
        for game in games:
            score = scores.get(game.index)
            if score is not None:
                points[game.first] += score
                points[game.second] += 1.0 - score
        indexes = tuple(game.index for game in games)
        played.append(SwissBoard(number, first, second, indexes, points[first], points[second]))
    seated = {task.first for task in tasks} | {task.second for task in tasks}
    bye = next((bot for bot in bots if bot not in seated), None)
    return SwissRound((tasks[0].round or 0) + 1, tasks[0].opening.name, tuple(played), bye)


def swiss_identity(spec: TournamentSpec, openings: Sequence[Opening]) -> dict[str, Any]:
    """Return what a journal must match to be resumed: the spec and the openings dealt to
    its rounds (a round's pairing comes from the results, so there is no schedule to hash)."""
    rounds = spec.rounds or 0
    dealt = select_openings(openings, rounds, spec.seed)
    text = json.dumps([[o.name, o.position, list(o.moves)] for o in dealt])
    return {
        "kind": "swiss",
        "spec": spec.to_dict(),
        "openings": hashlib.sha256(text.encode()).hexdigest(),
        "games": rounds * games_per_round(len(spec.bots)),
    }


RoundStart = Callable[[Sequence[GameTask], dict[int, GameRecord]], None]
"""Called as a round begins with its games and those of them the journal holds."""
RoundOver = Callable[[SwissRound], None]
"""Called as a round ends with its boards' points."""
GameOver = Callable[[GameRecord], None]
"""Called after each newly finished game."""


def run_swiss(
    spec: TournamentSpec,
    openings: Sequence[Opening],
    concurrency: int = 1,
    journal_path: Path | str | None = None,
    *,
    round_start: RoundStart | None = None,
    game_over: GameOver | None = None,
    round_over: RoundOver | None = None,
    bot_factory: BotFactory = make_bot,
) -> SwissPlayed:
    """Play `spec.rounds` Swiss rounds, each paired from the results of those before it.

    With `journal_path`, games the journal holds are not played again (a journal of another
    tournament, or one whose games are not the boards the results pair, raises JournalError)
    and each newly finished game is appended as it ends. `concurrency` worker processes play a
    round's games (1: in this process). If a callback raises, the run stops and the exception
    propagates; finished games stay in the journal.
    """
    if spec.format != "swiss":
        raise TournamentError(f"a {spec.format} tournament is not played in rounds")
    if concurrency < 1:
        raise TournamentError(f"concurrency must be at least 1, not {concurrency}")
    spec.validate()
    assert spec.rounds is not None  # validate checks a Swiss tournament has its rounds
    journal = (
        None if journal_path is None else Journal(journal_path, swiss_identity(spec, openings))
    )
    try:
        stored = {} if journal is None else _stored(journal)
        rounds: list[tuple[GameTask, ...]] = []
        records: dict[int, GameRecord] = {}
        for _ in range(spec.rounds):
            scores = {index: record.result for index, record in records.items()}
            tasks = tuple(swiss_round(spec.bots, openings, spec.seed, rounds, scores))
            known = {task.index: _check(task, stored, journal_path) for task in tasks}
            done = {index: record for index, record in known.items() if record is not None}
            records.update(done)
            if round_start is not None:
                round_start(tasks, done)

            def finish(record: GameRecord) -> None:
                records[record.index] = record
                if journal is not None:
                    journal.append(record.to_dict())
                if game_over is not None:
                    game_over(record)

            pending = [task for task in tasks if task.index not in done]
            play_tasks(spec, pending, concurrency, finish, bot_factory)
            rounds.append(tasks)
            if round_over is not None:
                scores = {task.index: records[task.index].result for task in tasks}
                round_over(round_result(spec.bots, tasks, scores))
    finally:
        if journal is not None:
            journal.close()
    ordered = tuple(records[task.index] for tasks in rounds for task in tasks)
    return SwissPlayed(spec, tuple(rounds), ordered)


def _stored(journal: Journal) -> dict[int, GameRecord]:
    records = {}
    for data in journal.finished:
        record = GameRecord.from_dict(data)
        records[record.index] = record
    return records


def _check(
    task: GameTask, stored: dict[int, GameRecord], journal: Path | str | None
) -> GameRecord | None:
    """Return the journal's record of `task`, if any, once it is the game the pairing says."""
    record = stored.get(task.index)
    if record is None:
        return None
    paired = (task.first, task.second, task.opening.name)
    if (record.first, record.second, record.opening) != paired:
        raise JournalError(
            f"journal {journal} has game {task.index} as {record.first} v {record.second} "
            f"({record.opening}), but the results before it pair {task.first} v {task.second} "
            f"({task.opening.name}): it was not written by this tournament; use a new journal"
        )
    return record


def swiss_json(played: SwissPlayed) -> dict[str, Any]:
    """Return the rounds (boards, points, bye) and the Swiss table as plain JSON values."""
    return {
        "rounds": played.spec.rounds,
        "bye_points": BYE_POINTS,
        "pairings": [result.to_dict() for result in played.round_results()],
        "table": [
            {
                "rank": row.rank,
                "bot": row.player,
                "score": row.score,
                "buchholz": row.buchholz,
                "sonneborn_berger": row.sonneborn_berger,
                "boards": row.boards,
                "byes": row.byes,
            }
            for row in played.table()
        ],
    }


def round_text(result: SwissRound, rounds: int) -> str:
    """Return a round's boards and bye on one line: `round 1/3 (opening): A 2-0 B; bye C`."""
    boards = ", ".join(
        f"{board.first} {board.first_points:g}-{board.second_points:g} {board.second}"
        for board in result.boards
    )
    bye = "" if result.bye is None else f"; bye {result.bye}"
    return f"round {result.number}/{rounds} ({result.opening}): {boards}{bye}"


def table_text(table: Sequence[SwissStanding]) -> str:
    """Return the Swiss table as plain text, first place first."""
    width = max(4, *(len(row.player) for row in table))
    lines = [
        f"Swiss table (score with byes, a bye {BYE_POINTS:g} points; ties broken by Buchholz, "
        "then Sonneborn-Berger):",
        f"{'#':>2} {'bot':<{width}} {'score':>6} {'Buchholz':>8} {'S-B':>6} {'boards':>6} "
        f"{'byes':>4}",
    ]
    for row in table:
        lines.append(
            f"{row.rank:>2} {row.player:<{width}} {row.score:>6g} {row.buchholz:>8g} "
            f"{row.sonneborn_berger:>6g} {row.boards:>6} {row.byes:>4}"
        )
    return "\n".join(lines)
