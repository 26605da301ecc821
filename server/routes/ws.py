"""The WebSocket endpoints: `/ws` for a player's matches, `/ws/matches/{id}` for spectators,
`/ws/tournaments/{id}` for a tournament's progress.

All speak docs/PROTOCOL.md: the client sends `hello` first and gets `welcome`, then the
`match_state` of every match it follows (the `tournament_state` of the tournament), then every
event as it happens. Every message the
server sends goes through the connection's queue (see server.hub), so replies and events keep
their order and a slow client stalls nobody else.

A refused request is answered with an `error` and the connection stays open; only a bad token
(4001), a bad first message (4000), an unsupported version (4003), an oversized message (1009),
a replacement by a newer connection (4002), no hello in time (4004), a client that does not
read (4008) or too many connections from one address or player (4009) closes it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from games import game_names
from protocol.errors import CloseCode, ErrorCode, ProtocolError
from protocol.messages import (
    Abort,
    AcceptChallenge,
    AcceptDraw,
    BotAvailable,
    ClientMessage,
    DeclineChallenge,
    DeclineDraw,
    ErrorMessage,
    Hello,
    Move,
    OfferDraw,
    Ping,
    Pong,
    Resign,
    Welcome,
    parse_client_message,
    parse_hello,
)
from protocol.version import PROTOCOL_VERSION, is_compatible, spoken_version
from server.auth import hash_token
from server.connections import address_key
from server.db.models import Player
from server.deps import (
    HubDep,
    PresenceDep,
    ServiceDep,
    SettingsDep,
    TournamentsDep,
    admit_message,
)
from server.errors import MatchError
from server.hub import Connection, Hub
from server.matches.commands import Action
from server.matches.service import MatchService
from server.settings import Settings

log = logging.getLogger(__name__)

router = APIRouter(tags=["websocket"])

MAX_CLOSE_REASON_BYTES = 123
"""The longest close reason a close frame carries (RFC 6455: 125 bytes less the code's 2)."""

ACTIONS: dict[type[ClientMessage], Action] = {
    Resign: Action.RESIGN,
    OfferDraw: Action.OFFER_DRAW,
    AcceptDraw: Action.ACCEPT_DRAW,
    DeclineDraw: Action.DECLINE_DRAW,
    Abort: Action.ABORT,
}
"""The match actions other than a move, by message type."""


class _ClosedError(Exception):
    """The connection is closed (by the client, or by the server after a fatal error)."""


def _epoch_ms() -> int:
    return int(time.time() * 1000)


def _token(websocket: WebSocket) -> str | None:
    """Return the token of the `Authorization: Bearer` header or the `token` query parameter."""
    header = websocket.headers.get("authorization", "")
    scheme, _, credentials = header.partition(" ")
    if scheme.lower() == "bearer" and credentials.strip():
        return credentials.strip()
    return websocket.query_params.get("token") or None


async def _receive(websocket: WebSocket, connection: Connection, settings: Settings) -> str:
    """Return the next text (or UTF-8 binary) message; close with 1009 when it is too large.

    Raises _ClosedError once the connection is closed, by the client or by the server (a client
    closed as too slow is not served the requests it sent after).
    """
    frame = await websocket.receive()
    if frame["type"] == "websocket.disconnect" or connection.closed:
        raise _ClosedError
    data: str | None = frame.get("text")
    if data is None:
        raw: bytes = frame.get("bytes") or b""
        data = raw.decode("utf-8", errors="replace")
        size = len(raw)
    else:
        size = len(data.encode("utf-8"))
    if size > settings.max_message_bytes:
        connection.send(
            ErrorMessage(
                code=ErrorCode.MESSAGE_TOO_LARGE,
                message=f"message of {size} bytes exceeds the limit of "
                f"{settings.max_message_bytes} bytes",
                details={"size": size, "limit": settings.max_message_bytes},
            )
        )
        connection.close(CloseCode.MESSAGE_TOO_BIG, "message too large")
        raise _ClosedError
    return data


async def _handshake(websocket: WebSocket, connection: Connection, settings: Settings) -> None:
    """Read the `hello`; refuse anything else (4000), an unsupported version (4003) or no
    hello within `ws_hello_timeout_s` (4004)."""
    try:
        data = await asyncio.wait_for(
            _receive(websocket, connection, settings), settings.ws.hello_timeout_s
        )
    except TimeoutError:
        connection.close(
            CloseCode.HELLO_TIMEOUT, f"no hello within {settings.ws.hello_timeout_s:g} s"
        )
        raise _ClosedError from None
    try:
        message = parse_hello(data)
    except ProtocolError as error:
        connection.send(ErrorMessage.from_error(error))
        connection.close(CloseCode.BAD_PROTOCOL, _close_reason(error))
        raise _ClosedError from None
    if not is_compatible(message.protocol_version):
        connection.send(
            ErrorMessage(
                code=ErrorCode.UNSUPPORTED_VERSION,
                message=f"this server speaks protocol {PROTOCOL_VERSION}, "
                f"not {message.protocol_version}",
                details={"server_version": PROTOCOL_VERSION},
            )
        )
        connection.close(CloseCode.UNSUPPORTED_VERSION, "unsupported protocol version")
        raise _ClosedError
    connection.version = spoken_version(message.protocol_version)


def _close_reason(error: ProtocolError) -> str:
    """Return the close reason of a refused first message: what was wrong with the hello, or
    that it was none (at most the 123 bytes a close frame holds; the error sent before the
    close says it all)."""
    if error.code is ErrorCode.VALIDATION_ERROR:
        first = next(iter(error.details.items()), None)
        reason = "bad hello" if first is None else f"bad hello: {first[0]}: {first[1]}"
        reason = reason.split(";", maxsplit=1)[0]
    elif error.message.startswith("the first message must be hello"):
        reason = error.message
    else:
        reason = "the first message must be hello"
    return reason.encode()[:MAX_CLOSE_REASON_BYTES].decode(errors="ignore")


def _address(websocket: WebSocket) -> str:
    """Return the key of the client's address (a trusted proxy's client; IPv6 by its /64)."""
    return address_key(websocket.client.host if websocket.client is not None else None)


def _admit(websocket: WebSocket, hub: Hub, settings: Settings, player_id: int | None) -> str | None:
    """Count the connection against the per-address and per-player limits; None or why not."""
    return hub.admit(
        _address(websocket),
        player_id,
        max_per_address=settings.ws.max_connections_per_address,
        max_per_player=settings.ws.max_connections_per_player,
    )


async def _refuse(websocket: WebSocket, settings: Settings, code: CloseCode, reason: str) -> None:
    """Accept the WebSocket and close it at once with `code` (a client sees the code, which a
    refused handshake would not show it)."""
    await websocket.accept()
    refused = Connection(websocket, max_queued_bytes=settings.ws.max_queued_bytes)
    refused.close(code, reason)
    await refused.wait_closed()


async def _handle(service: MatchService, player: Player, message: ClientMessage) -> None:
    """Run one in-game request; its events reach the player through the hub."""
    if isinstance(message, Move):
        await service.play(
            message.match_id, player, message.move, message.expected_seq, message.search
        )
    elif isinstance(message, AcceptChallenge):
        await service.accept(message.match_id, player)
    elif isinstance(message, DeclineChallenge):
        await service.decline(message.match_id, player)
    elif isinstance(message, Hello):
        raise ProtocolError(ErrorCode.BAD_MESSAGE, "hello was already received")
    else:
        match_id: str = getattr(message, "match_id")  # noqa: B009 -- every action has one
        await service.act(match_id, player, ACTIONS[type(message)])


@router.websocket("/ws")
async def player_socket(
    websocket: WebSocket,
    settings: SettingsDep,
    service: ServiceDep,
    hub: HubDep,
    presence: PresenceDep,
) -> None:
    """Play: one authenticated connection carrying all of a player's matches."""
    token = _token(websocket)
    player = None if token is None else await service.players.by_token_hash(hash_token(token))
    if player is None:
        await websocket.accept()
        refused = Connection(websocket, max_queued_bytes=settings.ws.max_queued_bytes)
        refused.send(
            ErrorMessage(
                code=ErrorCode.UNAUTHORIZED,
                message="missing or wrong token: send `Authorization: Bearer TOKEN` "
                "(from POST /players) or ?token=TOKEN",
            )
        )
        refused.close(CloseCode.UNAUTHORIZED, "unauthorized")
        await refused.wait_closed()
        return
    refusal = _admit(websocket, hub, settings, player.id)
    if refusal is not None:
        await _refuse(websocket, settings, CloseCode.TOO_MANY_CONNECTIONS, refusal)
        return
    # Counted before the handshake completes: a client that sees it open is counted already.
    connection = Connection(websocket, player.id, max_queued_bytes=settings.ws.max_queued_bytes)
    try:
        await websocket.accept()
        await _handshake(websocket, connection, settings)
        connection.send(Welcome(player=player.name, server_time_ms=_epoch_ms()))
        hub.attach_player(connection)
        for state in await service.live_states(player):
            connection.sync(state)
        for challenge in await service.challenges(player):
            connection.sync(challenge)
        connection.end_sync()
        while True:
            data = await _receive(websocket, connection, settings)
            if not admit_message(connection):
                continue
            try:
                message = parse_client_message(data)
                if isinstance(message, Ping):
                    connection.send(Pong(time_ms=message.time_ms, server_time_ms=_epoch_ms()))
                elif isinstance(message, BotAvailable):
                    _set_available(connection, message)
                    presence.changed()
                else:
                    await _handle(service, player, message)
            except ProtocolError as error:
                connection.send(ErrorMessage.from_error(error))
            except Exception:
                log.exception("a WebSocket request of %s failed", player.name)
                connection.send(
                    ErrorMessage(
                        code=ErrorCode.INTERNAL_ERROR,
                        message="the server failed; the match is unchanged. Retry.",
                    )
                )
    except (_ClosedError, WebSocketDisconnect, RuntimeError):
        pass
    finally:
        try:
            hub.detach_player(connection)
            if connection.bot_available:
                presence.changed()
            await connection.wait_closed()
        finally:
            hub.release(_address(websocket), player.id)


def _set_available(connection: Connection, message: BotAvailable) -> None:
    """Record what a `bot_available` says: whether the bot is open to challenges, and to
    which games (each game must be one this server hosts)."""
    games = message.games
    if games is not None:
        unknown = sorted(set(games) - set(game_names()))
        if unknown:
            raise ProtocolError(
                ErrorCode.VALIDATION_ERROR,
                f"bot_available names games this server does not host: {', '.join(unknown)}",
                details={"games": ", ".join(game_names())},
            )
        games = tuple(dict.fromkeys(games))
    connection.bot_available = message.available
    connection.bot_games = games


async def _read_only(
    websocket: WebSocket,
    connection: Connection,
    settings: Settings,
    what: str,
    match_id: str | None,
) -> None:
    """Answer pings and refuse everything else (FORBIDDEN) until the client goes away."""
    while True:
        data = await _receive(websocket, connection, settings)
        if not admit_message(connection):
            continue
        try:
            message = parse_client_message(data)
        except ProtocolError as error:
            connection.send(ErrorMessage.from_error(error))
            continue
        if isinstance(message, Ping):
            connection.send(Pong(time_ms=message.time_ms, server_time_ms=_epoch_ms()))
        else:
            connection.send(
                ErrorMessage(
                    code=ErrorCode.FORBIDDEN,
                    message=f"a {what} connection is read-only: {message.type} refused",
                    match_id=match_id,
                )
            )


@router.websocket("/ws/matches/{match_id}")
async def spectator_socket(
    websocket: WebSocket, match_id: str, settings: SettingsDep, service: ServiceDep, hub: HubDep
) -> None:
    """Watch one match, read-only: its `match_state`, then every later event in order."""

    async def follow(connection: Connection) -> None:
        hub.watch(match_id, connection)
        connection.sync(await service.state(match_id))

    def unfollow(connection: Connection) -> None:
        hub.unwatch(match_id, connection)

    what = ("spectator", "match", match_id)
    await _watch(websocket, settings, hub, what, (follow, unfollow, MatchError))


@router.websocket("/ws/tournaments/{tournament_id}")
async def tournament_socket(
    websocket: WebSocket,
    tournament_id: str,
    settings: SettingsDep,
    tournaments: TournamentsDep,
    hub: HubDep,
) -> None:
    """Watch a tournament, read-only: its `tournament_state`, then its progress messages."""

    async def follow(connection: Connection) -> None:
        await tournaments.watch(tournament_id, connection.send)

    def unfollow(connection: Connection) -> None:
        tournaments.unwatch(tournament_id, connection.send)

    what = ("tournament", "tournament", None)
    await _watch(websocket, settings, hub, what, (follow, unfollow, ProtocolError))


async def _watch(
    websocket: WebSocket,
    settings: Settings,
    hub: Hub,
    what: tuple[str, str, str | None],
    following: tuple[
        Callable[[Connection], Awaitable[None]],
        Callable[[Connection], None],
        type[ProtocolError],
    ],
) -> None:
    """Serve a read-only connection: admitted, its hello, `welcome`, then `follow` (which sends
    the subject's state; its error of the given type is sent and closes the connection), then
    every message the subject publishes until the client leaves; `unfollow` at the end.

    `what` is the connection's kind (its refusals say "a KIND connection is read-only"), the
    subject's name (its close reason says "no such SUBJECT") and the match id its errors name.
    """
    kind, subject, match_id = what
    follow, unfollow, missing = following
    refusal = _admit(websocket, hub, settings, None)
    if refusal is not None:
        await _refuse(websocket, settings, CloseCode.TOO_MANY_CONNECTIONS, refusal)
        return
    connection = Connection(websocket, max_queued_bytes=settings.ws.max_queued_bytes)
    try:
        await websocket.accept()
        await _handshake(websocket, connection, settings)
        connection.send(Welcome(player=None, server_time_ms=_epoch_ms()))
        try:
            await follow(connection)
        except missing as error:
            connection.send(ErrorMessage.from_error(error))
            connection.close(CloseCode.POLICY_VIOLATION, f"no such {subject}")
            raise _ClosedError from None
        connection.end_sync()
        await _read_only(websocket, connection, settings, kind, match_id)
    except (_ClosedError, WebSocketDisconnect, RuntimeError):
        pass
    finally:
        try:
            unfollow(connection)
            await connection.wait_closed()
        finally:
            hub.release(_address(websocket), None)
