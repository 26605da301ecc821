"""What a match has come to and how it reads, and the bookkeeping every event does: accepting
it, rejecting a call, the clocks and their flags, finishing the match."""

from __future__ import annotations

from typing import Any

from games.base import State
from games.match import (
    Effect,
    ErrorCode,
    Event,
    EventKind,
    MatchConfig,
    MatchEnded,
    MatchView,
    MoveAccepted,
    Rejected,
    Result,
    ResultCode,
    Status,
)


class Ledger:
    """One match's facts: the position, the accepted events and moves, the clocks, the counts of
    rejected moves, the standing draw offer and the result; `Referee` adds the events' rules."""

    def __init__(self, config: MatchConfig) -> None:
        self.config = config
        self.game = config.game
        self._start = config.start_state()
        self._start_text = self.game.format_position(self._start)
        self._state = self._start
        self._legal: dict[str, Any] | None = None  # move text -> move in self._state (lazy)
        self._log: list[MoveAccepted] = []
        self._events: list[Event] = []
        self._status = Status.WAITING
        self._result: Result | None = None
        self._seq = 0
        self._illegal = [0, 0]
        self._draw_offer: int | None = None
        tc = config.time_control
        self._clocks: list[int] | None = None if tc is None else [tc.base_ms, tc.base_ms]
        self._turn_started = 0
        self._last_ms: int | None = None

    # -- read-only facts -------------------------------------------------------------------------

    @property
    def status(self) -> Status:
        """Where the match stands."""
        return self._status

    @property
    def seq(self) -> int:
        """The number of accepted events so far."""
        return self._seq

    @property
    def state(self) -> State[Any]:
        """The current game state."""
        return self._state

    @property
    def result(self) -> Result | None:
        """The result once the match is over, else None."""
        return self._result

    @property
    def draw_offer(self) -> int | None:
        """The player whose draw offer stands, else None."""
        return self._draw_offer

    @property
    def events(self) -> tuple[Event, ...]:
        """Every accepted event so far, in order (what `restore` replays)."""
        return tuple(self._events)

    @property
    def ply(self) -> int:
        """How many moves have been played."""
        return len(self._log)

    @property
    def move_log(self) -> tuple[MoveAccepted, ...]:
        """Every move played so far with its time and clocks, in order."""
        return tuple(self._log)

    def clocks_at(self, now_ms: int) -> tuple[int, int] | None:
        """Return both clocks in ms as of `now_ms` (None when untimed); never below 0."""
        if self._clocks is None:
            return None
        clocks = list(self._clocks)
        if self._status is Status.ACTIVE:
            mover = self._state.to_move
            clocks[mover] = max(0, clocks[mover] - max(0, now_ms - self._turn_started))
        return (clocks[0], clocks[1])

    def view(self, now_ms: int) -> MatchView:
        """Return the full state of the match as of `now_ms`."""
        over = self._status in (Status.FINISHED, Status.ABORTED)
        return MatchView(
            game=self.game.name,
            start_position=self._start_text,
            position=self.game.format_position(self._state),
            moves=tuple(m.move for m in self._log),
            to_move=None if over else self._state.to_move,
            clocks_ms=self.clocks_at(now_ms),
            legal_moves=() if over else self._legal_texts(),
            status=self._status,
            result=self._result,
            seq=self._seq,
            illegal_counts=(self._illegal[0], self._illegal[1]),
            draw_offer=self._draw_offer,
            time_control=self.config.time_control,
        )

    def deadline_ms(self) -> int | None:
        """Return when the side to move's flag falls (None: untimed or not active).

        A `tick` before this time changes nothing, so a clock keeper can skip the match.
        """
        tc = self.config.time_control
        if self._status is not Status.ACTIVE or tc is None or self._clocks is None:
            return None
        allowed = self._clocks[self._state.to_move]
        if tc.move_cap_ms is not None:
            allowed = min(allowed, tc.move_cap_ms)
        return self._turn_started + allowed + 1

    # -- bookkeeping ----------------------------------------------------------------------------

    def _name(self, player: int) -> str:
        name = self.game.player_names[player]
        return name[:1].upper() + name[1:]

    def legal_texts(self) -> tuple[str, ...]:
        """Return the legal moves of the current position as text (empty once it is over)."""
        if self._status in (Status.FINISHED, Status.ABORTED):
            return ()
        return self._legal_texts()

    def _legal_texts(self) -> tuple[str, ...]:
        return tuple(self._legal_moves())

    def _legal_moves(self) -> dict[str, Any]:
        """Return the legal moves of the current position by their text (computed once)."""
        if self._legal is None:
            state = self._state
            self._legal = {state.format_move(m): m for m in state.legal_moves()}
        return self._legal

    def _advance(self, now_ms: int) -> None:
        if self._last_ms is not None and now_ms < self._last_ms:
            raise ValueError(f"time went backwards: {now_ms} ms after an event at {self._last_ms}")
        self._last_ms = now_ms

    def _over(self) -> str:
        assert self._result is not None
        return f"the match is over: {self._result.reason}"

    def _refuse_unless_active(
        self, player: int, action: str, text: str | None = None
    ) -> Rejected | None:
        if self._status is Status.WAITING:
            reason = "the match has not started yet"
            return self._reject(player, action, ErrorCode.NOT_STARTED, reason, text)
        if self._status is not Status.ACTIVE:
            return self._reject(player, action, ErrorCode.MATCH_OVER, self._over(), text)
        return None

    def _refuse_no_offer(self, player: int, action: str) -> Rejected | None:
        if self._draw_offer == 1 - player:
            return None
        reason = (
            "your own draw offer is pending; your opponent must answer it"
            if self._draw_offer == player
            else "your opponent has not offered a draw"
        )
        return self._reject(player, action, ErrorCode.NO_DRAW_OFFER, reason)

    def _reject(
        self, player: int, action: str, code: ErrorCode, reason: str, text: str | None = None
    ) -> Rejected:
        legal = self._legal_texts() if self._status is Status.ACTIVE else ()
        return Rejected(player, action, code, reason, legal, text, self._illegal[player])

    def _reject_move(
        self, player: int, code: ErrorCode, reason: str, text: str, now_ms: int, counted: bool
    ) -> list[Effect]:
        limit = self.config.max_illegal_moves
        if counted:
            self._illegal[player] += 1
            # Said in the message too, not only in the details: a client that shows a person
            # only the message warns them before the forfeit.
            count = self._illegal[player]
            left = limit - count
            warning = (
                f"{left} more and you forfeit the match" if left > 0 else "you forfeit the match"
            )
            reason = f"{reason} (rejected move {count} of {limit}: {warning})"
        rejected = self._reject(player, "move", code, reason, text)
        if not counted or self._illegal[player] < limit:
            return [rejected]
        event = self._accept(EventKind.FORFEIT, player, now_ms, text)
        why = f"{self._name(player)} forfeits after {limit} rejected moves (the limit is {limit})"
        return [event, rejected, self._finish(Result(1 - player, ResultCode.FORFEIT, why), now_ms)]

    def _accept(
        self,
        kind: EventKind,
        player: int | None,
        now_ms: int,
        move: str | None = None,
        elapsed_ms: int | None = None,
    ) -> Event:
        self._seq += 1
        if elapsed_ms is None:
            elapsed_ms = now_ms - self._turn_started if self._status is Status.ACTIVE else 0
        event = Event(self._seq, kind, player, move, elapsed_ms)
        self._events.append(event)
        return event

    def _flag(self, now_ms: int) -> list[Effect]:
        tc = self.config.time_control
        if self._status is not Status.ACTIVE or tc is None or self._clocks is None:
            return []
        mover = self._state.to_move
        used = now_ms - self._turn_started
        if used > self._clocks[mover]:
            reason = f"{self._name(mover)} ran out of time"
        elif tc.move_cap_ms is not None and used > tc.move_cap_ms:
            reason = (
                f"{self._name(mover)} took {used} ms for one move; "
                f"the limit is {tc.move_cap_ms} ms per move"
            )
        else:
            return []
        event = self._accept(EventKind.TIMEOUT, mover, now_ms)
        return [event, self._finish(Result(1 - mover, ResultCode.TIMEOUT, reason), now_ms)]

    def _finish(self, result: Result, now_ms: int) -> MatchEnded:
        """End the match, stopping the side to move's clock at `now_ms`."""
        if self._clocks is not None and self._status is Status.ACTIVE:
            mover = self._state.to_move
            used = max(0, now_ms - self._turn_started)
            self._clocks[mover] = max(0, self._clocks[mover] - used)
        self._status = Status.ABORTED if result.code is ResultCode.ABORTED else Status.FINISHED
        self._result = result
        self._draw_offer = None
        clocks = None if self._clocks is None else (self._clocks[0], self._clocks[1])
        return MatchEnded(self._seq, self._status, result, clocks)
