"""Tournaments played in-process: the schedule, one game under the referee, a resumable run.

`schedule` turns a `TournamentSpec` and a list of openings into numbered `GameTask`s; every
pairing plays each of its openings twice, the bots swapping colours. `play_game` plays one task
with the pure match referee of games.referee, so a tournament game is judged exactly as a game
on the server. `run_tournament` plays the tasks in worker processes and writes each finished
game to a journal (tournament.journal) at once, so a killed run resumes without replaying them.

Players are the game's player 0 (`first`, who moves first from the standard start: Black in
checkers) and player 1 (`second`). A game's `result` is player 0's score: 1, 0.5 or 0.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from bots.result import Clock
from bots.spec import Bot, BotSpecError, create_bot, parse_bot_spec
from games import Game, GameError, get_game
from games.match import (
    MAX_ADJUDICATION_REASON,
    ErrorCode,
    MatchConfig,
    MatchEnded,
    Rejected,
    ResultCode,
    TimeControl,
)
from games.referee import Referee
from tournament.journal import Journal
from tournament.openings import Opening, select_openings

__all__ = [
    "FORMATS",
    "MOVE_TIME_SLACK",
    "BotFactory",
    "BotTotals",
    "GameRecord",
    "GameTask",
    "Progress",
    "TournamentError",
    "TournamentSpec",
    "pairings",
    "play_game",
    "run_tournament",
    "schedule",
    "tournament_identity",
]

Format = Literal["round-robin", "gauntlet"]
FORMATS: tuple[Format, ...] = ("round-robin", "gauntlet")

MOVE_TIME_SLACK = 0.25
"""Seconds a move may exceed the per-move limit before it loses on time (process jitter)."""

_UNTIMED_BASE_MS = 2**40
"""The clock given with a per-move cap only: long enough never to run out."""

BotFactory = Callable[[str, Game], Bot]
"""Builds a fresh bot from its spec text for a game (create_bot by default); must pickle."""


PLAYER_PREFIX = "player:"
"""A participant written `player:NAME` is a registered player who plays over the network
(a bot connected to the server with `arena bot`, say): only tournaments on a server have them."""


def player_name(participant: str) -> str | None:
    """Return NAME for a `player:NAME` participant, None for a bot spec."""
    if participant.startswith(PLAYER_PREFIX):
        return participant[len(PLAYER_PREFIX) :]
    return None


class TournamentError(ValueError):
    """A tournament that cannot be played as specified: bad bots, format or game count."""


@dataclass(frozen=True, slots=True)
class TournamentSpec:
    """What a tournament plays.

    `options` are the game's options as sorted (key, text) pairs. `format` is "round-robin"
    (every bot against every other) or "gauntlet" (the first bot against each of the others).
    `games_per_pairing` is even: each opening is played twice, colours swapped. `ply_cap` counts
    every ply including the opening's; reaching it draws the game. `move_time` is seconds per
    move (passed to the bots as their time budget; exceeding it by MOVE_TIME_SLACK loses on
    time), or None: bots run with their spec's own limits, e.g. alphabeta:depth=3.
    """

    game: str
    bots: tuple[str, ...]
    options: tuple[tuple[str, str], ...] = ()
    format: Format = "round-robin"
    games_per_pairing: int = 2
    seed: int = 0
    ply_cap: int = 200
    move_time: float | None = None

    def validate(self, *, players: bool = False) -> None:
        """Raise TournamentError naming what is wrong (bots are parsed, the game is built).

        `players`: `player:NAME` participants are allowed (a tournament on a server).
        """
        if self.format not in FORMATS:
            raise TournamentError(f"unknown format {self.format!r} (formats: {', '.join(FORMATS)})")
        if len(self.bots) < 2:
            raise TournamentError(f"a tournament needs at least 2 bots, got {len(self.bots)}")
        twice = next((bot for index, bot in enumerate(self.bots) if bot in self.bots[:index]), None)
        if twice is not None:
            raise TournamentError(
                f"{twice!r} is named twice: name each bot once (a bot is named by its spec)"
            )
        if self.games_per_pairing < 2 or self.games_per_pairing % 2:
            raise TournamentError(
                f"games per pairing must be even and at least 2 (colour-swapped pairs), "
                f"not {self.games_per_pairing}"
            )
        if self.ply_cap < 1:
            raise TournamentError(f"the ply cap must be at least 1, not {self.ply_cap}")
        if self.move_time is not None and not (
            math.isfinite(self.move_time) and self.move_time > 0
        ):
            raise TournamentError(f"the move time must be positive, not {self.move_time}")
        try:
            game = get_game(self.game, dict(self.options))
        except GameError as exc:
            raise TournamentError(str(exc)) from None
        for spec in self.bots:
            name = player_name(spec)
            if name is not None:
                if not players:
                    raise TournamentError(
                        f"{spec!r} is a registered player: players take part only in "
                        "tournaments on a server (POST /tournaments); here give bot specs"
                    )
                if not name:
                    raise TournamentError(f"{spec!r}: the player's name is missing")
                continue
            try:
                create_bot(parse_bot_spec(spec), game)
            except BotSpecError as exc:
                raise TournamentError(f"bot {spec!r}: {exc}") from None

    def build_game(self) -> Game:
        """Return the game with its options."""
        return get_game(self.game, dict(self.options))

    def to_dict(self) -> dict[str, Any]:
        """Return the spec as plain JSON values (`from_dict` reads it back)."""
        data = asdict(self)
        data["bots"] = list(self.bots)
        data["options"] = dict(self.options)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TournamentSpec:
        """Return the spec `to_dict` wrote."""
        return cls(
            game=data["game"],
            bots=tuple(data["bots"]),
            options=tuple(sorted(data.get("options", {}).items())),
            format=data["format"],
            games_per_pairing=data["games_per_pairing"],
            seed=data["seed"],
            ply_cap=data["ply_cap"],
            move_time=data.get("move_time"),
        )


@dataclass(frozen=True, slots=True)
class GameTask:
    """One scheduled game: `index` is its stable id, `pairing` its pairing's number, `pair` the
    number of its colour-swapped pair (the two games of one opening, the independent unit of
    the rating errors).

    `first` plays player 0 and `second` player 1, from `opening`.
    """

    index: int
    pair: int
    first: str
    second: str
    opening: Opening
    pairing: int = 0


@dataclass(slots=True)
class BotTotals:
    """One bot's search statistics summed over its moves in a game (seconds by the runner)."""

    moves: int = 0
    nodes: int = 0
    seconds: float = 0.0
    depth_sum: int = 0

    def add(self, other: BotTotals) -> None:
        """Add `other`'s sums to these."""
        self.moves += other.moves
        self.nodes += other.nodes
        self.seconds += other.seconds
        self.depth_sum += other.depth_sum

    @property
    def mean_depth(self) -> float:
        """Mean search depth per move (0 without moves)."""
        return self.depth_sum / self.moves if self.moves else 0.0

    @property
    def mean_nodes(self) -> float:
        """Mean nodes per move (0 without moves)."""
        return self.nodes / self.moves if self.moves else 0.0


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A finished game: who played, from which opening, the moves, the result and why.

    `moves` are every move's standard text from the opening's start position, the opening's
    own moves first. `result` is the score of `first` (player 0): 1, 0.5 or 0. `reason` says
    how it ended in words, `code` as the referee's result code (reports count by it). `stats`
    holds the summed statistics of `first` and `second`, in that order; `engines` what the
    programs behind them reported of themselves (name and version; None for Arena's own bots).
    """

    index: int
    pair: int
    first: str
    second: str
    opening: str
    moves: tuple[str, ...]
    result: float
    reason: str
    code: ResultCode
    stats: tuple[BotTotals, BotTotals] = field(default_factory=lambda: (BotTotals(), BotTotals()))
    engines: tuple[str | None, str | None] = (None, None)

    def score_of(self, spec: str) -> float:
        """Return the score of the bot `spec` in this game (ValueError if it did not play)."""
        if spec == self.first:
            return self.result
        if spec == self.second:
            return 1.0 - self.result
        raise ValueError(f"{spec!r} did not play game {self.index}")

    def to_dict(self) -> dict[str, Any]:
        """Return the record as plain JSON values (`from_dict` reads it back)."""
        data = asdict(self)
        data["moves"] = list(self.moves)
        data["code"] = self.code.value
        data["stats"] = {"first": asdict(self.stats[0]), "second": asdict(self.stats[1])}
        data["engines"] = {"first": self.engines[0], "second": self.engines[1]}
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameRecord:
        """Return the record `to_dict` wrote (a journal from before `engines` reads as None)."""
        stats = data["stats"]
        engines = data.get("engines") or {}
        return cls(
            index=data["index"],
            pair=data["pair"],
            first=data["first"],
            second=data["second"],
            opening=data["opening"],
            moves=tuple(data["moves"]),
            result=float(data["result"]),
            reason=data["reason"],
            code=ResultCode(data["code"]),
            stats=(BotTotals(**stats["first"]), BotTotals(**stats["second"])),
            engines=(engines.get("first"), engines.get("second")),
        )


# -- scheduling ----------------------------------------------------------------------------------


def pairings(spec: TournamentSpec) -> list[tuple[str, str]]:
    """Return the pairings in order: all pairs for round-robin, (bots[0], other) for gauntlet."""
    if spec.format == "gauntlet":
        return [(spec.bots[0], other) for other in spec.bots[1:]]
    return list(itertools.combinations(spec.bots, 2))


def schedule(spec: TournamentSpec, openings: Sequence[Opening]) -> list[GameTask]:
    """Return every game of the tournament in a fixed order, numbered from 0.

    Each pairing plays the same games_per_pairing / 2 openings (select_openings with the spec's
    seed, so every pairing meets the same starts), each twice: first the pairing's first bot as
    player 0, then colours swapped. Deterministic for a given spec and openings list.
    """
    spec.validate(players=True)
    chosen = select_openings(openings, spec.games_per_pairing // 2, spec.seed)
    tasks: list[GameTask] = []
    for pairing, (a, b) in enumerate(pairings(spec)):
        for opening in chosen:
            pair = len(tasks) // 2
            for first, second in ((a, b), (b, a)):
                tasks.append(GameTask(len(tasks), pair, first, second, opening, pairing))
    return tasks


def tournament_identity(spec: TournamentSpec, tasks: Sequence[GameTask]) -> dict[str, Any]:
    """Return what a journal must match to be resumed: the spec and a digest of the schedule."""
    text = json.dumps(
        [[t.index, t.pair, t.first, t.second, t.opening.name, t.opening.position] for t in tasks]
    )
    return {
        "spec": spec.to_dict(),
        "schedule": hashlib.sha256(text.encode()).hexdigest(),
        "games": len(tasks),
    }


# -- one game ------------------------------------------------------------------------------------


def _make_bot(spec: str, game: Game) -> Bot:
    return create_bot(spec, game)


def play_game(
    task: GameTask,
    ply_cap: int,
    move_time: float | None = None,
    bot_factory: BotFactory = _make_bot,
    clock: Clock = time.perf_counter,
) -> GameRecord:
    """Play `task` to the end with fresh bots under the match referee and return its record.

    The referee decides every ending, each with its result code: the rules'; a draw
    (`ply_cap`) when `ply_cap` plies are played, the opening's included (an opening longer than
    the cap is played in full); a loss for a bot that raises ("crash: Type: message") or
    returns no move (`bot_failure`), one that plays an illegal move (`forfeit`: the limit of
    rejected moves is 1), or (with `move_time`, seconds) one that takes over move_time +
    MOVE_TIME_SLACK seconds for a move (`timeout`). `clock` (seconds) times the moves.
    """
    game = task.opening.build_game()
    tc = (
        None
        if move_time is None
        else TimeControl(_UNTIMED_BASE_MS, 0, math.ceil((move_time + MOVE_TIME_SLACK) * 1000))
    )
    cap = max(ply_cap, len(task.opening.moves))
    config = MatchConfig(game, task.opening.position, tc, max_illegal_moves=1, max_plies=cap)
    referee = Referee(config)
    referee.start(0)
    now_ms = 0
    for opening_move in task.opening.moves:
        effects = referee.move(referee.state.to_move, opening_move, now_ms)
        _expect_accepted(effects, task, opening_move)
    bots = (bot_factory(task.first, game), bot_factory(task.second, game))
    totals = (BotTotals(), BotTotals())
    reason: str | None = None
    while referee.result is None:
        state = referee.state
        player = state.to_move
        started = clock()
        try:
            found = bots[player].choose(state, time_budget=move_time)
            elapsed = clock() - started
            text = None if found.move is None else state.format_move(found.move)
        except Exception as exc:  # noqa: BLE001 - any failure of a bot loses its game
            why = f"crash: {type(exc).__name__}: {exc}"
            referee.fail(player, why[:MAX_ADJUDICATION_REASON], now_ms)
            break
        now_ms += max(0, round(elapsed * 1000))
        stats = totals[player]
        stats.moves += 1
        stats.nodes += found.stats.nodes
        stats.seconds += elapsed
        stats.depth_sum += found.stats.depth
        if text is None:
            referee.fail(player, f"{_role(player)} returned no move", now_ms)
            break
        effects = referee.move(player, text, now_ms)
        rejected = next((e for e in effects if isinstance(e, Rejected)), None)
        # A flag that fell ends the match before the move is looked at: the referee's words.
        if rejected is not None and rejected.code is not ErrorCode.MATCH_OVER:
            reason = f"{_role(player)} played {text!r}: {rejected.reason}"
    final = referee.result
    assert final is not None
    return GameRecord(
        index=task.index,
        pair=task.pair,
        first=task.first,
        second=task.second,
        opening=task.opening.name,
        moves=tuple(m.move for m in referee.move_log),
        result=0.5 if final.winner is None else 1.0 - final.winner,
        reason=final.reason if reason is None else reason,
        code=final.code,
        stats=totals,
        engines=(bots[0].engine_name, bots[1].engine_name),
    )


def _role(player: int) -> str:
    return "first" if player == 0 else "second"


def _expect_accepted(effects: Iterable[object], task: GameTask, text: str) -> None:
    for effect in effects:
        ended = isinstance(effect, MatchEnded) and effect.result.code is not ResultCode.PLY_CAP
        if isinstance(effect, Rejected) or ended:
            raise TournamentError(
                f"opening {task.opening.name!r} cannot be played: move {text!r} "
                f"{'is rejected' if isinstance(effect, Rejected) else 'ends the game'}"
            )


# -- a whole tournament --------------------------------------------------------------------------

Progress = Callable[[GameRecord, int, int], None]
"""Called after each newly finished game with (record, games done, games in all)."""


def run_tournament(
    spec: TournamentSpec,
    openings: Sequence[Opening],
    concurrency: int = 1,
    journal_path: Path | str | None = None,
    progress: Progress | None = None,
    bot_factory: BotFactory = _make_bot,
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

        if concurrency == 1:
            for task in pending:
                finish(play_game(task, spec.ply_cap, spec.move_time, bot_factory))
        else:
            _run_in_pool(spec, pending, concurrency, bot_factory, finish)
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
