"""What the scripts that start a server share: a free port, waiting for the server to answer,
and `arena serve` itself on a fresh SQLite file with the REST limits for strangers lifted."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import httpx


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _check(url: str, process: subprocess.Popen[bytes], deadline: float, timeout: float) -> None:
    if process.poll() is not None:
        raise RuntimeError(f"the server exited with {process.returncode}")
    if time.monotonic() > deadline:
        raise RuntimeError(f"{url} did not answer within {timeout} s")


async def wait_http(url: str, process: subprocess.Popen[bytes], timeout: float = 30) -> None:
    """Wait until `url` answers below 500 (the server started); RuntimeError if it exits or
    `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    async with httpx.AsyncClient() as http:
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if (await http.get(url)).status_code < 500:
                    return
            _check(url, process, deadline, timeout)
            await asyncio.sleep(0.1)


def wait_http_blocking(url: str, process: subprocess.Popen[bytes], timeout: float = 30) -> None:
    """`wait_http` for a caller with no event loop."""
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url).status_code < 500:
                return
        _check(url, process, deadline, timeout)
        time.sleep(0.1)


LIFTED_LIMITS = {
    f"ARENA_RATE_{name}": "1000000/minute"
    for name in ("REGISTRATIONS_PER_ADDRESS", "MATCHES_PER_PLAYER", "MATCHES_PER_ADDRESS")
}
"""One address registering many players and creating many matches in seconds: the REST rate
limits exist for strangers, not for a bench or a script that fills a server."""


START_TIMEOUT_S = 120.0
"""How long a server may take to answer after its start (it loads the compiled engine; on a
loaded machine that takes a while)."""


@contextlib.contextmanager
def arena_serve(
    folder: Path, env: Mapping[str, str] | None = None, database: str | None = None
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Run `arena serve` (this Python's) on a free port with the rate limits lifted, on
    `database` (default: a fresh SQLite file in `folder`), its output in `folder`/server.log;
    yield its base URL and process once /health answers, and stop it after the block.

    `env` adds to (or overrides) the environment. RuntimeError if the server exits or does not
    answer within START_TIMEOUT_S.
    """
    port = free_port()
    database = database or f"sqlite+aiosqlite:///{folder / 'arena.db'}"
    arena = Path(sys.executable).parent / "arena"
    command = [str(arena), "serve", "--port", str(port), "--database", database]
    environment = {**os.environ, **LIFTED_LIMITS, **(env or {})}
    with open(folder / "server.log", "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=environment)
        try:
            base = f"http://127.0.0.1:{port}"
            wait_http_blocking(f"{base}/health", process, START_TIMEOUT_S)
            yield base, process
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
