"""The read-only WebSocket endpoints: `/ws/matches/{id}` for a match's spectators and
`/ws/tournaments/{id}` for a tournament's progress (docs/PROTOCOL.md).

A watcher sends `hello` and gets `welcome`, then the subject's state (`match_state` or
`tournament_state`), then every message the subject publishes, in order. It may ping; anything
else is refused with FORBIDDEN and the connection stays open. No such match or tournament is
its error, then a close with 1008; the other closes are server.routes.ws_common's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from protocol.errors import CloseCode, ErrorCode, ProtocolError
from protocol.messages import ErrorMessage, Ping, Pong, Welcome, parse_client_message
from server.deps import HubDep, ServiceDep, SettingsDep, TournamentsDep, admit_message
from server.errors import MatchError
from server.hub import Connection, Hub
from server.routes.ws_common import (
    ClosedError,
    address,
    admit,
    epoch_ms,
    handshake,
    receive,
    refuse,
)
from server.settings import Settings

router = APIRouter(tags=["websocket"])


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
    refusal = admit(websocket, hub, settings, None)
    if refusal is not None:
        await refuse(websocket, settings, CloseCode.TOO_MANY_CONNECTIONS, refusal)
        return
    connection = Connection(websocket, max_queued_bytes=settings.ws.max_queued_bytes)
    try:
        await websocket.accept()
        await handshake(websocket, connection, settings)
        connection.send(Welcome(player=None, server_time_ms=epoch_ms()))
        try:
            await follow(connection)
        except missing as error:
            connection.send(ErrorMessage.from_error(error))
            connection.close(CloseCode.POLICY_VIOLATION, f"no such {subject}")
            raise ClosedError from None
        connection.end_sync()
        await _read_only(websocket, connection, settings, kind, match_id)
    except (ClosedError, WebSocketDisconnect, RuntimeError):
        pass
    finally:
        try:
            unfollow(connection)
            await connection.wait_closed()
        finally:
            hub.release(address(websocket), None)


async def _read_only(
    websocket: WebSocket,
    connection: Connection,
    settings: Settings,
    what: str,
    match_id: str | None,
) -> None:
    """Answer pings and refuse everything else (FORBIDDEN) until the client goes away."""
    while True:
        data = await receive(websocket, connection, settings)
        if not admit_message(connection):
            continue
        try:
            message = parse_client_message(data)
        except ProtocolError as error:
            connection.send(ErrorMessage.from_error(error))
            continue
        if isinstance(message, Ping):
            connection.send(Pong(time_ms=message.time_ms, server_time_ms=epoch_ms()))
        else:
            connection.send(
                ErrorMessage(
                    code=ErrorCode.FORBIDDEN,
                    message=f"a {what} connection is read-only: {message.type} refused",
                    match_id=match_id,
                )
            )
