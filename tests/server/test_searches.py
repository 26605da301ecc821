"""House-bot searches: stopped when their match ends, bounded per player, never starving others.

The server runs in this process (uvicorn in a thread), so the tests see its threads: a thread
whose stack is in a search module is searching.
"""

from __future__ import annotations

import functools
import gc
import multiprocessing
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bots.table import TranspositionTable
from server.settings import Settings
from tests.server.conftest import RunningServer, start_server

SEARCH_MODULES = tuple(
    str(Path(__file__).parents[2] / "bots" / name)
    for name in ("engine.py", "mcts.py", "minimax.py")
)


def searching() -> int:
    """Return how many threads of this process are inside a search now."""
    count = 0
    for frame in sys._current_frames().values():
        current: Any = frame
        while current is not None:
            if current.f_code.co_filename in SEARCH_MODULES:
                count += 1
                break
            current = current.f_back
    return count


def wait_for(predicate: Callable[[], bool], seconds: float) -> float:
    """Wait until `predicate()` holds; return the seconds it took (fail after `seconds`)."""
    started = time.monotonic()
    while not predicate():
        assert time.monotonic() - started < seconds, f"not within {seconds} s"
        time.sleep(0.02)
    return time.monotonic() - started


def player(http: httpx.Client, name: str) -> dict[str, str]:
    response = http.post("/players", json={"name": name})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


@pytest.fixture
def server(server_settings: Settings) -> Iterator[RunningServer]:
    settings = server_settings.model_copy(update={"bot_threads": 2, "bot_searches_per_player": 1})
    running = start_server(settings)
    try:
        yield running
    finally:
        running.stop()


@pytest.mark.parametrize(
    ("bot", "time_control", "end"),
    [
        ("mcts:time=30", None, "resign"),
        ("mcts:time=30", None, "abort"),
        ("alphabeta:depth=10,tt=off,ordering=off", None, "resign"),
        # The bot's own flag falls while its depth-bound search (which ignores the clock) runs.
        ("alphabeta:depth=10,tt=off,ordering=off", {"base_ms": 1000}, None),
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
        wait_for(lambda: searching() == 1, 5)
        if end is not None:
            time.sleep(0.3)
            response = http.post(f"/matches/{match_id}/{end}", headers=alice)
            assert response.status_code == 200, response.text
        else:
            wait_for(lambda: http.get(f"/matches/{match_id}").json()["status"] == "finished", 5)
        # The search noticed within a second, and its thread is free.
        assert wait_for(lambda: searching() == 0, 1.0) < 1.0
        state = http.get(f"/matches/{match_id}").json()
        assert state["status"] == ("aborted" if end == "abort" else "finished")
        assert state["moves"] == []
        assert state["result"]["winner"] == (None if end == "abort" else 0 if end else 1)


def test_one_players_searches_never_starve_another_player(server: RunningServer) -> None:
    with httpx.Client(base_url=server.url, timeout=10) as http:
        hog = player(http, "hog")
        other = player(http, "other")
        # More expensive searches than the old shared executor had threads (cpu count + 4).
        hogged = []
        for _ in range(8):
            created = http.post(
                "/matches",
                json={"game": "checkers", "seats": [{"bot": "mcts:time=25"}, "hog"]},
                headers=hog,
            )
            assert created.status_code == 201, created.text
            hogged.append(created.json()["match_id"])
        time.sleep(0.5)
        # One player's searches take one thread (bot_searches_per_player), the rest wait.
        assert searching() == 1
        started = time.monotonic()
        created = http.post(
            "/matches",
            json={"game": "checkers", "seats": [{"bot": "alphabeta:depth=3"}, "other"]},
            headers=other,
        )
        assert created.status_code == 201, created.text
        match_id = created.json()["match_id"]
        waited = wait_for(lambda: len(http.get(f"/matches/{match_id}").json()["moves"]) == 1, 3)
        assert waited < 3
        tournament = http.post(
            "/tournaments",
            json={"game": "tictactoe", "bots": ["random", "greedy"], "games_per_pairing": 4},
            headers=other,
        )
        assert tournament.status_code == 201, tournament.text
        listed = http.get("/matches", params={"player": "other"})
        assert listed.status_code == 200
        assert time.monotonic() - started < 4
        # The other player's match goes on at once: its bot answers a move promptly.
        reply = http.get(f"/matches/{match_id}").json()["legal_moves"][0]
        move = http.post(f"/matches/{match_id}/moves", json={"move": reply}, headers=other)
        assert move.status_code == 200, move.text
        wait_for(lambda: len(http.get(f"/matches/{match_id}").json()["moves"]) == 3, 3)
        assert searching() == 1  # the hog's first search still runs; its others still wait
        for hogged_id in hogged:
            assert http.post(f"/matches/{hogged_id}/abort", headers=hog).status_code == 200
        assert wait_for(lambda: searching() == 0, 1.0) < 1.0


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
            time.sleep(1.0)
            # A child on each thread, beyond the owner's cap while nobody else waits; the
            # owner's other match waits for its turn.
            assert len(multiprocessing.active_children()) == threads
            assert searching() == 0
            created = http.post(
                "/matches",
                json={"game": "checkers", "seats": [{"bot": "alphabeta:depth=3"}, "other"]},
                headers=other,
            )
            match_id = created.json()["match_id"]
            # A child gives its thread back at once, and the other player's bot moves.
            wait_for(lambda: len(http.get(f"/matches/{match_id}").json()["moves"]) == 1, 3)
            wait_for(lambda: len(multiprocessing.active_children()) == threads - 1, 2)
            # From then on the owner's other matches go turn by turn, within its cap.
            time.sleep(0.5)
            assert searching() + len(multiprocessing.active_children()) <= threads
            assert len(multiprocessing.active_children()) == threads - 1
    finally:
        server.stop()


def test_a_search_past_the_servers_limit_is_stopped_and_its_bot_loses(
    server_settings: Settings,
) -> None:
    server = start_server(server_settings.model_copy(update={"bot_max_seconds": 0.5}))
    try:
        with httpx.Client(base_url=server.url, timeout=10) as http:
            alice = player(http, "alice")
            bot = "alphabeta:depth=10,tt=off,ordering=off"  # within the depth maximum; slow
            created = http.post(
                "/matches",
                json={"game": "checkers", "seats": [{"bot": bot}, "alice"]},
                headers=alice,
            )
            match_id = created.json()["match_id"]
            wait_for(lambda: http.get(f"/matches/{match_id}").json()["status"] == "finished", 3)
            result = http.get(f"/matches/{match_id}").json()["result"]
            assert result["winner"] == 1 and result["reason"] == "adjudication"
            assert result["description"] == (
                f"Black (house bot {bot}) was stopped at the server's limit of 0.5 s per move, "
                "before it had a move"
            )
            assert wait_for(lambda: searching() == 0, 1.0) < 1.0
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
                wait_for(functools.partial(lambda m: plies(m) == 1, match_id), 5)
            # Each alphabeta bot has a table of 8 MB and more: only the few most recently used
            # are kept (4 per search thread), not one per match.
            assert tables() - before <= 4
            for match_id in ids[:3]:
                played = http.post(f"/matches/{match_id}/moves", json={"move": "4"}, headers=alice)
                assert played.status_code == 200, played.text
                wait_for(functools.partial(lambda m: plies(m) == 3, match_id), 5)
            assert tables() - before <= 4
    finally:
        server.stop()
