"""The application class: FastAPI, plus the server's own send callable in WebSocket scopes.

Every message a Starlette `WebSocket` sends passes through each middleware's wrapper of `send`
(error handling, telemetry, body limits), which do nothing for a WebSocket frame once the
handshake is done but cost a few calls each: py-spy put them at a tenth of the event loop's time
under load. `ArenaApp` keeps the send callable the ASGI server gave it in the scope, under
`RAW_SEND`, so that server.hub can send text frames on it directly; the handshake and the
close still go through Starlette, which tracks the connection's state.
"""

from __future__ import annotations

from fastapi import FastAPI
from starlette.types import Receive, Scope, Send

RAW_SEND = "arena.raw_send"
"""The scope key of the ASGI server's own `send`, set for WebSocket scopes."""


class ArenaApp(FastAPI):
    """FastAPI whose WebSocket scopes carry the ASGI server's `send` under `RAW_SEND`."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            scope[RAW_SEND] = send
        await super().__call__(scope, receive, send)
