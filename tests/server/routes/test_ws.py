"""The WebSocket endpoints end to end: a real uvicorn server and real `websockets` clients."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed

from protocol.errors import CloseCode
from protocol.messages import dump_server_message, parse_server_message
from protocol.version import PROTOCOL_VERSION
from tests.server.conftest import RunningServer
from tests.server.routes.raw_websocket import RawWebSocket
from tests.wsclient import ClientConnection, connect

TIMEOUT = 30.0
"""Seconds a wait for the server may take before the test fails: generous, for a loaded machine."""
HELLO = {"type": "hello", "protocol_version": "1.0", "client": "test"}


async def register(http: httpx.AsyncClient, name: str) -> str:
    """Register `name`; return its token."""
    response = await http.post("/players", json={"name": name})
    assert response.status_code == 201, response.text
    token: str = response.json()["token"]
    return token


async def create(http: httpx.AsyncClient, token: str, **body: Any) -> dict[str, Any]:
    """Create a match over REST; return its state."""
    response = await http.post("/matches", json=body, headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 201, response.text
    state: dict[str, Any] = response.json()
    return state


async def challenge_accepted(
    http: httpx.AsyncClient, creator: str, invited: str, **body: Any
) -> dict[str, Any]:
    """Create a match that challenges another player, who accepts over REST; return its state."""
    match = await create(http, creator, **body)
    accepted = await http.post(
        f"/matches/{match['match_id']}/accept", headers={"Authorization": f"Bearer {invited}"}
    )
    assert accepted.status_code == 200, accepted.text
    state: dict[str, Any] = accepted.json()
    return state


async def state_of(http: httpx.AsyncClient, match_id: str) -> dict[str, Any]:
    """GET a match's state over REST."""
    response = await http.get(f"/matches/{match_id}")
    assert response.status_code == 200, response.text
    state: dict[str, Any] = response.json()
    return state


async def send(ws: ClientConnection, message: dict[str, Any] | str) -> None:
    """Send a message (a dict as JSON, a str as it is)."""
    await ws.send(message if isinstance(message, str) else json.dumps(message))


async def receive(
    ws: ClientConnection, kind: str | None = None, version: str = HELLO["protocol_version"]
) -> dict[str, Any]:
    """Return the next message, checking its type when `kind` is given.

    Every message must match the protocol's schema exactly (the server builds some of them
    without validation on its hot path): parsing and dumping it again, for the `version` the
    connection's hello named, gives the same JSON.
    """
    text = await asyncio.wait_for(ws.recv(), TIMEOUT)
    message: dict[str, Any] = json.loads(text)
    assert json.loads(dump_server_message(parse_server_message(text), version)) == message
    if kind is not None:
        assert message["type"] == kind, message
    return message


async def expect_close(ws: ClientConnection, code: int) -> None:
    """Wait for the server to close `ws` and check the close code."""
    with pytest.raises(ConnectionClosed):
        while True:
            await asyncio.wait_for(ws.recv(), TIMEOUT)
    assert ws.close_code == code


async def connect_player(
    server: RunningServer,
    token: str,
    name: str,
    version: str = HELLO["protocol_version"],
    *,
    fresh: bool = False,
) -> ClientConnection:
    """Open /ws with `token` in the header, say hello (in `version`) and check the welcome.

    The server sends the player's live matches and challenges after its welcome; with `fresh`
    (a player with none) a ping's pong, answered only after them, proves that nothing came:
    a match created from then on is announced live (`match_started` first), never synced.
    """
    ws = await connect(
        f"{server.ws_url}/ws", additional_headers={"Authorization": f"Bearer {token}"}
    )
    await send(ws, {**HELLO, "protocol_version": version})
    welcome = await receive(ws, "welcome", version)
    assert welcome["player"] == name and welcome["protocol_version"] == PROTOCOL_VERSION
    if fresh:
        await send(ws, {"type": "ping", "time_ms": 1})
        assert (await receive(ws, version=version))["type"] == "pong"
    return ws


@pytest.fixture
async def http(live_server: RunningServer) -> AsyncIterator[httpx.AsyncClient]:
    """An async HTTP client of the live server."""
    async with httpx.AsyncClient(base_url=live_server.url, timeout=30) as client:
        yield client


async def test_two_players_play_a_game_over_ws(
    live_server: RunningServer, http: httpx.AsyncClient
) -> None:
    alice, bob = await register(http, "alice"), await register(http, "bob")
    ws_a = await connect_player(live_server, alice, "alice")
    ws_b = await connect_player(live_server, bob, "bob")
    match = await create(http, alice, game="tictactoe", seats=["alice", "bob"])
    match_id = match["match_id"]
    # Bob is challenged (he was not asked): he accepts over his WebSocket.
    challenge = await receive(ws_b, "challenge")
    assert (challenge["match_id"], challenge["your_seat"]) == (match_id, 1)
    assert challenge["challenger"] == "alice" and challenge["seats"][1]["challenged"] == "bob"
    await send(ws_b, {"type": "accept_challenge", "match_id": match_id})
    for ws, seat in ((ws_a, 0), (ws_b, 1)):
        started = await receive(ws, "match_started")
        assert started["match_id"] == match_id and started["seq"] == 1
        assert started["your_seat"] == seat
        state = await receive(ws, "match_state")
        assert state["seq"] == 1 and state["your_seat"] == seat and state["status"] == "active"

    # X takes the top row: 0, 1, 2; O plays 3 and 4.
    moves = [(ws_a, "0"), (ws_b, "3"), (ws_a, "1"), (ws_b, "4"), (ws_a, "2")]
    seq = 1
    for ply, (mover, text) in enumerate(moves, 1):
        await send(mover, {"type": "move", "match_id": match_id, "move": text, "expected_seq": seq})
        seq += 1
        for ws in (ws_a, ws_b):
            made = await receive(ws, "move_made")
            assert (made["match_id"], made["seq"], made["ply"], made["move"]) == (
                match_id,
                seq,
                ply,
                text,
            )
            assert made["seat"] == (ply - 1) % 2
    for ws in (ws_a, ws_b):
        ended = await receive(ws, "match_ended")
        assert ended["seq"] == seq and ended["status"] == "finished"
        assert ended["result"]["winner"] == 0 and ended["result"]["reason"] == "rules"
    final = await state_of(http, match_id)
    assert final["moves"] == ["0", "3", "1", "4", "2"] and final["seq"] == seq
    await ws_a.close()
    await ws_b.close()


async def test_spectator_sees_state_then_every_event_in_order(
    live_server: RunningServer, http: httpx.AsyncClient
) -> None:
    alice, bob = await register(http, "alice"), await register(http, "bob")
    body = {"game": "tictactoe", "seats": ["alice", "bob"]}
    match_id = (await challenge_accepted(http, alice, bob, **body))["match_id"]
    spectator = await connect(f"{live_server.ws_url}/ws/matches/{match_id}")
    await send(spectator, HELLO)
    assert (await receive(spectator, "welcome"))["player"] is None
    state = await receive(spectator, "match_state")
    assert state["seq"] == 1 and state["your_seat"] is None and state["moves"] == []

    tokens = [alice, bob]
    texts = ["4", "0", "8", "2", "1", "7", "6", "5", "3"]  # a full board with no line: a draw
    for ply, text in enumerate(texts, 1):
        response = await http.post(
            f"/matches/{match_id}/moves",
            json={"move": text},
            headers={"Authorization": f"Bearer {tokens[(ply - 1) % 2]}"},
        )
        assert response.status_code == 200, response.text
    seen = [await receive(spectator, "move_made") for _ in texts]
    assert [m["move"] for m in seen] == texts
    assert [m["seq"] for m in seen] == list(range(2, 2 + len(texts)))
    ended = await receive(spectator, "match_ended")
    assert ended["seq"] == 1 + len(texts) and ended["result"]["winner"] is None

    await send(spectator, {"type": "resign", "match_id": match_id})
    assert (await receive(spectator, "error"))["code"] == "FORBIDDEN"
    await send(spectator, {"type": "ping", "time_ms": 7})
    assert (await receive(spectator, "pong"))["time_ms"] == 7
    await spectator.close()


async def test_spectator_of_an_unknown_match_is_told(live_server: RunningServer) -> None:
    spectator = await connect(f"{live_server.ws_url}/ws/matches/m_nope")
    await send(spectator, HELLO)
    await receive(spectator, "welcome")
    assert (await receive(spectator, "error"))["code"] == "UNKNOWN_MATCH"
    await expect_close(spectator, CloseCode.POLICY_VIOLATION)


async def test_illegal_and_out_of_turn_moves_leave_the_match_unchanged(
    live_server: RunningServer, http: httpx.AsyncClient
) -> None:
    alice, bob = await register(http, "alice"), await register(http, "bob")
    ws_a = await connect_player(live_server, alice, "alice")
    ws_b = await connect_player(live_server, bob, "bob")
    body = {"game": "tictactoe", "seats": ["alice", "bob"]}
    match_id = (await challenge_accepted(http, alice, bob, **body))["match_id"]
    await receive(ws_b, "challenge")
    for ws in (ws_a, ws_b):
        await receive(ws, "match_started")
        await receive(ws, "match_state")
    await send(ws_a, {"type": "move", "match_id": match_id, "move": "0"})
    for ws in (ws_a, ws_b):
        assert (await receive(ws, "move_made"))["seq"] == 2

    await send(ws_b, {"type": "move", "match_id": match_id, "move": "0"})
    error = await receive(ws_b, "error")
    assert error["code"] == "ILLEGAL_MOVE" and error["match_id"] == match_id
    assert sorted(error["legal_moves"]) == [str(cell) for cell in range(1, 9)]
    await send(ws_a, {"type": "move", "match_id": match_id, "move": "1"})
    assert (await receive(ws_a, "error"))["code"] == "NOT_YOUR_TURN"
    await send(ws_b, {"type": "move", "match_id": "m_nope", "move": "1"})
    assert (await receive(ws_b, "error"))["code"] == "UNKNOWN_MATCH"
    state = await state_of(http, match_id)
    assert state["seq"] == 2 and state["moves"] == ["0"] and state["status"] == "active"

    # Both connections still play on.
    await send(ws_b, {"type": "move", "match_id": match_id, "move": "4", "expected_seq": 2})
    for ws in (ws_a, ws_b):
        made = await receive(ws, "move_made")
        assert (made["seq"], made["move"]) == (3, "4")
    await ws_a.close()
    await ws_b.close()


async def test_bad_messages_get_errors_and_the_connection_works_on(
    live_server: RunningServer, http: httpx.AsyncClient
) -> None:
    alice = await register(http, "alice")
    bob = await register(http, "bob")
    ws = await connect_player(live_server, alice, "alice")
    body = {"game": "tictactoe", "seats": ["alice", "bob"]}
    match_id = (await challenge_accepted(http, alice, bob, **body))["match_id"]
    await receive(ws, "match_started")
    await receive(ws, "match_state")

    bad: list[tuple[str | dict[str, Any], str]] = [
        ("{not json", "BAD_MESSAGE"),
        ("[1, 2]", "BAD_MESSAGE"),
        ({"type": "teleport", "match_id": match_id}, "BAD_MESSAGE"),
        (
            {"type": "move", "match_id": match_id, "move": "0", "expected_seq": "1"},
            "VALIDATION_ERROR",
        ),
        ({"type": "move", "match_id": match_id, "move": 0}, "VALIDATION_ERROR"),
        ({"type": "resign", "match_id": match_id, "extra": 1}, "VALIDATION_ERROR"),
        (HELLO, "BAD_MESSAGE"),
    ]
    for message, code in bad:
        await send(ws, message)
        error = await receive(ws, "error")
        assert error["code"] == code, (message, error)
    assert (await state_of(http, match_id))["seq"] == 1

    await send(ws, {"type": "ping", "time_ms": 1234})
    pong = await receive(ws, "pong")
    assert pong["time_ms"] == 1234 and pong["server_time_ms"] > 0
    await send(ws, {"type": "move", "match_id": match_id, "move": "4", "expected_seq": 1})
    assert (await receive(ws, "move_made"))["seq"] == 2
    await ws.close()


async def test_oversized_message_closes_with_1009_and_the_match_is_untouched(
    live_server: RunningServer, http: httpx.AsyncClient
) -> None:
    alice = await register(http, "alice")
    bob = await register(http, "bob")
    ws = await connect_player(live_server, alice, "alice")
    body = {"game": "tictactoe", "seats": ["alice", "bob"]}
    match_id = (await challenge_accepted(http, alice, bob, **body))["match_id"]
    await receive(ws, "match_started")
    await receive(ws, "match_state")
    limit = live_server.server.config.app.state.settings.max_message_bytes
    await send(ws, {"type": "move", "match_id": match_id, "move": "4" + " " * limit})
    await expect_close(ws, CloseCode.MESSAGE_TOO_BIG)
    state = await state_of(http, match_id)
    assert state["seq"] == 1 and state["moves"] == [] and state["status"] == "active"


@pytest.mark.parametrize("token", [None, "arena_wrong"])
async def test_bad_token_is_refused(
    live_server: RunningServer, http: httpx.AsyncClient, token: str | None
) -> None:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    ws = await connect(f"{live_server.ws_url}/ws", additional_headers=headers)
    assert (await receive(ws, "error"))["code"] == "UNAUTHORIZED"
    await expect_close(ws, CloseCode.UNAUTHORIZED)


async def test_hello_must_come_first_with_a_supported_version(
    live_server: RunningServer, http: httpx.AsyncClient
) -> None:
    token = await register(http, "alice")
    ws = await connect(f"{live_server.ws_url}/ws?token={token}")
    await send(ws, {"type": "ping", "time_ms": 1})
    assert (await receive(ws, "error"))["code"] == "BAD_MESSAGE"
    await expect_close(ws, CloseCode.BAD_PROTOCOL)

    ws = await connect(f"{live_server.ws_url}/ws?token={token}")
    await send(ws, {"type": "hello", "protocol_version": "2.0"})
    assert (await receive(ws, "error"))["code"] == "UNSUPPORTED_VERSION"
    await expect_close(ws, CloseCode.UNSUPPORTED_VERSION)


async def test_a_bad_hello_is_told_what_is_wrong_with_it(
    live_server: RunningServer, http: httpx.AsyncClient
) -> None:
    token = await register(http, "alice")
    cases = [
        # An unknown field: the hello is refused for it, not for not being a hello.
        (
            {**HELLO, "name": "alice"},
            "VALIDATION_ERROR",
            "bad hello message: name: unknown field; a hello has only the fields type, "
            "protocol_version, client",
            "bad hello: name: unknown field",
        ),
        (
            {"type": "hello"},
            "VALIDATION_ERROR",
            "bad hello message: protocol_version: Field required",
            "bad hello: protocol_version: Field required",
        ),
        # Another message first (even one with bad fields) is still "not a hello".
        (
            {"type": "move", "match_id": "m_1"},
            "BAD_MESSAGE",
            "the first message must be hello, not move",
            "the first message must be hello, not move",
        ),
    ]
    for hello, code, message, reason in cases:
        ws = await connect(f"{live_server.ws_url}/ws?token={token}")
        await send(ws, hello)
        error = await receive(ws, "error")
        assert (error["code"], error["message"]) == (code, message)
        with pytest.raises(ConnectionClosed) as closed:
            await asyncio.wait_for(ws.recv(), TIMEOUT)
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == CloseCode.BAD_PROTOCOL
        assert closed.value.rcvd.reason == reason


async def test_a_new_connection_replaces_the_old_and_plays_on(
    live_server: RunningServer, http: httpx.AsyncClient
) -> None:
    alice, bob = await register(http, "alice"), await register(http, "bob")
    first = await connect_player(live_server, alice, "alice")
    ws_b = await connect_player(live_server, bob, "bob")
    body = {"game": "tictactoe", "seats": ["alice", "bob"]}
    match_id = (await challenge_accepted(http, alice, bob, **body))["match_id"]
    waiting = await create(http, alice, game="nim", seats=["alice", "open"])
    await receive(ws_b, "challenge")
    for ws in (first, ws_b):
        await receive(ws, "match_started")
        await receive(ws, "match_state")
    await send(first, {"type": "move", "match_id": match_id, "move": "0", "expected_seq": 1})
    assert (await receive(first, "move_made"))["seq"] == 2
    assert (await receive(ws_b, "move_made"))["seq"] == 2

    # The token in the query this time; the first connection is replaced.
    second = await connect(f"{live_server.ws_url}/ws?token={alice}")
    await send(second, HELLO)
    assert (await receive(second, "welcome"))["player"] == "alice"
    state = await receive(second, "match_state")
    assert (state["match_id"], state["seq"], state["moves"]) == (match_id, 2, ["0"])
    assert state["your_seat"] == 0 and state["status"] == "active"
    state = await receive(second, "match_state")
    assert (state["match_id"], state["status"]) == (waiting["match_id"], "waiting")
    await expect_close(first, CloseCode.REPLACED)

    await send(ws_b, {"type": "move", "match_id": match_id, "move": "4", "expected_seq": 2})
    assert (await receive(second, "move_made"))["seq"] == 3
    await send(second, {"type": "move", "match_id": match_id, "move": "1", "expected_seq": 3})
    assert (await receive(second, "move_made"))["seq"] == 4
    assert [(await receive(ws_b, "move_made"))["seq"] for _ in range(2)] == [3, 4]
    await second.close()
    await ws_b.close()


async def test_a_flag_falls_while_nobody_moves(
    live_server: RunningServer, http: httpx.AsyncClient
) -> None:
    alice, bob = await register(http, "alice"), await register(http, "bob")
    ws_b = await connect_player(live_server, bob, "bob")
    match = await challenge_accepted(
        http,
        alice,
        bob,
        game="tictactoe",
        time_control={"base_ms": 300, "increment_ms": 0},
        seats=["alice", "bob"],
    )
    match_id = match["match_id"]
    await receive(ws_b, "challenge")
    await receive(ws_b, "match_started")
    await receive(ws_b, "match_state")
    # Alice (seat 0, to move) is not even connected; her clock runs out all the same.
    ended = await receive(ws_b, "match_ended")
    assert ended["match_id"] == match_id and ended["seq"] == 2
    assert ended["result"]["reason"] == "timeout" and ended["result"]["winner"] == 1
    assert ended["clocks"]["running"] is None and ended["clocks"]["remaining_ms"][1] == 300
    final = await state_of(http, match_id)
    assert final["status"] == "finished" and final["seq"] == 2
    await ws_b.close()


async def test_each_connection_gets_the_result_in_the_version_its_hello_named(
    live_server: RunningServer, http: httpx.AsyncClient
) -> None:
    alice, bob = await register(http, "alice"), await register(http, "bob")
    ws_a = await connect_player(live_server, alice, "alice", version="1.1")
    ws_b = await connect_player(live_server, bob, "bob")  # says 1.0
    match = await challenge_accepted(
        http, alice, bob, game="tictactoe", max_plies=2, seats=["alice", "bob"]
    )
    match_id = match["match_id"]
    await receive(ws_b, "challenge")
    await receive(ws_a, "match_started", "1.1")
    await receive(ws_b, "match_started")
    state_a = await receive(ws_a, "match_state", "1.1")
    state_b = await receive(ws_b, "match_state")
    assert state_a["max_plies"] == 2 and "max_plies" not in state_b
    await send(ws_a, {"type": "move", "match_id": match_id, "move": "4"})
    await send(ws_b, {"type": "move", "match_id": match_id, "move": "0", "expected_seq": 2})
    for ws, version in ((ws_a, "1.1"), (ws_b, "1.0")):
        await receive(ws, "move_made", version)
        await receive(ws, "move_made", version)
    ended_a = await receive(ws_a, "match_ended", "1.1")
    ended_b = await receive(ws_b, "match_ended")
    assert ended_a["result"] == {
        "winner": None,
        "reason": "adjudication",
        "code": "ply_cap",
        "description": "ply cap",
    }
    assert ended_b["result"] == {"winner": None, "reason": "adjudication", "description": "ply cap"}
    await ws_a.close()
    await ws_b.close()


async def test_deep_nesting_and_huge_numbers_are_bad_messages_and_the_connection_works_on(
    live_server: RunningServer, http: httpx.AsyncClient
) -> None:
    ws = await connect_player(live_server, await register(http, "alice"), "alice")
    for text in ["[" * 30_000, '{"type": "ping", "time_ms": ' + "9" * 10_000 + "}"]:
        await send(ws, text)
        error = await receive(ws, "error")
        assert error["code"] == "BAD_MESSAGE", error
    await send(ws, {"type": "ping", "time_ms": 2**53})
    assert (await receive(ws, "error"))["code"] == "VALIDATION_ERROR"
    await send(ws, {"type": "ping", "time_ms": 2**53 - 1})
    assert (await receive(ws, "pong"))["time_ms"] == 2**53 - 1
    await ws.close()


def raw_player(server: RunningServer, token: str, receive_buffer: int = 0) -> RawWebSocket:
    """Open /ws on a bare socket with `token`, say hello and read the welcome."""
    raw = RawWebSocket(
        server.port, "/ws", {"Authorization": f"Bearer {token}"}, receive_buffer=receive_buffer
    )
    assert raw.status == 101
    raw.send_json(HELLO)
    frame = raw.read_frame(TIMEOUT)
    assert frame is not None and json.loads(frame[1])["type"] == "welcome"
    return raw


async def test_a_frame_over_the_limit_closes_with_1009_before_its_payload_arrives(
    live_server: RunningServer, http: httpx.AsyncClient
) -> None:
    limit = live_server.server.config.app.state.settings.max_message_bytes
    raw = raw_player(live_server, await register(http, "alice"))
    # One byte over the limit is announced; a thousand are sent, the rest never is. A server
    # that buffers up to its own larger limit would wait for them and close nothing.
    raw.send_header(limit + 1)
    raw.sock.sendall(b" " * 1000)
    # The rest of the payload is never sent, so a close decided on the payload never comes.
    assert raw.close_code(TIMEOUT) == CloseCode.MESSAGE_TOO_BIG
    raw.close()
    # The message of exactly the limit is read (and refused by the schema, not by size).
    ws = await connect_player(live_server, await register(http, "bob"), "bob")
    text = json.dumps({"type": "ping", "time_ms": 1, "pad": ""})
    await send(ws, text[:-2] + " " * (limit - len(text)) + '"}')
    assert (await receive(ws, "error"))["code"] == "VALIDATION_ERROR"
    await ws.close()


async def test_moves_out_of_turn_count_toward_the_forfeit(
    live_server: RunningServer, http: httpx.AsyncClient
) -> None:
    limit = live_server.server.config.app.state.settings.max_illegal_moves
    alice, bob = await register(http, "alice"), await register(http, "bob")
    ws_a = await connect_player(live_server, alice, "alice")
    body = {"game": "tictactoe", "seats": ["alice", "bob"]}
    match_id = (await challenge_accepted(http, alice, bob, **body))["match_id"]
    await receive(ws_a, "match_started")
    await receive(ws_a, "match_state")
    await send(ws_a, {"type": "move", "match_id": match_id, "move": "0"})
    assert (await receive(ws_a, "move_made"))["seq"] == 2
    for count in range(1, limit):
        await send(ws_a, {"type": "move", "match_id": match_id, "move": str(count)})
        error = await receive(ws_a, "error")
        assert error["code"] == "NOT_YOUR_TURN"
        assert (error["details"]["rejections"], error["details"]["limit"]) == (count, limit)
        left = limit - count
        assert error["message"].endswith(
            f"(rejected move {count} of {limit}: {left} more and you forfeit the match)"
        )
    await send(ws_a, {"type": "move", "match_id": match_id, "move": "8"})
    answers = {m["type"]: m for m in [await receive(ws_a), await receive(ws_a)]}
    assert answers["error"]["code"] == "NOT_YOUR_TURN"
    assert answers["error"]["message"].endswith(
        f"(rejected move {limit} of {limit}: you forfeit the match)"
    )
    ended = answers["match_ended"]
    assert ended["result"]["reason"] == "forfeit" and ended["result"]["winner"] == 1
    final = await state_of(http, match_id)
    assert final["status"] == "finished" and final["moves"] == ["0"]
    await ws_a.close()
