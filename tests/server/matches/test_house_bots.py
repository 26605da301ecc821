"""A house bot that crashes, returns no move or plays an illegal move loses its match, with why:
the referee's bot failure, stored and replayed like any event."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

import server.matches.builtbots
from bots.result import SearchResult, Stop
from bots.spec import Bot, create_bot
from games.base import Game, State
from protocol.messages import MatchCreate
from server.db.engine import create_engine, migrate, session_factory
from server.db.writer import BatchWriter
from server.matches.service import MatchService
from server.settings import Settings

Chooser = Callable[[State[Any], float | None, Stop | None], SearchResult]


def crash(_state: State[Any], _budget: float | None, _stop: Stop | None) -> SearchResult:
    raise RuntimeError("out of cheese")


def no_move(_state: State[Any], _budget: float | None, _stop: Stop | None) -> SearchResult:
    return SearchResult(move=None, score=0.0)


def illegal(state: State[Any], _budget: float | None, _stop: Stop | None) -> SearchResult:
    # A move of the other side (from the next position): well formed, not playable now.
    later = state.apply_unchecked(state.legal_moves()[0])
    return SearchResult(move=later.legal_moves()[0], score=0.0)


@pytest.fixture
async def service(tmp_path: Path) -> AsyncIterator[MatchService]:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}")
    await migrate(engine)
    service = MatchService(session_factory(engine), Settings(), writer=BatchWriter(engine))
    yield service
    await service.close()
    await engine.dispose()


@pytest.mark.parametrize(
    ("chooser", "why"),
    [
        (crash, "crashed: RuntimeError: out of cheese"),
        (no_move, "returned no move"),
        (illegal, "played an illegal move"),
    ],
)
async def test_a_failing_house_bot_loses(
    service: MatchService, monkeypatch: pytest.MonkeyPatch, chooser: Chooser, why: str
) -> None:
    def failing_bot(spec: str, game: Game) -> Bot:
        bot = create_bot(spec, game)
        return Bot(bot.spec, game, chooser)

    monkeypatch.setattr(server.matches.builtbots, "create_bot", failing_bot)
    # Timed: played turn by turn in the server (untimed bot-vs-bot matches are played ahead
    # in a child process, where this test's failing bot does not exist).
    body = MatchCreate.model_validate(
        {
            "game": "checkers",
            "seats": [{"bot": "random"}, {"bot": "greedy"}],
            "time_control": {"base_ms": 60_000, "increment_ms": 0},
        }
    )
    created = await service.create_match(body)
    for _ in range(200):
        state = await service.state(created.match_id)
        if state.status == "finished":
            break
        await asyncio.sleep(0.01)
    assert state.status == "finished", state
    assert state.result is not None
    assert state.result.winner == 1  # Black (seat 0, to move first) failed
    # The referee's bot failure: its own code, sent to older clients as an adjudication.
    assert (state.result.code, state.result.reason) == ("bot_failure", "adjudication")
    assert state.result.description.startswith("Black (house bot random) ")
    assert why in state.result.description
    assert state.moves == ()
