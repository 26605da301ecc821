"""Tournaments played in-process: the whole run, resumable from its journal.

`run_tournament` plays a tournament's tasks (competition.schedule) one by one
(competition.game's `play_game`) in worker processes and writes each finished game to a journal
(competition.journal) at once, so a killed run resumes without replaying them. The names of the
spec, the schedule and one game are exported here too: this is the local runner's interface.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path

from competition.game import (
    MOVE_TIME_SLACK,
    BotFactory,
    BotTotals,
    GameRecord,
    make_bot,
    play_game,
)
from competition.journal import Journal
from competition.openings import Opening
from competition.schedule import (
    FORMATS,
    PLAYER_PREFIX,
    GameTask,
    TournamentError,
    TournamentSpec,
    pairings,
    player_name,
    schedule,
    tournament_identity,
)

__all__ = [
    "FORMATS",
    "MOVE_TIME_SLACK",
    "PLAYER_PREFIX",
    "BotFactory",
    "BotTotals",
    "GameRecord",
    "GameTask",
    "Progress",
    "TournamentError",
    "TournamentSpec",
    "pairings",
    "play_game",
    "play_tasks",
    "player_name",
    "run_tournament",
    "schedule",
    "tournament_identity",
]

Progress = Callable[[GameRecord, int, int], None]
"""Called after each newly finished game with (record, games done, games in all)."""


def run_tournament(
    spec: TournamentSpec,
    openings: Sequence[Opening],
    concurrency: int = 1,
    journal_path: Path | str | None = None,
    progress: Progress | None = None,
    bot_factory: BotFactory = make_bot,
) -> list[GameRecord]:
    """Play the tournament and return every game's record, in schedule order.

    With `journal_path`, games already in the journal are not played again, and each newly
    finished game is appended (fsynced) as it ends; a journal of another tournament raises
    JournalError. `concurrency` worker processes play games (1: in this process). If
    `progress` raises, the run stops (pending games are cancelled) and the exception
    propagates; finished games stay in the journal.
    """
    if concurrency < 1:
        raise TournamentError(f"concurrency must be at least 1, not {concurrency}")
    spec.validate()  # bots only: players cannot be played here
    tasks = schedule(spec, openings)
    journal = (
        None if journal_path is None else Journal(journal_path, tournament_identity(spec, tasks))
    )
    try:
        done = {} if journal is None else _journal_records(journal, len(tasks))
        pending = [task for task in tasks if task.index not in done]

        def finish(record: GameRecord) -> None:
            done[record.index] = record
            if journal is not None:
                journal.append(record.to_dict())
            if progress is not None:
                progress(record, len(done), len(tasks))

        play_tasks(spec, pending, concurrency, finish, bot_factory)
    finally:
        if journal is not None:
            journal.close()
    return [done[task.index] for task in tasks]


def _journal_records(journal: Journal, count: int) -> dict[int, GameRecord]:
    records = {}
    for data in journal.finished:
        record = GameRecord.from_dict(data)
        if 0 <= record.index < count:
            records[record.index] = record
    return records


def play_tasks(
    spec: TournamentSpec,
    tasks: Sequence[GameTask],
    concurrency: int,
    finish: Callable[[GameRecord], None],
    bot_factory: BotFactory = make_bot,
) -> None:
    """Play `tasks` under `spec`'s ply cap and move time, calling `finish` with each record.

    `concurrency` worker processes play them (1: in this process, in order); records finished
    together are passed on in index order. If `finish` raises, pending games are cancelled and
    the exception propagates.
    """
    if concurrency == 1:
        for task in tasks:
            finish(play_game(task, spec.ply_cap, spec.move_time, bot_factory))
    else:
        _run_in_pool(spec, tasks, concurrency, bot_factory, finish)


def _run_in_pool(
    spec: TournamentSpec,
    pending: Sequence[GameTask],
    concurrency: int,
    bot_factory: BotFactory,
    finish: Callable[[GameRecord], None],
) -> None:
    with ProcessPoolExecutor(max_workers=concurrency) as pool:
        running: set[Future[GameRecord]] = {
            pool.submit(play_game, task, spec.ply_cap, spec.move_time, bot_factory)
            for task in pending
        }
        try:
            while running:
                finished, running = wait(running, return_when=FIRST_COMPLETED)
                for future in sorted(finished, key=lambda f: f.result().index):
                    finish(future.result())
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            raise
