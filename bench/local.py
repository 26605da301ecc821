"""What the benches that start a server share: a free port, and waiting for the server to answer."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import time

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
