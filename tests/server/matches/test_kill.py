"""A server killed with SIGKILL mid-game loses no acknowledged move and the game finishes."""

from __future__ import annotations

import os
import signal
import subprocess
from contextlib import AbstractContextManager

import httpx

from server.settings import Settings
from tests.server.conftest import arena_serve


def served(database_url: str) -> AbstractContextManager[tuple[subprocess.Popen[str], str]]:
    """Run `arena serve` on `database_url`; see `arena_serve`."""
    return arena_serve(database_url)


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
