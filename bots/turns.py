"""A bot's turn in a refereed match: how long it may think, and the words of its failure.

A bot that fails its turn loses its match: the referee's bot failure (`Referee.fail`, result
code `bot_failure`), with why in words. It fails when its search raises, returns no move,
plays a move the referee refuses, or is stopped at a limit of seconds before it has a move.
The server's house bots (server.matches.housebots, and a tournament game played on a worker,
server.tournaments.played) and the local tournament runner (competition.runner) word each
failure here, so a game lost on a worker reads as one lost in a live match.
"""

from __future__ import annotations

from bots.engine.timing import time_budget
from games.base import Game
from games.match import MAX_ADJUDICATION_REASON
from games.referee import Referee

NO_MOVE = "returned no move"
"""Why a bot whose search gave no move loses."""


def describe(error: BaseException) -> str:
    """Return an exception in words: its type's name and its message."""
    return f"{type(error).__name__}: {error}"


def crashed(what: object) -> str:
    """Return why a house bot whose search raised (`what`: the error in words) loses."""
    return f"crashed: {what}"


def played_illegal(message: str) -> str:
    """Return why a house bot whose move the referee refused (`message`: why) loses."""
    return f"played an illegal move: {message}"


def stopped_at_limit(max_seconds: float) -> str:
    """Return why a house bot stopped at the server's limit of seconds per search loses."""
    return f"was stopped at the server's limit of {max_seconds:g} s per move, before it had a move"


def house_bot_loses(game: Game, seat: int, spec: str, why: str) -> str:
    """Return the reason of the loss of the house bot `spec` in `seat` that failed (`why`),
    as the referee's bot failure takes it: the side and the bot first, cut to its length."""
    side = game.player_names[seat].capitalize()
    return f"{side} (house bot {spec}) {why}"[:MAX_ADJUDICATION_REASON]


def seat_budget(referee: Referee, seat: int, now_ms: int) -> float | None:
    """Return the seconds the bot in `seat` may think at `now_ms` (the referee's clock): the
    clients' policy (bots.engine.timing) without latency; None in an untimed match."""
    tc = referee.config.time_control
    clocks = referee.clocks_at(now_ms)
    if tc is None or clocks is None:
        return None
    return time_budget(clocks[seat], tc.increment_ms, tc.move_cap_ms, margin_ms=0)
