"""A real uvicorn server on a free port, for end-to-end tests with real clients."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from sqlalchemy import text

from cli.cluster_member import ClusterError
from cli.cluster_services import check_services
from cli.cluster_topology import Cluster, ClusterSpec
from cli.uvicorn_server import server_config
from server.app import create_app
from server.db.engine import create_engine
from server.db.models import Base
from server.settings import Settings
from tests.ports import free_port


@contextmanager
def sqlite_server(root: Path) -> Iterator[RunningServer]:
    """Run the app in-process on a fresh SQLite file and grader directory under `root`."""
    running = start_server(
        Settings(
            database_url=f"sqlite+aiosqlite:///{root / 'arena.db'}",
            grader_dir=root / "g",
            hosted_dir=root / "h",
        )
    )
    try:
        yield running
    finally:
        running.stop()


@contextmanager
def arena_serve(
    database_url: str, port: int | None = None, **env: str
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """Run `arena serve` as a process on `port` (default: a free one), `env` added to its
    environment.

    Yield the process and its base URL once it answers /health; kill it on the way out (a test
    that stops it itself, with SIGTERM or SIGKILL, finds it already gone).
    """
    exe = shutil.which("arena", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the arena console script is not installed in this environment")
    port = free_port() if port is None else port
    process = subprocess.Popen(
        [exe, "serve", "--port", str(port), "--database", database_url],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **env},
    )
    base = f"http://127.0.0.1:{port}"
    # Start-up takes a second or two; the margin is for a machine loaded by other work.
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(f"{base}/health", timeout=1)
            break
        except httpx.HTTPError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise
            time.sleep(0.1)
    try:
        yield process, base
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)


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
    """Start `create_app(settings)` under uvicorn on a free port and wait until it serves.

    The server is configured as `arena serve` configures it: its HTTP protocol, connection
    limits and proxy trust included.
    """
    return serve_app(create_app(settings), settings)


def serve_app(app: Any, settings: Settings) -> RunningServer:
    """Serve `app` as `start_server` serves Arena's (the same uvicorn configuration)."""
    port = free_port()
    config = server_config(app, settings, port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()
    # Start-up takes a second or two; the margin is for a machine loaded by other work.
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    return RunningServer(server, thread, port)


async def _reset_database(url: str) -> None:
    """Drop Arena's tables (and alembic's record) so the server migrates a clean database."""
    engine = create_engine(url)
    async with engine.begin() as connection:
        await connection.run_sync(Base.metadata.drop_all)
        await connection.execute(text("DROP TABLE IF EXISTS alembic_version"))
    await engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def server_settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """Settings for a fresh database: SQLite in the test's directory, and PostgreSQL when
    ARENA_TEST_DATABASE_URL is set (the same suite runs against both)."""
    if request.param == "postgresql":
        url = os.environ.get("ARENA_TEST_DATABASE_URL")
        if not url:
            pytest.skip("ARENA_TEST_DATABASE_URL is not set")
        asyncio.run(_reset_database(url))
        return Settings(
            database_url=url, grader_dir=tmp_path / "grader", hosted_dir=tmp_path / "hosted"
        )
    return Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}",
        grader_dir=tmp_path / "grader",
        hosted_dir=tmp_path / "hosted",
    )


@pytest.fixture
def live_server(server_settings: Settings) -> Iterator[RunningServer]:
    """A running server on a fresh database, stopped after the test."""
    running = start_server(server_settings)
    try:
        yield running
    finally:
        running.stop()


PORT_TAKEN = "address already in use"
"""What a cluster member's log says when the port it was given was taken before it listened."""


@contextmanager
def cluster_on_free_ports(spec: ClusterSpec, attempts: int = 3) -> Iterator[Cluster]:
    """Start the cluster of `spec` (ports chosen free), yield it, stop it on the way out.

    A free port is chosen some seconds before its process listens on it, and meanwhile another
    process on the machine (a second test run, or any client's outgoing connection, which
    takes its port from the same range) may take it: then the start is tried again on new
    ports, up to `attempts` times. Every other failure is raised at once.
    """
    check_services(spec.database_url, spec.redis_url)
    for attempt in range(1, attempts + 1):
        cluster = Cluster(spec)
        try:
            cluster.start()
        except ClusterError as error:
            if PORT_TAKEN in str(error) and attempt < attempts:
                continue
            raise
        try:
            yield cluster
        finally:
            cluster.stop()
        return


def wait_engine_ready(client: httpx.Client, within: float = 600.0) -> str:
    """Poll `/health` until the house engine is no longer "loading" (a fresh machine compiles
    it once, slower on a loaded one); return its state."""
    deadline = time.monotonic() + within
    while True:
        state = str(client.get("/health").json()["engine"])
        if state != "loading" or time.monotonic() > deadline:
            return state
        time.sleep(0.2)
