"""Nobody is seated without consent: challenges for matches, invitations and owners for tournaments.

The attacks this guards against: a free token seating a victim in a match with a 1 ms clock,
entering a victim in a tournament, and starting or cancelling someone else's tournament.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
import pytest

from server.settings import Settings
from server.tournaments.runner import TournamentRunner
from tests.server.conftest import RunningServer, start_server
from tests.wsclient import ClientConnection, connect

HELLO = {"type": "hello", "protocol_version": "1.0"}


def register(http: httpx.Client, name: str) -> dict[str, str]:
    """Register `name`; return its bearer header."""
    response = http.post("/players", json={"name": name})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


@pytest.fixture
def http(live_server: RunningServer) -> httpx.Client:
    return httpx.Client(base_url=live_server.url, timeout=30)


def test_a_seat_naming_someone_else_is_a_challenge_the_clock_waits_for(
    http: httpx.Client,
) -> None:
    victim, mallory = register(http, "victim"), register(http, "mallory")
    body = {"game": "checkers", "seats": ["victim", "mallory"], "time_control": {"base_ms": 1}}
    created = http.post("/matches", json=body, headers=mallory)
    assert created.status_code == 201, created.text
    match_id = created.json()["match_id"]
    time.sleep(0.3)  # far past the victim's 1 ms clock
    state = http.get(f"/matches/{match_id}").json()
    assert state["status"] == "waiting" and state["result"] is None and state["moves"] == []
    assert state["seats"][0]["player"] is None and state["seats"][0]["challenged"] == "victim"

    # The challenger cannot answer for the victim; the victim sees the challenge and declines.
    for who in (mallory, {"Authorization": "Bearer arena_wrong"}):
        refused = http.post(f"/matches/{match_id}/accept", headers=who)
        assert refused.status_code in (401, 403), refused.text
    pending = http.get("/challenges", headers=victim).json()
    assert [(c["match_id"], c["your_seat"], c["challenger"]) for c in pending] == [
        (match_id, 0, "mallory")
    ]
    assert http.get("/challenges", headers=mallory).json() == []
    declined = http.post(f"/matches/{match_id}/decline", headers=victim)
    assert declined.status_code == 200, declined.text
    final = declined.json()
    assert final["status"] == "aborted"
    assert final["result"] == {
        "winner": None,
        "reason": "aborted",
        "description": "Black declined the challenge",
    }
    assert http.get("/challenges", headers=victim).json() == []
    again = http.post(f"/matches/{match_id}/accept", headers=victim)
    assert again.status_code == 403 and again.json()["code"] == "NOT_CHALLENGED"


def test_a_match_between_two_others_starts_when_both_accept(http: httpx.Client) -> None:
    organiser, north, south = (register(http, n) for n in ("organiser", "north", "south"))
    body = {"game": "tictactoe", "seats": ["north", "south"]}
    match_id = http.post("/matches", json=body, headers=organiser).json()["match_id"]
    first = http.post(f"/matches/{match_id}/accept", headers=north).json()
    assert first["status"] == "waiting" and first["your_seat"] == 0
    second = http.post(f"/matches/{match_id}/accept", headers=south).json()
    assert second["status"] == "active" and second["your_seat"] == 1
    assert [s["player"] for s in second["seats"]] == ["north", "south"]
    assert all(s["challenged"] is None for s in second["seats"])
    # The organiser sits nowhere: it cannot move or abort.
    refused = http.post(f"/matches/{match_id}/moves", json={"move": "4"}, headers=organiser)
    assert refused.status_code == 403 and refused.json()["code"] == "NOT_A_PLAYER"


def test_house_bots_and_oneself_need_no_consent(http: httpx.Client) -> None:
    alice = register(http, "alice")
    body = {"game": "connect4", "seats": ["alice", {"bot": "random"}]}
    state = http.post("/matches", json=body, headers=alice).json()
    assert state["status"] == "active" and state["your_seat"] == 0
    twice = {"game": "connect4", "seats": ["alice", "alice"]}
    refused = http.post("/matches", json=twice, headers=alice)
    assert refused.status_code == 422 and "both seats" in refused.json()["message"]


async def _receive(ws: ClientConnection, kind: str) -> dict[str, Any]:
    message: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), 10))
    assert message["type"] == kind, message
    return message


async def test_challenges_reach_the_websocket_and_are_answered_there(
    live_server: RunningServer,
) -> None:
    async with httpx.AsyncClient(base_url=live_server.url, timeout=30) as client:
        tokens = {}
        for name in ("alice", "bob"):
            tokens[name] = (await client.post("/players", json={"name": name})).json()["token"]
        bob = await connect(f"{live_server.ws_url}/ws?token={tokens['bob']}")
        await bob.send(json.dumps(HELLO))
        await _receive(bob, "welcome")
        auth = {"Authorization": f"Bearer {tokens['alice']}"}
        body = {"game": "nim", "seats": ["alice", "bob"]}
        first = (await client.post("/matches", json=body, headers=auth)).json()["match_id"]
        second = (await client.post("/matches", json=body, headers=auth)).json()["match_id"]
        spectator = await connect(f"{live_server.ws_url}/ws/matches/{first}")
        await spectator.send(json.dumps(HELLO))
        await _receive(spectator, "welcome")
        assert (await _receive(spectator, "match_state"))["status"] == "waiting"
        assert (await _receive(bob, "challenge"))["match_id"] == first
        assert (await _receive(bob, "challenge"))["match_id"] == second

        # A new connection is told of every challenge still waiting.
        await bob.close()
        bob = await connect(f"{live_server.ws_url}/ws?token={tokens['bob']}")
        await bob.send(json.dumps(HELLO))
        await _receive(bob, "welcome")
        pending = [await _receive(bob, "challenge") for _ in range(2)]
        assert [c["match_id"] for c in pending] == [first, second]
        assert {c["your_seat"] for c in pending} == {1}

        await bob.send(json.dumps({"type": "decline_challenge", "match_id": first}))
        ended = await _receive(bob, "match_ended")
        assert ended["match_id"] == first and ended["status"] == "aborted"
        # The spectator sees the end, never the challenge meant for bob alone.
        assert (await _receive(spectator, "match_ended"))["match_id"] == first
        await bob.send(json.dumps({"type": "accept_challenge", "match_id": second}))
        started = await _receive(bob, "match_started")
        assert started["match_id"] == second and started["your_seat"] == 1
        await bob.send(json.dumps({"type": "accept_challenge", "match_id": second}))
        await _receive(bob, "match_state")
        error = await _receive(bob, "error")
        assert error["code"] == "NOT_CHALLENGED"
        await bob.close()
        await spectator.close()


def test_a_challenge_waits_across_a_restart(server_settings: Settings) -> None:
    server = start_server(server_settings)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            alice, bob = register(http, "alice"), register(http, "bob")
            body = {"game": "tictactoe", "seats": ["bob", "alice"]}
            match_id = http.post("/matches", json=body, headers=alice).json()["match_id"]
    finally:
        server.stop()
    server = start_server(server_settings)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            listed = http.get("/matches", params={"status": "waiting"}).json()["matches"]
            assert listed[0]["seats"][0]["challenged"] == "bob"
            assert [c["match_id"] for c in http.get("/challenges", headers=bob).json()] == [
                match_id
            ]
            state = http.post(f"/matches/{match_id}/accept", headers=bob).json()
            assert state["status"] == "active" and state["seats"][0]["player"] == "bob"
    finally:
        server.stop()


# -- tournaments -----------------------------------------------------------------------------


def test_a_tournament_naming_a_player_needs_their_acceptance(http: httpx.Client) -> None:
    mallory, victim = register(http, "mallory"), register(http, "victim")
    body = {"game": "tictactoe", "bots": ["player:victim", "random"], "games_per_pairing": 2}
    created = http.post("/tournaments", json=body, headers=mallory).json()
    tournament_id = created["tournament_id"]
    assert created["owner"] == "mallory" and created["invitations"] == {"victim": "pending"}
    start = http.post(f"/tournaments/{tournament_id}/start", headers=mallory)
    assert start.status_code == 409 and start.json()["code"] == "INVITATIONS_PENDING"
    assert "victim (pending)" in start.json()["message"]
    declined = http.post(f"/tournaments/{tournament_id}/decline", headers=victim).json()
    assert declined["invitations"] == {"victim": "declined"}
    start = http.post(f"/tournaments/{tournament_id}/start", headers=mallory)
    assert start.status_code == 409 and "victim (declined)" in start.json()["message"]
    # Only the invited answer; only the owner cancels.
    stranger = register(http, "stranger")
    answer = http.post(f"/tournaments/{tournament_id}/accept", headers=stranger)
    assert answer.status_code == 403 and answer.json()["code"] == "NOT_CHALLENGED"
    for who in (victim, stranger):
        refused = http.post(f"/tournaments/{tournament_id}/cancel", headers=who)
        assert refused.status_code == 403 and refused.json()["code"] == "FORBIDDEN"
    cancelled = http.post(f"/tournaments/{tournament_id}/cancel", headers=mallory).json()
    assert cancelled["status"] == "cancelled" and cancelled["reason"] == "cancelled by mallory"
    assert cancelled["games"] == []
    again = http.post(f"/tournaments/{tournament_id}/cancel", headers=mallory)
    assert again.status_code == 409 and again.json()["code"] == "TOURNAMENT_OVER"
    late = http.post(f"/tournaments/{tournament_id}/accept", headers=victim)
    assert late.status_code == 409 and late.json()["code"] == "TOURNAMENT_OVER"


def test_only_the_owner_starts_and_cancelling_stops_the_games(http: httpx.Client) -> None:
    owner, other = register(http, "owner"), register(http, "other")
    body = {
        "game": "connect4",
        "bots": ["id:time=0.2", "id:time=0.3"],
        "games_per_pairing": 8,
        "concurrency": 2,
    }
    tournament_id = http.post("/tournaments", json=body, headers=owner).json()["tournament_id"]
    refused = http.post(f"/tournaments/{tournament_id}/start", headers=other)
    assert refused.status_code == 403 and refused.json()["code"] == "FORBIDDEN"
    assert http.get(f"/tournaments/{tournament_id}").json()["status"] == "created"
    assert http.post(f"/tournaments/{tournament_id}/start", headers=owner).status_code == 200
    deadline = time.monotonic() + 30
    while not http.get(f"/tournaments/{tournament_id}").json()["games"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    state = http.post(f"/tournaments/{tournament_id}/cancel", headers=owner).json()
    assert state["status"] == "cancelled" and state["games_done"] < state["games_total"]
    for game in state["games"]:
        match = http.get(f"/matches/{game['match_id']}").json()
        assert match["status"] in ("finished", "aborted"), match
    time.sleep(0.5)  # nothing starts after the cancel
    later = http.get(f"/tournaments/{tournament_id}").json()
    assert len(later["games"]) == len(state["games"]) and later["status"] == "cancelled"


def test_a_tournament_whose_task_crashes_ends_failed_with_the_reason(
    server_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def crash(*_args: Any, **_kwargs: Any) -> str:
        raise RuntimeError("the match store is gone")

    monkeypatch.setattr(TournamentRunner, "_create_match", crash)
    server = start_server(server_settings)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            owner = register(http, "owner")
            body = {"game": "tictactoe", "bots": ["random", "greedy"], "games_per_pairing": 2}
            tournament_id = http.post("/tournaments", json=body, headers=owner).json()[
                "tournament_id"
            ]
            http.post(f"/tournaments/{tournament_id}/start", headers=owner)
            deadline = time.monotonic() + 20
            while (state := http.get(f"/tournaments/{tournament_id}").json())["status"] == (
                "running"
            ):
                assert time.monotonic() < deadline, state
                time.sleep(0.05)
            assert state["status"] == "failed"
            assert "RuntimeError: the match store is gone" in state["reason"]
    finally:
        server.stop()
    monkeypatch.undo()
    server = start_server(server_settings)  # a restart does not run it again
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            time.sleep(0.3)
            state = http.get(f"/tournaments/{tournament_id}").json()
            assert state["status"] == "failed" and state["games"] == []
    finally:
        server.stop()
