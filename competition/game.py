"""One tournament game played in-process under the match referee, and its record.

`play_game` plays one `GameTask` with the pure match referee of games.referee, so a tournament
game is judged exactly as a game on the server. A game's `result` is player 0's score: 1, 0.5
or 0.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from bots.result import Clock
from bots.spec import Bot, create_bot
from bots.turns import NO_MOVE, describe
from competition.schedule import GameTask, TournamentError
from games import Game
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

MOVE_TIME_SLACK = 0.25
"""Seconds a move may exceed the per-move limit before it loses on time (process jitter)."""

_UNTIMED_BASE_MS = 2**40
"""The clock given with a per-move cap only: long enough never to run out."""

BotFactory = Callable[[str, Game], Bot]
"""Builds a fresh bot from its spec text for a game (create_bot by default); must pickle."""


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


def make_bot(spec: str, game: Game) -> Bot:
    """Return a fresh bot of `spec` for `game` (the default `BotFactory`)."""
    return create_bot(spec, game)


def play_game(
    task: GameTask,
    ply_cap: int,
    move_time: float | None = None,
    bot_factory: BotFactory = make_bot,
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
            why = f"crash: {describe(exc)}"
            referee.fail(player, why[:MAX_ADJUDICATION_REASON], now_ms)
            break
        now_ms += max(0, round(elapsed * 1000))
        stats = totals[player]
        stats.moves += 1
        stats.nodes += found.stats.nodes
        stats.seconds += elapsed
        stats.depth_sum += found.stats.depth
        if text is None:
            referee.fail(player, f"{_role(player)} {NO_MOVE}", now_ms)
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
