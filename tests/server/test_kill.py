"""A server killed with SIGKILL mid-game loses no acknowledged move and the game finishes."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from server.settings import Settings
from tests.server.conftest import free_port


@contextmanager
def served(database_url: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """Run `arena serve` as a process on a free port; yield it and its base URL."""
    exe = shutil.which("arena", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the arena console script is not installed in this environment")
    port = free_port()
    process = subprocess.Popen(
        [exe, "serve", "--port", str(port), "--database", database_url],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
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


def test_sigkill_mid_game_loses_no_acknowledged_move(server_settings: Settings) -> None:
    url = server_settings.database_url
    acknowledged: list[str] = []
    with served(url) as (process, base), httpx.Client(base_url=base, timeout=30) as http:
        tokens = {n: http.post("/players", json={"name": n}).json()["token"] for n in "ab"}
        auth = {n: {"Authorization": f"Bearer {t}"} for n, t in tokens.items()}
        created = http.post(
            "/matches", json={"game": "connect4", "seats": ["a", "b"]}, headers=auth["a"]
        )
        match_id = created.json()["match_id"]
        assert http.post(f"/matches/{match_id}/accept", headers=auth["b"]).status_code == 200
        for ply, column in enumerate("4433221"[:6]):
            mover = "ab"[ply % 2]
            response = http.post(
                f"/matches/{match_id}/moves", json={"move": column}, headers=auth[mover]
            )
            assert response.status_code == 200, response.text
            acknowledged.append(column)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    with served(url) as (_process, base), httpx.Client(base_url=base, timeout=30) as http:
        state = http.get(f"/matches/{match_id}").json()
        assert state["moves"] == acknowledged
        assert state["status"] == "active"
        # Play on: the first player completes the bottom row 1-4 and wins.
        response = http.post(f"/matches/{match_id}/moves", json={"move": "1"}, headers=auth["a"])
        assert response.status_code == 200, response.text
        final = http.get(f"/matches/{match_id}").json()
        assert final["status"] == "finished"
        assert final["result"]["winner"] == 0 and final["result"]["reason"] == "rules"
        assert final["moves"] == [*acknowledged, "1"]
