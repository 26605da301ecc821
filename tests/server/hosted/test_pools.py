"""Rated pools over a real uvicorn: hosted bots join a pool, the server pairs them by itself,
their matches are ordinary rated matches, and the ladder shows it."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.settings import Settings
from tests.server.conftest import RunningServer, start_server
from tests.server.hosted.test_hosted_bots import RANDOM_ENGINE, TIMEOUT, Client

POOL = {"name": "ttt", "game": "tictactoe", "base_ms": 60_000, "increment_ms": 0}


@pytest.fixture
def client(server_settings: Settings, tmp_path: Path) -> Iterator[Client]:
    settings = Settings(
        database_url=server_settings.database_url,
        grader_dir=tmp_path / "grader",
        hosted_dir=tmp_path / "hosted",
        hosted_allow_unsandboxed=True,
        pool_pools=[POOL],
        pool_pair_every_s=0.1,
    )
    running: RunningServer = start_server(settings)
    client = Client(running)
    try:
        for name in ("ada", "bob", "cy"):
            client.register(name)
        yield client
    finally:
        client.http.close()
        running.stop()


def _hosted(client: Client, who: str, name: str) -> None:
    assert client.create(who, name).status_code == 201
    version = client.upload(who, name, "engine", {"bot.py": RANDOM_ENGINE})
    assert version.json()["status"] == "ready", version.text


def _wait(client: Client, ready: Any) -> dict[str, Any]:
    deadline = time.monotonic() + TIMEOUT
    while True:
        pool: dict[str, Any] = client.http.get("/pools/ttt").json()
        if ready(pool) or time.monotonic() > deadline:
            return pool
        time.sleep(0.1)


def test_bots_in_a_pool_are_paired_and_rated_by_themselves(client: Client) -> None:
    listed = client.http.get("/pools").json()["pools"]
    assert [(p["name"], p["game"], p["members"]) for p in listed] == [("ttt", "tictactoe", 0)]
    bots = {"ada": "one", "bob": "two", "cy": "three"}
    for who, bot in bots.items():
        _hosted(client, who, bot)
        joined = client.http.post(
            "/pools/ttt/members", json={"bot": f"{who}/{bot}"}, headers=client.auth(who)
        )
        assert joined.status_code == 201, joined.text

    # Two bots can never meet twice in a row: with three, the pool rotates its pairs.
    pool = _wait(client, lambda p: sum(e["games"] for e in p["ladder"]) >= 12)
    ladder = {entry["bot"]: entry for entry in pool["ladder"]}
    assert set(ladder) == {"ada/one", "bob/two", "cy/three"}
    assert all(entry["games"] >= 2 for entry in ladder.values()), ladder
    assert ladder["ada/one"]["spec"] == "hosted:ada/one@1"
    ratings = [entry["rating"] for entry in pool["ladder"]]
    assert ratings == sorted(ratings, reverse=True)
    finished = [g for g in reversed(pool["recent"]) if g["status"] == "finished"]
    assert len(finished) >= 4
    for spec in ("hosted:ada/one@1", "hosted:bob/two@1", "hosted:cy/three@1"):
        opponents = [
            g["second"] if g["first"] == spec else g["first"]
            for g in finished
            if spec in (g["first"], g["second"])
        ]
        assert all(a != b for a, b in itertools.pairwise(opponents)), opponents
    match = client.http.get(f"/matches/{finished[0]['match_id']}").json()
    assert {seat["bot"] for seat in match["seats"]} == {finished[0]["first"], finished[0]["second"]}
    assert match["time_control"]["base_ms"] == 60_000
    leaderboard = client.http.get("/leaderboard", params={"game": "tictactoe"}).json()
    assert set(ladder_spec(pool)) <= {r["bot"] for r in leaderboard["ratings"]}

    # Taken out, bots play no more: the one left waits alone.
    for who in ("bob", "cy"):
        left = client.http.delete(f"/pools/ttt/members/{who}/{bots[who]}", headers=client.auth(who))
        assert left.status_code == 204
    pool = _wait(client, lambda p: not p["live"])
    assert [entry["bot"] for entry in pool["ladder"]] == ["ada/one"]
    # A pairing that read the members before they left may still start one more game.
    time.sleep(0.5)
    _wait(client, lambda p: not p["live"])
    settled = len(client.http.get("/pools/ttt").json()["recent"])
    time.sleep(0.5)  # several pairing rounds: none can pair a bot alone
    assert len(client.http.get("/pools/ttt").json()["recent"]) == settled


def ladder_spec(pool: dict[str, Any]) -> list[str]:
    return [entry["spec"] for entry in pool["ladder"]]


def test_only_an_owner_enters_or_takes_out_their_bot(client: Client) -> None:
    _hosted(client, "ada", "mine")
    other = client.http.post(
        "/pools/ttt/members", json={"bot": "ada/mine"}, headers=client.auth("bob")
    )
    assert (other.status_code, other.json()["code"]) == (403, "FORBIDDEN")
    assert client.http.post("/pools/ttt/members", json={"bot": "ada/mine"}).status_code == 401
    unknown = client.http.post(
        "/pools/nope/members", json={"bot": "ada/mine"}, headers=client.auth("ada")
    )
    assert (unknown.status_code, unknown.json()["code"]) == (404, "NOT_FOUND")
    assert client.create("ada", "c4", game="connect4").status_code == 201
    wrong_game = client.http.post(
        "/pools/ttt/members", json={"bot": "ada/c4"}, headers=client.auth("ada")
    )
    assert wrong_game.status_code == 422
    assert "pool ttt plays tictactoe" in wrong_game.json()["message"]
    assert (
        client.http.post(
            "/pools/ttt/members", json={"bot": "ada/mine"}, headers=client.auth("ada")
        ).status_code
        == 201
    )
    out = client.http.delete("/pools/ttt/members/ada/mine", headers=client.auth("bob"))
    assert out.status_code == 403
    assert (
        client.http.delete("/pools/ttt/members/ada/mine", headers=client.auth("ada")).status_code
        == 204
    )
    again = client.http.delete("/pools/ttt/members/ada/mine", headers=client.auth("ada"))
    assert again.status_code == 404
