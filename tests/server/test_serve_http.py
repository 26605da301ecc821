"""What a real `arena serve` process guarantees over HTTP: no token in its log, bounded headers."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from websockets.sync.client import connect

from server.access_log import redact


@contextmanager
def arena_serve(tmp_path: Path, **env: str) -> Iterator[tuple[str, list[str]]]:
    """Run `arena serve` on a free port; yield its URL and, once it has stopped, its output."""
    exe = shutil.which("arena", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the arena console script is not installed in this environment")
    process = subprocess.Popen(
        [exe, "serve", "--port", "0", "--database", f"sqlite+aiosqlite:///{tmp_path}/a.db"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={"PATH": "/usr/bin:/bin", "ARENA_GRADER_DIR": str(tmp_path / "grader"), **env},
    )
    output: list[str] = []
    try:
        assert process.stdout is not None
        url = process.stdout.readline().split()[2]
        # Start-up takes a second or two; the margin is for a machine loaded by other work.
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{url}/health", timeout=2)
                break
            except httpx.HTTPError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield url, output
        time.sleep(0.3)  # let the last log lines be written
    finally:
        process.terminate()
        output.append(process.communicate(timeout=10)[0])


@pytest.mark.parametrize(
    ("logged", "expected"),
    [
        ("/ws?token=arena_abc", "/ws?token=***"),
        ("/ws?x=1&token=arena_abc&y=2", "/ws?x=1&token=***&y=2"),
        ("/ws?%74oken=arena_abc", "/ws?%74oken=***"),
        ("/ws?TOKEN=a+b%20c", "/ws?TOKEN=***"),
        ("/ws?access_token=abc", "/ws?access_token=***"),
        ("/matches?game=checkers&limit=5", "/matches?game=checkers&limit=5"),
        ("/matches?player=tokenizer", "/matches?player=tokenizer"),
    ],
)
def test_redact_hides_token_values_and_keeps_the_rest(logged: str, expected: str) -> None:
    assert redact(logged) == expected


def test_arena_serve_logs_requests_without_their_tokens(tmp_path: Path) -> None:
    with arena_serve(tmp_path) as (url, output):
        registered = httpx.post(f"{url}/players", json={"name": "alice"}, timeout=30)
        token = registered.json()["token"]
        listed = httpx.get(f"{url}/matches", params={"limit": 5, "token": token}, timeout=30)
        assert listed.status_code == 200, listed.text
        with connect(f"{url.replace('http://', 'ws://')}/ws?token={token}") as ws:
            ws.send(json.dumps({"type": "hello", "protocol_version": "1.0"}))
            welcome = json.loads(ws.recv(timeout=10))
        assert welcome["type"] == "welcome" and welcome["player"] == "alice"
    (log,) = output
    assert token not in log
    assert token[6:14] not in log  # not even a piece of it
    assert "GET /matches?limit=5&token=*** HTTP/1.1" in log, log
    assert '"WebSocket /ws?token=***"' in log, log
    assert "POST /players HTTP/1.1" in log


def send_headers(url: str, extra: bytes) -> bytes:
    """Send GET /health with `extra` header bytes, a megabyte at a time; return the answer.

    A server that stops reading once the headers pass its limit answers (or closes) before
    everything is sent.
    """
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        try:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: test\r\n")
            for start in range(0, len(extra), 1 << 20):
                sock.sendall(extra[start : start + (1 << 20)])
            sock.sendall(b"\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused before the end: read what it said
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
                if b'"status"' in answer or b'"code"' in answer:
                    break
        except ConnectionResetError:
            pass
    return answer


def test_headers_over_the_limit_are_refused_without_reading_them(tmp_path: Path) -> None:
    """Headers still incomplete past the limit are refused as they arrive, with 431."""
    with arena_serve(tmp_path, ARENA_MAX_HEADER_BYTES="8192") as (url, _):
        fits = send_headers(url, b"X-Fill: " + b"a" * 6000 + b"\r\n")
        assert fits.startswith(b"HTTP/1.1 200 "), fits
        over = send_headers(url, b"X-Fill: " + b"a" * (1 << 20) + b"\r\n")
        assert over.startswith(b"HTTP/1.1 431 "), over
        assert b'"code":"HEADERS_TOO_LARGE"' in over, over
        many = send_headers(url, b"".join(b"X-%d: a\r\n" % i for i in range(100_000)))
        assert many.startswith(b"HTTP/1.1 431 "), many
        # 64 MB of one header: refused after the first reads, never buffered whole.
        huge = send_headers(url, b"X-Fill: " + b"a" * (64 << 20) + b"\r\n")
        assert huge == b"" or huge.startswith(b"HTTP/1.1 431 "), huge[:200]
        assert httpx.get(f"{url}/health", timeout=30).json()["status"] == "ok"
