"""A real uvicorn server on a free port, for end-to-end tests with real clients."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import uvicorn

from server.app import create_app
from server.settings import Settings


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class RunningServer:
    """A uvicorn server running in a thread, and its base URLs."""

    server: uvicorn.Server
    thread: threading.Thread
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def start_server(settings: Settings) -> RunningServer:
    """Start `create_app(settings)` under uvicorn on a free port and wait until it serves."""
    port = free_port()
    config = uvicorn.Config(
        create_app(settings), host="127.0.0.1", port=port, log_level="warning", lifespan="on"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    return RunningServer(server, thread, port)


@pytest.fixture
def sqlite_settings(tmp_path: Path) -> Settings:
    """Settings for a fresh SQLite database in the test's directory."""
    return Settings(database_url=f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}")


@pytest.fixture
def live_server(sqlite_settings: Settings) -> Iterator[RunningServer]:
    """A running server on SQLite, stopped after the test."""
    running = start_server(sqlite_settings)
    try:
        yield running
    finally:
        running.stop()
