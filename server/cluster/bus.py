"""The bus between server processes: Redis pub/sub (docs/SCALING.md).

When the server is clustered (`Settings.clustered`: PostgreSQL and Redis), each `arena serve`
process has one `Bus` (on `app.state.bus`; None when not clustered). PostgreSQL holds the
truth; the bus carries news, at most once: pub/sub keeps nothing, so a message sent while a
process is cut off from Redis is lost, and each user of the bus copes with that (the match
bridge, server.cluster.bridge, fetches the state from the database; a request raises
`BusUnavailable`).

What it carries, on channels named `<redis_key_prefix>:bus:...` (pub/sub channels belong to the
Redis server, not to one of its databases: the prefix keeps deployments and tests apart):

- Match broadcasts: `publish_match` is a MatchService listener on the process that owns the
  match; channel `...:bus:matches`. Every other process hands each broadcast to its `on_match`
  handlers in the order the owner published them (a process's own broadcasts are not handed
  back: its hub had them already). Messages travel as protocol JSON at the newest version
  (`dump_server_message` / `parse_server_message`). A broadcast that could not be published
  (Redis away) is not retried; once Redis answers again the owner publishes a `MatchNotice`
  instead (the match, its seats' players and its newest seq), so followers fetch the state
  (server.cluster.sender publishes both).
- Requests to one process: `request(process_id, payload)` publishes on
  `...:bus:rpc:<process_id>`; that process's `serve` handler answers on
  `...:bus:reply:<asking process id>`, matched by the request's id (server.cluster.requests).
  Payloads are JSON objects.
- Topics: `publish(topic, payload)` on `...:bus:topic:<topic>`, handed to every `subscribe`r
  of the topic in every process, the publishing one included.

Outages: a lost Redis never raises into the server's own work. The reader reconnects with
backoff (50 ms doubling up to `bus_reconnect_max_s`), logs one warning per outage and one line
when Redis is back, then awaits each `on_reconnect` handler (broadcasts may have been missed in
between: the bridge resends the state of every match followed here); also when Redis was away
as the bus started and came later. `publish_match` only
queues: a sender task publishes in order, so a slow or absent Redis never holds a match's lock.
`request` and `publish` raise `BusUnavailable` when Redis cannot be reached. The errors, the
handlers' types and a match broadcast's envelope are server.cluster.envelopes'.

Handlers run on the reader task, one message after another (that is what keeps a match's
broadcasts in order): an `on_match` or topic callback must not block. Requests are served each
in its own task, so a slow handler delays no other message.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import socket
from collections.abc import Callable, Coroutine
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from protocol.errors import ProtocolError
from protocol.messages import parse_server_message
from server.cluster.envelopes import (
    JSON,
    BusUnavailable,
    MatchFilter,
    MatchHandler,
    MatchNotice,
    ReconnectHandler,
    RequestHandler,
    TopicCallback,
    seats_of,
)
from server.cluster.requests import Requests
from server.cluster.sender import BroadcastSender
from server.matches.publisher import Broadcast
from server.settings import Settings

log = logging.getLogger(__name__)

BACKOFF_MIN_S = 0.05
"""The first wait before trying Redis again after losing it (it doubles each failure)."""

READ_POLL_S = 1.0
"""How long the reader waits for a message before looking again (it notices a close)."""

SUBSCRIPTIONS = 4
"""The reader's subscriptions: matches, its requests, its replies, the topics' pattern."""


def new_process_id() -> str:
    """Return a fresh id for this server process: `host-pid-random`."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"


def _glob_escape(text: str) -> str:
    """Return `text` matching itself alone in a Redis glob pattern."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)


class Bus:
    """This process's end of the Redis bus; see the module for what travels on it.

    Build it, register handlers (`on_match`, `on_reconnect`, `serve`, `subscribe`), `start`
    it, and `close` it at shutdown. `process_id` addresses requests to this process (default:
    a fresh `new_process_id()`).
    """

    def __init__(self, settings: Settings, process_id: str | None = None) -> None:
        if not settings.redis.url:
            raise ValueError("the bus needs a Redis URL (settings.redis.url)")
        self.process_id = process_id or new_process_id()
        """This process's address on the bus."""
        self._url = settings.redis.url
        self._rpc_timeout_s = settings.bus.rpc_timeout_s
        self._backoff_max_s = settings.bus.reconnect_max_s
        self._prefix = f"{settings.redis.key_prefix}:bus:"
        self._matches_channel = self._prefix + "matches"
        self._topic_prefix = self._prefix + "topic:"
        self._match_handlers: list[tuple[MatchHandler, MatchFilter | None]] = []
        self._reconnect_handlers: list[ReconnectHandler] = []
        self._topics: dict[str, list[TopicCallback]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._reader: asyncio.Task[None] | None = None
        self._subscribed = asyncio.Event()
        self._down = False
        # Publishing retries a dropped connection (redis-py's default); the reader must not
        # (redis-py would resubscribe silently and the outage would go unnoticed).
        self._pub: Redis = Redis.from_url(
            self._url, socket_connect_timeout=2.0, socket_timeout=2.0, socket_keepalive=True
        )
        self._sub: Redis = Redis.from_url(
            self._url,
            socket_connect_timeout=2.0,
            socket_keepalive=True,
            retry=Retry(NoBackoff(), 0),
        )
        self._sender = BroadcastSender(
            self._pub,
            self._matches_channel,
            self.process_id,
            (BACKOFF_MIN_S, self._backoff_max_s),
            self._lost,
        )
        self._requests = Requests(self.process_id, self._prefix, self._publish, self._rpc_timeout_s)

    # -- life cycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        """Start reading and sending; wait (at most `bus_rpc_timeout_s`) until subscribed.

        Redis being away is no error: the bus keeps trying, and serves once it is back.
        """
        self._reader = asyncio.create_task(self._read(), name="bus-reader")
        self._sender.start()
        await self.wait_connected(self._rpc_timeout_s)

    @property
    def connected(self) -> bool:
        """Return True while the bus is subscribed on Redis."""
        return self._subscribed.is_set()

    async def wait_connected(self, timeout_s: float) -> bool:
        """Wait until the bus is subscribed on Redis, at most `timeout_s`; return whether it is."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._subscribed.wait(), timeout_s)
        return self.connected

    async def close(self) -> None:
        """Publish what is queued (at most server.cluster.sender.CLOSE_TIMEOUT_S), then stop
        and disconnect."""
        await self._sender.close()
        tasks = [t for t in (self._reader, *self._tasks) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._requests.fail_pending("the bus is closed")
        for client in (self._pub, self._sub):
            with contextlib.suppress(Exception):
                await client.aclose()

    # -- matches -------------------------------------------------------------------------------

    async def publish_match(self, broadcast: Broadcast) -> None:
        """Queue `broadcast` for the other processes (a MatchService listener; never blocks).

        Beyond server.cluster.sender.MAX_QUEUED waiting, the broadcast is only noted: a
        `MatchNotice` of its match goes out before the next broadcast the sender publishes.
        """
        self._sender.put(broadcast)

    def on_match(self, handler: MatchHandler, wanted: MatchFilter | None = None) -> None:
        """Hand every other process's match broadcast (or notice) to `handler`, in order;
        with `wanted`, only the broadcasts it wants (notices always)."""
        self._match_handlers.append((handler, wanted))

    def on_reconnect(self, handler: ReconnectHandler) -> None:
        """Await `handler` each time the bus reaches Redis again after an outage."""
        self._reconnect_handlers.append(handler)

    # -- requests ------------------------------------------------------------------------------

    def serve(self, handler: RequestHandler) -> None:
        """Answer the requests addressed to this process with `handler` (one at a time: the
        last one set)."""
        self._requests.serve(handler)

    async def request(self, process_id: str, payload: JSON, timeout_s: float | None = None) -> JSON:
        """Send `payload` to process `process_id` and return its handler's answer.

        `timeout_s` defaults to `bus_rpc_timeout_s`. Raises BusUnavailable when Redis cannot
        be reached, no process `process_id` listens, or no answer comes in time (then the
        request may or may not have been carried out), and RemoteError when its handler raised.
        """
        if not self.connected:
            raise BusUnavailable("the bus is not connected to Redis")
        return await self._requests.request(process_id, payload, timeout_s)

    # -- topics --------------------------------------------------------------------------------

    async def publish(self, topic: str, payload: JSON) -> None:
        """Hand `payload` to every subscriber of `topic` in every process (this one too).

        Raises BusUnavailable when Redis cannot be reached (nobody gets it).
        """
        envelope = {"from": self.process_id, "payload": payload}
        await self._publish(self._topic_prefix + topic, json.dumps(envelope))

    def subscribe(self, topic: str, callback: TopicCallback) -> Callable[[], None]:
        """Await `callback` with each payload published on `topic`; return the unsubscriber."""
        self._topics.setdefault(topic, []).append(callback)

        def unsubscribe() -> None:
            callbacks = self._topics.get(topic, [])
            if callback in callbacks:
                callbacks.remove(callback)
            if not callbacks:
                self._topics.pop(topic, None)

        return unsubscribe

    # -- inside --------------------------------------------------------------------------------

    async def _publish(self, channel: str, text: str) -> int:
        """Publish `text`; return how many subscribers got it. BusUnavailable if Redis fails."""
        try:
            receivers: int = await self._pub.publish(channel, text)
        except (RedisError, OSError) as error:
            self._lost(error)
            raise BusUnavailable(f"Redis cannot be reached: {error!r}") from error
        return receivers

    def _lost(self, error: BaseException) -> None:
        """Log the first failure of an outage."""
        if not self._down:
            self._down = True
            log.warning("the bus lost Redis (%r); retrying", error)

    def _back(self) -> None:
        if self._down:
            self._down = False
            log.warning("the bus reached Redis again")

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _read(self) -> None:
        """Subscribe, hand out what arrives; on a lost Redis, wait and subscribe again."""
        delay = BACKOFF_MIN_S
        missed = False  # broadcasts may have been lost (an outage, or Redis away at start)
        while True:
            pubsub: PubSub = self._sub.pubsub()
            try:
                await pubsub.subscribe(
                    self._matches_channel, self._requests.channel, self._requests.reply_channel
                )
                await pubsub.psubscribe(_glob_escape(self._topic_prefix) + "*")
                confirmed = 0
                while True:
                    message = await pubsub.get_message(timeout=READ_POLL_S)
                    if message is None:
                        continue
                    if message["type"] in ("subscribe", "psubscribe"):
                        confirmed += 1
                        if confirmed == SUBSCRIPTIONS:
                            self._subscribed.set()
                            self._back()
                            delay = BACKOFF_MIN_S
                            if missed:
                                missed = False
                                self._spawn(self._reconnected())
                        continue
                    await self._dispatch(message)
            except (RedisError, OSError) as error:
                self._lost(error)
                missed = True
            finally:
                self._subscribed.clear()
                self._requests.fail_pending("the bus lost Redis")
                with contextlib.suppress(Exception):
                    await pubsub.aclose()  # type: ignore[no-untyped-call]
            await asyncio.sleep(delay)
            delay = min(delay * 2, self._backoff_max_s)

    async def _reconnected(self) -> None:
        for handler in list(self._reconnect_handlers):
            try:
                await handler()
            except Exception:
                log.exception("a bus reconnect handler failed")

    async def _dispatch(self, message: dict[str, Any]) -> None:
        """Hand one pub/sub message to whoever takes it; a failure is logged, never raised."""
        channel = message["channel"]
        channel = channel.decode() if isinstance(channel, bytes) else str(channel)
        data = message["data"]
        try:
            if message["type"] == "pmessage":
                await self._on_topic(channel.removeprefix(self._topic_prefix), data)
            elif channel == self._matches_channel:
                await self._on_match(data)
            elif channel == self._requests.channel:
                self._spawn(self._requests.answer(data))
            elif channel == self._requests.reply_channel:
                self._requests.on_reply(data)
        except Exception:
            log.exception("the bus failed on a message of %s", channel)

    async def _on_topic(self, topic: str, data: bytes) -> None:
        callbacks = list(self._topics.get(topic, ()))
        if not callbacks:
            return
        payload = json.loads(data)["payload"]
        for callback in callbacks:
            try:
                await callback(payload)
            except Exception:
                log.exception("a subscriber of topic %s failed", topic)

    async def _on_match(self, data: bytes) -> None:
        envelope = json.loads(data)
        if envelope["origin"] == self.process_id or not self._match_handlers:
            return
        match_id, players = envelope["match_id"], seats_of(envelope["players"])
        item: Broadcast | MatchNotice
        handlers = [handler for handler, _ in self._match_handlers]
        if "seq" in envelope:
            item = MatchNotice(match_id, players, envelope["seq"])
        else:
            seqs = None if envelope["seqs"] is None else (envelope["seqs"][0], envelope["seqs"][1])
            handlers = [
                handler
                for handler, wanted in self._match_handlers
                if wanted is None or wanted(match_id, players, seqs)
            ]
            if not handlers:
                return
            try:
                messages = tuple(parse_server_message(text) for text in envelope["messages"])
            except ProtocolError as error:
                # A newer process's message this one cannot read: its followers see a gap.
                log.warning(
                    "a broadcast of match %s is unreadable: %s", envelope["match_id"], error
                )
                return
            item = Broadcast(match_id, players, messages)
        for handler in handlers:
            try:
                await handler(item)
            except Exception:
                log.exception("a bus match handler failed on match %s", item.match_id)
