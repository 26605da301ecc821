"""A refusal on the wire: the WebSocket `error` message and the REST error body, one shape."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field

from protocol.errors import ErrorCode, ProtocolError
from protocol.messages.base import MAX_TEXT_LENGTH, Details, MatchId, MoveText, Text, WireMessage


class _ErrorFields(WireMessage):
    """The fields of an error, shared by the WebSocket message and the REST body."""

    type: Literal["error"] = "error"
    code: ErrorCode
    message: Text
    match_id: MatchId | None = None
    legal_moves: tuple[MoveText, ...] | None = None
    details: Details = Field(default_factory=dict)

    @classmethod
    def from_error(cls, error: ProtocolError, match_id: str | None = None) -> Self:
        """Return the error answering `error`: its code, message (cut to what the wire takes),
        details, and the match and legal moves it names. The one translation of a refusal,
        for the WebSocket `error` message and the REST `ErrorResponse` alike."""
        return cls(
            code=error.code,
            message=error.message[:MAX_TEXT_LENGTH],
            match_id=match_id or error.match_id,
            legal_moves=error.legal_moves,
            details=error.details,
        )


class ErrorMessage(_ErrorFields):
    """A request was refused; `code` says why and the match, if any, is unchanged.

    `legal_moves` is set on move errors; `details` maps field names or facts to values.
    """


class ErrorResponse(_ErrorFields):
    """The body of every REST error response, with the same fields as the `error` message."""
