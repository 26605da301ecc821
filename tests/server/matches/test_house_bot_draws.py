"""House bots answer a draw offer: they accept when their search scores the position a draw or
worse for them, and decline otherwise (docs/PROTOCOL.md, "Draws with house bots")."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

import server.matches.builtbots
from bots.result import SearchResult, Stop
from bots.spec import Bot, create_bot
from games.base import Game, State
from protocol.version import PROTOCOL_VERSION
from tests.server.conftest import RunningServer
from tests.server.routes.test_ws import connect_player, create, receive, register, send, state_of

# X (seat 0, the player) to move; O (the bot) has two threats (cells 2 and 8): a forced win.
O_WINS = "OO.XOX.X."
BOT = "alphabeta:depth=9"


@pytest.fixture
async def http(live_server: RunningServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=live_server.url, timeout=30) as client:
        yield client


async def offer_to_the_bot(
    live_server: RunningServer, http: httpx.AsyncClient, bot: str, position: str | None
) -> tuple[str, list[dict[str, object]]]:
    """Start a tic-tac-toe match of alice (X) against the house bot `bot` (O) from
    `position`, offer a draw on alice's turn, and return the match id and the messages that
    follow the offer up to the bot's answer."""
    token = await register(http, "alice")
    ws = await connect_player(live_server, token, "alice", PROTOCOL_VERSION, fresh=True)
    body: dict[str, object] = {"game": "tictactoe", "seats": ["alice", {"bot": bot}]}
    if position is not None:
        body["start_position"] = position
    match_id = (await create(http, token, **body))["match_id"]
    await receive(ws, "match_started", PROTOCOL_VERSION)
    assert (await receive(ws, "match_state", PROTOCOL_VERSION))["to_move"] == 0
    await send(ws, {"type": "offer_draw", "match_id": match_id})
    offered = await receive(ws, "draw_offered", PROTOCOL_VERSION)
    answer = await receive(ws, version=PROTOCOL_VERSION)
    await ws.close()
    return match_id, [offered, answer]


async def test_a_house_bot_accepts_a_draw_in_a_drawn_position(
    live_server: RunningServer, http: httpx.AsyncClient
) -> None:
    # Tic-tac-toe from the start is a draw with best play, and a full search proves it.
    match_id, (offered, answer) = await offer_to_the_bot(live_server, http, BOT, None)
    assert offered["seat"] == 0
    assert answer["type"] == "match_ended", answer
    assert answer["result"]["code"] == "agreement" and answer["result"]["winner"] is None
    state = await state_of(http, match_id)
    assert state["status"] == "finished" and state["moves"] == []


@pytest.mark.parametrize("bot", [BOT, "random"])
async def test_a_house_bot_declines_a_draw_it_need_not_take(
    live_server: RunningServer, http: httpx.AsyncClient, bot: str
) -> None:
    # The searching bot sees its forced win; the random bot judges nothing, so plays on.
    match_id, (_, answer) = await offer_to_the_bot(live_server, http, bot, O_WINS)
    assert answer["type"] == "draw_declined", answer
    assert answer["seat"] == 1
    state = await state_of(http, match_id)
    assert state["status"] == "active" and state["draw_offer"] is None
    assert state["to_move"] == 0 and state["moves"] == []


@pytest.mark.parametrize(
    ("position", "answers"),
    [
        # X in a corner, O to move: a draw with best play. The offer is taken, no move played.
        ("X........", ["match_ended"]),
        # O to move completes 3-4-5: declined, then the winning move.
        ("XX.OO.X..", ["draw_declined", "move_made", "match_ended"]),
    ],
)
async def test_a_draw_offered_while_the_bot_thinks_is_answered_by_its_move_search(
    live_server: RunningServer,
    http: httpx.AsyncClient,
    monkeypatch: pytest.MonkeyPatch,
    position: str,
    answers: list[str],
) -> None:
    started, gate = threading.Event(), threading.Event()

    def held_bot(spec: str, game: Game) -> Bot:
        bot = create_bot(spec, game)

        def choose(state: State[Any], budget: float | None, stop: Stop | None) -> SearchResult:
            started.set()
            gate.wait(timeout=60)
            return bot.choose(state, time_budget=budget, stop=stop)

        return Bot(bot.spec, game, choose)

    monkeypatch.setattr(server.matches.builtbots, "create_bot", held_bot)
    token = await register(http, "alice")
    ws = await connect_player(live_server, token, "alice", PROTOCOL_VERSION, fresh=True)
    body = {"game": "tictactoe", "start_position": position, "seats": ["alice", {"bot": BOT}]}
    match_id = (await create(http, token, **body))["match_id"]
    await receive(ws, "match_started", PROTOCOL_VERSION)
    assert (await receive(ws, "match_state", PROTOCOL_VERSION))["to_move"] == 1
    assert await asyncio.to_thread(started.wait, 60)
    await send(ws, {"type": "offer_draw", "match_id": match_id})
    await receive(ws, "draw_offered", PROTOCOL_VERSION)
    gate.set()
    got = [await receive(ws, version=PROTOCOL_VERSION) for _ in answers]
    await ws.close()
    assert [message["type"] for message in got] == answers
    ended = got[-1]
    if len(answers) == 1:
        assert ended["result"]["code"] == "agreement"
    else:
        assert ended["result"]["code"] == "line" and ended["result"]["winner"] == 1
    state = await state_of(http, match_id)
    assert state["status"] == "finished"


async def test_a_bot_whose_search_fails_declines_the_offer_and_plays_on(
    live_server: RunningServer, http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A search that fails judges nothing: the offer is declined, and the match goes on.
    def failing_bot(spec: str, game: Game) -> Bot:
        bot = create_bot(spec, game)

        def choose(state: State[Any], budget: float | None, stop: Stop | None) -> SearchResult:
            raise RuntimeError("out of cheese")

        return Bot(bot.spec, game, choose)

    monkeypatch.setattr(server.matches.builtbots, "create_bot", failing_bot)
    match_id, (_, answer) = await offer_to_the_bot(live_server, http, BOT, O_WINS)
    assert answer["type"] == "draw_declined" and answer["seat"] == 1
    state = await state_of(http, match_id)
    assert state["status"] == "active" and state["to_move"] == 0
