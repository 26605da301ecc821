"""The REST API end to end: a real uvicorn server, a real SQLite file, real httpx clients."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from server.settings import Settings
from tests.server.conftest import RunningServer, start_server

TIME_CONTROL = {"base_ms": 600_000, "increment_ms": 1000}


def register(client: httpx.Client, name: str) -> dict[str, str]:
    """Register `name`; return the Authorization header of its token."""
    response = client.post("/players", json={"name": name})
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["name"] == name and body["token"].startswith("arena_")
    return {"Authorization": f"Bearer {body['token']}"}


def create(client: httpx.Client, auth: dict[str, str], **body: Any) -> dict[str, Any]:
    """Create a match; return its state."""
    response = client.post("/matches", json=body, headers=auth)
    assert response.status_code == 201, response.text
    state: dict[str, Any] = response.json()
    return state


def move(client: httpx.Client, auth: dict[str, str], match_id: str, text: str) -> httpx.Response:
    """Post a move."""
    return client.post(f"/matches/{match_id}/moves", json={"move": text}, headers=auth)


def state_of(
    client: httpx.Client, match_id: str, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    """GET a match's state (as the player whose headers are given, if any)."""
    response = client.get(f"/matches/{match_id}", headers=headers)
    assert response.status_code == 200, response.text
    state: dict[str, Any] = response.json()
    return state


def play_out(
    client: httpx.Client, seats: list[dict[str, str]], match_id: str, limit: int = 400
) -> dict[str, Any]:
    """Play the first legal move for whoever is to move until the match ends."""
    state = state_of(client, match_id)
    for _ in range(limit):
        if state["status"] != "active":
            return state
        response = move(client, seats[state["to_move"]], match_id, state["legal_moves"][0])
        assert response.status_code == 200, response.text
        state = state_of(client, match_id)
    raise AssertionError(f"match {match_id} did not end in {limit} moves")


@pytest.fixture
def client(live_server: RunningServer) -> Iterator[httpx.Client]:
    """An HTTP client of the live server."""
    with httpx.Client(base_url=live_server.url, timeout=30) as http:
        yield http


def test_checkers_match_between_two_players(client: httpx.Client) -> None:
    alice, bob, carol = (register(client, name) for name in ("alice", "bob", "carol"))
    state = create(
        client, alice, game="checkers", time_control=TIME_CONTROL, seats=["alice", "bob"]
    )
    match_id = state["match_id"]
    # The creator's answer says its seat, as GET with the same token does.
    assert state["your_seat"] == 0 == state_of(client, match_id, alice)["your_seat"]
    assert state_of(client, match_id)["your_seat"] is None
    # Bob is challenged, not seated: nothing runs until he accepts.
    assert state["status"] == "waiting" and state["clocks"]["running"] is None
    assert state["seats"][1] == {
        "seat": 1, "side": "white", "player": None, "bot": None, "challenged": "bob"
    }  # fmt: skip
    assert move(client, alice, match_id, "11-15").json()["code"] == "NOT_STARTED"
    refused = client.post(f"/matches/{match_id}/accept", headers=carol)
    assert refused.status_code == 403 and refused.json()["code"] == "NOT_CHALLENGED"
    assert client.post(f"/matches/{match_id}/join", json={}, headers=carol).status_code == 409
    accepted = client.post(f"/matches/{match_id}/accept", headers=bob)
    assert accepted.status_code == 200, accepted.text
    state = accepted.json()
    assert state["your_seat"] == 1 and state["seats"][1]["challenged"] is None
    assert state["status"] == "active" and state["seq"] == 1 and state["to_move"] == 0
    assert state["clocks"]["running"] == 0
    assert state["clocks"]["remaining_ms"][1] == 600_000
    assert [s["player"] for s in state["seats"]] == ["alice", "bob"]

    for ply, (seat, text) in enumerate([(alice, "11-15"), (bob, "23-19"), (alice, "8-11")], 1):
        response = move(client, seat, match_id, text)
        assert response.status_code == 200, response.text
        made = response.json()
        assert made["type"] == "move_made" and made["move"] == text and made["ply"] == ply
    before = state_of(client, match_id)
    assert before["moves"] == ["11-15", "23-19", "8-11"] and before["seq"] == 4

    out_of_turn = move(client, alice, match_id, before["legal_moves"][0])
    assert out_of_turn.status_code == 409
    assert out_of_turn.json()["code"] == "NOT_YOUR_TURN"

    illegal = move(client, bob, match_id, "1-5")
    assert illegal.status_code == 422
    body = illegal.json()
    assert body["code"] == "ILLEGAL_MOVE" and body["match_id"] == match_id
    assert sorted(body["legal_moves"]) == sorted(before["legal_moves"])
    # The details PROTOCOL.md documents: the move, the seat's rejections so far and the limit.
    assert body["details"] == {"move": "1-5", "rejections": 1, "limit": 3, "seq": 4}
    # The message says it too, in words: a client that shows only the message is warned.
    assert body["message"].endswith("(rejected move 1 of 3: 2 more and you forfeit the match)")

    malformed = move(client, bob, match_id, "hello")
    assert malformed.status_code == 422 and malformed.json()["code"] == "INVALID_MOVE"

    stranger = move(client, carol, match_id, before["legal_moves"][0])
    assert stranger.status_code == 403 and stranger.json()["code"] == "NOT_A_PLAYER"

    bad_token = move(client, {"Authorization": "Bearer arena_nope"}, match_id, "22-18")
    assert bad_token.status_code == 401 and bad_token.json()["code"] == "UNAUTHORIZED"
    no_token = client.post(f"/matches/{match_id}/moves", json={"move": "22-18"})
    assert no_token.status_code == 401 and no_token.json()["code"] == "UNAUTHORIZED"

    after = state_of(client, match_id)
    for key in ("seq", "position", "moves", "to_move", "status"):
        assert after[key] == before[key], key

    resigned = client.post(f"/matches/{match_id}/resign", headers=bob)
    assert resigned.status_code == 200, resigned.text
    final = state_of(client, match_id)
    assert final["status"] == "finished"
    assert final["result"]["winner"] == 0 and final["result"]["reason"] == "resign"
    assert "resigned" in final["result"]["description"]
    late = move(client, alice, match_id, "22-18")
    assert late.status_code == 409 and late.json()["code"] == "MATCH_OVER"

    pdn = client.get(f"/matches/{match_id}/pdn")
    assert pdn.status_code == 200
    assert "1. 11-15 23-19 2. 8-11" in pdn.text and '[Result "2-0"]' in pdn.text
    assert '[Black "alice"]' in pdn.text and '[White "bob"]' in pdn.text

    record = client.get(f"/matches/{match_id}/record").json()
    assert record["type"] == "match_record" and record["match_id"] == match_id
    assert [m["move"] for m in record["moves"]] == ["11-15", "23-19", "8-11"]
    assert [m["seat"] for m in record["moves"]] == [0, 1, 0]
    # One result shape and one seat shape everywhere: the record says what match_state says.
    assert record["result"] == final["result"]
    assert record["seats"] == final["seats"]
    assert record["to_move"] is None and final["to_move"] is None

    listed = client.get("/matches", params={"player": "bob", "status": "finished"}).json()
    assert [m["match_id"] for m in listed["matches"]] == [match_id]
    assert client.get("/matches", params={"player": "carol"}).json()["matches"] == []


def test_bad_requests_get_error_bodies_not_500(client: httpx.Client) -> None:
    alice = register(client, "alice")
    duplicate = client.post("/players", json={"name": "Alice"})
    assert duplicate.status_code == 409 and duplicate.json()["code"] == "NAME_TAKEN"
    assert duplicate.json()["message"] == (
        "the player name 'Alice' is already taken (names are compared without regard to case); "
        "choose another"
    )
    assert duplicate.json()["details"] == {"name": "Alice"}
    reserved = client.post("/players", json={"name": "open"})
    assert reserved.status_code == 422 and reserved.json()["code"] == "VALIDATION_ERROR"
    missing = client.post("/matches", json={"game": "checkers"}, headers=alice)
    assert missing.status_code == 422 and "seats" in missing.json()["message"]
    for body, field in [
        ({"game": "chess", "seats": ["alice", "open"]}, "game"),
        ({"game": "nim", "options": {"heaps": "x"}, "seats": ["alice", "open"]}, "options"),
        ({"game": "checkers", "start_position": "nonsense", "seats": ["alice", "open"]}, "start"),
        ({"game": "connect4", "seats": ["alice", {"bot": "nosuchbot"}]}, "seats.1.bot"),
        ({"game": "connect4", "seats": ["alice", "nobody"]}, "seats.1"),
    ]:
        response = client.post("/matches", json=body, headers=alice)
        assert response.status_code == 422, (body, response.text)
        error = response.json()
        assert error["code"] == "VALIDATION_ERROR" and field in error["message"], error
    unknown = client.get("/matches/m_nosuchmatch")
    assert unknown.status_code == 404 and unknown.json()["code"] == "UNKNOWN_MATCH"
    ttt = create(client, alice, game="tictactoe", seats=["alice", "open"])
    assert ttt["status"] == "waiting"
    not_checkers = client.get(f"/matches/{ttt['match_id']}/pdn")
    assert not_checkers.status_code == 400 and not_checkers.json()["code"] == "BAD_MESSAGE"


def test_join_an_open_seat_then_abort(client: httpx.Client) -> None:
    alice, bob = register(client, "alice"), register(client, "bob")
    state = create(client, alice, game="tictactoe", seats=["alice", "open"])
    match_id = state["match_id"]
    assert state["your_seat"] == 0 and state["status"] == "waiting"
    early = move(client, alice, match_id, "a1")
    assert early.status_code == 409 and early.json()["code"] == "NOT_STARTED"
    joined = client.post(f"/matches/{match_id}/join", json={}, headers=bob)
    assert joined.status_code == 200, joined.text
    assert joined.json()["status"] == "active" and joined.json()["your_seat"] == 1
    again = client.post(f"/matches/{match_id}/join", json={}, headers=bob)
    assert again.status_code == 409 and again.json()["code"] == "SEAT_TAKEN"
    aborted = client.post(f"/matches/{match_id}/abort", headers=bob)
    assert aborted.status_code == 200 and aborted.json()["status"] == "aborted"


def test_human_against_a_house_bot(client: httpx.Client) -> None:
    alice = register(client, "alice")
    state = create(
        client,
        alice,
        game="connect4",
        time_control=TIME_CONTROL,
        seats=["alice", {"bot": "alphabeta:depth=2"}],
    )
    match_id = state["match_id"]
    assert state["seats"][1]["bot"] == "alphabeta:depth=2"
    for _ in range(60):
        if state["status"] != "active":
            break
        assert state["to_move"] == 0
        seq = state["seq"]
        response = move(client, alice, match_id, state["legal_moves"][0])
        assert response.status_code == 200, response.text
        deadline = time.monotonic() + 20
        state = state_of(client, match_id)
        while state["status"] == "active" and state["to_move"] == 1:
            assert time.monotonic() < deadline, "the house bot did not answer"
            time.sleep(0.02)
            state = state_of(client, match_id)
        assert state["seq"] > seq
    assert state["status"] == "finished", state
    assert state["result"]["reason"] == "rules"
    moves = state["moves"]
    assert len(moves) >= 7 and moves[1::2], "the bot played"


def test_restart_resumes_the_match(server_settings: Settings) -> None:
    server = start_server(server_settings)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            alice, bob = register(http, "alice"), register(http, "bob")
            match_id = create(
                http, alice, game="checkers", time_control=TIME_CONTROL, seats=["alice", "bob"]
            )["match_id"]
            assert http.post(f"/matches/{match_id}/accept", headers=bob).status_code == 200
            for seat, text in [(alice, "11-15"), (bob, "23-19"), (alice, "8-11")]:
                assert move(http, seat, match_id, text).status_code == 200
            before = state_of(http, match_id)
    finally:
        server.stop()
    server = start_server(server_settings)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            after = state_of(http, match_id)
            for key in ("seq", "moves", "position", "to_move", "status", "legal_moves"):
                assert after[key] == before[key], key
            assert after["clocks"]["remaining_ms"][0] == before["clocks"]["remaining_ms"][0]
            final = play_out(http, [alice, bob], match_id)
            assert final["status"] == "finished" and final["result"]["reason"] == "rules"
            assert final["moves"][:3] == ["11-15", "23-19", "8-11"]
            assert len(final["moves"]) > 3
    finally:
        server.stop()


V11 = {"Arena-Protocol-Version": "1.1"}


def test_a_ply_cap_is_kept_across_a_restart_and_draws_the_match(server_settings: Settings) -> None:
    server = start_server(server_settings)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            alice, bob = register(http, "alice"), register(http, "bob")
            match_id = create(http, alice, game="checkers", max_plies=4, seats=["alice", "bob"])[
                "match_id"
            ]
            accepted = http.post(f"/matches/{match_id}/accept", headers={**bob, **V11})
            assert accepted.status_code == 200 and accepted.json()["max_plies"] == 4
            for seat, text in [(alice, "11-15"), (bob, "23-19"), (alice, "8-11")]:
                assert move(http, seat, match_id, text).status_code == 200
    finally:
        server.stop()
    server = start_server(server_settings)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            before = state_of(http, match_id, V11)
            assert (before["status"], before["max_plies"], len(before["moves"])) == (
                "active",
                4,
                3,
            )
            made = move(http, bob, match_id, "22-18")
            assert made.status_code == 200 and made.json()["ply"] == 4
            final = state_of(http, match_id, V11)
            assert final["status"] == "finished" and len(final["moves"]) == 4
            assert final["result"] == {
                "winner": None,
                "reason": "adjudication",
                "code": "ply_cap",
                "description": "ply cap",
            }
            record = http.get(f"/matches/{match_id}/record", headers=V11).json()
            assert record["max_plies"] == 4 and record["result"] == final["result"]
            # A client that names no newer version gets the 1.0 words: no code, no cap.
            plain = state_of(http, match_id)
            assert "max_plies" not in plain and "code" not in plain["result"]
            assert plain["result"]["reason"] == "adjudication"
            listed = http.get("/matches", params={"status": "finished"}, headers=V11).json()
            assert listed["matches"][0]["result"]["code"] == "ply_cap"
    finally:
        server.stop()


def test_a_bad_protocol_version_header_is_a_validation_error(client: httpx.Client) -> None:
    response = client.get("/matches", headers={"Arena-Protocol-Version": "one"})
    assert response.status_code == 422
    assert response.json()["code"] == "VALIDATION_ERROR"
