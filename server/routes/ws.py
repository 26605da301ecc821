"""The player's WebSocket endpoint, `/ws`: one authenticated connection carrying all of a
player's matches, and each request on it handed to the match service.

It speaks docs/PROTOCOL.md: the client sends `hello` first and gets `welcome`, then the
`match_state` of every match it follows and its pending challenges, then every event as it
happens. Every message the server sends goes through the connection's queue (see server.hub), so
replies and events keep their order and a slow client stalls nobody else. The read-only
endpoints, a match's spectators and a tournament's watchers, are server.routes.ws_watch's.

A refused request is answered with an `error` and the connection stays open; only a bad token
(4001), a bad first message (4000), an unsupported version (4003), an oversized message (1009),
a replacement by a newer connection (4002), no hello in time (4004), a client that does not
read (4008) or too many connections from one address or player (4009) closes it (the limits
and the hello are server.routes.ws_common's).
"""

from __future__ import annotations

import logging

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
)
from server.auth import hash_token
from server.db.models import Player
from server.deps import HubDep, PresenceDep, ServiceDep, SettingsDep, admit_message
from server.hub import Connection
from server.matches.commands import Action
from server.matches.service import MatchService
from server.routes.ws_common import (
    ClosedError,
    address,
    admit,
    epoch_ms,
    handshake,
    receive,
    refuse,
)

log = logging.getLogger(__name__)

router = APIRouter(tags=["websocket"])

ACTIONS: dict[type[ClientMessage], Action] = {
    Resign: Action.RESIGN,
    OfferDraw: Action.OFFER_DRAW,
    AcceptDraw: Action.ACCEPT_DRAW,
    DeclineDraw: Action.DECLINE_DRAW,
    Abort: Action.ABORT,
}
"""The match actions other than a move, by message type."""


def _token(websocket: WebSocket) -> str | None:
    """Return the token of the `Authorization: Bearer` header or the `token` query parameter."""
    header = websocket.headers.get("authorization", "")
    scheme, _, credentials = header.partition(" ")
    if scheme.lower() == "bearer" and credentials.strip():
        return credentials.strip()
    return websocket.query_params.get("token") or None


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
    refusal = admit(websocket, hub, settings, player.id)
    if refusal is not None:
        await refuse(websocket, settings, CloseCode.TOO_MANY_CONNECTIONS, refusal)
        return
    # Counted before the handshake completes: a client that sees it open is counted already.
    connection = Connection(websocket, player.id, max_queued_bytes=settings.ws.max_queued_bytes)
    try:
        await websocket.accept()
        await handshake(websocket, connection, settings)
        connection.send(Welcome(player=player.name, server_time_ms=epoch_ms()))
        hub.attach_player(connection)
        for state in await service.live_states(player):
            connection.sync(state)
        for challenge in await service.challenges(player):
            connection.sync(challenge)
        connection.end_sync()
        while True:
            data = await receive(websocket, connection, settings)
            if not admit_message(connection):
                continue
            try:
                message = parse_client_message(data)
                if isinstance(message, Ping):
                    connection.send(Pong(time_ms=message.time_ms, server_time_ms=epoch_ms()))
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
    except (ClosedError, WebSocketDisconnect, RuntimeError):
        pass
    finally:
        try:
            hub.detach_player(connection)
            if connection.bot_available:
                presence.changed()
            await connection.wait_closed()
        finally:
            hub.release(address(websocket), player.id)


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
