"""The search pool: never more searches than threads, owners served in turn, stops obeyed.

No test here measures seconds: a stop is shown obeyed by the search's own checks (it ends at
the first check that sees the stop set), the per-move limit runs on a clock the test moves,
and every wait has a generous deadline that only a broken pool reaches.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from typing import Any

import pytest

from bots.result import SearchResult, SearchStopped, Stop
from bots.spec import Bot, create_bot
from games import get_game
from games.base import State
from server.matches.search_pool import SearchPool

GAME = get_game("connect4")

DEADLINE = 30.0
"""Seconds a wait may take before the test fails: far more than a loaded machine needs, far
less than the searches below run when nothing stops them."""


class Searches:
    """Bots whose searches note their start and every answer of the stop they are given."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.asked: Counter[str] = Counter()
        """How many times each search asked its stop."""
        self.stopped: Counter[str] = Counter()
        """How many of those answers were True: 1 for a search that ended when told."""

    def bot(self, name: str, spec: str = "mcts:time=60", game_name: str = "connect4") -> Bot:
        """A bot named `name`: a real search (by default a minute of MCTS) until stopped."""
        game = get_game(game_name)
        real = create_bot(spec, game)

        def choose(state: State[Any], budget: float | None, stop: Stop | None) -> SearchResult:
            assert stop is not None, "the pool gives every search a stop"
            self.started.append(name)

            def watched() -> bool:
                answer = stop()
                self.asked[name] += 1
                self.stopped[name] += answer
                return answer

            return real.choose(state, time_budget=budget, stop=watched)

        return Bot(real.spec, game, choose)


class Clock:
    """A clock that moves only when the test sets `now`."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def until(predicate: Any, what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not predicate():
        assert time.monotonic() < deadline, f"no {what} within {DEADLINE:g} s"
        await asyncio.sleep(0.01)


async def ended(task: asyncio.Task[SearchResult], what: str) -> SearchResult:
    """Return the result of `task`, failing if it runs past the deadline."""
    try:
        return await asyncio.wait_for(asyncio.shield(task), DEADLINE)
    except TimeoutError:
        pytest.fail(f"{what} still runs after {DEADLINE:g} s")


async def test_owners_take_turns_and_a_stop_frees_the_thread_at_once() -> None:
    pool = SearchPool(threads=1, per_owner=2, max_seconds=60)
    searches = Searches()
    stops = {name: threading.Event() for name in ("a1", "a2", "a3", "b1")}
    state = GAME.initial_state()
    tasks = {}
    for name in ("a1", "a2", "a3", "b1"):
        owner = name[0]
        tasks[name] = asyncio.create_task(
            pool.run(owner, searches.bot(name), state, time_budget=None, stop=stops[name])
        )
        await asyncio.sleep(0.05)
    await until(lambda: searches.started == ["a1"], "start of a1")
    assert pool.busy == 1 and pool.queued == 3
    for name, after in (("a1", ["a1", "b1"]), ("b1", ["a1", "b1", "a2"])):
        await until(lambda name=name: searches.asked[name] > 0, f"stop check of {name}")
        stops[name].set()
        result = await ended(tasks[name], f"the stopped search {name}")
        assert result.move is not None  # MCTS plays its best move so far
        # It ended at the first check of its stop that saw it set: at once, in its own terms.
        assert searches.stopped[name] == 1
        # B waited least recently served: it goes before A's second search.
        await until(lambda after=after: searches.started == after, f"searches {after}")
    assert pool.busy == 1
    # Cancelling a waiting search takes it off the queue; cancelling a running one stops it.
    tasks["a3"].cancel()
    tasks["a2"].cancel()
    for name in ("a2", "a3"):
        with pytest.raises(asyncio.CancelledError):
            await tasks[name]
    await until(lambda: pool.busy == 0 and pool.queued == 0, "free pool")
    assert searches.started == ["a1", "b1", "a2"]
    assert searches.stopped["a2"] == 1
    pool.close()


async def test_a_search_past_the_limit_is_stopped() -> None:
    clock = Clock()
    pool = SearchPool(threads=1, per_owner=1, max_seconds=0.3, clock=clock)
    searches = Searches()
    # Minutes of search unless stopped.
    bot = searches.bot("a", "alphabeta:depth=30,tt=off,ordering=off", "checkers")
    task = asyncio.create_task(
        pool.run(
            "a",
            bot,
            get_game("checkers").initial_state(),
            time_budget=None,
            stop=threading.Event(),
        )
    )
    await until(lambda: searches.asked["a"] >= 5, "stop checks")
    # Just before the limit, on the pool's clock: the search goes on.
    clock.now = 0.29
    asked = searches.asked["a"]
    await until(
        lambda: task.done() or searches.asked["a"] >= asked + 5, "stop checks before the limit"
    )
    assert not task.done() and searches.stopped["a"] == 0, "stopped before the limit"
    # At the limit it is stopped; a fixed-depth search has no move to play, and says why.
    clock.now = 0.3
    with pytest.raises(SearchStopped, match=r"limit of 0\.3 s per move"):
        await ended(task, "the search past the limit")
    assert searches.stopped["a"] == 1
    await until(lambda: pool.busy == 0, "free thread")
    # The thread is free for the next search.
    quick = create_bot("alphabeta:depth=1", GAME)
    result = await pool.run(
        "b", quick, GAME.initial_state(), time_budget=None, stop=threading.Event()
    )
    assert result.move is not None
    pool.close()


async def test_a_closed_pool_stops_every_search() -> None:
    pool = SearchPool(threads=2, per_owner=1, max_seconds=60)
    searches = Searches()
    running = asyncio.create_task(
        pool.run(
            "a",
            searches.bot("a"),
            GAME.initial_state(),
            time_budget=None,
            stop=threading.Event(),
        )
    )
    waiting = asyncio.create_task(
        pool.run(
            "a",
            searches.bot("a2"),
            GAME.initial_state(),
            time_budget=None,
            stop=threading.Event(),
        )
    )
    await until(lambda: searches.asked["a"] > 0, "stop check of a")
    pool.close()
    assert (await ended(running, "the running search")).move is not None
    assert searches.stopped["a"] == 1
    with pytest.raises(asyncio.CancelledError):
        await waiting
    with pytest.raises(SearchStopped):
        await pool.run(
            "b",
            searches.bot("b"),
            GAME.initial_state(),
            time_budget=None,
            stop=threading.Event(),
        )
    assert searches.started == ["a"]
