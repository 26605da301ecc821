"""Two `arena bot` processes finish a checkers and a Connect Four match; a spectator sees it all."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server.conftest import RunningServer
from tests.wsclient import connect

HELLO = {"type": "hello", "protocol_version": "1.0", "client": "spectator"}


async def watch(server: RunningServer, match_id: str) -> list[dict[str, Any]]:
    """Spectate `match_id` until it ends; return every message after the welcome."""
    messages: list[dict[str, Any]] = []
    async with connect(f"{server.ws_url}/ws/matches/{match_id}") as ws:
        await ws.send(json.dumps(HELLO))
        while True:
            message = json.loads(await asyncio.wait_for(ws.recv(), 120))
            if message["type"] == "welcome":
                continue
            messages.append(message)
            if message["type"] == "match_ended":
                return messages


async def test_two_bot_processes_finish_their_matches(live_server: RunningServer) -> None:
    exe = shutil.which("arena", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the arena console script is not installed in this environment")
    async with httpx.AsyncClient(base_url=live_server.url, timeout=30) as http:
        tokens = {}
        for name in ("north", "south"):
            response = await http.post("/players", json={"name": name})
            tokens[name] = response.json()["token"]
        auth = {"Authorization": f"Bearer {tokens['north']}"}
        clock = {"base_ms": 120_000, "increment_ms": 1_000}
        checkers = await http.post(
            "/matches",
            json={"game": "checkers", "seats": ["north", "south"], "time_control": clock},
            headers=auth,
        )
        connect4 = await http.post(
            "/matches",
            json={"game": "connect4", "seats": ["south", "north"], "time_control": clock},
            headers=auth,
        )
        assert checkers.status_code == connect4.status_code == 201
        ids = [checkers.json()["match_id"], connect4.json()["match_id"]]
        spectator = asyncio.create_task(watch(live_server, ids[0]))
        await asyncio.sleep(0.2)
        processes = [
            subprocess.Popen(
                [
                    exe,
                    "bot",
                    "--server",
                    live_server.url,
                    "--token",
                    tokens[name],
                    "--bot",
                    spec,
                    "--matches",
                    "2",
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for name, spec in (("north", "alphabeta:depth=2"), ("south", "greedy"))
        ]
        try:
            seen = await asyncio.wait_for(spectator, 180)
            for process in processes:
                await asyncio.wait_for(asyncio.to_thread(process.wait), 60)
        finally:
            for process in processes:
                if process.poll() is None:
                    process.kill()
        outputs = [p.communicate()[0] for p in processes]
        assert [p.returncode for p in processes] == [0, 0], outputs
        for match_id in ids:
            state = (await http.get(f"/matches/{match_id}")).json()
            assert state["status"] == "finished", state
            assert state["result"]["reason"] == "rules", state["result"]
        final = (await http.get(f"/matches/{ids[0]}")).json()
    assert seen[0]["type"] == "match_state"
    moves = [m for m in seen if m["type"] == "move_made"]
    seqs = [m["seq"] for m in moves]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert [m["move"] for m in moves] == final["moves"][len(seen[0]["moves"]) :]
    assert len(final["moves"]) > 10
