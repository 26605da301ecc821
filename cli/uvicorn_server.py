"""uvicorn's server for `arena serve`, imported only when serving (uvicorn is slow to import)."""

from __future__ import annotations

import gc
import socket
from typing import Any

import uvicorn

from cli.http_protocol import ArenaH11Protocol
from server.connections import ConnectionGate, TrustedProxies, parse_trusted_proxies
from server.settings import Settings

GC_THRESHOLDS = (20_000, 20, 20)
"""Garbage-collector generation thresholds for the server process (CPython's: 700, 10, 10)."""


def tune_garbage_collector() -> None:
    """Keep the collector's pauses out of move round trips (a server process only).

    A full collection walks every tracked object: with hundreds of connections that takes
    tens of milliseconds, the largest part of the p99 round trip in bench/server.py. What is
    made before serving lives for good, so it is frozen out of every later collection, and the
    young generation is collected less often (reference counting frees almost everything a
    move allocates).
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


class TunedServer(uvicorn.Server):
    """uvicorn's server, tuning the garbage collector once the application has started."""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        # After the lifespan: the migrations' garbage is gone and the services are built, so
        # what is frozen is what lives for good.
        tune_garbage_collector()


def connection_gate(settings: Settings) -> ConnectionGate:
    """Return the limits the settings hold every connection of one server process to."""
    return ConnectionGate(
        max_per_address=settings.max_connections_per_address,
        idle_timeout_s=settings.http.idle_timeout_s,
        header_timeout_s=settings.http.header_timeout_s,
        body_timeout_s=settings.http.body_timeout_s,
        max_header_bytes=settings.max_header_bytes,
        trusted=TrustedProxies(parse_trusted_proxies(settings.trusted_proxies)),
    )


def server_config(
    app: Any, settings: Settings, *, port: int, log_level: str = "info"
) -> uvicorn.Config:
    """Return uvicorn's configuration serving `app` as `arena serve` does, on `port`.

    HTTP is parsed by h11 (httptools would buffer any amount of headers) in `ArenaH11Protocol`,
    which holds every connection to the settings' limits (docs/SECURITY.md, "Connections") and
    takes a client's address from the trusted proxies alone: uvicorn's own forwarded-headers
    handling, which trusts 127.0.0.1 (or FORWARDED_ALLOW_IPS) on every connection, is off.
    """
    return uvicorn.Config(
        app,
        host=settings.host,
        port=port,
        log_level=log_level,
        ws_per_message_deflate=settings.ws.compression,
        # uvicorn refuses a larger frame from its header, before buffering it (default 16 MiB).
        ws_max_size=settings.max_message_bytes,
        http=ArenaH11Protocol.bound(connection_gate(settings)),
        h11_max_incomplete_event_size=settings.max_header_bytes,
        proxy_headers=False,
    )
