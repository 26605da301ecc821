"""The bot client: pure helpers without a network, a scripted fake server on loopback, and
end-to-end play against the real server (skipped until its WebSocket endpoint exists)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import re
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.frames import Close

from bots.result import SearchResult
from bots.spec import Bot, BotSpecError
from client.challenges import ChallengeFilter, ChallengePlan
from client.connection import backoff_delays
from client.errors import ClientError, ServerUnreachable
from client.matches import (
    apply_move_made,
    rebuild_state,
    seat_to_move_is,
    time_budget,
    view_from_state,
)
from client.rest import http_base_url, websocket_url
from client.session import BotClient
from games import Game, get_game
from protocol.errors import ErrorCode
from protocol.messages import (
    Challenge,
    Clocks,
    DrawOffered,
    ErrorMessage,
    MatchEnded,
    MatchResult,
    MatchState,
    MoveMade,
    SeatInfo,
    TimeControl,
    Welcome,
    dump_server_message,
    parse_client_message,
)

ROOT = Path(__file__).resolve().parents[2]
TC = TimeControl(base_ms=60_000, increment_ms=1000, move_cap_ms=10_000)
SEATS = (
    SeatInfo(seat=0, side="first", player="alice"),
    SeatInfo(seat=1, side="second", player="bob"),
)


def match_state(
    game: Game,
    moves: list[str],
    *,
    your_seat: int | None = 0,
    seq: int | None = None,
    status: str = "active",
    clocks: Clocks | None = None,
    position: str | None = None,
    match_id: str = "m_1",
) -> MatchState:
    """A match_state message for `game` after `moves` from the start, built with the models."""
    start = game.initial_state()
    state = start.play(*moves)
    over = state.is_terminal() or status != "active"
    return MatchState(
        match_id=match_id,
        game=game.name,
        options={k: str(v) for k, v in game.options.items()} if game.name == "nim" else {},
        start_position=game.format_position(start),
        position=position or game.format_position(state),
        moves=tuple(moves),
        to_move=None if over else state.to_move,
        seats=SEATS,
        your_seat=your_seat,
        time_control=TC if clocks is not None else None,
        clocks=clocks,
        legal_moves=() if over else tuple(state.format_move(m) for m in state.legal_moves()),
        status=status,
        seq=len(moves) + 1 if seq is None else seq,
    )


# Pure helpers -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("http://127.0.0.1:8000", "ws://127.0.0.1:8000/ws"),
        ("http://127.0.0.1:8000/", "ws://127.0.0.1:8000/ws"),
        ("https://arena.example.org", "wss://arena.example.org/ws"),
        ("HTTPS://arena.example.org/base/", "wss://arena.example.org/base/ws"),
        ("ws://localhost:9000/ws", "ws://localhost:9000/ws"),
        ("wss://h/ws/", "wss://h/ws"),
    ],
)
def test_websocket_url(given: str, expected: str) -> None:
    assert websocket_url(given) == expected


@pytest.mark.parametrize("bad", ["ftp://h", "localhost:8000", "http://", ""])
def test_websocket_url_refuses_bad_urls(bad: str) -> None:
    with pytest.raises(ValueError, match="server URL"):
        websocket_url(bad)


def test_time_budget_from_the_clock() -> None:
    # remaining/20 + 0.8 * increment
    assert time_budget(60_000, TC) == pytest.approx(3.8)
    untimed_cap = TimeControl(base_ms=60_000, increment_ms=0)
    assert time_budget(60_000, untimed_cap) == pytest.approx(3.0)
    # capped by the per-move cap less the margin
    tight = TimeControl(base_ms=600_000, increment_ms=5000, move_cap_ms=2000)
    assert time_budget(600_000, tight, margin_ms=100) == pytest.approx(1.9)
    # never more than what is left, never below 10 ms
    assert time_budget(300, TimeControl(base_ms=1, increment_ms=2000), margin_ms=100) == (
        pytest.approx(0.2)
    )
    assert time_budget(50, TC) == pytest.approx(0.01)


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


def test_turn_detection() -> None:
    assert seat_to_move_is(0, "active", 0)
    assert not seat_to_move_is(0, "active", 1)
    assert not seat_to_move_is(None, "active", 0)  # a spectator
    assert not seat_to_move_is(0, "waiting", 0)
    assert not seat_to_move_is(1, "finished", None)
    game = get_game("connect4")
    assert view_from_state(match_state(game, ["4"], your_seat=1), game).our_turn
    assert not view_from_state(match_state(game, ["4"], your_seat=0), game).our_turn
    assert not view_from_state(match_state(game, [], your_seat=0, status="waiting"), game).our_turn


@pytest.mark.parametrize(
    ("name", "moves"),
    [
        ("checkers", ["11-15", "23-19", "8-11", "22-17"]),
        ("connect4", ["4", "4", "3", "5"]),
        ("tictactoe", ["4", "0", "8"]),
    ],
)
def test_rebuild_state_replays_the_moves(name: str, moves: list[str]) -> None:
    game = get_game(name)
    message = match_state(game, moves)
    state = rebuild_state(game, message)
    assert state == game.initial_state().play(*moves)
    assert game.format_position(state) == message.position
    assert sorted(state.format_move(m) for m in state.legal_moves()) == sorted(message.legal_moves)


def test_rebuild_state_falls_back_to_the_position() -> None:
    game = get_game("tictactoe")
    target = game.initial_state().play("0", "1", "2")
    # The move list disagrees with the position (a server bug or a lost history): trust the
    # position, which is what the server plays on.
    message = match_state(game, ["4"], position=game.format_position(target), seq=9)
    assert rebuild_state(game, message) == target
    message = match_state(game, ["4", "4"][:1], position=game.format_position(target))
    assert rebuild_state(game, message) == target


def test_move_made_updates_the_view_and_the_clock() -> None:
    game = get_game("connect4")
    clocks = Clocks(remaining_ms=(60_000, 50_000), running=0, server_time_ms=1)
    view = view_from_state(match_state(game, [], clocks=clocks), game)
    assert view.our_turn and view.ply == 0
    assert view.budget(view.received, 100) == pytest.approx(3.8)
    # our clock runs: time since the message counts against us
    assert view.remaining_ms(view.received + 2.0) == 58_000
    after = game.initial_state().play("4")
    apply_move_made(
        view,
        MoveMade(
            match_id="m_1",
            seq=2,
            ply=1,
            seat=0,
            move="4",
            position=game.format_position(after),
            to_move=1,
            legal_moves=tuple(after.format_move(m) for m in after.legal_moves()),
            clocks=Clocks(remaining_ms=(59_000, 50_000), running=1, server_time_ms=2),
        ),
    )
    assert view.state == after and view.seq == 2 and view.ply == 1
    assert not view.our_turn
    # the opponent's clock runs, not ours
    assert view.remaining_ms(view.received + 5.0) == 59_000


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


# A scripted fake server on loopback ---------------------------------------------------------------


@contextlib.asynccontextmanager
async def fake_server(
    handler: Callable[[ServerConnection], Awaitable[None]],
) -> AsyncIterator[str]:
    """Serve `handler` on a loopback port for the block; yield the URL a client is given."""
    async with serve(handler, "127.0.0.1", 0) as server:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"


async def receive(ws: ServerConnection) -> Any:
    """The client's next message, past the `bot_available` it sends after a 1.3 welcome."""
    while True:
        message = parse_client_message(await ws.recv())
        if message.type != "bot_available":
            return message


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


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("ws://127.0.0.1:8000/ws", "http://127.0.0.1:8000"),
        ("wss://arena.example.org/ws", "https://arena.example.org"),
        ("wss://h/base/ws", "https://h/base"),
    ],
)
def test_http_base_url(given: str, expected: str) -> None:
    assert http_base_url(given) == expected


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


def free_port() -> int:
    """Return a TCP port of 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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


def test_cli_gives_up_on_an_unreachable_server_in_one_line() -> None:
    from typer.testing import CliRunner

    port = free_port()
    arguments = ["bot", "--server", f"http://127.0.0.1:{port}", "--token", "t", "--bot", "random"]
    result = CliRunner().invoke(_bot_cli(), [*arguments, "--wait", "0.5"])
    assert result.exit_code == 2, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith(f"error: no Arena server answered at ws://127.0.0.1:{port}/ws for 0.5 s")
    assert "Traceback" not in result.output


# End to end against the real server (needs server.routes.ws) -------------------------------------


def _server_fixture(tmp_path: Path) -> Any:
    pytest.importorskip("server.routes.ws")
    from server.settings import Settings
    from tests.server.conftest import start_server

    return start_server(Settings(database_url=f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}"))


def _register(client: Any, name: str) -> str:
    response = client.post("/players", json={"name": name})
    assert response.status_code == 201, response.text
    token: str = response.json()["token"]
    return token


def _assert_legal_rules_finish(client: Any, match_id: str) -> None:
    response = client.get(f"/matches/{match_id}")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "finished", body
    assert body["result"]["reason"] == "rules", body["result"]
    game = get_game(body["game"], body["options"])
    state = game.parse_position(body["start_position"]).play(*body["moves"])  # all legal
    assert state.is_terminal()


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


# The command line -----------------------------------------------------------------------------


def _bot_cli() -> Any:
    import typer

    from cli.bot import register

    app = typer.Typer()
    register(app)
    app.command("other", hidden=True)(lambda: None)  # keep `bot` a sub-command
    return app


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (["--bot", "nosuchbot"], "bad bot spec"),
        (["--bot", "alphabeta:depth=0"], "bad bot spec"),
        (["--bot", "random", "--server", "localhost"], "server URL"),
        (["--bot", "random", "--games", "chess,connect4"], "--games names no game chess"),
        (["--bot", "random", "--min-base", "60", "--max-base", "10"], "--min-base 60 is above"),
        (
            ["--bot", "random", "--challenge-every", "30", "--challenge-game", "chess"],
            "--challenge-game names no game 'chess'",
        ),
        (
            ["--bot", "random", "--challenge-every", "30", "--challenge-clock", "soon"],
            "not a clock",
        ),
        (
            ["--bot", "random", "--challenge-every", "30", "--challenge-clock", "-5+1"],
            "not a clock",
        ),
    ],
)
def test_cli_reports_bad_input_in_one_line(arguments: list[str], expected: str) -> None:
    from typer.testing import CliRunner

    base = {"--server": "http://127.0.0.1:1", "--token": "t"}
    for option, value in zip(arguments[::2], arguments[1::2], strict=True):
        base[option] = value
    result = CliRunner().invoke(_bot_cli(), ["bot", *[x for kv in base.items() for x in kv]])
    assert result.exit_code == 2, result.output
    assert expected in result.output
    assert "Traceback" not in result.output


def test_a_refused_token_stops_the_client(tmp_path: Path) -> None:
    running = _server_fixture(tmp_path)
    try:
        client = BotClient(running.url, "arena_not_a_real_token_at_all", "random")
        with pytest.raises(ClientError, match=r"4001|401|403|token|unauthorized"):
            asyncio.run(asyncio.wait_for(client.run(), 20))
    finally:
        running.stop()


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


# Challenges -----------------------------------------------------------------------------------


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
