"""The failures of a bot client that reconnecting cannot fix, and how a connection failure reads."""

from __future__ import annotations

from websockets.exceptions import ConnectionClosed, InvalidStatus

FATAL_CLOSE_CODES = {
    4000: "bad protocol",
    4001: "unauthorized",
    4002: "replaced by a newer connection with the same token",
    4003: "protocol version not supported",
}
"""WebSocket close codes after which reconnecting cannot help (docs/PROTOCOL.md)."""


class ClientError(Exception):
    """A failure that reconnecting cannot fix: a refused token, a replaced connection, ..."""


class ServerUnreachable(ClientError):  # noqa: N818 - read as "the server is unreachable"
    """No server answered at the URL for as long as the client was told to wait."""


def fatal_error(exc: BaseException) -> ClientError | None:
    """Return the ClientError that `exc` amounts to when reconnecting cannot help, else None."""
    if isinstance(exc, InvalidStatus) and exc.response.status_code in (401, 403):
        return ClientError(f"the server refused the token (HTTP {exc.response.status_code})")
    if isinstance(exc, ConnectionClosed) and exc.rcvd is not None:
        reason = FATAL_CLOSE_CODES.get(exc.rcvd.code)
        if reason is not None:
            return ClientError(
                f"the server closed the connection with code {exc.rcvd.code}: {reason}"
                + (f" ({exc.rcvd.reason})" if exc.rcvd.reason else "")
            )
    return None


def describe_exception(exc: BaseException) -> str:
    """Return a one-line description of a connection failure."""
    if isinstance(exc, ConnectionClosed):
        code = exc.rcvd.code if exc.rcvd is not None else None
        return f"closed with code {code}" if code is not None else "connection closed"
    return str(exc) or type(exc).__name__
