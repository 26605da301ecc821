"""`X-Content-Type-Options: nosniff` on every HTTP answer, as a pure ASGI middleware.

A browser then never guesses a type other than the one the server declares (a JSON answer or an
uploaded file is never run as a script or shown as a page). The pages' own policy is set where
they are rendered (server.web.pages).
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

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
