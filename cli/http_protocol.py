"""uvicorn's h11 protocol held to Arena's connection limits (`arena serve`; docs/SECURITY.md,
"Connections"). Imported only when serving.

uvicorn bounds none of this by itself: its keep-alive timer starts only after a first answer
and any byte cancels it, so a connection that never sends a request, or sends one a byte at a
time, is kept for ever; h11 bounds the headers only while they are incomplete, so a large block
that arrives in one read is parsed whole. Each connection here:

- counts against its client address's open connections (`ConnectionGate.admit`), from the
  moment it is accepted (or its PROXY header read) until it closes, WebSocket or not; over the
  limit it is answered 503 `TOO_MANY_CONNECTIONS` and closed at once;
- has one deadline at a time, per request and never extended by a byte: the idle time before
  a request's first byte (a new connection's too), the time from that byte to the end of its
  headers, and from there to the end of its body; none while the app answers, and none once
  upgraded to a WebSocket (whose hello timeout and pings take over). Past a request's deadline
  it is answered 408 `REQUEST_TIMEOUT` and closed; an idle one is closed;
- refuses request line and headers over `max_header_bytes` with 431 `HEADERS_TOO_LARGE`
  however they arrive;
- takes its client's address from a trusted proxy only: a PROXY protocol header at its start,
  else the proxy's `X-Forwarded-For` (uvicorn's own middleware, applied to these connections
  alone).

After a WebSocket upgrade this protocol stays the transport's and hands every event to the
WebSocket protocol, so that the connection keeps its place in the count until it closes.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from http import HTTPStatus
from typing import Any, ClassVar

import h11
from uvicorn._types import ASGI3Application
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware
from uvicorn.protocols.http.h11_impl import H11Protocol

from protocol.errors import ErrorCode
from protocol.messages import ErrorResponse
from server.connections import (
    ConnectionGate,
    ProxyHeaderError,
    address_key,
    read_proxy_header,
    starts_with_proxy_header,
)

log = logging.getLogger("uvicorn.error")


LINGER_S = 1.0
"""How long a refused connection's answer may wait for the client to read it before close."""


class Phase(enum.Enum):
    """Where a connection is in its current request, which decides its deadline."""

    IDLE = "idle"
    """Waiting for a request's first byte."""
    HEAD = "head"
    """Reading a request's line and headers."""
    BODY = "body"
    """Reading a request's body."""
    BUSY = "busy"
    """The request is read: the app answers it (no deadline here)."""
    DONE = "done"
    """Closed, refused (what still arrives is dropped), or upgraded to a WebSocket."""


class HeadLimitedConnection(h11.Connection):
    """h11's server connection, also refusing a complete request head over the limit.

    h11 checks `max_incomplete_event_size` only against a head still incomplete; the bytes a
    complete head took are measured here. The last refusal is kept for the answer.
    """

    def __init__(self, max_head_bytes: int) -> None:
        super().__init__(h11.SERVER, max_incomplete_event_size=max_head_bytes)
        self.max_head_bytes = max_head_bytes
        self.refusal: h11.RemoteProtocolError | None = None

    def next_event(self) -> h11.Event | type[h11.NEED_DATA] | type[h11.PAUSED]:
        try:
            if self.their_state is not h11.IDLE:
                return super().next_event()
            # `trailing_data` is h11's public view of its buffer (a copy): taken once per
            # request head, and again only when the buffer could hold a head over the limit.
            buffered = len(self.trailing_data[0])
            event = super().next_event()
            if (
                buffered > self.max_head_bytes
                and isinstance(event, h11.Request)
                and buffered - len(self.trailing_data[0]) > self.max_head_bytes
            ):
                raise h11.RemoteProtocolError(
                    "request line and headers too long", error_status_hint=431
                )
            return event
        except h11.RemoteProtocolError as error:
            self.refusal = error
            raise


class ArenaH11Protocol(H11Protocol):
    """One HTTP connection of `arena serve`, held to its server's `ConnectionGate`.

    Use `ArenaH11Protocol.bound(gate)` as uvicorn's `http` protocol class.
    """

    gate: ClassVar[ConnectionGate]
    forwarded: ClassVar[ASGI3Application | None] = None
    """The app behind uvicorn's forwarded-headers middleware (made on first use)."""

    @classmethod
    def bound(cls, gate: ConnectionGate) -> type[ArenaH11Protocol]:
        """Return this protocol class for the connections of `gate`'s server."""
        return type(cls.__name__, (cls,), {"gate": gate, "forwarded": None})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.conn = HeadLimitedConnection(self.gate.max_header_bytes)
        self.phase = Phase.IDLE
        self._deadline: asyncio.TimerHandle | None = None
        self._timed_cycle: object = None
        self._counted: str | None = None
        """The address key this connection counts under, if it counts."""
        self._preface: bytearray | None = None
        """Bytes from a trusted proxy held until it is known whether a PROXY header starts them."""
        self._upgraded: Any = None
        """The WebSocket protocol this connection was handed to."""

    # -- the connection ------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        peer = self.client[0] if self.client else None
        if peer in self.gate.trusted:
            self._preface = bytearray()
        elif not self._admit(peer):
            return
        self._enter(Phase.IDLE)

    def data_received(self, data: bytes) -> None:
        if self._upgraded is not None:
            self._upgraded.data_received(data)
            return
        if self.phase is Phase.DONE:
            return
        if self.phase is Phase.IDLE:
            self._enter(Phase.HEAD)
        if self._preface is not None:
            self._preface += data
            rest = self._read_preface()
            if not rest:
                return
            data = rest
        super().data_received(data)
        self._track()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # The idle deadline below replaces uvicorn's keep-alive timer.
        self._unset_keepalive_if_required()
        self._track()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_deadline()
        self.phase = Phase.DONE
        if self._counted is not None:
            self.gate.release(self._counted)
            self._counted = None
        if self._upgraded is not None:
            self._upgraded.connection_lost(exc)
        else:
            super().connection_lost(exc)

    def eof_received(self) -> None:
        if self._upgraded is not None:
            self._upgraded.eof_received()
        else:
            super().eof_received()

    def pause_writing(self) -> None:
        if self._upgraded is not None:
            self._upgraded.pause_writing()
        else:
            super().pause_writing()

    def resume_writing(self) -> None:
        if self._upgraded is not None:
            self._upgraded.resume_writing()
        else:
            super().resume_writing()

    def shutdown(self) -> None:
        if self.phase is Phase.DONE:
            self.transport.close()  # refused: its answer is written, h11's state is spent
        else:
            super().shutdown()

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        """Hand the connection to a WebSocket protocol, as uvicorn does, keeping the client's
        address and app of this connection and staying the transport's protocol."""
        self._enter(Phase.DONE)
        self.connections.discard(self)
        output = [event.method, b" ", event.target, b" HTTP/1.1\r\n"]
        for name, value in self.headers:
            output += [name, b": ", value, b"\r\n"]
        output.append(b"\r\n")
        factory: Any = self.ws_protocol_class
        protocol = factory(
            config=self.config, server_state=self.server_state, app_state=self.app_state
        )
        protocol.connection_made(self.transport)
        protocol.client = self.client
        protocol.app = self.app
        self._upgraded = protocol
        protocol.data_received(b"".join(output))

    def send_400_response(self, msg: str) -> None:
        """Answer a request h11 could not read: 431 if its head is too long, else 400."""
        refusal = getattr(self.conn, "refusal", None)
        if refusal is not None and refusal.error_status_hint == 431:
            limit = self.gate.max_header_bytes
            self._refuse(
                431,
                ErrorCode.HEADERS_TOO_LARGE,
                f"the request line and headers are longer than {limit} bytes",
                {"limit": limit},
            )
        else:
            reason = str(refusal) if refusal is not None else msg
            self._refuse(400, ErrorCode.BAD_MESSAGE, f"not a valid HTTP/1.1 request: {reason}")

    # -- clients and proxies -------------------------------------------------------------------

    def _admit(self, host: str | None) -> bool:
        """Count this connection under `host`'s address, or refuse it; True if counted."""
        key = address_key(host)
        if not self.gate.admit(key):
            limit = self.gate.max_per_address
            log.warning("refused a connection from %s: %d already open", key, limit)
            self._refuse(
                503,
                ErrorCode.TOO_MANY_CONNECTIONS,
                f"too many connections from your address: at most {limit} at once",
                {"limit": limit},
            )
            return False
        self._counted = key
        return True

    def _read_preface(self) -> bytes:
        """Read a trusted proxy's PROXY header from what it sent so far; return the bytes that
        follow it, or nothing while the header is incomplete or was refused."""
        assert self._preface is not None
        data = bytes(self._preface)
        started = starts_with_proxy_header(data)
        if started is None:
            return b""
        if not started:
            # The proxy's own request, or an HTTP proxy's: its X-Forwarded-For is taken.
            self._preface = None
            self._trust_forwarded_headers()
            return data
        try:
            header = read_proxy_header(data)
        except ProxyHeaderError as error:
            self._refuse(400, ErrorCode.BAD_MESSAGE, f"bad PROXY protocol header: {error}")
            return b""
        if header is None:
            return b""
        self._preface = None
        if header.client is None:
            self._trust_forwarded_headers()
        else:
            self.client = header.client
            if not self._admit(header.client[0]):
                return b""
        rest = data[header.size :]
        if not rest:
            # The proxy sends the header as it connects: the client's request is yet to come.
            self._enter(Phase.IDLE)
        return rest

    def _trust_forwarded_headers(self) -> None:
        cls = type(self)
        if cls.forwarded is None:
            cls.forwarded = ProxyHeadersMiddleware(
                self.config.loaded_app, trusted_hosts=self.gate.trusted.entries
            )
        self.app = cls.forwarded

    # -- deadlines -----------------------------------------------------------------------------

    def _track(self) -> None:
        """Set the deadline for where the current request now is."""
        if self.phase is Phase.DONE or self.transport.is_closing():
            self._enter(Phase.DONE)
            return
        their = self.conn.their_state
        if their is h11.SEND_BODY:
            if self.phase is not Phase.BODY or self._timed_cycle is not self.cycle:
                self._timed_cycle = self.cycle
                self._enter(Phase.BODY)
        elif their is h11.IDLE:
            if self.phase not in (Phase.IDLE, Phase.HEAD):
                # A pipelined request may have begun already.
                self._enter(Phase.HEAD if self.conn.trailing_data[0] else Phase.IDLE)
        else:
            self._enter(Phase.BUSY)

    def _enter(self, phase: Phase) -> None:
        self._cancel_deadline()
        self.phase = phase
        seconds = {
            Phase.IDLE: self.gate.idle_timeout_s,
            Phase.HEAD: self.gate.header_timeout_s,
            Phase.BODY: self.gate.body_timeout_s,
        }.get(phase)
        if seconds is not None:
            self._deadline = self.loop.call_later(seconds, self._expire)

    def _cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if self.phase is Phase.IDLE:
            self.phase = Phase.DONE
            self.timeout_keep_alive_handler()
            return
        what, seconds = (
            ("line and headers", self.gate.header_timeout_s)
            if self.phase is Phase.HEAD
            else ("body", self.gate.body_timeout_s)
        )
        message = f"the request's {what} did not arrive within {seconds:g} s"
        cycle = self.cycle if self.phase is Phase.BODY else None
        if cycle is not None:
            # The app may be waiting for the body: it is told the client went away, and
            # whatever it answers now is dropped.
            cycle.disconnected = True
            cycle.message_event.set()
            if cycle.response_started:
                self.phase = Phase.DONE
                self.transport.close()
                return
        self._refuse(408, ErrorCode.REQUEST_TIMEOUT, message, {"limit_s": seconds})

    # -- answers -------------------------------------------------------------------------------

    def _refuse(
        self,
        status: int,
        code: ErrorCode,
        message: str,
        details: dict[str, str | int | float] | None = None,
    ) -> None:
        """Answer `status` with the error body, whatever h11's state, and close."""
        self._enter(Phase.DONE)
        body = ErrorResponse(code=code, message=message, details=details or {})
        content = body.model_dump_json().encode()
        head = (
            f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n"
            "content-type: application/json\r\n"
            f"content-length: {len(content)}\r\n"
            "connection: close\r\n\r\n"
        )
        self.transport.write(head.encode() + content)
        # A lingering close: closing at once with the client's request unread (or still on its
        # way) would reset the connection, and the client could lose the answer. The sending
        # side is shut instead, what still arrives is dropped, and the connection closes when
        # the client closes its side (`eof_received`), or after LINGER_S. Not for a connection
        # over its address's limit, which is counted nowhere: its file is freed at once (a
        # client that sent its request already may see a reset instead of the answer).
        if code is not ErrorCode.TOO_MANY_CONNECTIONS and self.transport.can_write_eof():
            self.transport.write_eof()
            self._deadline = self.loop.call_later(LINGER_S, self.transport.close)
        else:
            self.transport.close()
