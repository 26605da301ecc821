"""Connected bots in rated pools over a real uvicorn: a player enters itself, `arena bot
--pool` processes are paired with hosted bots and with each other, a client that never moves
is paused, and who may enter or take out whom."""

from __future__ import annotations

import asyncio
import itertools
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.settings import Settings
from tests.server.conftest import RunningServer, start_server
from tests.server.hosted.test_hosted_bots import TIMEOUT, Client
from tests.server.hosted.test_pools import _hosted
from tests.waiting import wait_for
from tests.wsclient import connect

POOL = {"name": "ttt", "game": "tictactoe", "base_ms": 60_000, "increment_ms": 0}
BLITZ = {"name": "blitz", "game": "tictactoe", "base_ms": 1000, "increment_ms": 0}
"""A pool whose clock a client that never moves loses in a second."""


@pytest.fixture
def client(server_settings: Settings, tmp_path: Path) -> Iterator[Client]:
    settings = Settings(
        database_url=server_settings.database_url,
        grader_dir=tmp_path / "grader",
        hosted_dir=tmp_path / "hosted",
        hosted_allow_unsandboxed=True,
        hosted_failures_to_pause=2,
        pool_pools=[POOL, BLITZ],
        pool_pair_every_s=0.1,
    )
    running: RunningServer = start_server(settings)
    client = Client(running)
    client.http.headers["Arena-Protocol-Version"] = "1.5"  # a pool entry's `connected`
    client.server = running  # type: ignore[attr-defined]
    try:
        for name in ("ada", "dan", "eve", "zed"):
            client.register(name)
        yield client
    finally:
        client.http.close()
        running.stop()


def _wait(client: Client, pool: str, ready: Any) -> dict[str, Any]:
    """Read the pool until `ready(pool)` (a liveness bound, tests.waiting)."""
    answer: dict[str, Any] = wait_for(
        f"pool {pool} as awaited", lambda: client.http.get(f"/pools/{pool}").json(), ready
    )
    return answer


def _arena() -> str:
    exe = shutil.which("arena", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the arena console script is not installed in this environment")
    return exe


def test_arena_bot_processes_play_the_pools_rated_games_with_hosted_bots(client: Client) -> None:
    _hosted(client, "ada", "one")
    joined = client.http.post(
        "/pools/ttt/members", json={"bot": "ada/one"}, headers=client.auth("ada")
    )
    assert joined.status_code == 201
    server: RunningServer = client.server  # type: ignore[attr-defined]
    processes = {
        name: subprocess.Popen(
            [
                _arena(),
                "bot",
                "--server",
                server.url,
                "--token",
                client.tokens[name],
                "--engine",
                spec,
                "--pool",
                "ttt",
                "--decline-challenges",
                "--matches",
                "4",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for name, spec in (("dan", "greedy"), ("eve", "random"))
    }
    try:
        for process in processes.values():
            process.wait(timeout=3 * TIMEOUT)
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.kill()
    outputs = {name: process.communicate()[0] for name, process in processes.items()}
    assert [p.returncode for p in processes.values()] == [0, 0], outputs
    for name, output in outputs.items():
        assert f"entered pool ttt (tictactoe) as {name}" in output, output

    pool = _wait(client, "ttt", lambda p: not p["live"])
    ladder = {entry["bot"]: entry for entry in pool["ladder"]}
    assert set(ladder) == {"ada/one", "dan", "eve"}
    for name in ("dan", "eve"):
        assert ladder[name]["connected"] is True
        assert ladder[name]["spec"] is None
        assert ladder[name]["games"] >= 4, ladder[name]
    assert ladder["ada/one"]["connected"] is False
    finished = [g for g in reversed(pool["recent"]) if g["status"] == "finished"]
    sides = [{g["first"], g["second"]} for g in finished]
    # Connected bots meet hosted bots and each other; never the same pair twice in a row.
    assert {"dan", "eve"} in sides
    assert any("hosted:ada/one@1" in pair and pair & {"dan", "eve"} for pair in sides)
    for name in ("dan", "eve"):
        opponents = [next(iter(pair - {name})) for pair in sides if name in pair]
        assert all(a != b for a, b in itertools.pairwise(opponents)), opponents
    # Each is an ordinary match with the player seated, rated as the player.
    game = next(g for g in finished if "dan" in (g["first"], g["second"]))
    match = client.http.get(f"/matches/{game['match_id']}").json()
    assert "dan" in {seat["player"] for seat in match["seats"]}
    profile = client.http.get("/players/dan").json()
    assert any(r["game"] == "tictactoe" and r["games"] >= 4 for r in profile["ratings"]), profile

    # Offline now, the connected bots are paired no more: the hosted bot waits alone.
    settled = len(client.http.get("/pools/ttt").json()["recent"])
    time.sleep(1.0)  # ten pairing rounds
    assert len(client.http.get("/pools/ttt").json()["recent"]) == settled
    # A client of 1.4 does not get the field it does not know.
    old = client.http.get("/pools/ttt", headers={"Arena-Protocol-Version": "1.4"}).json()
    assert all("connected" not in entry for entry in old["ladder"])


async def _silent_bot(server: RunningServer, token: str, stop: asyncio.Event) -> None:
    """A connected bot open to challenges that never moves (its client is stuck)."""
    headers = {"Authorization": f"Bearer {token}"}
    async with connect(f"{server.ws_url}/ws", additional_headers=headers) as ws:
        await ws.send(json.dumps({"type": "hello", "protocol_version": "1.5"}))
        await ws.send(json.dumps({"type": "bot_available", "available": True}))
        while not stop.is_set():
            try:
                await asyncio.wait_for(ws.recv(), 0.2)
            except TimeoutError:
                continue


def test_a_connected_bot_that_never_moves_is_paused_and_resumes_by_joining_again(
    client: Client,
) -> None:
    server: RunningServer = client.server  # type: ignore[attr-defined]
    _hosted(client, "ada", "one")
    for who, bot in (("ada", "ada/one"), ("zed", "zed")):
        answer = client.http.post(
            "/pools/blitz/members", json={"bot": bot}, headers=client.auth(who)
        )
        assert answer.status_code == 201, answer.text

    async def stuck_until_paused() -> dict[str, Any]:
        stop = asyncio.Event()
        silent = asyncio.create_task(_silent_bot(server, client.tokens["zed"], stop))
        try:
            return await asyncio.to_thread(
                _wait, client, "blitz", lambda p: _entry(p, "zed")["paused"] is not None
            )
        finally:
            stop.set()
            await silent

    pool = asyncio.run(stuck_until_paused())
    zed = _entry(pool, "zed")
    assert "losing 2 pool games in a row on time" in zed["paused"]
    # Two bots alone in a pool meet again and again: zed lost both games to the same bot.
    lost = [g for g in pool["recent"] if "zed" in (g["first"], g["second"])]
    assert len(lost) == 2
    for game in lost:
        match = client.http.get(f"/matches/{game['match_id']}").json()
        assert match["result"]["code"] == "timeout"
        zed_seat = 0 if game["first"] == "zed" else 1
        assert match["result"]["winner"] == 1 - zed_seat
    again = client.http.post(
        "/pools/blitz/members", json={"bot": "zed"}, headers=client.auth("zed")
    )
    assert again.status_code == 201
    assert _entry(again.json(), "zed")["paused"] is None


def _entry(pool: dict[str, Any], bot: str) -> dict[str, Any]:
    return next(entry for entry in pool["ladder"] if entry["bot"] == bot)


def test_a_player_enters_and_takes_out_only_itself(client: Client) -> None:
    def post(who: str, bot: str, pool: str = "ttt") -> Any:
        return client.http.post(
            f"/pools/{pool}/members", json={"bot": bot}, headers=client.auth(who)
        )

    other = post("eve", "dan")
    assert (other.status_code, other.json()["code"]) == (403, "FORBIDDEN")
    assert "you are eve, not dan" in other.json()["message"]
    assert client.http.post("/pools/ttt/members", json={"bot": "dan"}).status_code == 401
    assert post("dan", "dan", pool="nope").status_code == 404
    assert post("dan", "bad name!").status_code == 422
    first = post("dan", "dan")
    assert first.status_code == 201
    assert post("dan", "DAN").status_code == 201  # twice changes nothing
    entries = [e for e in first.json()["ladder"] if e["bot"] == "dan"]
    assert len(entries) == 1 and entries[0]["connected"] and not entries[0]["playing"]
    assert len([e for e in post("dan", "dan").json()["ladder"] if e["bot"] == "dan"]) == 1
    assert (
        client.http.delete("/pools/ttt/members/dan", headers=client.auth("eve")).status_code == 403
    )
    assert client.http.delete("/pools/ttt/members/dan").status_code == 401
    assert (
        client.http.delete("/pools/ttt/members/dan", headers=client.auth("dan")).status_code == 204
    )
    gone = client.http.delete("/pools/ttt/members/dan", headers=client.auth("dan"))
    assert (gone.status_code, gone.json()["code"]) == (404, "NOT_FOUND")
    # Offline, a member is never paired: dan and eve in the pool, neither connected.
    assert post("dan", "dan").status_code == 201
    assert post("eve", "eve").status_code == 201
    time.sleep(0.5)  # five pairing rounds
    assert client.http.get("/pools/ttt").json()["recent"] == []
