"""The WebSocket messages the server sends, and `ServerMessage`, their union told apart by `type`.

The tournaments' notices are in `protocol.messages.tournaments`, the `error` message in
`protocol.messages.errors`.
"""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

from pydantic import Field, Strict

from protocol.messages.base import (
    EpochMs,
    GameName,
    MatchId,
    MoveText,
    Ms,
    Options,
    PlayerName,
    PositionText,
    Seat,
    Seq,
    VersionText,
    WireMessage,
)
from protocol.messages.errors import ErrorMessage
from protocol.messages.matches import (
    Clocks,
    MatchResult,
    MatchStatus,
    MaxPlies,
    SeatInfo,
    TimeControl,
)
from protocol.messages.search import SearchField
from protocol.messages.tournaments import (
    TournamentFinished,
    TournamentGameFinished,
    TournamentState,
)
from protocol.messages.versioning import SINCE
from protocol.version import PROTOCOL_VERSION


class Welcome(WireMessage):
    """Accept a `hello`: the server's protocol version and who the token belongs to.

    `player` is None on a spectator connection.
    """

    type: Literal["welcome"] = "welcome"
    protocol_version: VersionText = PROTOCOL_VERSION
    player: PlayerName | None
    server_time_ms: EpochMs


class Challenge(WireMessage):
    """You are challenged: a match invites you to `your_seat`; answer `accept_challenge` or
    `decline_challenge`.

    Sent when the match is created (if you are connected) and on every new connection while
    the challenge waits. `challenger` is the player who created the match. Nothing is played
    and no clock runs until every challenged player has accepted.
    """

    type: Literal["challenge"] = "challenge"
    match_id: MatchId
    game: GameName
    options: Options = Field(default_factory=dict)
    start_position: PositionText
    seats: tuple[SeatInfo, SeatInfo]
    your_seat: Seat
    challenger: PlayerName | None = None
    time_control: TimeControl | None = None
    seq: Seq


class MatchStarted(WireMessage):
    """Announce a match that has begun (both seats filled); a `match_state` follows at once."""

    type: Literal["match_started"] = "match_started"
    match_id: MatchId
    game: GameName
    options: Options = Field(default_factory=dict)
    seats: tuple[SeatInfo, SeatInfo]
    your_seat: Seat | None = None
    time_control: TimeControl | None = None
    seq: Seq


class MatchState(WireMessage):
    """The full state of a match; everything a client needs to resume.

    `position` is the current position, `moves` every move from `start_position`. `to_move`
    and `legal_moves` are None and empty once the match is over. `clocks` is None for an
    untimed match; `max_plies` (since 1.1) is the match's ply cap, None for none.
    `draw_offer` is the seat whose draw offer is pending. `your_seat` is the receiver's seat
    (None for spectators).
    """

    type: Literal["match_state"] = "match_state"
    match_id: MatchId
    game: GameName
    options: Options = Field(default_factory=dict)
    start_position: PositionText
    position: PositionText
    moves: tuple[MoveText, ...] = ()
    to_move: Seat | None
    seats: tuple[SeatInfo, SeatInfo]
    your_seat: Seat | None = None
    time_control: TimeControl | None = None
    max_plies: MaxPlies | None = Field(default=None, json_schema_extra={SINCE: "1.1"})
    clocks: Clocks | None = None
    legal_moves: tuple[MoveText, ...] = ()
    status: MatchStatus
    result: MatchResult | None = None
    draw_offer: Seat | None = None
    seq: Seq


class MoveMade(WireMessage):
    """A move was played in a match (sent to both players and every spectator).

    `ply` counts the moves played so far, this one included (the first move has ply 1).
    `position`, `to_move` and `legal_moves` describe the position after the move; a move that
    ends the match is followed by a `match_ended` with the same `seq`. `elapsed_ms` (since 1.2)
    is the mover's thinking time as the server measured it, as in the match record.
    """

    type: Literal["move_made"] = "move_made"
    match_id: MatchId
    seq: Seq
    ply: Annotated[int, Strict(), Field(ge=1)]
    seat: Seat
    move: MoveText
    position: PositionText
    to_move: Seat | None
    legal_moves: tuple[MoveText, ...] = ()
    clocks: Clocks | None = None
    elapsed_ms: Ms | None = Field(
        default=None,
        json_schema_extra={SINCE: "1.2"},
        description="The mover's thinking time, as the server measured it.",
    )
    search: SearchField = None


class DrawOffered(WireMessage):
    """Seat `seat` offers a draw; answer with `accept_draw` or `decline_draw`, or just move."""

    type: Literal["draw_offered"] = "draw_offered"
    match_id: MatchId
    seq: Seq
    seat: Seat


class DrawDeclined(WireMessage):
    """Seat `seat` declined the pending draw offer."""

    type: Literal["draw_declined"] = "draw_declined"
    match_id: MatchId
    seq: Seq
    seat: Seat


class MatchEnded(WireMessage):
    """A match is over: its result, and the clocks as they stopped."""

    type: Literal["match_ended"] = "match_ended"
    match_id: MatchId
    seq: Seq
    status: Literal["finished", "aborted"] = "finished"
    result: MatchResult
    clocks: Clocks | None = None


class Pong(WireMessage):
    """Answer a `ping`: the client's `time_ms` echoed, and the server's clock."""

    type: Literal["pong"] = "pong"
    time_ms: EpochMs
    server_time_ms: EpochMs


ServerMessage: TypeAlias = Annotated[
    Welcome
    | MatchStarted
    | MatchState
    | MoveMade
    | DrawOffered
    | DrawDeclined
    | MatchEnded
    | ErrorMessage
    | Pong
    | TournamentState
    | TournamentGameFinished
    | TournamentFinished
    | Challenge,
    Field(discriminator="type"),
]
"""Any message the server sends on a WebSocket, told apart by `type`."""


SERVER_MESSAGES: tuple[type[WireMessage], ...] = (
    Welcome,
    MatchStarted,
    MatchState,
    MoveMade,
    DrawOffered,
    DrawDeclined,
    MatchEnded,
    ErrorMessage,
    Pong,
    TournamentState,
    TournamentGameFinished,
    TournamentFinished,
    Challenge,
)
"""Every server-to-client WebSocket message model, in the order of the union."""
