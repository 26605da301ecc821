"""The WebSocket routes' resource limits, against real servers and bare-socket clients that
misbehave: a client that never reads, one that never says hello, one that opens too many
connections."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import ConnectionClosed

from protocol.errors import CloseCode
from server.hub import CLOSE_TIMEOUT_S
from server.settings import Settings
from tests.server.conftest import RunningServer, arena_serve, start_server, wait_engine_ready
from tests.server.routes.raw_websocket import RawWebSocket
from tests.wsclient import ClientConnection, connect

HELLO = {"type": "hello", "protocol_version": "1.0", "client": "test"}


def served(
    settings: Settings, **env: str
) -> AbstractContextManager[tuple[subprocess.Popen[str], str]]:
    """Run `arena serve` for `settings` with `env` added; see `arena_serve`."""
    return arena_serve(settings.database_url, ARENA_GRADER_DIR=str(settings.grader.dir), **env)


def rss_bytes(pid: int) -> int:
    """Return the resident memory of process `pid`."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def hello(raw: RawWebSocket) -> None:
    """Say hello and read the welcome."""
    raw.send_json(HELLO)
    frame = raw.read_frame(10)
    assert frame is not None and json.loads(frame[1])["type"] == "welcome", frame


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads RSS from /proc")
def test_a_client_that_does_not_read_is_closed_with_4008_and_memory_stays_bounded(
    server_settings: Settings,
) -> None:
    limit = 1024 * 1024
    # The message rate limit would answer the flood with short RATE_LIMITED errors and close
    # with 1008; this test is about the bytes waiting for a client that does not read.
    with served(
        server_settings, ARENA_WS_MAX_QUEUED_BYTES=str(limit), ARENA_RATE_LIMITS_ENABLED="false"
    ) as (process, base):
        token = httpx.post(f"{base}/players", json={"name": "alice"}).json()["token"]
        port = int(base.rsplit(":", 1)[1])
        # A small receive buffer: the kernel holds little for this client, the server the rest.
        raw = RawWebSocket(port, "/ws", {"Authorization": f"Bearer {token}"}, receive_buffer=4096)
        hello(raw)
        # The compiled house engine loads after start-up and takes tens of MB of its own.
        with httpx.Client(base_url=base, timeout=30) as client:
            assert wait_engine_ready(client) == "ready"
        before = rss_bytes(process.pid)
        # Each request is answered with an error of about its own size (an unknown type is
        # echoed); the client never reads. The kernel's buffers (the server's send buffer grows
        # to 4 MB) take the first few MB; up to 3,000 requests ask for 54 MB in all.
        request = json.dumps({"type": "x" * 16_000}).encode()
        frame = bytes([0x81, 0xFF]) + len(request).to_bytes(8, "big") + b"\0\0\0\0" + request
        raw.sock.settimeout(1)  # the server stops reading once it has closed: sends then stall
        sent = 0
        while sent < 3000 and raw.try_send(frame):
            sent += 1
        grown = rss_bytes(process.pid) - before
        # Now read: what the kernel holds, then the close frame with the documented code.
        assert raw.close_code(10) == CloseCode.TOO_SLOW, f"{sent} requests sent"
        raw.close()
        assert grown < 32 * 1024 * 1024, f"the server grew by {grown} bytes"
        # The server serves on.
        assert httpx.get(f"{base}/health").status_code == 200


@contextmanager
def server_with(settings: Settings, **limits: float) -> Iterator[RunningServer]:
    """Run the app in-process with `limits` (settings fields) changed."""
    running = start_server(settings.model_copy(update=limits))
    try:
        yield running
    finally:
        running.stop()


async def expect_close(ws: ClientConnection, code: int, within: float) -> None:
    """Wait up to `within` seconds for the server to close `ws` with `code`, reading on."""
    with pytest.raises(ConnectionClosed):
        while True:
            await asyncio.wait_for(ws.recv(), within)
    assert ws.close_code == code, ws.close_reason


async def welcomed(ws: ClientConnection) -> None:
    """Say hello and check the welcome."""
    await ws.send(json.dumps(HELLO))
    assert json.loads(await asyncio.wait_for(ws.recv(), 5))["type"] == "welcome"


async def test_a_websocket_without_hello_is_closed_with_4004(server_settings: Settings) -> None:
    with server_with(server_settings, ws_hello_timeout_s=0.5) as server:
        async with httpx.AsyncClient(base_url=server.url) as http:
            token = (await http.post("/players", json={"name": "alice"})).json()["token"]
        silent = [
            await connect(f"{server.ws_url}/ws?token={token}"),
            await connect(f"{server.ws_url}/ws/matches/m_1"),
            await connect(f"{server.ws_url}/ws/tournaments/t_1"),
        ]
        # The close code is the hello timeout's: the server closed them for their silence.
        for ws in silent:
            await expect_close(ws, CloseCode.HELLO_TIMEOUT, within=30)
        # One that says hello in time plays on past the timeout.
        ws = await connect(f"{server.ws_url}/ws?token={token}")
        await welcomed(ws)
        await asyncio.sleep(1)
        await ws.send(json.dumps({"type": "ping", "time_ms": 5}))
        assert json.loads(await asyncio.wait_for(ws.recv(), 5))["type"] == "pong"
        await ws.close()


async def test_connections_per_address_are_bounded_with_4009(server_settings: Settings) -> None:
    with server_with(server_settings, ws_max_connections_per_address=3) as server:
        async with httpx.AsyncClient(base_url=server.url) as http:
            token = (await http.post("/players", json={"name": "alice"})).json()["token"]
        open_ = [await connect(f"{server.ws_url}/ws/matches/m_{i}") for i in range(3)]
        for path in ("/ws/matches/m_9", "/ws/tournaments/t_1", f"/ws?token={token}"):
            refused = await connect(f"{server.ws_url}{path}")
            await expect_close(refused, CloseCode.TOO_MANY_CONNECTIONS, within=3)
        # Closing one frees its place.
        await open_[0].close()
        await asyncio.sleep(0.2)
        again = await connect(f"{server.ws_url}/ws/matches/m_0")
        await welcomed(again)
        for ws in (*open_[1:], again):
            await ws.close()


async def test_connections_per_player_are_bounded_with_4009(server_settings: Settings) -> None:
    with server_with(server_settings, ws_max_connections_per_player=2) as server:
        async with httpx.AsyncClient(base_url=server.url) as http:
            tokens = {
                name: (await http.post("/players", json={"name": name})).json()["token"]
                for name in ("alice", "bob")
            }
        alice = [await connect(f"{server.ws_url}/ws?token={tokens['alice']}") for _ in range(2)]
        refused = await connect(f"{server.ws_url}/ws?token={tokens['alice']}")
        await expect_close(refused, CloseCode.TOO_MANY_CONNECTIONS, within=3)
        # Another player is not affected, and alice's connections still work.
        bob = await connect(f"{server.ws_url}/ws?token={tokens['bob']}")
        await welcomed(bob)
        await welcomed(alice[1])
        for ws in (*alice, bob):
            await ws.close()


async def test_a_client_closed_as_too_slow_frees_its_place_though_it_never_reads(
    server_settings: Settings,
) -> None:
    # One connection per address: the non-reader holds it until the server lets it go.
    # Rate limits off: see the test above.
    with server_with(
        server_settings, ws_max_connections_per_address=1, rate_limits_enabled=False
    ) as server:
        async with httpx.AsyncClient(base_url=server.url) as http:
            token = (await http.post("/players", json={"name": "alice"})).json()["token"]
        raw = RawWebSocket(
            server.port, "/ws", {"Authorization": f"Bearer {token}"}, receive_buffer=4096
        )
        hello(raw)
        request = json.dumps({"type": "x" * 16_000}).encode()
        frame = bytes([0x81, 0xFF]) + len(request).to_bytes(8, "big") + b"\0\0\0\0" + request
        raw.sock.settimeout(1)
        sent = 0
        while sent < 3000 and raw.try_send(frame):
            sent += 1
        assert sent < 3000, "the server never stopped reading"
        # The writer waits CLOSE_TIMEOUT_S for a client that never reads, then gives up. The
        # bound below only keeps a broken server from hanging the run: it is a liveness limit
        # far above the writer's own, so a loaded machine cannot trip it.
        deadline = time.monotonic() + CLOSE_TIMEOUT_S * 12
        while True:
            ws = await connect(f"{server.ws_url}/ws/matches/m_1")
            try:
                await welcomed(ws)
                break
            except ConnectionClosed:
                assert ws.close_code == CloseCode.TOO_MANY_CONNECTIONS
                assert time.monotonic() < deadline, "the non-reader kept its place"
                await asyncio.sleep(0.5)
        await ws.close()
        raw.close()
