"""The application class: FastAPI, plus the server's own send callable in WebSocket scopes.

Every message a Starlette `WebSocket` sends passes through each middleware's wrapper of `send`
(error handling, telemetry, body limits), which do nothing for a WebSocket frame once the
handshake is done but cost a few calls each: py-spy put them at a tenth of the event loop's time
under load. `ArenaApp` keeps the send callable the ASGI server gave it in the scope, under
`RAW_SEND`, so that server.hub can send text frames on it directly; the handshake and the
close still go through Starlette, which tracks the connection's state.

On uvicorn's sans-I/O WebSocket protocol a send that finds the transport writable completes
without waiting: `send_now` does such a send at once, so an idle connection's message needs no
writer task to wake up for it.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, cast

from fastapi import FastAPI
from starlette.types import Receive, Scope, Send
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

RAW_SEND = "arena.raw_send"
"""The scope key of the ASGI server's own `send`, set for WebSocket scopes."""


class ArenaApp(FastAPI):
    """FastAPI whose WebSocket scopes carry the ASGI server's `send` under `RAW_SEND`."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            scope[RAW_SEND] = send
        await super().__call__(scope, receive, send)


def immediate_sender(send: Send) -> Callable[[str], bool] | None:
    """Return a function that sends a text frame on `send` at once if that needs no waiting
    (True), or does nothing (False: the caller queues it); None if `send` is not the sans-I/O
    protocol's, whose only wait is for a writable transport.

    The function raises what the send raises (OSError when the client is gone).
    """
    protocol = getattr(send, "__self__", None)
    if not isinstance(protocol, WebSocketsSansIOProtocol):
        return None
    writable = protocol.writable

    def send_now(text: str) -> bool:
        if not writable.is_set():
            return False
        step = cast(Coroutine[Any, Any, None], send({"type": "websocket.send", "text": text}))
        try:
            step.send(None)
        except StopIteration:
            return True
        # Unreachable while the transport is writable; never leave a send half done.
        step.close()
        raise RuntimeError("a WebSocket send waited although its transport was writable")

    return send_now
