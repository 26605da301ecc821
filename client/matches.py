"""What a bot client knows of a match it sits in, kept up to date from the server's messages.

Pure: the client's views are rebuilt from `match_state`, moved on by `move_made`, and turned
into `match_ended` when REST reports a match over. Only `MatchView` reads the clock, to
subtract the time a move waited from the clock the server reported.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from bots.engine import timing
from games import Game, GameError, State
from protocol.messages import (
    Clocks,
    MatchEnded,
    MatchResult,
    MatchState,
    MoveMade,
    SearchInfo,
    TimeControl,
)

ACTIVE = "active"
OVER = ("finished", "aborted")
"""The statuses of a match that has ended."""


def time_budget(remaining_ms: int, time_control: TimeControl, *, margin_ms: int = 100) -> float:
    """Return the seconds to spend on a move with `remaining_ms` left (see bots.engine.timing)."""
    return timing.time_budget(
        remaining_ms, time_control.increment_ms, time_control.move_cap_ms, margin_ms=margin_ms
    )


def rebuild_state(game: Game, message: MatchState) -> State[Any]:
    """Return the current game state described by a `match_state` message.

    Replays `moves` from `start_position` (keeping the history that the game rules may use);
    when that fails or does not reach `position`, falls back to parsing `position` alone.
    """
    try:
        state = game.parse_position(message.start_position).play(*message.moves)
        if game.format_position(state) == message.position:
            return state
    except GameError:
        pass
    return game.parse_position(message.position)


def seat_to_move_is(seat: int | None, status: str, to_move: int | None) -> bool:
    """Return True when a match with `status` is active and `seat` (ours) is to move."""
    return seat is not None and status == ACTIVE and to_move == seat


@dataclass
class MatchView:
    """What the client knows of one match it sits in, kept up to date by server messages."""

    match_id: str
    game: Game
    seat: int | None
    state: State[Any]
    seq: int
    status: str
    to_move: int | None
    legal_moves: tuple[str, ...]
    time_control: TimeControl | None = None
    clocks: Clocks | None = None
    ply: int = 0
    received: float = field(default_factory=time.monotonic)
    sent_seq: int | None = None
    fallback_seq: int | None = None
    last_move: tuple[int, str, SearchInfo | None] | None = None
    """The last move sent and the seq it expects, to send again after RATE_LIMITED."""
    last_move_ply: int | None = None
    """The ply `last_move` was played at: it is sent again after STALE_SEQ while the match is
    still there (a draw offer or its answer moved the seq on, not a move)."""
    draw_offer: int | None = None
    """The seat whose draw offer stands, else None."""

    @property
    def our_turn(self) -> bool:
        """True when the match is active and our seat is to move."""
        return seat_to_move_is(self.seat, self.status, self.to_move)

    def remaining_ms(self, now: float) -> int | None:
        """Return our clock's time left at monotonic time `now`, or None in an untimed match."""
        if self.clocks is None or self.seat is None:
            return None
        remaining = self.clocks.remaining_ms[self.seat]
        if self.clocks.running == self.seat:
            remaining -= int((now - self.received) * 1000)
        return max(remaining, 0)

    def budget(self, now: float, margin_ms: int) -> float | None:
        """Return the time budget for our next move in seconds, or None in an untimed match."""
        remaining = self.remaining_ms(now)
        if remaining is None or self.time_control is None:
            return None
        return time_budget(remaining, self.time_control, margin_ms=margin_ms)


def view_from_state(message: MatchState, game: Game) -> MatchView:
    """Return the view of a match described by a `match_state` message."""
    return MatchView(
        match_id=message.match_id,
        game=game,
        seat=message.your_seat,
        state=rebuild_state(game, message),
        seq=message.seq,
        status=message.status,
        to_move=message.to_move,
        legal_moves=message.legal_moves,
        time_control=message.time_control,
        clocks=message.clocks,
        ply=len(message.moves),
        draw_offer=message.draw_offer,
    )


def apply_move_made(view: MatchView, message: MoveMade) -> None:
    """Update `view` with a `move_made`: the move played, the new seq, clocks and turn."""
    try:
        state = view.state.play(message.move)
        if view.game.format_position(state) != message.position:
            state = view.game.parse_position(message.position)
    except GameError:
        state = view.game.parse_position(message.position)
    view.state = state
    view.seq = message.seq
    view.ply = message.ply
    if view.draw_offer == 1 - message.seat:
        view.draw_offer = None  # a move answers the opponent's offer: declined
    view.to_move = message.to_move
    view.legal_moves = message.legal_moves
    view.clocks = message.clocks
    view.received = time.monotonic()
    if message.to_move is None:
        view.status = "finished"


def ended_from_state(state: MatchState) -> MatchEnded:
    """Return the `match_ended` equivalent of the `match_state` of a match that is over."""
    result = state.result
    if result is None:
        result = MatchResult(winner=None, reason="aborted", description=state.status)
    return MatchEnded(
        match_id=state.match_id,
        seq=state.seq,
        status="aborted" if state.status == "aborted" else "finished",
        result=result,
        clocks=state.clocks,
    )
