"""What the WebSocket endpoints (server.routes.ws, server.routes.ws_watch) share: counting a
connection against its limits or refusing it, the `hello` that opens it, and each message read
within its size limit.

Each closes a connection that breaks its rule with its own code: a bad first message (4000), an
unsupported version (4003), no hello in time (4004), an oversized message (1009) or too many
connections from one address or player (4009), and then raises `ClosedError`.
"""

from __future__ import annotations

import asyncio
import time

from fastapi import WebSocket

from protocol.errors import CloseCode, ErrorCode, ProtocolError
from protocol.messages import ErrorMessage, parse_hello
from protocol.version import PROTOCOL_VERSION, is_compatible, spoken_version
from server.connections import address_key
from server.hub import Connection, Hub
from server.settings import Settings

MAX_CLOSE_REASON_BYTES = 123
"""The longest close reason a close frame carries (RFC 6455: 125 bytes less the code's 2)."""


class ClosedError(Exception):
    """The connection is closed (by the client, or by the server after a fatal error)."""


def epoch_ms() -> int:
    """Return the server's clock in milliseconds since the epoch (`welcome`, `pong`)."""
    return int(time.time() * 1000)


async def receive(websocket: WebSocket, connection: Connection, settings: Settings) -> str:
    """Return the next text (or UTF-8 binary) message; close with 1009 when it is too large.

    Raises ClosedError once the connection is closed, by the client or by the server (a client
    closed as too slow is not served the requests it sent after).
    """
    frame = await websocket.receive()
    if frame["type"] == "websocket.disconnect" or connection.closed:
        raise ClosedError
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
        raise ClosedError
    return data


async def handshake(websocket: WebSocket, connection: Connection, settings: Settings) -> None:
    """Read the `hello`; refuse anything else (4000), an unsupported version (4003) or no
    hello within `ws_hello_timeout_s` (4004)."""
    try:
        data = await asyncio.wait_for(
            receive(websocket, connection, settings), settings.ws.hello_timeout_s
        )
    except TimeoutError:
        connection.close(
            CloseCode.HELLO_TIMEOUT, f"no hello within {settings.ws.hello_timeout_s:g} s"
        )
        raise ClosedError from None
    try:
        message = parse_hello(data)
    except ProtocolError as error:
        connection.send(ErrorMessage.from_error(error))
        connection.close(CloseCode.BAD_PROTOCOL, _close_reason(error))
        raise ClosedError from None
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
        raise ClosedError
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


def address(websocket: WebSocket) -> str:
    """Return the key of the client's address (a trusted proxy's client; IPv6 by its /64)."""
    return address_key(websocket.client.host if websocket.client is not None else None)


def admit(websocket: WebSocket, hub: Hub, settings: Settings, player_id: int | None) -> str | None:
    """Count the connection against the per-address and per-player limits; None or why not."""
    return hub.admit(
        address(websocket),
        player_id,
        max_per_address=settings.ws.max_connections_per_address,
        max_per_player=settings.ws.max_connections_per_player,
    )


async def refuse(websocket: WebSocket, settings: Settings, code: CloseCode, reason: str) -> None:
    """Accept the WebSocket and close it at once with `code` (a client sees the code, which a
    refused handshake would not show it)."""
    await websocket.accept()
    refused = Connection(websocket, max_queued_bytes=settings.ws.max_queued_bytes)
    refused.close(code, reason)
    await refused.wait_closed()
