"""What the client tests play against: a scripted fake server on loopback, the real server,
and the messages a server sends."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection, serve

from games import Game, get_game
from protocol.messages import Clocks, MatchState, SeatInfo, TimeControl, parse_client_message

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
