"""What keeps a browser's requests honest: the Origin check of a request the cookie
authenticates, and `X-Content-Type-Options: nosniff` on every HTTP answer.

`check_origin` refuses a request sent from another site's page; `NoSniff` (a pure ASGI
middleware) makes a browser never guess a type other than the one the server declares (a JSON
answer or an uploaded file is never run as a script or shown as a page). The pages' own policy
is set where they are rendered (server.web.pages).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from protocol.errors import ErrorCode, ProtocolError

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
"""The methods that change nothing: a cookie authenticates them without an Origin check."""


def check_origin(connection: HTTPConnection) -> None:
    """Refuse a request sent from another site's page (FORBIDDEN), as SameSite does the cookie.

    A request without an `Origin` header passes: the cookie itself is SameSite=Strict, so no
    other site's page sends it.
    """
    origin = connection.headers.get("origin")
    if origin is None:
        return
    if urlsplit(origin).netloc != connection.headers.get("host", ""):
        raise ProtocolError(ErrorCode.FORBIDDEN, "a form of this server must be sent from it")


NOSNIFF = (b"x-content-type-options", b"nosniff")


class NoSniff:
    """Add `X-Content-Type-Options: nosniff` to every HTTP response that lacks it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_header(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if all(name.lower() != NOSNIFF[0] for name, _ in headers):
                    headers.append(NOSNIFF)
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_header)
