"""The grader's uploads on the wire: a body cut off at the upload limit, and the files read.

Both the REST upload (`POST /grader/jobs`, server.routes.grader) and the page's form (`POST
/web/grader/jobs`, server.routes.web_grader) take their files through here, so that the same
limits hold for both.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from typing import Any, ClassVar

from fastapi import Request, Response
from fastapi.routing import APIRoute
from starlette.datastructures import UploadFile
from starlette.types import Message, Receive

from protocol.errors import ErrorCode, ProtocolError
from server.deps import GUEST_COOKIE, app_settings
from server.grading import Upload
from server.settings import Settings

_MULTIPART_OVERHEAD = 64 * 1024
"""Room for multipart headers and form fields on top of the files' bytes."""


class _BodyTooLargeError(Exception):
    """Raised by `_LimitedBody.receive` once the body passes the limit (read no further)."""


class _LimitedBody:
    """Pass a request's body on while counting it; refuse it once it passes `limit` bytes."""

    def __init__(self, receive: Receive, limit: int) -> None:
        self._receive = receive
        self.limit = limit
        self.received = 0
        self.exceeded = False

    async def receive(self) -> Message:
        message = await self._receive()
        if message["type"] == "http.request":
            self.received += len(message.get("body", b""))
            if self.received > self.limit:
                self.exceeded = True
                raise _BodyTooLargeError
        return message


class UploadLimitRoute(APIRoute):
    """A route whose request body is cut off at the grader's upload limit while it is read.

    The limit is `grader_max_upload_bytes` plus room for the multipart framing, counted on the
    raw stream before the form parser sees (and spools to disk) any of it, whether or not the
    client declared a Content-Length: a body that passes it is refused at once with
    SUBMISSION_TOO_LARGE (see `refuse`), and what is left of it is never stored (the server
    discards it). With `requires_token`, a POST without an `Authorization` header is refused
    (UNAUTHORIZED) before a byte of its body is read, unless `grader_allow_anonymous` (a
    browser's cookie is a credential as the token is).
    """

    requires_token: ClassVar[bool] = True

    def allows_anonymous(self, settings: Settings) -> bool:
        """Whether an upload may come without a credential."""
        return settings.grader.allow_anonymous

    def upload_limit(self, settings: Settings) -> int:
        """The most bytes of files one upload may hold."""
        return settings.grader.max_upload_bytes

    async def refuse(self, request: Request, error: ProtocolError) -> Response:
        """Answer an upload refused before its handler ran: here, raise `error` (its JSON)."""
        raise error

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def limited(request: Request) -> Response:
            settings = app_settings(request)
            if (
                self.requires_token
                and request.method == "POST"
                and not self.allows_anonymous(settings)
                and "authorization" not in request.headers
                and GUEST_COOKIE not in request.cookies
            ):
                raise anonymous_upload()  # before reading a byte of the body
            allowed = self.upload_limit(settings)
            body = _LimitedBody(request.receive, allowed + _MULTIPART_OVERHEAD)
            declared = request.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > body.limit:
                return await self.refuse(
                    request, _too_large(allowed, f"the upload is {declared} bytes")
                )
            try:
                return await handler(Request(request.scope, body.receive))
            except Exception:
                # The framework reports a failed body read as a 400; say what happened.
                if body.exceeded:
                    error = _too_large(allowed, f"the upload is more than {body.limit} bytes")
                    return await self.refuse(request, error)
                raise

        return limited


def anonymous_upload() -> ProtocolError:
    """Return the error refusing an upload without a player's token."""
    return ProtocolError(
        ErrorCode.UNAUTHORIZED,
        "uploads need a player's token: register with POST /players and send "
        "`Authorization: Bearer TOKEN` (arena grader submit --token TOKEN)",
    )


def _too_large(allowed: int, what: str) -> ProtocolError:
    return ProtocolError(
        ErrorCode.SUBMISSION_TOO_LARGE,
        f"{what}; at most {allowed} bytes of files are accepted",
        {"max_bytes": allowed},
    )


async def read_uploads(files: Sequence[UploadFile], limit: int) -> list[Upload]:
    """Return the uploaded files' names and bytes; SUBMISSION_TOO_LARGE past `limit` bytes."""
    uploads = []
    total = 0
    for upload in files:
        data = await upload.read(limit - total + 1)
        total += len(data)
        if total > limit:
            raise ProtocolError(
                ErrorCode.SUBMISSION_TOO_LARGE,
                f"the uploaded files exceed {limit} bytes",
                {"max_bytes": limit},
            )
        uploads.append(Upload(name=upload.filename or "", data=data))
    return uploads
