"""The WebSocket messages a client sends, and `ClientMessage`, their union told apart by `type`."""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

from pydantic import Field

from protocol.messages.base import (
    ClientName,
    EpochMs,
    GameName,
    MatchId,
    MoveText,
    Seq,
    VersionText,
    WireMessage,
)
from protocol.messages.search import SearchField


class Hello(WireMessage):
    """Open a session: the first message on every connection, naming the protocol version."""

    type: Literal["hello"] = "hello"
    protocol_version: VersionText
    client: ClientName | None = None


class Move(WireMessage):
    """Play `move` in a match; with `expected_seq`, only if the match's seq still equals it."""

    type: Literal["move"] = "move"
    match_id: MatchId
    move: MoveText
    expected_seq: Seq | None = None
    search: SearchField = None


class Resign(WireMessage):
    """Resign a match: the opponent wins."""

    type: Literal["resign"] = "resign"
    match_id: MatchId


class OfferDraw(WireMessage):
    """Offer a draw; it stands until the opponent accepts, declines or moves."""

    type: Literal["offer_draw"] = "offer_draw"
    match_id: MatchId


class AcceptDraw(WireMessage):
    """Accept the opponent's pending draw offer: the match ends drawn."""

    type: Literal["accept_draw"] = "accept_draw"
    match_id: MatchId


class DeclineDraw(WireMessage):
    """Decline the opponent's pending draw offer."""

    type: Literal["decline_draw"] = "decline_draw"
    match_id: MatchId


class Abort(WireMessage):
    """Abort a match before its first move: it ends with no winner and no rating change."""

    type: Literal["abort"] = "abort"
    match_id: MatchId


class AcceptChallenge(WireMessage):
    """Accept a challenge: take the seat it invites you to (the match starts once full)."""

    type: Literal["accept_challenge"] = "accept_challenge"
    match_id: MatchId


class DeclineChallenge(WireMessage):
    """Decline a challenge: the match is aborted and no one plays it."""

    type: Literal["decline_challenge"] = "decline_challenge"
    match_id: MatchId


MAX_BOT_GAMES = 32
"""At most this many games in a `bot_available`."""


class BotAvailable(WireMessage):
    """Say this connection's player is a bot open to challenges (since 1.3).

    While `available` and connected, the player is listed by `GET /bots/online` with `games`
    (the games it accepts challenges to; None: any), so that other bots can challenge it. Send
    it again to change `games`, or with `available` false to leave the list; a connection that
    closes leaves it too. Send it only to a server whose `welcome` says 1.3 or later.
    """

    type: Literal["bot_available"] = "bot_available"
    available: bool = True
    games: Annotated[tuple[GameName, ...], Field(max_length=MAX_BOT_GAMES)] | None = None


class Ping(WireMessage):
    """Ask for a `pong`; `time_ms` is the client's own clock, echoed back to measure latency."""

    type: Literal["ping"] = "ping"
    time_ms: EpochMs


ClientMessage: TypeAlias = Annotated[
    Hello
    | Move
    | Resign
    | OfferDraw
    | AcceptDraw
    | DeclineDraw
    | Abort
    | Ping
    | AcceptChallenge
    | DeclineChallenge
    | BotAvailable,
    Field(discriminator="type"),
]
"""Any message a client sends on a WebSocket, told apart by `type`."""


CLIENT_MESSAGES: tuple[type[WireMessage], ...] = (
    Hello,
    Move,
    Resign,
    OfferDraw,
    AcceptDraw,
    DeclineDraw,
    Abort,
    Ping,
    AcceptChallenge,
    DeclineChallenge,
    BotAvailable,
)
"""Every client-to-server WebSocket message model, in the order of the union."""
