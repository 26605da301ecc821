"""The WebSocket hub: who is connected, and the fan-out of match events to them.

One `Hub` per application (on `app.state.hub`). It holds one `Connection` per player (a newer
connection with the same token replaces the older, which is closed with 4002; in a cluster, one
in another server process too: server.cluster.bridge) and the spectators of each match.
`MatchService` awaits `Hub.publish` after every commit, under the match's lock, so each match's
events reach every connection in seq order.

A connection never blocks a match: `publish` sends a message at once only when that cannot
wait (nothing queued before it and the transport writable: server.asgi.immediate_sender);
otherwise it puts the text on the connection's queue, and a writer task per connection sends
it. The queue is bounded in bytes, not messages (one message may be a long game's
`match_state`): a client that lets more than `max_queued_bytes` wait (it does not read, or
reads too slowly) loses what waits and is closed with 4008.

While a connection is being brought up to date (`Connection.syncing`), events are held back;
`Connection.sync` records the seq of each `match_state` sent, and `Connection.end_sync` then
sends only the held events that are newer, so a client sees each match's state and then every
later event exactly once. Later events the last state sent already shows are dropped too (with
several server processes, server.cluster, a state read from the database may be ahead of the
owner's broadcast, and a resync sends a fresh state at any time).

Versions: each connection is sent what the protocol version its `hello` named knows
(`Connection.version`): a message is written once per version among its receivers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections import Counter
from collections.abc import Callable

from fastapi import WebSocket, WebSocketDisconnect
from starlette.types import Send

from protocol.errors import CloseCode
from protocol.messages import (
    Challenge,
    MatchStarted,
    MatchState,
    ServerMessage,
    dump_server_message,
)
from protocol.version import PROTOCOL_VERSION
from server.asgi import RAW_SEND, immediate_sender
from server.matches.publisher import Broadcast

log = logging.getLogger(__name__)

CLOSE_TIMEOUT_S = 5.0
"""How long a closing connection's writer may wait for the client to take what it still has to
send (a client that does not read never does); then it is cancelled, so neither the route nor
the server's shutdown waits on it."""


class _Close:
    """A queued request to close the WebSocket with `code` once the messages before it are sent."""

    def __init__(self, code: int, reason: str) -> None:
        self.code = code
        self.reason = reason


class Connection:
    """One WebSocket and the task that writes its queued messages, in order.

    `player_id` is None for a spectator. `max_queued_bytes` bounds the text waiting to be sent
    (held back while syncing, queued, or being sent), counted in characters of JSON.
    """

    def __init__(
        self, websocket: WebSocket, player_id: int | None = None, *, max_queued_bytes: int
    ) -> None:
        self.websocket = websocket
        self.player_id = player_id
        self.version = PROTOCOL_VERSION
        """The protocol version spoken with the client (the older of its hello's and ours)."""
        self.closed = False
        self.key = uuid.uuid4().hex
        """This connection's own id (across server processes: server.cluster.bridge)."""
        self.announced = False
        """True once every server process has been told of this player connection (set by
        server.cluster.bridge.OnePerPlayer): from then on a newer one elsewhere replaces it."""
        self.bot_available = False
        """True while the player said with `bot_available` that it is a bot open to
        challenges (server.presence lists it)."""
        self.bot_games: tuple[str, ...] | None = None
        """The games its `bot_available` named (None: any)."""
        self.max_queued_bytes = max_queued_bytes
        self._queued_bytes = 0
        self._queue: asyncio.Queue[str | _Close] = asyncio.Queue()
        self._held: list[tuple[str, int, str]] | None = []
        self._synced: dict[str, int] = {}
        self._raw_send: Send | None = websocket.scope.get(RAW_SEND)
        self._send_now = None if self._raw_send is None else immediate_sender(self._raw_send)
        self._writing = False
        """True while the writer holds a message it has taken from the queue."""
        self._writer = asyncio.create_task(self._write())

    @property
    def syncing(self) -> bool:
        """Return True while events are held back until `end_sync`."""
        return self._held is not None

    def send(self, message: ServerMessage) -> None:
        """Queue `message` for sending now (not held back while syncing), in `version`."""
        self._put(dump_server_message(message, self.version))

    def sync(self, state: MatchState | Challenge) -> None:
        """Queue a match's state (or a pending challenge) and remember its seq: held events up
        to it are dropped."""
        self._synced[state.match_id] = state.seq
        self.send(state)

    def end_sync(self) -> None:
        """Queue the held events newer than the states sent; later events go out at once."""
        held, self._held = self._held or [], None
        for match_id, seq, text in held:
            self._queued_bytes -= len(text)
            if seq > self._synced.get(match_id, -1):
                self._put(text)

    def deliver(self, match_id: str, seq: int, text: str) -> None:
        """Queue (or, while syncing, hold) the text of one event of `match_id`; an event the
        state sent (`sync`) shows already is dropped.

        (In one process a state is read under the match's lock, so it never shows an event
        still to be delivered; with several processes, a state read from the database can
        be ahead of the owner's broadcast: server.cluster.bridge.)
        """
        if 0 <= seq <= self._synced.get(match_id, -1):
            return
        if self._held is not None:
            if not self._count(text):
                self._held.append((match_id, seq, text))
        else:
            self._put(text)

    def close(self, code: int, reason: str = "") -> None:
        """Close the WebSocket with `code` after the messages queued so far."""
        if not self.closed:
            self._queue.put_nowait(_Close(code, reason))
            self.closed = True

    async def wait_closed(self) -> None:
        """Wait until the writer has sent everything queued (and the close, if any), at most
        CLOSE_TIMEOUT_S: a client that does not read would make it wait forever."""
        if not self.closed:
            self.close(CloseCode.NORMAL)
        done, _ = await asyncio.wait({self._writer}, timeout=CLOSE_TIMEOUT_S)
        if not done:
            self._writer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._writer

    def _put(self, text: str) -> None:
        if self._count(text):
            return
        if self._send_now is not None and not self._writing and self._queue.empty():
            try:
                sent = self._send_now(text)
            except (OSError, RuntimeError):
                # The client went away; the reading side notices and cleans up.
                self.closed = True
                return
            if sent:
                self._queued_bytes -= len(text)
                return
        self._queue.put_nowait(text)

    def _count(self, text: str) -> bool:
        """Count `text` as waiting; return True if it must be dropped instead (closed, or the
        client is too slow: then everything waiting is dropped and the close queued)."""
        if self.closed:
            return True
        self._queued_bytes += len(text)
        if self._queued_bytes <= self.max_queued_bytes:
            return False
        log.warning(
            "closing a WebSocket client that does not read: %d bytes waiting, the limit is %d",
            self._queued_bytes,
            self.max_queued_bytes,
        )
        while not self._queue.empty():
            self._queue.get_nowait()
        if self._held is not None:
            self._held.clear()
        self._queued_bytes = 0
        self.close(CloseCode.TOO_SLOW, "too slow: messages were not read")
        return True

    async def _close_now(self, code: int, reason: str) -> None:
        with contextlib.suppress(Exception):
            await self.websocket.close(code, reason)

    async def _write(self) -> None:
        """Send queued messages until a close is queued or the client goes away."""
        try:
            while True:
                item = await self._queue.get()
                if isinstance(item, _Close):
                    await self._close_now(item.code, item.reason)
                    return
                self._writing = True
                if self._raw_send is not None:
                    await self._raw_send({"type": "websocket.send", "text": item})
                else:
                    await self.websocket.send_text(item)
                self._writing = False
                self._queued_bytes -= len(item)
        except (OSError, RuntimeError, WebSocketDisconnect):
            # The client went away; the reading side notices and cleans up.
            self.closed = True


class Hub:
    """The application's WebSocket connections: one per player, and each match's spectators.

    It also counts every open WebSocket by client address and by player (`admit`, `release`),
    from the handshake to the end of its route, whether or not it has said hello yet. The
    address count is the WebSocket share of the address's connections: every connection,
    HTTP or WebSocket, already counts in the connection layer (`server.connections`, at most
    `max_connections_per_address`), and at most `ws_max_connections_per_address` of them may
    be WebSockets here, where a refusal can be a close code (4009) the client reads. Behind an
    HTTP proxy (`X-Forwarded-For`) this is the only count of the client's own connections.
    """

    def __init__(self) -> None:
        self.players: dict[int, Connection] = {}
        self.spectators: dict[str, set[Connection]] = {}
        self._per_address: Counter[str] = Counter()
        self._per_player: Counter[int] = Counter()
        self.attach_listeners: list[Callable[[Connection], None]] = []
        """Called with each player connection `attach_player` makes current (in a cluster:
        to replace the player's older connections in other processes)."""

    def admit(
        self, address: str, player_id: int | None, *, max_per_address: int, max_per_player: int
    ) -> str | None:
        """Count one more open connection from `address` (and of `player_id`, if any); return
        None, or why it is refused when a limit is reached (then nothing is counted)."""
        if self._per_address[address] >= max_per_address:
            return f"too many connections: at most {max_per_address} from one address"
        if player_id is not None and self._per_player[player_id] >= max_per_player:
            return f"too many connections: at most {max_per_player} for one player"
        self._per_address[address] += 1
        if player_id is not None:
            self._per_player[player_id] += 1
        return None

    def release(self, address: str, player_id: int | None) -> None:
        """Forget one connection counted by `admit`."""
        self._per_address[address] -= 1
        if self._per_address[address] <= 0:
            del self._per_address[address]
        if player_id is not None:
            self._per_player[player_id] -= 1
            if self._per_player[player_id] <= 0:
                del self._per_player[player_id]

    def attach_player(self, connection: Connection) -> None:
        """Make `connection` its player's connection, closing any older one with 4002."""
        assert connection.player_id is not None
        old = self.players.get(connection.player_id)
        self.players[connection.player_id] = connection
        if old is not None and old is not connection:
            old.close(CloseCode.REPLACED, "replaced by a newer connection")
        for listener in self.attach_listeners:
            listener(connection)

    def replace_player(self, player_id: int) -> None:
        """Close `player_id`'s connection here with 4002: a newer one was opened elsewhere."""
        connection = self.players.pop(player_id, None)
        if connection is not None:
            connection.close(CloseCode.REPLACED, "replaced by a newer connection")

    def detach_player(self, connection: Connection) -> None:
        """Forget `connection` unless a newer one has replaced it already."""
        if (
            connection.player_id is not None
            and self.players.get(connection.player_id) is connection
        ):
            del self.players[connection.player_id]

    def watch(self, match_id: str, connection: Connection) -> None:
        """Send `connection` every later event of `match_id`."""
        self.spectators.setdefault(match_id, set()).add(connection)

    def unwatch(self, match_id: str, connection: Connection) -> None:
        """Stop sending `connection` the events of `match_id`."""
        watchers = self.spectators.get(match_id)
        if watchers is not None:
            watchers.discard(connection)
            if not watchers:
                del self.spectators[match_id]

    async def publish(self, broadcast: Broadcast) -> None:
        """Queue the messages of `broadcast` for both seats' players and the match's spectators.

        A `match_started` or `match_state` carries each player's own seat as `your_seat`. Each
        message is written once per protocol version among its receivers.
        """
        seated = [
            (seat, self.players.get(pid))
            for seat, pid in enumerate(broadcast.players)
            if pid is not None
        ]
        watchers = list(self.spectators.get(broadcast.match_id, ()))
        for message in broadcast.messages:
            seq: int = getattr(message, "seq", -1)
            texts: dict[str, str] = {}
            for seat, connection in seated:
                if connection is None:
                    continue
                version = connection.version
                if isinstance(message, MatchStarted | MatchState):
                    own = message.model_copy(update={"your_seat": seat})
                    connection.deliver(broadcast.match_id, seq, dump_server_message(own, version))
                else:
                    text = texts.get(version) or texts.setdefault(
                        version, dump_server_message(message, version)
                    )
                    connection.deliver(broadcast.match_id, seq, text)
            if isinstance(message, Challenge):
                continue  # for the challenged player alone, not the match's spectators
            for connection in watchers:
                version = connection.version
                text = texts.get(version) or texts.setdefault(
                    version, dump_server_message(message, version)
                )
                connection.deliver(broadcast.match_id, seq, text)

    async def close(self) -> None:
        """Close every connection with 1001 (the server is going away)."""
        connections = list(self.players.values())
        for watchers in self.spectators.values():
            connections.extend(watchers)
        for connection in connections:
            connection.close(CloseCode.GOING_AWAY, "the server is shutting down")
        await asyncio.gather(*(c.wait_closed() for c in connections), return_exceptions=True)
