"""House-bot searches: stopped when their match ends, bounded per player, never starving others.

The server runs in this process (uvicorn in a thread), so the tests see its threads: a thread
whose stack is in a search module is searching.

No test measures seconds. The searches would run for an hour unless stopped, so a search that
ends was stopped; the order of events shows who waited for whom; every wait has a generous
deadline that only broken code reaches.
"""

from __future__ import annotations

import functools
import gc
import multiprocessing
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bots.engine.compiled import COMPILED_SEARCH_THREAD
from bots.engine.table import TranspositionTable
from server.settings import Settings
from tests.server.conftest import RunningServer, start_server

SEARCH_MODULES = tuple(
    str(Path(__file__).parents[3] / "bots" / name)
    for name in (
        "engine/search.py",
        "engine/compiled.py",
        "lectures/mcts.py",
        "lectures/minimax.py",
    )
)


def searching() -> int:
    """Return how many threads of this process are inside a search now.

    A compiled checkers search runs on a worker thread of its own while the bot's thread
    watches its clock and stop: the bot's thread is the one counted.
    """
    workers = {t.ident for t in threading.enumerate() if t.name == COMPILED_SEARCH_THREAD}
    count = 0
    for ident, frame in sys._current_frames().items():
        if ident in workers:
            continue
        current: Any = frame
        while current is not None:
            if current.f_code.co_filename in SEARCH_MODULES:
                count += 1
                break
            current = current.f_back
    return count


DEADLINE = 60.0
"""Seconds a wait may take before the test fails: far more than a loaded machine needs."""

FOREVER = {"bot_max_seconds": 3600.0, "bot_max_depth": 30}
"""Settings that let a house bot search for an hour (mcts:time=3600, alphabeta:depth=30)."""


def wait_for(predicate: Callable[[], bool], what: str) -> None:
    """Wait until `predicate()` holds; fail naming `what` after DEADLINE seconds."""
    deadline = time.monotonic() + DEADLINE
    while not predicate():
        assert time.monotonic() < deadline, f"no {what} within {DEADLINE:g} s"
        time.sleep(0.02)


def player(http: httpx.Client, name: str) -> dict[str, str]:
    response = http.post("/players", json={"name": name})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


@pytest.fixture
def server(server_settings: Settings) -> Iterator[RunningServer]:
    settings = server_settings.model_copy(
        update={"bot_threads": 2, "bot_searches_per_player": 1, **FOREVER}
    )
    running = start_server(settings)
    try:
        yield running
    finally:
        running.stop()


@pytest.mark.parametrize(
    ("bot", "time_control", "end"),
    [
        ("mcts:time=3600", None, "resign"),
        ("mcts:time=3600", None, "abort"),
        ("alphabeta:depth=30,tt=off,ordering=off", None, "resign"),
        # The bot's own flag falls while its depth-bound search (which ignores the clock) runs.
        ("alphabeta:depth=30,tt=off,ordering=off", {"base_ms": 1000}, None),
    ],
)
def test_a_search_stops_when_its_match_ends(
    server: RunningServer, bot: str, time_control: dict[str, int] | None, end: str | None
) -> None:
    with httpx.Client(base_url=server.url, timeout=10) as http:
        alice = player(http, "alice")
        created = http.post(
            "/matches",
            json={
                "game": "checkers",
                "seats": [{"bot": bot}, "alice"],
                "time_control": time_control,
            },
            headers=alice,
        )
        assert created.status_code == 201, created.text
        match_id = created.json()["match_id"]
        wait_for(lambda: searching() == 1, "search of the bot")
        if end is not None:
            response = http.post(f"/matches/{match_id}/{end}", headers=alice)
            assert response.status_code == 200, response.text
        else:
            wait_for(
                lambda: http.get(f"/matches/{match_id}").json()["status"] == "finished",
                "flag fall",
            )
        # A search of an hour ended: it was stopped, and its thread is free.
        wait_for(lambda: searching() == 0, "end of the stopped search")
        state = http.get(f"/matches/{match_id}").json()
        assert state["status"] == ("aborted" if end == "abort" else "finished")
        assert state["moves"] == []
        assert state["result"]["winner"] == (None if end == "abort" else 0 if end else 1)


def test_one_players_searches_never_starve_another_player(server: RunningServer) -> None:
    with httpx.Client(base_url=server.url, timeout=10) as http:
        hog = player(http, "hog")
        other = player(http, "other")
        # More searches of an hour than the old shared executor had threads (cpu count + 4).
        hogged = []
        for _ in range(8):
            created = http.post(
                "/matches",
                json={"game": "checkers", "seats": [{"bot": "mcts:time=3600"}, "hog"]},
                headers=hog,
            )
            assert created.status_code == 201, created.text
            hogged.append(created.json()["match_id"])

        def hog_moves() -> list[int]:
            return [len(http.get(f"/matches/{m}").json()["moves"]) for m in hogged]

        # One player's searches take one thread (bot_searches_per_player), the rest wait.
        wait_for(lambda: searching() == 1, "search of the hog's")
        created = http.post(
            "/matches",
            json={"game": "checkers", "seats": [{"bot": "alphabeta:depth=3"}, "other"]},
            headers=other,
        )
        assert created.status_code == 201, created.text
        match_id = created.json()["match_id"]
        wait_for(
            lambda: len(http.get(f"/matches/{match_id}").json()["moves"]) == 1,
            "move of the other player's bot",
        )
        # It moved while every one of the hog's searches was still running or waiting: it
        # never waited for them. Requests are served meanwhile too.
        tournament = http.post(
            "/tournaments",
            json={"game": "tictactoe", "bots": ["random", "greedy"], "games_per_pairing": 4},
            headers=other,
        )
        assert tournament.status_code == 201, tournament.text
        listed = http.get("/matches", params={"player": "other"})
        assert listed.status_code == 200
        assert hog_moves() == [0] * 8
        # The other player's match goes on: its bot answers a move.
        reply = http.get(f"/matches/{match_id}").json()["legal_moves"][0]
        move = http.post(f"/matches/{match_id}/moves", json={"move": reply}, headers=other)
        assert move.status_code == 200, move.text
        wait_for(
            lambda: len(http.get(f"/matches/{match_id}").json()["moves"]) == 3,
            "second move of the other player's bot",
        )
        assert searching() == 1  # the hog's first search still runs; its others still wait
        assert hog_moves() == [0] * 8
        for hogged_id in hogged:
            assert http.post(f"/matches/{hogged_id}/abort", headers=hog).status_code == 200
        wait_for(lambda: searching() == 0, "end of the aborted searches")


@pytest.mark.parametrize("threads", [1, 2])
def test_played_ahead_matches_hold_a_pool_thread_only_while_nobody_waits(
    server_settings: Settings, threads: int
) -> None:
    settings = server_settings.model_copy(
        update={"bot_threads": threads, "bot_searches_per_player": 1}
    )
    server = start_server(settings)
    try:
        with httpx.Client(base_url=server.url, timeout=10) as http:
            ahead = player(http, "ahead")
            other = player(http, "other")
            for seed in range(3):
                # Untimed house bot against house bot: played ahead in a child process.
                created = http.post(
                    "/matches",
                    json={
                        "game": "checkers",
                        "seats": [
                            {"bot": "mcts:time=30"},
                            {"bot": f"mcts:time=30,seed={seed + 1}"},
                        ],
                    },
                    headers=ahead,
                )
                assert created.status_code == 201, created.text
            # A child on each thread, beyond the owner's cap while nobody else waits; the
            # owner's other match waits for its turn.
            wait_for(
                lambda: len(multiprocessing.active_children()) == threads, "play-ahead children"
            )
            assert searching() == 0
            created = http.post(
                "/matches",
                json={"game": "checkers", "seats": [{"bot": "alphabeta:depth=3"}, "other"]},
                headers=other,
            )
            match_id = created.json()["match_id"]
            # A child gives its thread back, and the other player's bot moves: the children
            # play whole games at 30 s a move, so it did not wait for one to end.
            wait_for(
                lambda: len(http.get(f"/matches/{match_id}").json()["moves"]) == 1,
                "move of the other player's bot",
            )
            wait_for(
                lambda: len(multiprocessing.active_children()) == threads - 1,
                "end of the child whose thread was taken back",
            )
            # From then on the owner's other matches go turn by turn, within its cap.
            time.sleep(0.5)
            assert searching() + len(multiprocessing.active_children()) <= threads
            assert len(multiprocessing.active_children()) == threads - 1
    finally:
        server.stop()


def test_a_search_past_the_servers_limit_is_stopped_and_its_bot_loses(
    server_settings: Settings,
) -> None:
    # A limit of 0.5 s and a search of an hour without it; one search thread, which the next
    # bot gets only once the stopped search has really ended.
    settings = {"bot_max_seconds": 0.5, "bot_max_depth": 30, "bot_threads": 1}
    server = start_server(server_settings.model_copy(update=settings))
    try:
        with httpx.Client(base_url=server.url, timeout=10) as http:
            alice = player(http, "alice")
            bot = "alphabeta:depth=30,tt=off,ordering=off"
            created = http.post(
                "/matches",
                json={"game": "checkers", "seats": [{"bot": bot}, "alice"]},
                headers=alice,
            )
            match_id = created.json()["match_id"]
            wait_for(
                lambda: http.get(f"/matches/{match_id}").json()["status"] == "finished",
                "end of the match",
            )
            result = http.get(f"/matches/{match_id}").json()["result"]
            assert result["winner"] == 1 and result["reason"] == "adjudication"
            assert result["description"] == (
                f"Black (house bot {bot}) was stopped at the server's limit of 0.5 s per move, "
                "before it had a move"
            )
            wait_for(lambda: searching() == 0, "end of the stopped search")
            # The thread is free for the next search.
            quick = http.post(
                "/matches",
                json={"game": "checkers", "seats": [{"bot": "alphabeta:depth=1"}, "alice"]},
                headers=alice,
            )
            quick_id = quick.json()["match_id"]
            wait_for(
                lambda: len(http.get(f"/matches/{quick_id}").json()["moves"]) == 1,
                "move of the next bot",
            )
    finally:
        server.stop()


def tables() -> int:
    """Return how many transposition tables this process holds."""
    gc.collect()
    return sum(isinstance(thing, TranspositionTable) for thing in gc.get_objects())


def test_matches_waiting_for_their_players_hold_no_bot_tables(server_settings: Settings) -> None:
    server = start_server(server_settings.model_copy(update={"bot_threads": 1}))
    try:
        with httpx.Client(base_url=server.url, timeout=10) as http:
            alice = player(http, "alice")
            before = tables()
            ids = []
            for _ in range(12):
                created = http.post(
                    "/matches",
                    json={"game": "connect4", "seats": [{"bot": "alphabeta:depth=2"}, "alice"]},
                    headers=alice,
                )
                ids.append(created.json()["match_id"])

            def plies(match_id: str) -> int:
                return len(http.get(f"/matches/{match_id}").json()["moves"])

            for match_id in ids:
                wait_for(functools.partial(lambda m: plies(m) == 1, match_id), "bot's move")
            # Each alphabeta bot has a table of 8 MB and more: only the few most recently used
            # are kept (4 per search thread), not one per match.
            assert tables() - before <= 4
            for match_id in ids[:3]:
                played = http.post(f"/matches/{match_id}/moves", json={"move": "4"}, headers=alice)
                assert played.status_code == 200, played.text
                wait_for(functools.partial(lambda m: plies(m) == 3, match_id), "bot's reply")
            assert tables() - before <= 4
    finally:
        server.stop()
