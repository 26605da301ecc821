"""A connection's messages reach its client in order, whether sent at once or queued.

`Connection` sends a message at once when nothing waits before it and the transport is writable,
and queues it otherwise (server.hub, server.asgi.immediate_sender). A client that does not read
fills the server's transport buffer, which turns the immediate path off mid-burst; these tests
make the two paths interleave under a real uvicorn and read back every message.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import WebSocket

from server.asgi import ArenaApp
from server.hub import Connection
from server.settings import Settings
from tests.server.conftest import serve_app
from tests.server.routes.raw_websocket import OP_TEXT, RawWebSocket

PADDING = "x" * 4_000
"""Enough per message that a few dozen unread ones fill a transport's write buffer."""


def burst_app(counts: dict[str, int], finished: threading.Event) -> ArenaApp:
    """An app whose /burst socket sends `rounds` bursts of `size` numbered messages, counts
    the immediate sends in `counts` and sets `finished` when it is done."""
    app = ArenaApp()

    @app.websocket("/burst")
    async def burst(websocket: WebSocket, rounds: int = 4, size: int = 100) -> None:
        await websocket.accept()
        connection = Connection(websocket, max_queued_bytes=1 << 30)
        send_now = connection._send_now
        assert send_now is not None, "uvicorn's sans-I/O protocol offers immediate sends"

        def counting(text: str) -> bool:
            sent = send_now(text)
            counts["immediate" if sent else "refused"] += 1
            return sent

        connection._send_now = counting
        number = 0
        for _ in range(rounds):
            for _ in range(size):
                connection._put(json.dumps({"n": number, "pad": PADDING}))
                number += 1
            await asyncio.sleep(0)  # the writer may take some of the queue between bursts
        connection._put(json.dumps({"n": number, "last": True}))
        await websocket.receive_text()  # the client's "bye": everything arrived
        await connection.wait_closed()
        finished.set()

    return app


@pytest.fixture
def burst_server() -> Iterator[tuple[int, dict[str, int], threading.Event]]:
    counts: dict[str, int] = {"immediate": 0, "refused": 0}
    finished = threading.Event()
    running = serve_app(burst_app(counts, finished), Settings())
    yield running.port, counts, finished
    running.stop()


def read_all(raw: RawWebSocket) -> list[dict[str, Any]]:
    messages = []
    while True:
        frame = raw.read_frame(30)
        assert frame is not None, "the server closed before the last message"
        opcode, payload = frame
        assert opcode == OP_TEXT
        message = json.loads(payload)
        messages.append(message)
        if message.get("last"):
            return messages


def test_a_client_that_reads_late_gets_every_message_in_order(
    burst_server: tuple[int, dict[str, int], threading.Event],
) -> None:
    port, counts, finished = burst_server
    # 32 MB unread: more than the kernel's socket buffers hold, so the transport's fills.
    raw = RawWebSocket(port, "/burst?rounds=4&size=2000", receive_buffer=4096)
    try:
        messages = read_all(raw)
        raw.send_text("bye")
        assert finished.wait(30)
    finally:
        raw.close()
    assert [m["n"] for m in messages] == list(range(8001))
    # The first messages went at once; once the unread ones filled the transport's buffer,
    # the rest waited on the queue for the writer.
    assert counts["immediate"] >= 1
    assert counts["immediate"] < 8001, counts


def test_a_reading_client_is_sent_at_once(
    burst_server: tuple[int, dict[str, int], threading.Event],
) -> None:
    port, counts, finished = burst_server
    raw = RawWebSocket(port, "/burst?rounds=1&size=1")
    try:
        messages = read_all(raw)
        raw.send_text("bye")
        assert finished.wait(30)
    finally:
        raw.close()
    assert [m["n"] for m in messages] == [0, 1]
    assert counts == {"immediate": 2, "refused": 0}
