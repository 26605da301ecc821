"""A refusal, and a refusal as an HTTP response: the one `ErrorResponse` of every REST error.

`MatchError` is what the match service and its helpers raise for a refused call on a match.

The body is `ErrorResponse.from_error` (the same translation the WebSocket `error` message
uses); the status is the code's (`protocol.HTTP_STATUS`) unless the caller says otherwise.
The exception handlers (`server.routes`), the rate limiter and the body-size middleware all
answer through `error_response`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fastapi.responses import JSONResponse

from protocol.errors import HTTP_STATUS, ErrorCode, ProtocolError, ScalarValue
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


class MatchError(ProtocolError):
    """A refused call on a match: a protocol error with the match id and, for moves, legal moves."""

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        match_id: str | None = None,
        legal_moves: Sequence[str] | None = None,
        details: dict[str, ScalarValue] | None = None,
    ) -> None:
        super().__init__(code, message, details, match_id=match_id, legal_moves=legal_moves)
