"""Error codes, WebSocket close codes and the exception the protocol raises on bad input.

Every error a client can see names one `ErrorCode`. The same codes travel in WebSocket `error`
messages and in REST `ErrorResponse` bodies, so a client handles both transports alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import IntEnum, StrEnum
from types import MappingProxyType


class ErrorCode(StrEnum):
    """What went wrong, as a stable machine-readable code (the value is the wire text)."""

    ILLEGAL_MOVE = "ILLEGAL_MOVE"
    INVALID_MOVE = "INVALID_MOVE"
    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    STALE_SEQ = "STALE_SEQ"
    MATCH_OVER = "MATCH_OVER"
    MATCH_NOT_OVER = "MATCH_NOT_OVER"
    NOT_STARTED = "NOT_STARTED"
    BAD_MESSAGE = "BAD_MESSAGE"
    VALIDATION_ERROR = "VALIDATION_ERROR"
    MESSAGE_TOO_LARGE = "MESSAGE_TOO_LARGE"
    UNSUPPORTED_VERSION = "UNSUPPORTED_VERSION"
    UNKNOWN_MATCH = "UNKNOWN_MATCH"
    UNKNOWN_TOURNAMENT = "UNKNOWN_TOURNAMENT"
    NOT_A_PLAYER = "NOT_A_PLAYER"
    UNAUTHORIZED = "UNAUTHORIZED"
    FORBIDDEN = "FORBIDDEN"
    RATE_LIMITED = "RATE_LIMITED"
    NO_DRAW_OFFER = "NO_DRAW_OFFER"
    CANNOT_ABORT = "CANNOT_ABORT"
    SEAT_TAKEN = "SEAT_TAKEN"
    NAME_TAKEN = "NAME_TAKEN"
    UNKNOWN_JOB = "UNKNOWN_JOB"
    BAD_SUBMISSION = "BAD_SUBMISSION"
    SUBMISSION_TOO_LARGE = "SUBMISSION_TOO_LARGE"
    JOB_NOT_FINISHED = "JOB_NOT_FINISHED"
    QUEUE_FULL = "QUEUE_FULL"
    GRADER_UNAVAILABLE = "GRADER_UNAVAILABLE"
    INTERNAL_ERROR = "INTERNAL_ERROR"
    NOT_CHALLENGED = "NOT_CHALLENGED"
    INVITATIONS_PENDING = "INVITATIONS_PENDING"
    TOURNAMENT_OVER = "TOURNAMENT_OVER"
    NOT_FOUND = "NOT_FOUND"
    METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED"
    UNKNOWN_PLAYER = "UNKNOWN_PLAYER"
    UNKNOWN_COURSE = "UNKNOWN_COURSE"
    UNKNOWN_ASSIGNMENT = "UNKNOWN_ASSIGNMENT"
    UNKNOWN_MEMBER = "UNKNOWN_MEMBER"
    DEADLINE_PASSED = "DEADLINE_PASSED"
    SUBMISSION_LIMIT = "SUBMISSION_LIMIT"
    BAD_ROSTER = "BAD_ROSTER"
    QUOTA_EXCEEDED = "QUOTA_EXCEEDED"
    UNAVAILABLE = "UNAVAILABLE"
    TRACE_TOO_LARGE = "TRACE_TOO_LARGE"
    TRACE_TIMEOUT = "TRACE_TIMEOUT"
    TOO_MANY_CONNECTIONS = "TOO_MANY_CONNECTIONS"
    REQUEST_TIMEOUT = "REQUEST_TIMEOUT"
    HEADERS_TOO_LARGE = "HEADERS_TOO_LARGE"


ERROR_DESCRIPTIONS: Mapping[ErrorCode, str] = MappingProxyType(
    {
        ErrorCode.ILLEGAL_MOVE: "The move parses but is not legal in the position; "
        "`legal_moves` lists the legal ones. The match is unchanged.",
        ErrorCode.INVALID_MOVE: "The move text cannot be read in the game's notation. "
        "The match is unchanged.",
        ErrorCode.NOT_YOUR_TURN: "It is the other seat's turn. The match is unchanged, but the "
        "move counts toward the illegal-move forfeit.",
        ErrorCode.STALE_SEQ: "`expected_seq` differs from the match's current `seq`: you missed "
        "an event. `details.seq` holds the current one; the move was not played.",
        ErrorCode.MATCH_OVER: "The match has already ended (finished or aborted).",
        ErrorCode.MATCH_NOT_OVER: "A rematch follows a finished match; this one is still being "
        "played (or waits for a player, or was aborted).",
        ErrorCode.NOT_STARTED: "The match is still waiting for a player; nothing can be "
        "played yet.",
        ErrorCode.BAD_MESSAGE: "Not a JSON object, no `type`, an unknown `type`, nested deeper "
        "than MAX_JSON_DEPTH, an integer longer than MAX_NUMBER_DIGITS, or a message sent "
        "before `hello`.",
        ErrorCode.VALIDATION_ERROR: "A known message or body with a missing, extra, mistyped or "
        "out-of-range field; `details` names the fields.",
        ErrorCode.MESSAGE_TOO_LARGE: "The message is larger than the server accepts "
        "(see MAX_MESSAGE_BYTES).",
        ErrorCode.UNSUPPORTED_VERSION: "The server does not speak the major protocol version "
        "given in `hello`.",
        ErrorCode.UNKNOWN_MATCH: "No match has this id.",
        ErrorCode.UNKNOWN_TOURNAMENT: "No tournament has this id.",
        ErrorCode.NOT_A_PLAYER: "You do not hold a seat in this match.",
        ErrorCode.UNAUTHORIZED: "The token is missing or wrong.",
        ErrorCode.FORBIDDEN: "The token is valid but does not allow this action (for example, "
        "sending on a spectator connection, or starting someone else's tournament).",
        ErrorCode.RATE_LIMITED: "Too many messages or requests; nothing was done. Retry after "
        "`details.retry_after_ms` (REST: the `Retry-After` header).",
        ErrorCode.NO_DRAW_OFFER: "There is no pending draw offer from your opponent to accept "
        "or decline.",
        ErrorCode.CANNOT_ABORT: "The match can only be aborted before its first move.",
        ErrorCode.SEAT_TAKEN: "The seat asked for is not open.",
        ErrorCode.NAME_TAKEN: "The player name is already registered (names are compared "
        "without regard to case); choose another (since 1.2; SEAT_TAKEN before).",
        ErrorCode.UNKNOWN_JOB: "No grading job has this id.",
        ErrorCode.BAD_SUBMISSION: "The upload cannot be graded as it is: no file, a file name "
        "that is not a plain name, an unreadable zip or one over the server's zip limits "
        "(entries, a path's depth or length), or no main program for the profile. "
        "Nothing was queued.",
        ErrorCode.SUBMISSION_TOO_LARGE: "The upload is larger than the server accepts (see "
        "`GET /grader/profiles`). Nothing was queued.",
        ErrorCode.JOB_NOT_FINISHED: "The grading job is still queued or running; poll "
        "`GET /grader/jobs/{id}` until its status is `done` or `error`.",
        ErrorCode.QUEUE_FULL: "The grading queue is full, or holds as many of this player's jobs "
        "as one player may have waiting, or as many from this client address as one address "
        "may have waiting; nothing was queued. Retry later.",
        ErrorCode.GRADER_UNAVAILABLE: "This server cannot sandbox student code "
        "(`details.sandbox` says why), so it grades nothing; nothing was queued.",
        ErrorCode.INTERNAL_ERROR: "The server failed; the match is unchanged. Retry, and report "
        "it if it repeats.",
        ErrorCode.NOT_CHALLENGED: "There is no pending challenge for you in this match (or no "
        "pending invitation to this tournament) to accept or decline.",
        ErrorCode.INVITATIONS_PENDING: "The tournament cannot start before every invited player "
        "has accepted; `details` names those still pending (or who declined).",
        ErrorCode.TOURNAMENT_OVER: "The tournament has already ended (finished, cancelled or "
        "failed).",
        ErrorCode.NOT_FOUND: "No route has this path (REST): see `GET /` and `/openapi.json`.",
        ErrorCode.METHOD_NOT_ALLOWED: "The route exists but not with this HTTP method; the "
        "`Allow` header lists the methods it takes.",
        ErrorCode.UNKNOWN_PLAYER: "No registered player has this name (since 1.1).",
        ErrorCode.UNKNOWN_COURSE: "No course has this id, or you are not one of its members "
        "(the two are not told apart).",
        ErrorCode.UNKNOWN_ASSIGNMENT: "The course has no assignment with this id, or it is not "
        "released yet.",
        ErrorCode.UNKNOWN_MEMBER: "The course has no member with this id.",
        ErrorCode.DEADLINE_PASSED: "The assignment takes no more submissions: its due date (hard "
        "deadline) or its last late day has passed; `details` holds the time. Nothing was queued.",
        ErrorCode.SUBMISSION_LIMIT: "You have used the assignment's submissions for the last 24 "
        "hours; `details.next_allowed_time_ms` says when the next is allowed. Nothing was queued.",
        ErrorCode.BAD_ROSTER: "The roster cannot be imported; the message names the line and the "
        "column. Nothing was imported.",
        ErrorCode.QUOTA_EXCEEDED: "A count limit of the server is reached (courses per owner, "
        "assignments per course, members per course); `details.limit` holds it.",
        ErrorCode.UNAVAILABLE: "The match is between two server processes for a moment (the "
        "process playing it stopped and another is taking it over); nothing was done. Retry "
        "after `details.retry_after_ms`.",
        ErrorCode.TRACE_TOO_LARGE: "The traced search tree has more nodes than the server's "
        "limit (`details.limit`); nothing is returned. Ask a smaller depth or a narrower window.",
        ErrorCode.TRACE_TIMEOUT: "The trace did not end within the server's time limit "
        "(`details.limit_s`), or waited that long for a free thread, and was stopped; nothing is "
        "returned. Ask a smaller depth, or retry when the server is less busy.",
        ErrorCode.TOO_MANY_CONNECTIONS: "Your address already has as many connections open as "
        "the server allows (`details.limit`, HTTP and WebSocket together); this one was closed "
        "at once. Close connections you no longer use, or reuse one (keep-alive).",
        ErrorCode.REQUEST_TIMEOUT: "The request's line and headers, or its body, did not "
        "arrive within the server's time (`details.limit_s`, counted per request, not per "
        "byte); nothing was done and the connection was closed.",
        ErrorCode.HEADERS_TOO_LARGE: "The request line and headers are longer than the server "
        "reads (`details.limit`, in bytes); nothing was done and the connection was closed.",
    }
)
"""One line per error code, for documentation and for default error messages."""


HTTP_STATUS: Mapping[ErrorCode, int] = MappingProxyType(
    {
        ErrorCode.ILLEGAL_MOVE: 422,
        ErrorCode.INVALID_MOVE: 422,
        ErrorCode.NOT_YOUR_TURN: 409,
        ErrorCode.STALE_SEQ: 409,
        ErrorCode.MATCH_OVER: 409,
        ErrorCode.MATCH_NOT_OVER: 409,
        ErrorCode.NOT_STARTED: 409,
        ErrorCode.BAD_MESSAGE: 400,
        ErrorCode.VALIDATION_ERROR: 422,
        ErrorCode.MESSAGE_TOO_LARGE: 413,
        ErrorCode.UNSUPPORTED_VERSION: 400,
        ErrorCode.UNKNOWN_MATCH: 404,
        ErrorCode.UNKNOWN_TOURNAMENT: 404,
        ErrorCode.NOT_A_PLAYER: 403,
        ErrorCode.UNAUTHORIZED: 401,
        ErrorCode.FORBIDDEN: 403,
        ErrorCode.RATE_LIMITED: 429,
        ErrorCode.NO_DRAW_OFFER: 409,
        ErrorCode.CANNOT_ABORT: 409,
        ErrorCode.SEAT_TAKEN: 409,
        ErrorCode.NAME_TAKEN: 409,
        ErrorCode.UNKNOWN_JOB: 404,
        ErrorCode.BAD_SUBMISSION: 422,
        ErrorCode.SUBMISSION_TOO_LARGE: 413,
        ErrorCode.JOB_NOT_FINISHED: 409,
        ErrorCode.QUEUE_FULL: 503,
        ErrorCode.GRADER_UNAVAILABLE: 503,
        ErrorCode.INTERNAL_ERROR: 500,
        ErrorCode.NOT_CHALLENGED: 403,
        ErrorCode.INVITATIONS_PENDING: 409,
        ErrorCode.TOURNAMENT_OVER: 409,
        ErrorCode.NOT_FOUND: 404,
        ErrorCode.METHOD_NOT_ALLOWED: 405,
        ErrorCode.UNKNOWN_PLAYER: 404,
        ErrorCode.UNKNOWN_COURSE: 404,
        ErrorCode.UNKNOWN_ASSIGNMENT: 404,
        ErrorCode.UNKNOWN_MEMBER: 404,
        ErrorCode.DEADLINE_PASSED: 403,
        ErrorCode.SUBMISSION_LIMIT: 429,
        ErrorCode.BAD_ROSTER: 422,
        ErrorCode.QUOTA_EXCEEDED: 403,
        ErrorCode.UNAVAILABLE: 503,
        ErrorCode.TRACE_TOO_LARGE: 422,
        ErrorCode.TRACE_TIMEOUT: 503,
        ErrorCode.TOO_MANY_CONNECTIONS: 503,
        ErrorCode.REQUEST_TIMEOUT: 408,
        ErrorCode.HEADERS_TOO_LARGE: 431,
    }
)
"""The HTTP status of a REST response carrying each error code."""


class CloseCode(IntEnum):
    """The codes the server uses when it closes a WebSocket (RFC 6455 section 7.4)."""

    NORMAL = 1000
    GOING_AWAY = 1001
    POLICY_VIOLATION = 1008
    MESSAGE_TOO_BIG = 1009
    SERVER_ERROR = 1011
    BAD_PROTOCOL = 4000
    UNAUTHORIZED = 4001
    REPLACED = 4002
    UNSUPPORTED_VERSION = 4003
    TOO_SLOW = 4008
    HELLO_TIMEOUT = 4004
    TOO_MANY_CONNECTIONS = 4009


CLOSE_DESCRIPTIONS: Mapping[CloseCode, str] = MappingProxyType(
    {
        CloseCode.NORMAL: "Normal closure.",
        CloseCode.GOING_AWAY: "The server is shutting down or restarting; reconnect with backoff.",
        CloseCode.POLICY_VIOLATION: "The client broke a rule the server enforces (for example, "
        "it kept sending after RATE_LIMITED).",
        CloseCode.MESSAGE_TOO_BIG: "A message exceeded MAX_MESSAGE_BYTES.",
        CloseCode.SERVER_ERROR: "The server hit an unexpected error; reconnect with backoff.",
        CloseCode.BAD_PROTOCOL: "The first message was not a valid `hello` (the close reason "
        "says what was wrong with it), or the client kept sending messages that are not JSON.",
        CloseCode.UNAUTHORIZED: "The token is missing or wrong; do not reconnect with the same "
        "token.",
        CloseCode.REPLACED: "A newer connection with the same token replaced this one; do not "
        "reconnect automatically.",
        CloseCode.UNSUPPORTED_VERSION: "The server does not speak the major protocol version "
        "given in `hello`.",
        CloseCode.TOO_SLOW: "The client did not read: more than the server's limit of messages "
        "(ws_max_queued_bytes) waited to be sent. They were dropped; reconnect and read.",
        CloseCode.HELLO_TIMEOUT: "The client did not send `hello` within the server's limit "
        "(ws_hello_timeout_s) after the handshake.",
        CloseCode.TOO_MANY_CONNECTIONS: "The client address (ws_max_connections_per_address) or "
        "the player (ws_max_connections_per_player) already has as many WebSockets open as the "
        "server allows; close some first.",
    }
)
"""One line per WebSocket close code, for documentation."""


ScalarValue = str | int | float | bool | None
"""A JSON scalar: the values error details may hold."""


class ProtocolError(ValueError):
    """Input that breaks the wire contract: `code` says how, `details` says where.

    Raised by `parse_client_message` and `parse_server_message`; a server answers it with an
    `error` message (or an `ErrorResponse` body) carrying the same code, message and details.
    """

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        details: Mapping[str, ScalarValue] | None = None,
        *,
        match_id: str | None = None,
        legal_moves: Sequence[str] | None = None,
    ) -> None:
        self.code = code
        self.message = message
        self.details: dict[str, ScalarValue] = dict(details or {})
        self.match_id = match_id
        """The match the refused request was about, when there is one."""
        self.legal_moves = None if legal_moves is None else tuple(legal_moves)
        """The legal moves, on a refused move."""
        super().__init__(f"{code.value}: {message}")
