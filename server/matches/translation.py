"""The translation between the referee (games.match, games.referee) and the wire (protocol).

The one server module that reads the referee's effects and views and writes protocol messages:
the messages announcing accepted events, a match's state, summary, record and PDN, and the
protocol error of a refused call. Pure functions of a `LiveMatch` (read under its lock) and the
times they are given: `now_ms`, the referee's monotonic milliseconds; `wall_ms`, milliseconds
since the epoch, for the `server_time_ms` of clocks.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from games import match
from games.records import match_record, to_pdn
from games.registry import get_game
from protocol import messages as wire
from protocol.errors import ErrorCode, ScalarValue
from server.db.models import Match, epoch_ms
from server.errors import MatchError
from server.matches.live import LiveMatch

MOVE_ERRORS = (
    match.ErrorCode.ILLEGAL_MOVE,
    match.ErrorCode.INVALID_MOVE,
    match.ErrorCode.NOT_YOUR_TURN,
)
"""The referee's refusals of a move: their protocol errors carry the legal moves."""


def messages(
    live: LiveMatch, effects: list[match.Effect], now_ms: int, wall_ms: int
) -> list[wire.ServerMessage]:
    """Return the protocol messages announcing the accepted events among `effects`.

    A `match_started` is followed by the match's `match_state` (with `your_seat` None).
    """
    announced: list[wire.ServerMessage] = []
    for effect in effects:
        if isinstance(effect, match.MatchStarted):
            shown = match_state(live, None, now_ms, wall_ms)
            announced.append(
                wire.MatchStarted(
                    match_id=live.id,
                    game=shown.game,
                    options=shown.options,
                    seats=shown.seats,
                    time_control=shown.time_control,
                    seq=effect.seq,
                )
            )
            announced.append(shown)
        elif isinstance(effect, match.MoveAccepted):
            announced.append(move_made(live, effect, wall_ms))
        elif isinstance(effect, match.DrawOffered):
            announced.append(wire.DrawOffered(match_id=live.id, seq=effect.seq, seat=effect.player))
        elif isinstance(effect, match.DrawDeclined):
            announced.append(
                wire.DrawDeclined(match_id=live.id, seq=effect.seq, seat=effect.player)
            )
        elif isinstance(effect, match.MatchEnded):
            announced.append(_match_ended(live, effect, wall_ms))
    return announced


def _match_ended(live: LiveMatch, ended: match.MatchEnded, wall_ms: int) -> wire.MatchEnded:
    clocks = None
    if ended.clocks_ms is not None:
        clocks = wire.Clocks(remaining_ms=ended.clocks_ms, running=None, server_time_ms=wall_ms)
    return wire.MatchEnded(
        match_id=live.id,
        seq=ended.seq,
        status="aborted" if ended.status is match.Status.ABORTED else "finished",
        result=result(ended.result),
        clocks=clocks,
    )


def result(ended: match.Result) -> wire.MatchResult:
    """Return the wire result of the referee's: its code, the code's broad reason, its words."""
    return wire.MatchResult.of_code(ended.winner, ended.code.value, ended.reason)


def stored_result(winner: int | None, stored: str, detail: str | None) -> wire.MatchResult:
    """Return the wire result of a `Match` row: `stored` is its result code or, for a match
    finished before migration 0006, its broad reason (`rules`), shown as it is with no code."""
    if stored in wire.RESULT_REASONS:
        return wire.MatchResult.of_code(winner, stored, detail or "")
    return wire.MatchResult.model_validate(
        {"winner": winner, "reason": stored, "description": detail or ""}
    )


def move_made(live: LiveMatch, accepted: match.MoveAccepted, wall_ms: int) -> wire.MoveMade:
    """Return the `move_made` of `accepted`, described after the move (the match as now)."""
    referee = live.referee
    active = referee.status is match.Status.ACTIVE
    # Built from the referee's own values on every move: not validated again (the tests
    # check these messages against the schema).
    clocks = None
    if accepted.clocks_ms is not None:
        clocks = wire.Clocks.model_construct(
            remaining_ms=accepted.clocks_ms,
            running=referee.state.to_move if active else None,
            server_time_ms=wall_ms,
        )
    return wire.MoveMade.model_construct(
        type="move_made",
        match_id=live.id,
        seq=accepted.seq,
        ply=accepted.ply,
        seat=accepted.player,
        move=accepted.move,
        position=accepted.position,
        to_move=referee.state.to_move if active else None,
        legal_moves=referee.legal_texts(),
        clocks=clocks,
        elapsed_ms=accepted.elapsed_ms,
        search=search_of(live, accepted.seq),
    )


def search_record(search: wire.SearchInfo | None) -> dict[str, Any] | None:
    """Return the JSON a live match keeps (and the store stores) of a move's search
    statistics: only the fields given."""
    return None if search is None else search.model_dump(mode="json", exclude_defaults=True)


def search_of(live: LiveMatch, seq: int) -> wire.SearchInfo | None:
    """Return the search statistics kept with the move of event `seq`, or None.

    Statistics stored by an older server that no longer validate are not shown.
    """
    kept = live.searches.get(seq)
    if kept is None:
        return None
    try:
        return wire.SearchInfo.model_validate(kept)
    except ValidationError:
        return None


def match_state(
    live: LiveMatch, your_seat: int | None, now_ms: int, wall_ms: int
) -> wire.MatchState:
    """Return the full state of `live` as `your_seat`'s player sees it (None: a spectator)."""
    view = live.referee.view(now_ms)
    active = view.status is match.Status.ACTIVE
    return wire.MatchState(
        match_id=live.id,
        game=view.game,
        options=live.options,
        start_position=view.start_position,
        position=view.position,
        moves=view.moves,
        to_move=view.to_move if active else None,
        seats=seats(live),
        your_seat=your_seat,
        time_control=time_control(view.time_control),
        max_plies=live.referee.config.max_plies,
        clocks=_clocks(view, wall_ms),
        legal_moves=view.legal_moves if active else (),
        status=view.status.value,
        result=None if view.result is None else result(view.result),
        draw_offer=view.draw_offer,
        seq=view.seq,
    )


def challenge(live: LiveMatch, seat: int, now_ms: int) -> wire.Challenge:
    """Return the `challenge` inviting the player challenged to `seat` of `live`."""
    view = live.referee.view(now_ms)
    return wire.Challenge(
        match_id=live.id,
        game=view.game,
        options=live.options,
        start_position=view.start_position,
        seats=seats(live),
        your_seat=seat,
        challenger=live.creator_name,
        time_control=time_control(view.time_control),
        seq=view.seq,
    )


def seats(live: LiveMatch) -> tuple[wire.SeatInfo, wire.SeatInfo]:
    """Return who sits in each seat of `live`: player, house bot or challenged player."""
    sides = live.referee.game.player_names
    return (
        wire.SeatInfo(
            seat=0,
            side=sides[0],
            player=live.names[0],
            bot=live.bot_specs[0],
            challenged=live.challenged_names[0],
        ),
        wire.SeatInfo(
            seat=1,
            side=sides[1],
            player=live.names[1],
            bot=live.bot_specs[1],
            challenged=live.challenged_names[1],
        ),
    )


def _clocks(view: match.MatchView, wall_ms: int) -> wire.Clocks | None:
    if view.clocks_ms is None:
        return None
    running = view.to_move if view.status is match.Status.ACTIVE else None
    return wire.Clocks(remaining_ms=view.clocks_ms, running=running, server_time_ms=wall_ms)


def time_control(tc: match.TimeControl | None) -> wire.TimeControl | None:
    """Return the wire form of the referee's time control."""
    if tc is None:
        return None
    return wire.TimeControl(
        base_ms=tc.base_ms, increment_ms=tc.increment_ms, move_cap_ms=tc.move_cap_ms
    )


def referee_time_control(tc: wire.TimeControl | None) -> match.TimeControl | None:
    """Return the referee's form of a requested time control."""
    if tc is None:
        return None
    return match.TimeControl(tc.base_ms, tc.increment_ms, tc.move_cap_ms)


def live_summary(live: LiveMatch) -> wire.MatchSummary:
    """Return the summary of a match in memory, as it stands.

    Read from the referee's facts alone: a listing (the lobby lists 20 live matches on every
    render) needs no position text, move list or legal moves, which `match_state` builds.
    """
    referee = live.referee
    status = referee.status
    return wire.MatchSummary(
        match_id=live.id,
        game=referee.game.name,
        options=live.options,
        status=status.value,
        seats=seats(live),
        time_control=time_control(referee.config.time_control),
        to_move=referee.state.to_move if status is match.Status.ACTIVE else None,
        ply=referee.ply,
        result=None if referee.result is None else result(referee.result),
        created_time_ms=live.created_ms,
    )


def stored_summary(
    row: Match,
    names: tuple[str | None, str | None],
    challenged: tuple[str | None, str | None],
    ply: int,
) -> wire.MatchSummary:
    """Return the summary of a match as stored (not in memory): its row, seats' names, plies."""
    sides = get_game(row.game, row.options).player_names
    tc = None
    if row.base_ms is not None:
        tc = wire.TimeControl(
            base_ms=row.base_ms, increment_ms=row.increment_ms, move_cap_ms=row.move_cap_ms
        )
    stored = None
    if row.result_reason is not None:
        stored = stored_result(row.result_winner, row.result_reason, row.result_detail)
    return wire.MatchSummary(
        match_id=row.id,
        game=row.game,
        options=row.options,
        status=row.status,
        seats=(
            wire.SeatInfo(
                seat=0, side=sides[0], player=names[0], bot=row.seat0_bot, challenged=challenged[0]
            ),
            wire.SeatInfo(
                seat=1, side=sides[1], player=names[1], bot=row.seat1_bot, challenged=challenged[1]
            ),
        ),
        time_control=tc,
        ply=ply,
        result=stored,
        created_time_ms=epoch_ms(row.created_at),
    )


def record(live: LiveMatch, now_ms: int) -> wire.MatchRecord:
    """Return the record of a match: set-up, seats, every move with its time and search
    statistics (when reported), result."""
    recorded = match_record(live.referee, now_ms)
    if live.searches:
        for move, logged in zip(recorded["moves"], live.referee.move_log, strict=True):
            move["search"] = search_of(live, logged.seq)
    return wire.MatchRecord(match_id=live.id, seats=seats(live), **recorded)


def positions(live: LiveMatch) -> tuple[str, ...]:
    """Return the position after each move, as text (for replays: the wire record names the
    moves only, and a browser has no rules to replay them)."""
    return tuple(m.position for m in live.referee.move_log)


def pdn(live: LiveMatch) -> str:
    """Return a checkers match as PDN; MatchError BAD_MESSAGE for any other game."""
    game = live.referee.game.name
    if game != "checkers":
        raise MatchError(
            ErrorCode.BAD_MESSAGE,
            f"PDN is for checkers only; this match is {game} (use /matches/{{id}}/record)",
            match_id=live.id,
        )
    sides = seats(live)
    headers = {
        "Event": f"Arena match {live.id}",
        "Black": sides[0].player or sides[0].bot or "?",
        "White": sides[1].player or sides[1].bot or "?",
    }
    return to_pdn(live.referee, headers)


def refusal(live: LiveMatch, rejected: match.Rejected) -> MatchError:
    """Return the protocol error of a call the referee refused (the match as it stands).

    A refused move names the move, the count of rejections, their limit and the legal moves.
    """
    referee = live.referee
    details: dict[str, ScalarValue] = {"seq": referee.seq}
    is_move = rejected.code in MOVE_ERRORS
    if is_move:
        details["move"] = (rejected.text or "")[: wire.MAX_MOVE_LENGTH]
        details["rejections"] = rejected.rejections
        details["limit"] = referee.config.max_illegal_moves
    return MatchError(
        ErrorCode(rejected.code.value),
        rejected.reason,
        match_id=live.id,
        legal_moves=rejected.legal_moves if is_move else None,
        details=details,
    )
