"""The REST body limit, as a pure ASGI middleware: a body too large is refused before it is read.

The route handlers read a body whole before validating it, so without a limit in front of them
a client could make the server buffer any amount of memory per request. `BodyLimit` answers 413
MESSAGE_TOO_LARGE at once when the declared `Content-Length` is over the limit, and otherwise
counts the bytes as they arrive (a chunked body declares no length, and a declared length is not
trusted), refusing the request as soon as the count passes the limit. Routes that take larger
bodies (the grader's multipart uploads) are exempt and enforce their own limits.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from protocol.errors import ErrorCode, ProtocolError
from server.errors import error_response

_PARAMETER = re.compile(r"\\\{[^}]*\\\}")
"""A route parameter (`{name}`) in a path escaped by `re.escape`."""


class BodyTooLargeError(Exception):
    """Raised to the application reading a body that has passed the limit."""


class BodyLimit:
    """Refuse any HTTP request whose body exceeds `max_bytes`, except on the `exempt` routes.

    `exempt` holds (method, path) pairs, such as ("POST", "/grader/jobs").
    """

    def __init__(
        self, app: ASGIApp, max_bytes: int, exempt: Collection[tuple[str, str]] = ()
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.exempt = frozenset(exempt)
        self._patterns = [
            (method, re.compile(_PARAMETER.sub("[^/]+", re.escape(path)) + "$"))
            for method, path in self.exempt
            if "{" in path
        ]

    def is_exempt(self, method: str, path: str) -> bool:
        """Return whether a request of `method` on `path` takes a body of any size here."""
        return (method, path) in self.exempt or any(
            method == exempt and pattern.match(path) for exempt, pattern in self._patterns
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.is_exempt(scope["method"], scope["path"]):
            await self.app(scope, receive, send)
            return
        declared = content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await self._refuse(scope, receive, send, declared)
            return
        received = 0
        exceeded = False
        started = False

        async def counting_receive() -> Message:
            nonlocal received, exceeded
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    exceeded = True
                    raise BodyTooLargeError(f"request body over {self.max_bytes} bytes")
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if exceeded:
                return  # whatever the application made of the error, the answer is the 413
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, guarded_send)
        except Exception:
            if not exceeded:
                raise
        if exceeded and not started:
            await self._refuse(scope, receive, send, received)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, size: int) -> None:
        """Answer 413 MESSAGE_TOO_LARGE and close the connection (the rest is never read)."""
        error = ProtocolError(
            ErrorCode.MESSAGE_TOO_LARGE,
            f"the request body is larger than the {self.max_bytes} bytes accepted "
            f"(at least {size} bytes)",
            {"size": size, "limit": self.max_bytes},
        )
        response = error_response(error, headers={"Connection": "close"})
        await response(scope, receive, send)


def content_length(scope: Scope) -> int | None:
    """Return the request's declared Content-Length, None when it declares none (or junk)."""
    for name, value in scope["headers"]:
        if name == b"content-length":
            text = value.decode("latin-1").strip()
            if not text.isdigit():
                return None
            # More digits than any real length: too large, without parsing a huge number.
            return int(text) if len(text) <= 18 else 10**18
    return None
