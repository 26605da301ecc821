"""A move's search statistics (protocol 1.2): sent by a bot, filled in by the house bots, stored
with the move, published on `move_made`, replayed in the record, and never shown to a client of
an older version."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from bots.spec import create_bot
from games import get_game
from protocol.version import PROTOCOL_VERSION
from server.settings import Settings
from tests.server.conftest import RunningServer, start_server
from tests.server.routes.test_ws import (
    HELLO,
    challenge_accepted,
    connect_player,
    receive,
    register,
    send,
)
from tests.wsclient import connect

V12 = {"Arena-Protocol-Version": "1.2"}
V11 = {"Arena-Protocol-Version": "1.1"}
SEARCH = {
    "depth": 7,
    "nodes": 123_456,
    "score": -35.5,
    "pv": ["11-15", "23-19", "8-11"],
    "seldepth": 12,
    "time_ms": 840,
    "nps": 146_971,
}
WON = {"depth": 12, "nodes": 9_007_199_254_740_991, "score": 999_993, "outcome": "win",
       "outcome_plies": 7}  # fmt: skip


def auth(token: str, headers: dict[str, str] | None = None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", **(headers or {})}


def register_sync(http: httpx.Client, name: str) -> str:
    response = http.post("/players", json={"name": name})
    assert response.status_code == 201, response.text
    token: str = response.json()["token"]
    return token


def record(http: httpx.Client, match_id: str, headers: dict[str, str] | None = None) -> Any:
    response = http.get(f"/matches/{match_id}/record", headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_client_sent_search_is_stored_and_replayed_after_a_restart(
    server_settings: Settings,
) -> None:
    server = start_server(server_settings)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            alice, bob = register_sync(http, "alice"), register_sync(http, "bob")
            created = http.post(
                "/matches",
                json={"game": "checkers", "seats": ["alice", "bob"]},
                headers=auth(alice),
            )
            match_id = created.json()["match_id"]
            assert http.post(f"/matches/{match_id}/accept", headers=auth(bob)).status_code == 200
            made = http.post(
                f"/matches/{match_id}/moves",
                json={"move": "11-15", "search": SEARCH},
                headers=auth(alice, V12),
            )
            assert made.status_code == 200, made.text
            assert made.json()["search"] == {**SEARCH, "outcome": None, "outcome_plies": None}
            # Bob's move has no statistics; a 1.1 client gets its answer without the field.
            plain = http.post(
                f"/matches/{match_id}/moves", json={"move": "23-19"}, headers=auth(bob, V11)
            )
            assert plain.status_code == 200 and "search" not in plain.json()
            won = http.post(
                f"/matches/{match_id}/moves",
                json={"move": "8-11", "search": WON},
                headers=auth(alice),  # no version header: answered in 1.0
            )
            assert won.status_code == 200 and "search" not in won.json()
    finally:
        server.stop()
    server = start_server(server_settings)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            replayed = record(http, match_id, V12)
            searches = [move["search"] for move in replayed["moves"]]
            assert searches[0] == {**SEARCH, "outcome": None, "outcome_plies": None}
            assert searches[1] is None
            assert searches[2] == {
                **WON,
                "pv": [],
                "seldepth": None,
                "time_ms": None,
                "nps": None,
            }
            for headers in (V11, None):
                older = record(http, match_id, headers)
                assert [m["move"] for m in older["moves"]] == ["11-15", "23-19", "8-11"]
                assert all("search" not in m for m in older["moves"])
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("search", "field"),
    [
        ({"depth": 3}, "search.nodes"),
        ({"depth": 3, "nodes": -1}, "search.nodes"),
        ({"depth": 3, "nodes": 2**53}, "search.nodes"),
        ({"depth": 3, "nodes": 1, "pv": ["11-15"] * 65}, "search.pv"),
        ({"depth": 3, "nodes": 1, "score": "good"}, "search.score"),
        ({"depth": 3, "nodes": 1, "outcome_plies": 4}, "search"),
        ({"depth": 3, "nodes": 1, "mate": 4}, "search.mate"),
        ("deep", "search"),
    ],
)
def test_a_bad_search_is_refused_and_the_match_is_unchanged(
    live_server: RunningServer, search: Any, field: str
) -> None:
    with httpx.Client(base_url=live_server.url, timeout=30) as http:
        alice = register_sync(http, "alice")
        created = http.post(
            "/matches",
            json={"game": "tictactoe", "seats": ["alice", {"bot": "greedy"}]},
            headers=auth(alice),
        )
        match_id = created.json()["match_id"]
        refused = http.post(
            f"/matches/{match_id}/moves",
            json={"move": "4", "search": search},
            headers=auth(alice, V12),
        )
        assert refused.status_code == 422, refused.text
        error = refused.json()
        assert error["code"] == "VALIDATION_ERROR"
        assert f"body.{field}" in error["details"], error
        assert http.get(f"/matches/{match_id}").json()["moves"] == []


async def test_move_made_carries_the_search_and_time_to_clients_of_1_2_only(
    live_server: RunningServer,
) -> None:
    async with httpx.AsyncClient(base_url=live_server.url, timeout=30) as http:
        alice, bob = await register(http, "alice"), await register(http, "bob")
        ws_a = await connect_player(live_server, alice, "alice", version=PROTOCOL_VERSION)
        ws_b = await connect_player(live_server, bob, "bob", version="1.1")
        match = await challenge_accepted(http, alice, bob, game="tictactoe", seats=["alice", "bob"])
        match_id = match["match_id"]
        watcher = await connect(f"{live_server.ws_url}/ws/matches/{match_id}")
        await send(watcher, {**HELLO, "protocol_version": "1.0"})
        await receive(watcher, "welcome", "1.0")
        await receive(watcher, "match_state", "1.0")
        await receive(ws_b, "challenge", "1.1")
        for ws, version in ((ws_a, PROTOCOL_VERSION), (ws_b, "1.1")):
            await receive(ws, "match_started", version)
            await receive(ws, "match_state", version)

        # A bad search is refused with the field named; the connection plays on.
        bad = {"depth": -2, "nodes": 1}
        await send(ws_a, {"type": "move", "match_id": match_id, "move": "4", "search": bad})
        error = await receive(ws_a, "error", PROTOCOL_VERSION)
        assert error["code"] == "VALIDATION_ERROR" and "search.depth" in error["details"]

        search = {"depth": 9, "nodes": 549, "score": 0, "outcome": "draw", "pv": ["4", "0"]}
        await send(ws_a, {"type": "move", "match_id": match_id, "move": "4", "search": search})
        mine = await receive(ws_a, "move_made", PROTOCOL_VERSION)
        assert mine["move"] == "4" and mine["search"]["outcome"] == "draw"
        assert (mine["search"]["depth"], mine["search"]["pv"]) == (9, ["4", "0"])
        theirs = await receive(ws_b, "move_made", "1.1")
        watched = await receive(watcher, "move_made", "1.0")
        assert theirs["move"] == watched["move"] == "4"
        assert "search" not in theirs and "search" not in watched
        # The mover's thinking time comes with the move since 1.2, as the record has it.
        assert "elapsed_ms" not in theirs and "elapsed_ms" not in watched
        recorded = (await http.get(f"/matches/{match_id}/record", headers=V12)).json()
        assert mine["elapsed_ms"] == recorded["moves"][0]["elapsed_ms"] >= 0
        for ws in (ws_a, ws_b, watcher):
            await ws.close()


def _finished_record(http: httpx.Client, match_id: str) -> Any:
    # A liveness bound only: it keeps a stuck match from hanging the run, far above what the
    # twelve plies take even while the engine's compiled code is first loaded on a busy machine.
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        replayed = record(http, match_id, V12)
        if replayed["status"] == "finished":
            return replayed
        time.sleep(0.05)
    pytest.fail(f"match {match_id} did not finish: {replayed}")


@pytest.mark.parametrize(
    "time_control",
    [None, {"base_ms": 600_000}],
    ids=["played-ahead", "turn-by-turn"],
)
def test_house_bots_report_their_own_search(
    live_server: RunningServer, time_control: dict[str, int] | None
) -> None:
    specs = ("alphabeta:depth=3", "mcts:simulations=60,seed=3")
    with httpx.Client(base_url=live_server.url, timeout=30) as http:
        body: dict[str, Any] = {
            "game": "connect4",
            "seats": [{"bot": specs[0]}, {"bot": specs[1]}],
            "max_plies": 12,
        }
        if time_control is not None:
            body["time_control"] = time_control
        created = http.post("/matches", json=body, headers=auth(register_sync(http, "alice")))
        assert created.status_code == 201, created.text
        replayed = _finished_record(http, created.json()["match_id"])
    moves = replayed["moves"]
    assert len(moves) >= 7
    game = get_game("connect4")
    state = game.initial_state()
    for move in moves:
        search = move["search"]
        assert search is not None, move
        assert search["nodes"] > 0 and search["pv"][0] == move["move"], move
        assert search["time_ms"] is not None and search["score"] is not None, move
        if move["seat"] == 0:
            # A fixed-depth search: its depth is the spec's, and it is deterministic, so the
            # same search of the same position finds the same score and principal variation.
            assert search["depth"] == 3, move
            again = create_bot(specs[0], game).choose(state)
            assert search["score"] == again.score, move
            assert search["pv"] == again.stats.pv, move
        else:
            # MCTS: the deepest node of its tree; a mean reward in [-1, 1] unless proven.
            assert 1 <= search["depth"] <= 42, move
            assert search["nodes"] <= 61, move  # a node per simulation at most, and the root
            assert search["outcome"] is not None or -1 <= search["score"] <= 1, move
        state = state.play(move["move"])
