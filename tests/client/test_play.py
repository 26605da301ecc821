"""Playing matches: the client answers only its own turn at the current seq, sends its search
to servers that take it, answers draw offers, resigns when its bot fails, and plays real
servers with its own bots, the example bot and an engine process."""

from __future__ import annotations

import asyncio
import json
import logging
import random
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.server import ServerConnection

from bots.result import SearchResult
from bots.spec import Bot
from client.session import BotClient
from games import Game, get_game
from protocol.errors import ErrorCode
from protocol.messages import (
    DrawOffered,
    ErrorMessage,
    MatchEnded,
    MatchResult,
    Welcome,
    dump_server_message,
    parse_client_message,
)
from tests.client.servers import (
    _assert_legal_rules_finish,
    _register,
    _server_fixture,
    fake_server,
    match_state,
    receive,
)

ROOT = Path(__file__).resolve().parents[2]


class FakeConnection:
    """Collects what the client sends."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def send(self, text: str) -> None:
        self.sent.append(json.loads(text))


def test_client_plays_when_it_is_its_turn_without_a_network(
    caplog: pytest.LogCaptureFixture,
) -> None:
    game = get_game("tictactoe")

    async def scenario() -> list[dict[str, Any]]:
        client = BotClient("http://127.0.0.1:1", "t", "alphabeta:depth=9")
        fake = FakeConnection()
        client.link.connection = fake  # type: ignore[assignment]
        client._handle(dump_server_message(match_state(game, ["0"], your_seat=0, seq=2)))
        client._handle(dump_server_message(match_state(game, ["0", "4"], your_seat=0, seq=3)))
        for _ in range(100):
            if fake.sent:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        return fake.sent

    with caplog.at_level(logging.INFO, logger="arena.bot"):
        sent = asyncio.run(scenario())
    # Only the current position (seq 3) is answered: the first search is for a stale seq.
    assert len(sent) == 1
    move = parse_client_message(json.dumps(sent[0]))
    assert move.type == "move" and move.expected_seq == 3 and move.match_id == "m_1"
    game.initial_state().play("0", "4", move.move)  # legal
    assert any("depth" in r.getMessage() and "nodes" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("version", ["1.1", "1.2"])
def test_client_sends_its_search_to_a_server_that_speaks_1_2(version: str) -> None:
    game = get_game("tictactoe")

    async def scenario() -> list[dict[str, Any]]:
        client = BotClient("http://127.0.0.1:1", "t", "alphabeta:depth=9")
        fake = FakeConnection()
        client.link.connection = fake  # type: ignore[assignment]
        welcome = Welcome(protocol_version=version, player="alice", server_time_ms=1)
        client._handle(dump_server_message(welcome))
        client._handle(dump_server_message(match_state(game, ["0", "4"], your_seat=0, seq=3)))
        for _ in range(200):
            if fake.sent:
                break
            await asyncio.sleep(0.01)
        return fake.sent

    sent = asyncio.run(scenario())
    assert len(sent) == 1
    if version == "1.1":
        assert "search" not in sent[0]  # a 1.1 server would refuse the unknown field
        return
    move = parse_client_message(json.dumps(sent[0]))
    assert move.type == "move" and move.search is not None
    search = move.search
    # The spec's depth covers the whole game: corner and centre is a draw, scored 0.
    assert search.pv[0] == move.move and search.depth == 9 and search.nodes > 0
    assert search.score == 0 and search.outcome is None and search.time_ms is not None
    game.initial_state().play("0", "4", *search.pv)  # the PV is a legal line


def test_client_sends_its_move_again_after_unavailable() -> None:
    """UNAVAILABLE (a match between two server processes, docs/SCALING.md): nothing was done,
    so the move still pending is sent again after `retry_after_ms`."""
    game = get_game("tictactoe")

    async def scenario() -> list[dict[str, Any]]:
        client = BotClient("http://127.0.0.1:1", "t", "alphabeta:depth=9")
        fake = FakeConnection()
        client.link.connection = fake  # type: ignore[assignment]
        client._handle(dump_server_message(match_state(game, ["0", "4"], your_seat=0, seq=3)))
        for _ in range(200):
            if fake.sent:
                break
            await asyncio.sleep(0.01)
        unavailable = ErrorMessage(
            code=ErrorCode.UNAVAILABLE,
            message="another server process is taking this match over",
            match_id="m_1",
            details={"retry_after_ms": 20},
        )
        client._handle(dump_server_message(unavailable))
        for _ in range(200):
            if len(fake.sent) > 1:
                break
            await asyncio.sleep(0.01)
        return fake.sent

    sent = asyncio.run(scenario())
    assert len(sent) == 2
    assert sent[1] == sent[0] and sent[0]["expected_seq"] == 3


def _draw_server(
    moves: list[str], received: list[Any], *, seq: int
) -> Callable[[ServerConnection], Awaitable[None]]:
    """A server that shows the client a tic-tac-toe match after `moves` (the client's turn, at
    `seq`), offers it a draw at once (seq + 1), refuses a move whose expected_seq is stale as
    Arena does, and keeps what the client sends until a move or an answer is taken."""
    game = get_game("tictactoe")

    async def handler(ws: ServerConnection) -> None:
        assert (await receive(ws)).type == "hello"
        await ws.send(dump_server_message(Welcome(player="alice", server_time_ms=1)))
        await ws.send(dump_server_message(match_state(game, moves, seq=seq)))
        await ws.send(dump_server_message(DrawOffered(match_id="m_1", seq=seq + 1, seat=1)))
        while True:
            message = await receive(ws)
            received.append(message)
            if message.type == "move" and message.expected_seq != seq + 1:
                stale = ErrorMessage(
                    code=ErrorCode.STALE_SEQ,
                    message="stale",
                    match_id="m_1",
                    details={"seq": seq + 1},
                )
                await ws.send(dump_server_message(stale))
                continue
            result = MatchResult(winner=None, reason="agreement", description="over")
            await ws.send(
                dump_server_message(MatchEnded(match_id="m_1", seq=seq + 2, result=result))
            )
            await ws.wait_closed()
            return

    return handler


def _play_against(handler: Callable[[ServerConnection], Awaitable[None]], spec: str) -> None:
    async def scenario() -> None:
        async with fake_server(handler) as url:
            client = BotClient(url, "tok", spec, rng=random.Random(1))
            await asyncio.wait_for(client.run(max_matches=1), 60)

    asyncio.run(scenario())


def test_a_draw_offered_in_a_drawn_position_is_accepted() -> None:
    """Tic-tac-toe from the start is a draw: the exact search scores it 0 and accepts."""
    received: list[Any] = []
    _play_against(_draw_server([], received, seq=1), "alphabeta:depth=9")
    assert [m.type for m in received] == ["accept_draw"]
    assert received[0].match_id == "m_1"


def test_a_draw_offered_in_a_won_position_is_declined_by_the_winning_move() -> None:
    """X to move wins at once (cells 0 and 1 taken): the bot plays on, and its move carries
    the seq after the offer, whether the offer reached it before its move was sent or after
    (then the server's STALE_SEQ has it send the same move again)."""
    received: list[Any] = []
    _play_against(_draw_server(["0", "3", "1", "4"], received, seq=5), "alphabeta:depth=9")
    assert all(m.type == "move" for m in received), received
    assert received[-1].move == "2" and received[-1].expected_seq == 6
    assert len({m.move for m in received}) == 1


def test_a_bot_whose_search_fails_resigns_instead_of_leaving_the_match_waiting(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The bot raises on its turn: the client says why in its log and resigns the match."""
    game = get_game("tictactoe")
    received: list[str] = []

    async def handler(ws: ServerConnection) -> None:
        assert (await receive(ws)).type == "hello"
        await ws.send(dump_server_message(Welcome(player="alice", server_time_ms=1)))
        await ws.send(dump_server_message(match_state(game, [], your_seat=0)))
        answer = await receive(ws)
        received.append(answer.type)
        result = MatchResult(winner=1, reason="resign", description="alice resigned")
        await ws.send(dump_server_message(MatchEnded(match_id="m_1", seq=2, result=result)))
        await ws.wait_closed()

    def break_the_bot(client: BotClient) -> None:
        build = client.playing.bot_for

        def bot_for(match_id: str, game: Game) -> Bot:
            bot = build(match_id, game)

            def fail(*args: object, **kwargs: object) -> SearchResult:
                raise RuntimeError("the evaluation table is corrupt")

            bot.choose = fail  # type: ignore[method-assign]
            return bot

        client.playing.bot_for = bot_for  # type: ignore[method-assign]

    async def scenario() -> int:
        async with fake_server(handler) as url:
            client = BotClient(url, "tok", "greedy", rng=random.Random(1), backoff_first=0.05)
            break_the_bot(client)
            return await asyncio.wait_for(client.run(max_matches=1), 20)

    with caplog.at_level(logging.ERROR):
        assert asyncio.run(scenario()) == 1
    assert received == ["resign"]
    assert "the bot's search failed (RuntimeError: the evaluation table is corrupt)" in caplog.text


def test_two_bot_clients_finish_checkers_and_connect4(tmp_path: Path) -> None:
    import httpx

    running = _server_fixture(tmp_path)
    try:
        with httpx.Client(base_url=running.url, timeout=30) as http:
            tokens = {name: _register(http, name) for name in ("alice", "bob")}
            auth = {"Authorization": f"Bearer {tokens['alice']}"}
            tc = {"base_ms": 120_000, "increment_ms": 500}
            ids = []
            for game in ("checkers", "connect4"):
                body = {"game": game, "time_control": tc, "seats": ["alice", "bob"]}
                response = http.post("/matches", json=body, headers=auth)
                assert response.status_code == 201, response.text
                ids.append(response.json()["match_id"])

            async def play() -> list[int]:
                alice = BotClient(running.url, tokens["alice"], "alphabeta:depth=2")
                bob = BotClient(running.url, tokens["bob"], "greedy")
                runs = [alice.run(max_matches=2), bob.run(max_matches=2)]
                return list(await asyncio.wait_for(asyncio.gather(*runs), 120))

            assert asyncio.run(play()) == [2, 2]
            for match_id in ids:
                _assert_legal_rules_finish(http, match_id)
                # Each client sent its own search with each move (the server speaks 1.2).
                record = http.get(
                    f"/matches/{match_id}/record", headers={"Arena-Protocol-Version": "1.2"}
                ).json()
                for move in record["moves"]:
                    search = move["search"]
                    assert search is not None and search["pv"][0] == move["move"], move
                    assert search["depth"] == (2 if move["seat"] == 0 else 1), move
    finally:
        running.stop()


def test_example_bot_finishes_tictactoe_against_a_house_bot(tmp_path: Path) -> None:
    import httpx

    running = _server_fixture(tmp_path)
    try:
        with httpx.Client(base_url=running.url, timeout=30) as http:
            token = _register(http, "rnd")
            host = _register(http, "host")
            process = subprocess.Popen(
                [
                    sys.executable,
                    str(ROOT / "examples" / "random_bot.py"),
                    running.ws_url + "/ws",
                    token,
                    "1",
                ],
            )
            try:
                time.sleep(0.5)  # connected before the challenge (it would get it anyway)
                # Another player seats rnd: a challenge, which the example accepts.
                body = {"game": "tictactoe", "seats": ["rnd", {"bot": "alphabeta:depth=9"}]}
                response = http.post(
                    "/matches", json=body, headers={"Authorization": f"Bearer {host}"}
                )
                assert response.status_code == 201, response.text
                match_id = response.json()["match_id"]
                assert process.wait(timeout=60) == 0
            finally:
                if process.poll() is None:
                    process.kill()
            _assert_legal_rules_finish(http, match_id)
    finally:
        running.stop()


def test_a_program_speaking_the_engine_protocol_plays_on_a_server(tmp_path: Path) -> None:
    """`arena bot --bot cmd:...`: a user's engine, a process of its own, plays a server's match
    as any bot does (each match gets a fresh process)."""
    running = _server_fixture(tmp_path)
    engine = f"cmd:{sys.executable} {ROOT / 'examples' / 'engines' / 'random_engine.py'}"
    try:
        with httpx.Client(base_url=running.url, timeout=30) as http:
            tokens = {name: _register(http, name) for name in ("alice", "bob")}
            body = {"game": "connect4", "seats": ["alice", "bob"]}
            headers = {"Authorization": f"Bearer {tokens['alice']}"}
            created = http.post("/matches", json=body, headers=headers)
            assert created.status_code == 201, created.text
            match_id = created.json()["match_id"]

            async def play() -> list[int]:
                alice = BotClient(running.url, tokens["alice"], engine)
                bob = BotClient(running.url, tokens["bob"], "alphabeta:depth=2")
                runs = [alice.run(max_matches=1), bob.run(max_matches=1)]
                return list(await asyncio.wait_for(asyncio.gather(*runs), 120))

            assert asyncio.run(play()) == [1, 1]
            _assert_legal_rules_finish(http, match_id)
            record = http.get(f"/matches/{match_id}/record").json()
            assert any(move["seat"] == 0 for move in record["moves"])
    finally:
        running.stop()
