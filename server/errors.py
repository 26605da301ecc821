"""A refusal as an HTTP response: the one `ErrorResponse` of every REST error.

The body is `ErrorResponse.from_error` (the same translation the WebSocket `error` message
uses); the status is the code's (`protocol.HTTP_STATUS`) unless the caller says otherwise.
The exception handlers (`server.routes`), the rate limiter and the body-size middleware all
answer through `error_response`.
"""

from __future__ import annotations

from collections.abc import Mapping

from fastapi.responses import JSONResponse

from protocol.errors import HTTP_STATUS, ProtocolError
from protocol.messages import ErrorResponse


def error_response(
    error: ProtocolError, status_code: int | None = None, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    """Return the HTTP response carrying `error` as an `ErrorResponse`."""
    return JSONResponse(
        ErrorResponse.from_error(error).model_dump(mode="json"),
        status_code=status_code or HTTP_STATUS[error.code],
        headers=headers,
    )
