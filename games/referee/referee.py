"""The match referee: the rules of each event (start, moves, resign, draws, abort, decline,
adjudication, bot failures, the clock's tick), and restarts from the stored events."""

from __future__ import annotations

from collections.abc import Iterable

from games.base import IllegalMoveError, InvalidMoveError, Outcome
from games.match import (
    MAX_ADJUDICATION_REASON,
    DrawDeclined,
    DrawOffered,
    Effect,
    ErrorCode,
    Event,
    EventKind,
    MatchConfig,
    MatchStarted,
    MoveAccepted,
    Result,
    ResultCode,
    Status,
)
from games.referee.ledger import Ledger


class Referee(Ledger):
    """One match's referee: feed it events with their times, act on the effects it returns.

    Draw offers: a player may offer a draw whenever the match is active, on either side's turn.
    The offer stands until the opponent accepts or declines it, the opponent makes a move (which
    declines it), or the match ends; the offerer's own moves leave it standing. Offering while
    the opponent's offer stands accepts that offer; offering again while one's own offer stands
    changes nothing and returns no effect. Abort: either player, before the first move only
    (also before the start). A player is 0 or 1; anything else raises ValueError, as does a
    `now_ms` earlier than the previous event's.
    """

    # -- events ----------------------------------------------------------------------------------

    def start(self, now_ms: int) -> list[Effect]:
        """Start the match: the first player's clock starts running at `now_ms`.

        Raises ValueError if the match is not waiting (a caller's mistake, not a player's).
        """
        self._advance(now_ms)
        if self._status is not Status.WAITING:
            raise ValueError(f"cannot start a match that is {self._status.value}")
        self._status = Status.ACTIVE
        self._turn_started = now_ms
        effects: list[Effect] = [
            self._accept(EventKind.START, None, now_ms),
            MatchStarted(self._seq, self._state.to_move, self.clocks_at(now_ms)),
        ]
        outcome = self._state.outcome()
        if outcome is not None:  # a start position that is already over
            effects.append(self._finish(_rules_result(outcome), now_ms))
        elif self.config.max_plies == 0:  # a cap already reached (a tournament's long opening)
            effects.append(self._finish(Result(None, ResultCode.PLY_CAP, "ply cap"), now_ms))
        return effects

    def move(self, player: int, text: str, now_ms: int, *, counted: bool = True) -> list[Effect]:
        """Play `player`'s move written as `text`, arriving at `now_ms`.

        A refused move counts toward `max_illegal_moves` (the forfeit) unless `counted` is
        False: a person typing on a page, whose slips are not a program's bug or an attack.
        """
        effects = self._prepare(player, now_ms)
        refusal = self._refuse_unless_active(player, "move", text)
        if refusal is not None:
            return [*effects, refusal]
        state = self._state
        if player != state.to_move:
            # Counted like an illegal move: otherwise a client could send moves out of turn
            # forever, each costing a rejection (and its list of legal moves) for free.
            reason = f"it is {self._name(state.to_move)}'s turn, not {self._name(player)}'s"
            return [
                *effects,
                *self._reject_move(player, ErrorCode.NOT_YOUR_TURN, reason, text, now_ms, counted),
            ]
        try:
            move = self._legal_moves().get(text)
            if move is None:  # another spelling of a legal move, or a refusal to explain
                move = state.parse_move(text)
        except InvalidMoveError as error:
            return [
                *effects,
                *self._reject_move(
                    player, ErrorCode.INVALID_MOVE, str(error), text, now_ms, counted
                ),
            ]
        except IllegalMoveError as error:
            reason = f"illegal move {error.move}: {error.reason}"
            return [
                *effects,
                *self._reject_move(player, ErrorCode.ILLEGAL_MOVE, reason, text, now_ms, counted),
            ]
        elapsed = now_ms - self._turn_started
        if self._clocks is not None:
            assert self.config.time_control is not None
            self._clocks[player] += self.config.time_control.increment_ms - elapsed
        move_text = state.format_move(move)
        self._state = state.apply_unchecked(move)
        self._legal = None
        self._turn_started = now_ms
        if self._draw_offer == 1 - player:
            self._draw_offer = None
        event = self._accept(EventKind.MOVE, player, now_ms, move_text, elapsed)
        accepted = MoveAccepted(
            seq=self._seq,
            ply=len(self._log) + 1,
            player=player,
            move=move_text,
            elapsed_ms=elapsed,
            clocks_ms=self.clocks_at(now_ms),
            position=self.game.format_position(self._state),
        )
        self._log.append(accepted)
        effects += [event, accepted]
        outcome = self._state.outcome()
        cap = self.config.max_plies
        if outcome is not None:
            effects.append(self._finish(_rules_result(outcome), now_ms))
        elif cap is not None and len(self._log) >= cap:
            effects.append(self._finish(Result(None, ResultCode.PLY_CAP, "ply cap"), now_ms))
        return effects

    def resign(self, player: int, now_ms: int) -> list[Effect]:
        """Resign for `player`: the opponent wins."""
        effects = self._prepare(player, now_ms)
        refusal = self._refuse_unless_active(player, "resign")
        if refusal is not None:
            return [*effects, refusal]
        event = self._accept(EventKind.RESIGN, player, now_ms)
        reason = f"{self._name(player)} resigned"
        return [
            *effects,
            event,
            self._finish(Result(1 - player, ResultCode.RESIGN, reason), now_ms),
        ]

    def offer_draw(self, player: int, now_ms: int) -> list[Effect]:
        """Offer a draw for `player` (accepting the opponent's standing offer, if there is one)."""
        effects = self._prepare(player, now_ms)
        refusal = self._refuse_unless_active(player, "offer_draw")
        if refusal is not None:
            return [*effects, refusal]
        if self._draw_offer == player:
            return effects
        if self._draw_offer == 1 - player:
            return [*effects, *self._agree(player, EventKind.OFFER_DRAW, now_ms)]
        self._draw_offer = player
        event = self._accept(EventKind.OFFER_DRAW, player, now_ms)
        return [*effects, event, DrawOffered(self._seq, player)]

    def accept_draw(self, player: int, now_ms: int) -> list[Effect]:
        """Accept the opponent's standing draw offer for `player`: the match is drawn."""
        effects = self._prepare(player, now_ms)
        refusal = self._refuse_unless_active(player, "accept_draw") or self._refuse_no_offer(
            player, "accept_draw"
        )
        if refusal is not None:
            return [*effects, refusal]
        return [*effects, *self._agree(player, EventKind.ACCEPT_DRAW, now_ms)]

    def decline_draw(self, player: int, now_ms: int) -> list[Effect]:
        """Decline the opponent's standing draw offer for `player`."""
        effects = self._prepare(player, now_ms)
        refusal = self._refuse_unless_active(player, "decline_draw") or self._refuse_no_offer(
            player, "decline_draw"
        )
        if refusal is not None:
            return [*effects, refusal]
        self._draw_offer = None
        event = self._accept(EventKind.DECLINE_DRAW, player, now_ms)
        return [*effects, event, DrawDeclined(self._seq, player)]

    def abort(self, player: int, now_ms: int) -> list[Effect]:
        """Abort the match for `player`; allowed only before the first move. No one wins."""
        effects = self._prepare(player, now_ms)
        if self._status in (Status.FINISHED, Status.ABORTED):
            return [*effects, self._reject(player, "abort", ErrorCode.MATCH_OVER, self._over())]
        if self._log:
            reason = (
                f"the match can only be aborted before the first move ({len(self._log)} played)"
            )
            return [*effects, self._reject(player, "abort", ErrorCode.CANNOT_ABORT, reason)]
        event = self._accept(EventKind.ABORT, player, now_ms)
        reason = f"aborted by {self._name(player)} before the first move"
        return [*effects, event, self._finish(Result(None, ResultCode.ABORTED, reason), now_ms)]

    def decline(self, player: int, now_ms: int) -> list[Effect]:
        """Abort a match that has not started because `player` declined to play it.

        The host decides who may decline (the player a challenge invites to seat `player`);
        the referee only records it: allowed while the match is waiting, and no one wins.
        """
        self._advance(now_ms)
        if self._status in (Status.FINISHED, Status.ABORTED):
            return [self._reject(player, "decline", ErrorCode.MATCH_OVER, self._over())]
        if self._status is Status.ACTIVE:
            reason = "the match has started: it can no longer be declined"
            return [self._reject(player, "decline", ErrorCode.CANNOT_ABORT, reason)]
        event = self._accept(EventKind.DECLINE, player, now_ms)
        reason = f"{self._name(player)} declined the challenge"
        return [event, self._finish(Result(None, ResultCode.ABORTED, reason), now_ms)]

    def adjudicate(self, winner: int | None, reason: str, now_ms: int) -> list[Effect]:
        """End the active match by an arbiter's decision: `winner` wins (None: a draw).

        For the host, not a player: a tournament stopped while its games are played ends them
        this way (a ply cap is the match's own rule, `MatchConfig.max_plies`; a failed bot is
        `fail`). A fallen flag ends the match first; a match that is not active (waiting, or
        already over) is not adjudicated, and only the flag's effects, if any, are returned.
        Raises ValueError for a winner other than 0, 1 or None, or a reason that is empty or
        longer than MAX_ADJUDICATION_REASON.
        """
        if winner not in (0, 1, None):
            raise ValueError(f"winner must be 0, 1 or None, not {winner!r}")
        _check_reason(reason, "an adjudication")
        self._advance(now_ms)
        effects = self._flag(now_ms)
        if self._status is not Status.ACTIVE:
            return effects
        event = self._accept(EventKind.ADJUDICATE, winner, now_ms, reason)
        result = Result(winner, ResultCode.ADJUDICATION, reason)
        return [*effects, event, self._finish(result, now_ms)]

    def fail(self, player: int, reason: str, now_ms: int) -> list[Effect]:
        """End the active match because `player`'s program failed to move: `player` loses.

        For the host, not a player: a bot that crashed, returned no move, or was stopped while
        it searched. `reason` is the result's words, as the host gives them (name the player
        and what failed). A fallen flag ends the match first (a failure after the flag fell
        is a loss on time); a match that is not active is not failed, and only the flag's
        effects, if any, are returned. Raises ValueError for a player other than 0 or 1, or a
        reason that is empty or longer than MAX_ADJUDICATION_REASON.
        """
        if player not in (0, 1):
            raise ValueError(f"player must be 0 or 1, not {player!r}")
        _check_reason(reason, "a bot failure")
        self._advance(now_ms)
        effects = self._flag(now_ms)
        if self._status is not Status.ACTIVE:
            return effects
        event = self._accept(EventKind.FAIL, player, now_ms, reason)
        result = Result(1 - player, ResultCode.BOT_FAILURE, reason)
        return [*effects, event, self._finish(result, now_ms)]

    def tick(self, now_ms: int) -> list[Effect]:
        """Let the side to move lose on time if its flag has fallen by `now_ms`."""
        self._advance(now_ms)
        return self._flag(now_ms)

    # -- restarts --------------------------------------------------------------------------------

    @classmethod
    def restore(
        cls,
        config: MatchConfig,
        events: Iterable[Event],
        now_ms: int,
        *,
        illegal_counts: tuple[int, int] = (0, 0),
        downtime_ms: int = 0,
    ) -> Referee:
        """Return the referee of a match rebuilt from its stored events, resuming at `now_ms`.

        The events are replayed in order through the same code that accepted them, each at its
        `elapsed_ms` into its turn, so positions, clocks, offers and results come out exactly
        as they were; a gap, or an event that does not replay identically, raises ValueError.

        Time while the match was not running (the server's downtime) is charged by the caller's
        choice: the side to move's clock resumes at `now_ms` as it stood at the last stored
        event, minus `downtime_ms` (0: the downtime costs nobody anything; pass the wall-clock
        time since the last event to keep the clock running through a restart). Call `tick`
        afterwards, since charged downtime may make a flag fall. Rejected-move counts are not
        events; pass them as `illegal_counts` if they were kept.
        """
        if downtime_ms < 0:
            raise ValueError(f"downtime_ms must be 0 or more, not {downtime_ms}")
        referee = cls(config)
        t = 0
        for event in events:
            if event.seq != referee._seq + 1:
                raise ValueError(f"event seq {event.seq} does not follow seq {referee._seq}")
            if event.kind is not EventKind.START:
                t = referee._turn_started + event.elapsed_ms
            replayed = referee._replay(event, t)
            if replayed != event:
                raise ValueError(f"stored event {event} replays as {replayed}")
        for player, count in enumerate(illegal_counts):
            referee._illegal[player] = max(referee._illegal[player], count)
        # Move the time base to the caller's clock, keeping the time already used in this turn.
        into_turn = t - referee._turn_started
        referee._turn_started = now_ms - downtime_ms - into_turn
        referee._last_ms = now_ms - downtime_ms
        return referee

    def _replay(self, event: Event, t: int) -> Event | None:
        player = -1 if event.player is None else event.player
        handlers = {
            EventKind.START: lambda: self.start(t),
            EventKind.MOVE: lambda: self.move(player, event.move or "", t),
            EventKind.RESIGN: lambda: self.resign(player, t),
            EventKind.OFFER_DRAW: lambda: self.offer_draw(player, t),
            EventKind.ACCEPT_DRAW: lambda: self.accept_draw(player, t),
            EventKind.DECLINE_DRAW: lambda: self.decline_draw(player, t),
            EventKind.ABORT: lambda: self.abort(player, t),
            EventKind.TIMEOUT: lambda: self.tick(t),
            EventKind.FORFEIT: lambda: self._replay_forfeit(player, event.move or "", t),
            EventKind.ADJUDICATE: lambda: self.adjudicate(event.player, event.move or "", t),
            EventKind.DECLINE: lambda: self.decline(player, t),
            EventKind.FAIL: lambda: self.fail(player, event.move or "", t),
        }
        return next((e for e in handlers[event.kind]() if isinstance(e, Event)), None)

    def _replay_forfeit(self, player: int, text: str, t: int) -> list[Effect]:
        # The rejected moves before the last one are not events: count them as having happened.
        self._illegal[player] = max(self._illegal[player], self.config.max_illegal_moves - 1)
        return self.move(player, text, t)

    # -- internals -------------------------------------------------------------------------------

    def _prepare(self, player: int, now_ms: int) -> list[Effect]:
        """Check the arguments, then let a fallen flag end the match first."""
        if player not in (0, 1):
            raise ValueError(f"player must be 0 or 1, not {player!r}")
        self._advance(now_ms)
        return self._flag(now_ms)

    def _agree(self, player: int, kind: EventKind, now_ms: int) -> list[Effect]:
        event = self._accept(kind, player, now_ms)
        result = Result(None, ResultCode.AGREEMENT, "drawn by agreement")
        return [event, self._finish(result, now_ms)]


def _rules_result(outcome: Outcome) -> Result:
    """Return the result of a game its rules ended."""
    return Result(outcome.winner, ResultCode.of_ending(outcome.ending), outcome.reason)


def _check_reason(reason: str, what: str) -> None:
    if not reason or len(reason) > MAX_ADJUDICATION_REASON:
        raise ValueError(f"{what} needs a reason of 1 to {MAX_ADJUDICATION_REASON} characters")
