"""Tokens never reach the server's log: a real `arena serve` process, its captured output."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from websockets.sync.client import connect

from server.access_log import redact


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
    exe = shutil.which("arena", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the arena console script is not installed in this environment")
    process = subprocess.Popen(
        [exe, "serve", "--port", "0", "--database", f"sqlite+aiosqlite:///{tmp_path}/a.db"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={"PATH": "/usr/bin:/bin", "ARENA_GRADER_DIR": str(tmp_path / "grader")},
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().split()[2]
        deadline = time.monotonic() + 20
        while True:
            try:
                registered = httpx.post(f"{url}/players", json={"name": "alice"}, timeout=2)
                break
            except httpx.HTTPError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        token = registered.json()["token"]
        listed = httpx.get(f"{url}/matches", params={"limit": 5, "token": token}, timeout=5)
        assert listed.status_code == 200, listed.text
        ws_url = url.replace("http://", "ws://")
        with connect(f"{ws_url}/ws?token={token}") as ws:
            ws.send(json.dumps({"type": "hello", "protocol_version": "1.0"}))
            welcome = json.loads(ws.recv(timeout=10))
        assert welcome["type"] == "welcome" and welcome["player"] == "alice"
        time.sleep(0.3)  # let the access log lines be written
    finally:
        process.terminate()
        output, _ = process.communicate(timeout=10)
    assert token not in output
    assert token[6:14] not in output  # not even a piece of it
    assert "GET /matches?limit=5&token=*** HTTP/1.1" in output, output
    assert '"WebSocket /ws?token=***"' in output, output
    assert "POST /players HTTP/1.1" in output
