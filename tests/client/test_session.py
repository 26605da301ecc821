"""The client's session: bad arguments refused at once, fatal closes, reconnects with backoff
and resyncs, a match that ended while it was away, and a server that never answers."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import re
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.frames import Close

from bots.spec import BotSpecError
from client.connection import backoff_delays
from client.errors import ClientError, ServerUnreachable
from client.matches import view_from_state
from client.session import BotClient
from games import get_game
from protocol.messages import MatchEnded, MatchResult, MatchState, Welcome, dump_server_message
from tests.client.servers import _server_fixture, fake_server, match_state, receive
from tests.ports import free_port


def test_backoff_doubles_with_jitter_and_is_seeded() -> None:
    delays = backoff_delays(random.Random(7))
    first = [next(delays) for _ in range(10)]
    bases = [0.5, 1, 2, 4, 8, 16, 30, 30, 30, 30]
    for delay, base in zip(first, bases, strict=True):
        assert base / 2 <= delay <= base
    again = backoff_delays(random.Random(7))
    assert [next(again) for _ in range(10)] == first
    other = backoff_delays(random.Random(8))
    assert [next(other) for _ in range(10)] != first


def test_client_refuses_a_bad_spec_or_url() -> None:
    with pytest.raises(BotSpecError, match="alphabeta"):
        BotClient("http://127.0.0.1:1", "t", "nosuchbot")
    with pytest.raises(ValueError, match="server URL"):
        BotClient("127.0.0.1:1", "t", "random")


def test_fatal_close_codes_stop_the_client() -> None:
    client = BotClient("http://127.0.0.1:1", "t", "random")
    for code in (4001, 4002, 4003):
        with pytest.raises(ClientError, match=str(code)):
            client._check_fatal(ConnectionClosed(Close(code, "x"), None))
    client._check_fatal(ConnectionClosed(Close(1001, "restart"), None))  # retried


def test_client_plays_reconnects_and_stops_after_max_matches() -> None:
    """The fake server drops the connection once; the client resyncs and finishes the game."""
    game = get_game("tictactoe")
    moves: list[str] = []
    connections: list[str] = []
    rng = random.Random(3)

    async def handler(ws: ServerConnection) -> None:
        connections.append(ws.request.headers["Authorization"] if ws.request else "")
        hello = await receive(ws)
        assert hello.type == "hello"
        await ws.send(dump_server_message(Welcome(player="alice", server_time_ms=1)))
        while True:
            state = game.initial_state().play(*moves)
            if state.is_terminal():
                outcome = state.outcome()
                assert outcome is not None
                result = MatchResult(winner=outcome.winner, reason="rules", description="over")
                ended = MatchEnded(match_id="m_1", seq=len(moves) + 1, result=result)
                await ws.send(dump_server_message(ended))
                await ws.wait_closed()
                return
            if state.to_move == 1:  # the server's own random seat
                moves.append(state.format_move(rng.choice(list(state.legal_moves()))))
                continue
            await ws.send(dump_server_message(match_state(game, moves, your_seat=0)))
            move = await receive(ws)
            assert move.type == "move" and move.expected_seq == len(moves) + 1
            state.parse_move(move.move)  # raises if illegal
            moves.append(move.move)
            if len(connections) == 1:
                await ws.close(1011)  # a crash: the client must reconnect and resync
                return

    async def scenario() -> int:
        async with fake_server(handler) as url:
            client = BotClient(
                url,
                "tok",
                "alphabeta:depth=9",
                rng=random.Random(1),
                backoff_first=0.05,
            )
            return await asyncio.wait_for(client.run(max_matches=1), 20)

    assert asyncio.run(scenario()) == 1
    assert connections == ["Bearer tok", "Bearer tok"]
    assert game.initial_state().play(*moves).is_terminal()


def test_each_drop_after_a_welcome_is_retried_after_the_first_backoff_step(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A server that welcomes the client and then drops it, again and again: every retry waits
    the first step of the backoff (drawn from 0.025-0.05 s), never a doubled one."""
    drops = 6
    connections: list[int] = []
    enough = asyncio.Event()

    async def handler(ws: ServerConnection) -> None:
        connections.append(len(connections))
        assert (await receive(ws)).type == "hello"
        await ws.send(dump_server_message(Welcome(player="alice", server_time_ms=1)))
        if len(connections) > drops:
            enough.set()
            await ws.wait_closed()
            return
        await ws.close(1011)

    async def scenario() -> None:
        async with fake_server(handler) as url:
            client = BotClient(
                url,
                "tok",
                "random",
                rng=random.Random(2),
                backoff_first=0.05,
            )
            running = asyncio.create_task(client.run())
            await asyncio.wait_for(enough.wait(), 60)
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await running

    with caplog.at_level(logging.WARNING):
        asyncio.run(scenario())
    retries = [float(s) for s in re.findall(r"retrying in ([0-9.]+) s", caplog.text)]
    assert len(retries) == drops, caplog.text
    assert all(delay <= 0.05 for delay in retries), retries


def test_a_match_that_ended_while_disconnected_is_ended_from_rest(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The server stays silent about a match that ended while the bot was away; REST tells.

    Connection 1 resyncs match m_1 (the opponent to move) and crashes. On connections 2, 3
    and 4 the server only says `welcome`, while the REST hook in turn fails, reports the match
    still active (kept), and reports it finished by resignation (ended: run() returns).
    """
    game = get_game("tictactoe")
    answers = ["error", "active", "finished"]
    fetched: list[tuple[str, str, str]] = []
    tracked_at_fetch: list[bool] = []
    connections = 0
    client: BotClient  # set in scenario(), read by fetch()

    async def fetch(http_base: str, token: str, match_id: str) -> MatchState:
        fetched.append((http_base, token, match_id))
        tracked_at_fetch.append(match_id in client.matches)
        answer = answers[len(fetched) - 1]
        if answer == "error":
            raise httpx.ConnectError("connection refused")
        if answer == "active":
            return match_state(game, ["4"])
        result = MatchResult(winner=1, reason="resign", description="north resigned")
        return match_state(game, ["4"], status="finished").model_copy(update={"result": result})

    async def handler(ws: ServerConnection) -> None:
        nonlocal connections
        connections += 1
        assert (await receive(ws)).type == "hello"
        await ws.send(dump_server_message(Welcome(player="alice", server_time_ms=1)))
        if connections == 1:
            await ws.send(dump_server_message(match_state(game, ["4"], your_seat=0)))
            await asyncio.sleep(0.05)
            await ws.close(1011)
        elif connections < 4:
            await asyncio.sleep(0.3)  # the REST check runs meanwhile
            await ws.close(1011)
        else:
            await ws.wait_closed()  # the client closes once --matches is reached

    async def scenario() -> int:
        nonlocal client
        async with fake_server(handler) as url:
            client = BotClient(
                url,
                "tok",
                "random",
                rng=random.Random(1),
                backoff_first=0.05,
                fetch_state=fetch,
            )
            ended = await asyncio.wait_for(client.run(max_matches=1), 20)
            assert fetched == [(url, "tok", "m_1")] * 3
            return ended

    with caplog.at_level(logging.INFO, logger="arena.bot"):
        assert asyncio.run(scenario()) == 1
    assert connections == 4
    assert tracked_at_fetch == [True, True, True]  # a failure or a live answer keeps it
    assert list(client.ended) == ["m_1"] and not client.matches
    assert client.ended["m_1"].status == "finished"
    assert client.ended["m_1"].result.reason == "resign"
    messages = [r.getMessage() for r in caplog.records]
    assert any("cannot read its state over REST" in m and "ConnectError" in m for m in messages)
    assert "match m_1 ended while we were disconnected" in messages
    assert "match m_1 lost (resign: north resigned)" in messages


def test_a_rest_answer_does_not_end_a_match_no_longer_tracked() -> None:
    """A match_ended (or match_state) received while REST was asked wins over the answer."""
    game = get_game("tictactoe")

    async def scenario() -> BotClient:
        async def fetch(http_base: str, token: str, match_id: str) -> MatchState:
            client.matches.clear()  # as if match_ended arrived during the request
            result = MatchResult(winner=0, reason="rules", description="three in a row")
            finished = match_state(game, ["4"], status="finished")
            return finished.model_copy(update={"result": result})

        client = BotClient("http://127.0.0.1:1", "t", "random", fetch_state=fetch)
        client.matches["m_1"] = view_from_state(match_state(game, ["4"]), game)
        await client._check_tracked(["m_1"], None)
        return client

    client = asyncio.run(scenario())
    assert not client.ended and not client.matches


def test_cancellation_stops_the_client_while_the_server_is_down() -> None:
    async def scenario() -> None:
        client = BotClient("http://127.0.0.1:9", "t", "random", backoff_first=0.01)
        task = asyncio.create_task(client.run())
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(asyncio.wait_for(scenario(), 10))


def test_an_unreachable_server_is_waited_for_with_word_then_given_up(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The test's clock: 25 s pass at every look, so the client gives up at its third look.
    times = iter(range(0, 1000, 25))
    port = free_port()
    client = BotClient(
        f"http://127.0.0.1:{port}",
        "t",
        "random",
        backoff_first=0.001,
        backoff_cap=0.001,
        give_up_after=60,
        clock=lambda: float(next(times)),
    )
    with caplog.at_level(logging.WARNING), pytest.raises(ServerUnreachable) as unreachable:
        asyncio.run(asyncio.wait_for(client.run(), 30))
    message = str(unreachable.value)
    assert message.startswith(f"no Arena server answered at ws://127.0.0.1:{port}/ws for 60 s (")
    assert "is `arena serve` running there?" in message
    waits = [r.getMessage() for r in caplog.records if "waiting for" in r.getMessage()]
    assert waits, caplog.text
    assert waits[0].startswith(f"waiting for the Arena server at ws://127.0.0.1:{port}/ws (")
    assert [wait.rsplit("; ", 1)[-1] for wait in waits] == [
        "giving up in 60 s",
        "giving up in 35 s",
        "giving up in 10 s",
    ]


def test_a_refused_token_stops_the_client(tmp_path: Path) -> None:
    running = _server_fixture(tmp_path)
    try:
        client = BotClient(running.url, "arena_not_a_real_token_at_all", "random")
        with pytest.raises(ClientError, match=r"4001|401|403|token|unauthorized"):
            asyncio.run(asyncio.wait_for(client.run(), 20))
    finally:
        running.stop()
