"""Rate limits: per token and per client address on the costly REST actions, per connection on
WebSocket messages (docs/PROTOCOL.md, "Rate limits").

REST: one FastAPI dependency per limited action, in `server.deps` with the others
(`limit_registration`, `limit_match_creation`, `limit_tournament_creation`, `limit_upload`,
`limit_trace`, `limit_position`),
calls `RateLimiter.check`, which counts the request against the token's
limit (when a bearer token is sent; the token's hash is the key, so nothing secret is stored)
and the address's limit, with the `limits` library's sliding window counter: the count of the
current fixed window plus the previous window's count weighted by how much of it still lies in
the sliding window. That is never more than N in one fixed window, so at most 2N in any window
of that length, and about N when requests are spread out. (Its moving window keeps every
request's time and, in memory, re-scans every key through a thread hop on each hit: with a few
hundred keys that cost more CPU than the requests it limited.) A request over a limit raises
`RateLimitedError`, answered by `rate_limited_response` with HTTP 429, a `Retry-After` header
and the `ErrorResponse` body.
Requests are counted whatever their outcome (a refused body or a wrong token counts too): the
limit is on attempts, which is what costs the server. The counts live in this process's memory,
or in Redis when `redis_url` is set, so that several server processes share them.

The token is counted before the address, and an address already over its limit is refused
before anything is counted: one token can use only its own share of its address's budget, so a
single client cannot starve the others behind the same address.

WebSocket: `RateLimiter.admit(connection)` (through `server.deps.admit_message`), called once
per message received, keeps a token bucket
(`rate_ws_messages` sustained, `rate_ws_burst` at once) per player on `/ws`, kept across
reconnections so that reconnecting does not refill it, and per connection for the anonymous
watchers. A message over the rate is dropped and answered with a `RATE_LIMITED` error whose
`details.retry_after_ms` says how long to wait; a connection that keeps sending (more than
`rate_ws_refusals` refusals in that window) is closed with 1008. The buckets live in the
process's memory: a connection lives in one process.

The client's address is the one the connection layer gives the request (`server.connections`):
the socket's peer, or the client a trusted proxy names (`trusted_proxies`). IPv6 addresses are
counted by their /64 network, the block one host is usually given (`address_key`).
"""

from __future__ import annotations

import logging
import math
import time
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import Any

from fastapi import Request
from limits import RateLimitItem, parse_many
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.strategies import SlidingWindowCounterRateLimiter
from redis.asyncio import ConnectionPool
from redis.exceptions import RedisError
from starlette.responses import JSONResponse

from protocol.errors import CloseCode, ErrorCode, ProtocolError, ScalarValue
from protocol.messages import ErrorMessage, ErrorResponse
from server.errors import error_response
from server.hub import Connection
from server.settings import Settings

log = logging.getLogger(__name__)


class Action(StrEnum):
    """A REST action with its own limits; the value is part of the storage key."""

    REGISTER = "register"
    CREATE_MATCH = "match"
    CREATE_TOURNAMENT = "tournament"
    UPLOAD = "upload"
    TRACE = "trace"
    POSITION = "position"


_WHAT: dict[Action, str] = {
    Action.REGISTER: "registrations",
    Action.CREATE_MATCH: "match creations",
    Action.CREATE_TOURNAMENT: "tournament creations",
    Action.UPLOAD: "grader uploads",
    Action.TRACE: "search traces",
    Action.POSITION: "explorer positions",
}

RATE_LIMITED_RESPONSE: dict[str, Any] = {
    "model": ErrorResponse,
    "description": "RATE_LIMITED: too many requests; wait `Retry-After` seconds "
    "(`details.retry_after_ms` milliseconds) and retry.",
    "headers": {
        "Retry-After": {
            "description": "Seconds to wait before retrying.",
            "schema": {"type": "integer"},
        }
    },
}
"""The OpenAPI entry of the 429 answer, for the `responses` of each limited route."""


class RateLimitedError(ProtocolError):
    """A request over a rate limit: `RATE_LIMITED`, and how long to wait before retrying."""

    def __init__(
        self, message: str, retry_after_ms: int, details: dict[str, ScalarValue] | None = None
    ) -> None:
        self.retry_after_ms = retry_after_ms
        super().__init__(
            ErrorCode.RATE_LIMITED, message, {**(details or {}), "retry_after_ms": retry_after_ms}
        )


async def rate_limited_response(_request: Request, exc: Exception) -> JSONResponse:
    """Answer a `RateLimitedError`: 429, `Retry-After` (whole seconds) and the error body."""
    assert isinstance(exc, RateLimitedError)
    return error_response(
        exc, headers={"Retry-After": str(max(1, math.ceil(exc.retry_after_ms / 1000)))}
    )


_PRUNE_FROM = 10_000
"""Players' buckets kept before the idle ones are forgotten."""


class _Bucket:
    """One connection's token bucket, and the times of its recent refusals (on `clock`)."""

    def __init__(
        self,
        rate: RateLimitItem,
        burst: int,
        refusals: RateLimitItem,
        clock: Callable[[], float],
    ) -> None:
        self.per_second = rate.amount / rate.get_expiry()
        self.burst = burst
        self.clock = clock
        self.tokens = float(burst)
        self.updated = clock()
        self.refusals: deque[float] = deque()
        self.refusal_limit = refusals

    def take(self) -> float:
        """Take a token: return 0.0, or the seconds until one is available (nothing taken)."""
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.per_second)
        self.updated = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.per_second

    def is_idle(self) -> bool:
        """Return True if the bucket has refilled and holds no recent refusal."""
        now = self.clock()
        refilled = self.tokens + (now - self.updated) * self.per_second >= self.burst
        recent = bool(self.refusals) and self.refusals[-1] > now - self.refusal_limit.get_expiry()
        return refilled and not recent

    def refuse(self) -> bool:
        """Record a refusal; return True when there were too many in the window."""
        now = self.clock()
        self.refusals.append(now)
        while self.refusals[0] <= now - self.refusal_limit.get_expiry():
            self.refusals.popleft()
        return len(self.refusals) > self.refusal_limit.amount


class RateLimiter:
    """The application's rate limits and their counts (one per app, on `app.state`).

    Build it in the lifespan and `close` it at shutdown (it may hold Redis connections).
    `clock` (monotonic seconds) times the WebSocket buckets; the REST counts are kept by the
    `limits` library on its own clock, the wall clock.
    """

    def __init__(self, settings: Settings, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.enabled = settings.rate.limits_enabled
        self._clock = clock
        self._pool: ConnectionPool | None = None
        storage: Storage
        if settings.redis.url:
            self._pool = ConnectionPool.from_url(
                settings.redis.url, socket_connect_timeout=2.0, socket_timeout=2.0
            )
            storage = RedisStorage(
                f"async+{settings.redis.url}",
                implementation="redispy",
                key_prefix=settings.redis.key_prefix,
                connection_pool=self._pool,  # type: ignore[arg-type]
            )
        else:
            storage = MemoryStorage()
        self._window = SlidingWindowCounterRateLimiter(storage)
        self._limits: dict[Action, tuple[list[RateLimitItem], list[RateLimitItem]]] = {
            Action.REGISTER: ([], parse_many(settings.rate.registrations_per_address)),
            Action.CREATE_MATCH: (
                parse_many(settings.rate.matches_per_player),
                parse_many(settings.rate.matches_per_address),
            ),
            Action.CREATE_TOURNAMENT: (
                parse_many(settings.rate.tournaments_per_player),
                parse_many(settings.rate.tournaments_per_address),
            ),
            Action.UPLOAD: (
                parse_many(settings.rate.uploads_per_player),
                parse_many(settings.rate.uploads_per_address),
            ),
            Action.TRACE: ([], parse_many(settings.rate.traces_per_address)),
            Action.POSITION: ([], parse_many(settings.rate.positions_per_address)),
        }
        self._ws_rate = parse_many(settings.rate.ws_messages)[0]
        self._ws_burst = settings.rate.ws_burst
        self._ws_refusals = parse_many(settings.rate.ws_refusals)[0]
        self._buckets: weakref.WeakKeyDictionary[Connection, _Bucket] = weakref.WeakKeyDictionary()
        self._player_buckets: dict[int, _Bucket] = {}
        self._prune_at = _PRUNE_FROM

    async def close(self) -> None:
        """Release the Redis connections, if any."""
        if self._pool is not None:
            await self._pool.disconnect()

    async def check(self, action: Action, address: str, token: str | None) -> None:
        """Count one `action` from `address` with `token` (a token's hash, or None).

        Raises RateLimitedError when the token's or the address's limit is already reached;
        a Redis that cannot be reached lets the request through (logged): an outage of the
        counters must not become an outage of the server.
        """
        if not self.enabled:
            return
        per_token, per_address = self._limits[action]
        try:
            await self._refuse_if_full(action, "address", address, per_address)
            if token is not None:
                await self._hit(action, "token", token, per_token)
            await self._hit(action, "address", address, per_address)
        except RedisError as error:
            log.warning("rate limits not enforced: Redis failed: %r", error)

    async def _refuse_if_full(
        self, action: Action, scope: str, key: str, items: Sequence[RateLimitItem]
    ) -> None:
        for item in items:
            if not await self._window.test(item, action, scope, key):
                raise await self._refusal(action, scope, key, item)

    async def _hit(
        self, action: Action, scope: str, key: str, items: Sequence[RateLimitItem]
    ) -> None:
        for item in items:
            if not await self._window.hit(item, action, scope, key):
                raise await self._refusal(action, scope, key, item)

    async def _refusal(
        self, action: Action, scope: str, key: str, item: RateLimitItem
    ) -> RateLimitedError:
        stats = await self._window.get_window_stats(item, action, scope, key)
        wait_ms = max(1, math.ceil((stats.reset_time - time.time()) * 1000))
        who = "this token" if scope == "token" else "this address"
        return RateLimitedError(
            f"too many {_WHAT[action]} from {who}: at most {item}; retry in "
            f"{math.ceil(wait_ms / 1000)} s",
            wait_ms,
            {"limit": str(item), "scope": scope},
        )

    def _bucket(self, connection: Connection) -> _Bucket:
        """Return the bucket of a player (kept across reconnections, so that reconnecting
        does not refill it) or of an anonymous connection."""
        if connection.player_id is None:
            bucket = self._buckets.get(connection)
            if bucket is None:
                bucket = self._buckets[connection] = self._new_bucket()
            return bucket
        bucket = self._player_buckets.get(connection.player_id)
        if bucket is None:
            if len(self._player_buckets) >= self._prune_at:
                self._prune()
            bucket = self._player_buckets[connection.player_id] = self._new_bucket()
        return bucket

    def _new_bucket(self) -> _Bucket:
        return _Bucket(self._ws_rate, self._ws_burst, self._ws_refusals, self._clock)

    def _prune(self) -> None:
        """Forget the players' buckets that are full again: a fresh one is the same."""
        for player_id, bucket in list(self._player_buckets.items()):
            if bucket.is_idle():
                del self._player_buckets[player_id]
        self._prune_at = max(_PRUNE_FROM, 2 * len(self._player_buckets))

    def admit(self, connection: Connection) -> bool:
        """Return True if `connection` may send one more message now.

        Otherwise answer it `RATE_LIMITED` (the message is dropped), or close it with 1008 when
        it has kept sending after too many refusals.
        """
        if connection.closed:
            return False
        if not self.enabled:
            return True
        bucket = self._bucket(connection)
        wait = bucket.take()
        if wait == 0.0:
            return True
        if bucket.refuse():
            connection.close(CloseCode.POLICY_VIOLATION, "rate limit: kept sending")
            return False
        wait_ms = max(1, math.ceil(wait * 1000))
        refusal = RateLimitedError(
            f"too many messages: at most {self._ws_rate} (bursts of {self._ws_burst}); this "
            f"message was dropped, send again in {wait_ms} ms",
            wait_ms,
            {"limit": str(self._ws_rate)},
        )
        connection.send(ErrorMessage.from_error(refusal))
        return False
