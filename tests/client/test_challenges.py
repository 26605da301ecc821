"""Challenges: which ones a bot accepts and why it declines, bots online listed, and the
challenges a bot sends by itself."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.server import ServerConnection

from client.challenges import ChallengeFilter, ChallengePlan
from client.rest import websocket_url
from client.session import BotClient
from games import get_game
from protocol.messages import (
    Challenge,
    MatchEnded,
    MatchResult,
    SeatInfo,
    TimeControl,
    Welcome,
    dump_server_message,
    parse_client_message,
)
from tests.client.servers import (
    TC,
    _assert_legal_rules_finish,
    _register,
    _server_fixture,
    fake_server,
    match_state,
)


def challenge(
    game: str = "checkers", challenger: str | None = "alice", control: TimeControl | None = TC
) -> Challenge:
    """A challenge to bob (seat 1) from `challenger`."""
    return Challenge(
        match_id="m1",
        game=game,
        start_position=get_game(game).format_position(get_game(game).initial_state()),
        seats=(
            SeatInfo(seat=0, side="first", player=challenger),
            SeatInfo(seat=1, side="second", challenged="bob"),
        ),
        your_seat=1,
        challenger=challenger,
        time_control=control,
        seq=0,
    )


@pytest.mark.parametrize(
    ("version", "accepting", "first"),
    [("1.3", True, "bot_available"), ("1.2", True, "move"), ("1.3", False, "move")],
)
def test_a_bot_says_it_is_open_to_challenges_to_a_server_that_knows_how(
    version: str, accepting: bool, first: str
) -> None:
    game = get_game("tictactoe")
    received: list[Any] = []

    async def handler(ws: ServerConnection) -> None:
        assert parse_client_message(await ws.recv()).type == "hello"
        welcome = Welcome(protocol_version=version, player="alice", server_time_ms=1)
        await ws.send(dump_server_message(welcome))
        await ws.send(dump_server_message(match_state(game, [], your_seat=0)))
        received.append(parse_client_message(await ws.recv()))
        result = MatchResult(winner=None, reason="agreement", description="over")
        await ws.send(dump_server_message(MatchEnded(match_id="m_1", seq=2, result=result)))
        await ws.wait_closed()

    async def scenario() -> int:
        async with fake_server(handler) as url:
            client = BotClient(
                url,
                "t",
                "random",
                accept_challenges=accepting,
                challenges=ChallengeFilter(games=frozenset({"tictactoe", "nim"})),
            )
            return await asyncio.wait_for(client.run(max_matches=1), 30)

    assert asyncio.run(scenario()) == 1
    assert received[0].type == first
    if first == "bot_available":
        assert received[0].available and received[0].games == ("nim", "tictactoe")


@pytest.mark.parametrize(
    ("accepted", "given", "refusal"),
    [
        (ChallengeFilter(), challenge(), None),
        (ChallengeFilter(), challenge(control=None), None),
        (
            ChallengeFilter(games=frozenset({"connect4", "nim"})),
            challenge("checkers"),
            "checkers is not among the games accepted (connect4, nim)",
        ),
        (ChallengeFilter(games=frozenset({"connect4"})), challenge("connect4"), None),
        (
            ChallengeFilter(opponents=frozenset({"carol"})),
            challenge(challenger="alice"),
            "alice is not among the opponents accepted (carol)",
        ),
        (
            ChallengeFilter(opponents=frozenset({"carol"})),
            challenge(challenger=None),
            "the server is not among the opponents accepted (carol)",
        ),
        (
            ChallengeFilter(min_base_ms=120_000),
            challenge(),
            "base time 60 s is below the 120 s accepted",
        ),
        (ChallengeFilter(min_base_ms=60_000, max_base_ms=60_000), challenge(), None),
        (
            ChallengeFilter(max_base_ms=30_000),
            challenge(),
            "base time 60 s is above the 30 s accepted",
        ),
        (
            ChallengeFilter(max_increment_ms=500),
            challenge(),
            "increment 1 s is above the 0.5 s accepted",
        ),
        (
            ChallengeFilter(untimed=False),
            challenge(control=None),
            "the match has no clock and untimed is refused",
        ),
        (ChallengeFilter(untimed=False, max_base_ms=1), challenge(control=None), "untimed"),
    ],
)
def test_a_challenge_filter_says_why_it_declines(
    accepted: ChallengeFilter, given: Challenge, refusal: str | None
) -> None:
    said = accepted.refusal(given)
    if refusal is None:
        assert said is None
    else:
        assert said is not None and refusal in said


def test_a_challenge_to_a_game_the_bot_cannot_play_is_declined_with_the_reason(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = BotClient("http://127.0.0.1:1", "t", "cb:/nonexistent/engine.so")
    with caplog.at_level(logging.INFO):
        client._on_challenge(challenge("connect4"))
    assert "declined: cb:/nonexistent/engine.so cannot play connect4" in caplog.text
    assert "plays checkers, not connect4" in caplog.text
    caplog.clear()
    client = BotClient("http://127.0.0.1:1", "t", "random", accept_challenges=False)
    with caplog.at_level(logging.INFO):
        client._on_challenge(challenge())
    assert "declined: this bot declines every challenge" in caplog.text


def test_a_filtered_bot_plays_only_the_challenges_it_accepts(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    running = _server_fixture(tmp_path)
    try:
        with httpx.Client(base_url=running.url, timeout=30) as http:
            tokens = {name: _register(http, name) for name in ("alice", "bob", "carol")}

            def create(by: str, game: str) -> str:
                body = {"game": game, "seats": [by, "bob"]}
                headers = {"Authorization": f"Bearer {tokens[by]}"}
                response = http.post("/matches", json=body, headers=headers)
                assert response.status_code == 201, response.text
                return str(response.json()["match_id"])

            wrong_game = create("alice", "checkers")
            wrong_player = create("carol", "tictactoe")
            wanted = create("alice", "tictactoe")
            accepted = ChallengeFilter(
                games=frozenset({"tictactoe"}), opponents=frozenset({"alice"})
            )

            async def play() -> list[int]:
                alice = BotClient(running.url, tokens["alice"], "alphabeta:depth=9")
                bob = BotClient(running.url, tokens["bob"], "random", challenges=accepted)
                runs = [alice.run(max_matches=1), bob.run(max_matches=1)]
                return list(await asyncio.wait_for(asyncio.gather(*runs), 120))

            with caplog.at_level(logging.INFO):
                assert asyncio.run(play()) == [1, 1]
            _assert_legal_rules_finish(http, wanted)
            for match_id in (wrong_game, wrong_player):
                body = http.get(f"/matches/{match_id}").json()
                assert body["status"] == "aborted", body
                assert body["moves"] == [], body
        assert "declined: checkers is not among the games accepted (tictactoe)" in caplog.text
        assert "declined: carol is not among the opponents accepted (alice)" in caplog.text
    finally:
        running.stop()


async def _online(http: httpx.AsyncClient, game: str | None = None) -> list[dict[str, Any]]:
    params = {} if game is None else {"game": game}
    response = await http.get("/bots/online", params=params)
    assert response.status_code == 200, response.text
    bots: list[dict[str, Any]] = response.json()["bots"]
    return bots


async def _until_online(http: httpx.AsyncClient, names: set[str]) -> list[dict[str, Any]]:
    """Wait until exactly `names` are listed online (a failure is a hang, not a speed claim)."""
    for _ in range(600):
        bots = await _online(http)
        if {bot["name"] for bot in bots} == names:
            return bots
        await asyncio.sleep(0.1)
    raise AssertionError(f"online bots never became {sorted(names)}: {bots}")


def test_bots_online_are_listed_and_challenge_each_other_by_themselves(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """`arena bot --challenge-every`: a bot finds an idle online bot that takes the game and
    challenges it; the challenged bot plays it; bots for other games are left alone."""
    running = _server_fixture(tmp_path)
    try:
        with httpx.Client(base_url=running.url, timeout=30) as sync_http:
            tokens = {name: _register(sync_http, name) for name in ("alice", "bob", "dave")}

        async def scenario() -> tuple[BotClient, list[int]]:
            async with httpx.AsyncClient(base_url=running.url, timeout=30) as http:
                assert await _online(http) == []
                bob = BotClient(
                    running.url,
                    tokens["bob"],
                    "random",
                    challenges=ChallengeFilter(games=frozenset({"tictactoe"})),
                )
                dave = BotClient(
                    running.url,
                    tokens["dave"],
                    "random",
                    challenges=ChallengeFilter(games=frozenset({"connect4"})),
                )
                bob_run = asyncio.ensure_future(bob.run(max_matches=1))
                dave_run = asyncio.ensure_future(dave.run())
                listed = await _until_online(http, {"bob", "dave"})
                assert listed == [
                    {"name": "bob", "games": ["tictactoe"], "playing": 0},
                    {"name": "dave", "games": ["connect4"], "playing": 0},
                ]
                assert [bot["name"] for bot in await _online(http, "tictactoe")] == ["bob"]
                plan = ChallengePlan(game="tictactoe", every_s=0.2, timeout_s=60)
                alice = BotClient(
                    running.url, tokens["alice"], "alphabeta:depth=9", challenge_plan=plan
                )
                played = await asyncio.wait_for(
                    asyncio.gather(alice.run(max_matches=1), bob_run), 120
                )
                # Alice is listed too while she runs (she accepts challenges); all leave at
                # the end of their runs.
                dave_run.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await dave_run
                await _until_online(http, set())
                return alice, list(played)

        with caplog.at_level(logging.INFO):
            alice, played = asyncio.run(scenario())
        assert played == [1, 1]
        assert len(alice.challenges_sent) == 1
        match_id = alice.challenges_sent[0]
        with httpx.Client(base_url=running.url, timeout=30) as sync_http:
            _assert_legal_rules_finish(sync_http, match_id)
            seats = sync_http.get(f"/matches/{match_id}").json()["seats"]
            assert sorted(seat["player"] for seat in seats) == ["alice", "bob"]
        assert f"challenged bob to tictactoe (match {match_id}" in caplog.text
        assert "challenge" not in "".join(
            record.getMessage() for record in caplog.records if "dave" in record.getMessage()
        )
    finally:
        running.stop()


def test_a_challenge_nobody_answers_is_aborted_and_bad_availability_is_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from tests.wsclient import connect

    running = _server_fixture(tmp_path)
    try:
        with httpx.Client(base_url=running.url, timeout=30) as sync_http:
            tokens = {name: _register(sync_http, name) for name in ("alice", "eve")}

        async def scenario() -> str | None:
            url = websocket_url(running.url)
            headers = {"Authorization": f"Bearer {tokens['eve']}"}
            async with (
                httpx.AsyncClient(base_url=running.url, timeout=30) as http,
                connect(url, additional_headers=headers) as eve,
            ):
                await eve.send(json.dumps({"type": "hello", "protocol_version": "1.3"}))
                assert json.loads(await eve.recv())["type"] == "welcome"
                await eve.send(json.dumps({"type": "bot_available", "games": ["chess"]}))
                refused = json.loads(await eve.recv())
                assert refused["code"] == "VALIDATION_ERROR", refused
                assert "chess" in refused["message"]
                assert await _online(http) == []
                await eve.send(json.dumps({"type": "bot_available", "games": ["nim"]}))
                await _until_online(http, {"eve"})
                alice = BotClient(running.url, tokens["alice"], "random")
                alice.player = "alice"
                plan = ChallengePlan(game="nim", every_s=1, timeout_s=1.0)
                with caplog.at_level(logging.INFO):
                    match_id = await alice.challenge_once(plan)
                # Eve saw the challenge and never answered it.
                assert json.loads(await eve.recv())["type"] == "challenge"
                await eve.send(json.dumps({"type": "bot_available", "available": False}))
                await _until_online(http, set())
                with caplog.at_level(logging.INFO):
                    assert await alice.challenge_once(plan) is None
                return match_id

        match_id = asyncio.run(scenario())
        assert match_id is not None
        with httpx.Client(base_url=running.url, timeout=30) as sync_http:
            body = sync_http.get(f"/matches/{match_id}").json()
        assert body["status"] == "aborted", body
        assert f"eve did not answer the challenge {match_id} within 1 s: aborted" in caplog.text
        assert "no idle bot online takes nim" in caplog.text
    finally:
        running.stop()
