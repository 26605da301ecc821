"""The search pool: never more searches than threads, owners served in turn, stops obeyed."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from bots.result import SearchResult, SearchStopped, Stop
from bots.spec import Bot, create_bot
from games import get_game
from games.base import State
from server.searches import SearchPool

GAME = get_game("connect4")


def recording_bot(started: list[str], name: str) -> Bot:
    """A bot whose search notes its start, then runs a real long MCTS search until stopped."""
    real = create_bot("mcts:time=60", GAME)

    def choose(state: State[Any], budget: float | None, stop: Stop | None) -> SearchResult:
        started.append(name)
        return real.choose(state, time_budget=budget, stop=stop)

    return Bot(real.spec, GAME, choose)


async def until(predicate: Any, seconds: float = 2.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "not in time"
        await asyncio.sleep(0.01)


async def test_owners_take_turns_and_a_stop_frees_the_thread_at_once() -> None:
    pool = SearchPool(threads=1, per_owner=2, max_seconds=60)
    started: list[str] = []
    stops = {name: threading.Event() for name in ("a1", "a2", "a3", "b1")}
    state = GAME.initial_state()
    tasks = {}
    for name in ("a1", "a2", "a3", "b1"):
        owner = name[0]
        tasks[name] = asyncio.create_task(
            pool.run(owner, recording_bot(started, name), state, time_budget=None, stop=stops[name])
        )
        await asyncio.sleep(0.05)
    await until(lambda: started == ["a1"])
    assert pool.busy == 1 and pool.queued == 3
    for name, after in (("a1", ["a1", "b1"]), ("b1", ["a1", "b1", "a2"])):
        stopped_at = time.monotonic()
        stops[name].set()
        result = await tasks[name]
        assert result.move is not None  # MCTS plays its best move so far
        assert time.monotonic() - stopped_at < 0.5
        # B waited least recently served: it goes before A's second search.
        await until(lambda after=after: started == after)
    assert pool.busy == 1
    # Cancelling a waiting search takes it off the queue; cancelling a running one stops it.
    tasks["a3"].cancel()
    tasks["a2"].cancel()
    for name in ("a2", "a3"):
        with pytest.raises(asyncio.CancelledError):
            await tasks[name]
    await until(lambda: pool.busy == 0 and pool.queued == 0)
    assert started == ["a1", "b1", "a2"]
    pool.close()


async def test_a_search_past_the_limit_is_stopped() -> None:
    pool = SearchPool(threads=1, per_owner=1, max_seconds=0.3)
    stop = threading.Event()
    started = time.monotonic()
    bot = create_bot("alphabeta:depth=30,tt=off,ordering=off", get_game("checkers"))
    with pytest.raises(SearchStopped, match=r"limit of 0\.3 s per move"):
        await pool.run("a", bot, get_game("checkers").initial_state(), time_budget=None, stop=stop)
    assert time.monotonic() - started < 1.0
    await until(lambda: pool.busy == 0)
    pool.close()


async def test_a_closed_pool_stops_every_search() -> None:
    pool = SearchPool(threads=2, per_owner=1, max_seconds=60)
    started: list[str] = []
    running = asyncio.create_task(
        pool.run(
            "a",
            recording_bot(started, "a"),
            GAME.initial_state(),
            time_budget=None,
            stop=threading.Event(),
        )
    )
    waiting = asyncio.create_task(
        pool.run(
            "a",
            recording_bot(started, "a2"),
            GAME.initial_state(),
            time_budget=None,
            stop=threading.Event(),
        )
    )
    await until(lambda: started == ["a"])
    closed_at = time.monotonic()
    pool.close()
    assert (await running).move is not None
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert time.monotonic() - closed_at < 0.5
    with pytest.raises(SearchStopped):
        await pool.run(
            "b",
            recording_bot(started, "b"),
            GAME.initial_state(),
            time_budget=None,
            stop=threading.Event(),
        )
    assert started == ["a"]
