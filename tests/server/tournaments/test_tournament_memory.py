"""A server holds in memory only the tournaments it plays or that someone watches: a finished,
cancelled or not yet started one is read from the database when asked, with the same answers
as while it was held, and a tournament waiting to start holds no schedule.

The server runs in this process (tests/server/conftest.py), so the test reads the service's
own count of the tournaments it holds, and measures with tracemalloc what they keep.
"""

from __future__ import annotations

import asyncio
import gc
import json
import threading
import time
import tracemalloc
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from server.settings import Settings
from server.tournaments import TournamentService
from tests.server.conftest import RunningServer, start_server
from tests.server.tournaments.test_tournaments import HELLO, auth_headers, create
from tests.wsclient import connect

SMALL = {"game": "tictactoe", "bots": ["random", "greedy"], "games_per_pairing": 2, "ply_cap": 9}
MAXIMA = {
    "game": "checkers",
    "bots": [f"random:seed={n}" for n in range(16)],
    "games_per_pairing": 1000,
}
"""120 pairings of 1,000 games: the schedule of 120,000 games took 16 MB."""


@pytest.fixture
def server(server_settings: Settings) -> Iterator[RunningServer]:
    running = start_server(server_settings.model_copy(update={"rate_limits_enabled": False}))
    try:
        yield running
    finally:
        running.stop()


def service_of(running: RunningServer) -> TournamentService:
    service: TournamentService = running.server.config.app.state.tournaments
    return service


def held(running: RunningServer) -> int:
    """Return how many tournaments the server's service holds in memory."""
    return service_of(running).loaded_count


def until(condition: Any, what: str) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


class Watcher:
    """A WebSocket watching one tournament in a thread of its own, until `close`."""

    def __init__(self, ws_url: str, tournament_id: str) -> None:
        self.messages: list[dict[str, Any]] = []
        self._loop = asyncio.new_event_loop()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(
            target=self._loop.run_until_complete, args=(self._watch(ws_url, tournament_id),)
        )
        self._thread.start()
        until(lambda: self.messages, "the watcher got the tournament's state")

    async def _watch(self, ws_url: str, tournament_id: str) -> None:
        self._stop = asyncio.Event()
        async with connect(f"{ws_url}/ws/tournaments/{tournament_id}") as ws:
            await ws.send(json.dumps(HELLO))
            assert json.loads(await ws.recv())["type"] == "welcome"
            reading = asyncio.ensure_future(self._read(ws))
            await self._stop.wait()
            reading.cancel()

    async def _read(self, ws: Any) -> None:
        async for raw in ws:
            self.messages.append(json.loads(raw))

    def close(self) -> None:
        assert self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=30)


def test_ended_and_unstarted_tournaments_are_not_held_and_answer_the_same(
    server: RunningServer,
) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as http:
        owner = auth_headers(http)
        # Finished, watched while they play: the state held at the end is the one to compare.
        finished: dict[str, dict[str, Any]] = {}
        for _ in range(3):
            state = create(http, owner, **SMALL)
            watcher = Watcher(server.ws_url, state["tournament_id"])
            started = http.post(f"/tournaments/{state['tournament_id']}/start", headers=owner)
            assert started.status_code == 200, started.text
            until(
                lambda w=watcher: any(m["type"] == "tournament_finished" for m in w.messages),
                "the tournament finished",
            )
            assert held(server) >= 1  # watched: held
            finished[state["tournament_id"]] = http.get(
                f"/tournaments/{state['tournament_id']}"
            ).json()
            ended = next(m for m in watcher.messages if m["type"] == "tournament_finished")
            assert ended["standings"] == finished[state["tournament_id"]]["standings"]
            watcher.close()
        # Cancelled: before and after their start; the cancel's answer is the one to compare.
        # Started ones wait for the owner's own moves (it never plays them): no game ends
        # while the cancel stops them.
        cancelled: dict[str, dict[str, Any]] = {}
        stalled = {**SMALL, "bots": ["player:organiser", "random"]}
        for start_first in (False, True, False, True):
            state = create(http, owner, **(stalled if start_first else SMALL))
            tournament_id = state["tournament_id"]
            if start_first:
                assert http.post(f"/tournaments/{tournament_id}/start", headers=owner).is_success
            answer = http.post(f"/tournaments/{tournament_id}/cancel", headers=owner)
            assert answer.status_code == 200, answer.text
            cancelled[tournament_id] = answer.json()
        # Not started: the creation's answer is the one to compare.
        waiting = {
            state["tournament_id"]: state
            for state in (create(http, owner, **SMALL) for _ in range(3))
        }
        until(lambda: held(server) == 0, "every ended or waiting tournament was let go")
        for tournament_id, state in {**finished, **cancelled, **waiting}.items():
            again = http.get(f"/tournaments/{tournament_id}")
            assert again.status_code == 200, again.text
            assert again.json() == state, tournament_id
            page = http.get(f"/tournaments/{tournament_id}", headers={"Accept": "text/html"})
            assert page.status_code == 200 and tournament_id in page.text
        listed = {t["tournament_id"]: t for t in http.get("/tournaments").json()["tournaments"]}
        for tournament_id, state in {**finished, **cancelled, **waiting}.items():
            assert listed[tournament_id]["status"] == state["status"]
            assert listed[tournament_id]["games_done"] == state["games_done"]
        # A watcher gets the same state, and the tournament is held only while watched.
        some = next(iter(finished))
        watcher = Watcher(server.ws_url, some)
        assert watcher.messages[0] == {**finished[some], "type": "tournament_state"}
        assert held(server) == 1
        watcher.close()
        until(lambda: held(server) == 0, "the unwatched tournament was let go")
        # Invitations and starts still work on a tournament read back from the database.
        again = http.post(f"/tournaments/{next(iter(waiting))}/start", headers=owner)
        assert again.status_code == 200 and again.json()["status"] == "running"


def traced_growth(action: Any) -> int:
    """Return the bytes Python holds more after `action()` than before (garbage collected)."""
    gc.collect()
    before = tracemalloc.get_traced_memory()[0]
    action()
    gc.collect()
    return tracemalloc.get_traced_memory()[0] - before


def test_tournaments_at_the_maxima_hold_no_schedule_before_they_start(
    server: RunningServer,
) -> None:
    count = 3
    with httpx.Client(base_url=server.url, timeout=120) as http:
        owner = auth_headers(http)
        create(http, owner, **MAXIMA)  # the first plans with cold caches (decks, games)
        tracemalloc.start()
        try:
            made: list[str] = []
            growth = traced_growth(
                lambda: made.extend(
                    create(http, owner, **MAXIMA)["tournament_id"] for _ in range(count)
                )
            )
            # The schedule alone was 16 MB each; what stays is far less than one of them.
            assert growth < count * 1_000_000, growth
            # Watched, a waiting tournament is held, still without a schedule.
            watchers: list[Watcher] = []
            growth = traced_growth(lambda: watchers.extend(Watcher(server.ws_url, t) for t in made))
            assert held(server) == count
            assert growth < count * 1_000_000, growth
            cancel_growth = traced_growth(
                lambda: [
                    http.post(f"/tournaments/{t}/cancel", headers=owner).raise_for_status()
                    for t in made
                ]
            )
            assert cancel_growth < count * 1_000_000, cancel_growth
        finally:
            tracemalloc.stop()
        for watcher in watchers:
            watcher.close()
        until(lambda: held(server) == 0, "the cancelled tournaments were let go")


def test_concurrent_requests_on_a_tournament_read_back_share_one_copy(
    server: RunningServer,
) -> None:
    """Starts racing on a tournament that is not held: one runner, one first game."""
    with httpx.Client(base_url=server.url, timeout=30) as http:
        owner = auth_headers(http)
        # Its games wait for the owner's own moves: the first game stays in play.
        state = create(
            http, owner, **{**SMALL, "bots": ["player:organiser", "random"], "concurrency": 1}
        )
        tournament_id = state["tournament_id"]
        assert held(server) == 0

        async def start_all() -> list[httpx.Response]:
            async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
                return list(
                    await asyncio.gather(
                        *(
                            client.post(f"/tournaments/{tournament_id}/start", headers=owner)
                            for _ in range(8)
                        )
                    )
                )

        answers = asyncio.run(start_all())
        assert all(a.status_code == 200 for a in answers), [a.text for a in answers]
        assert {a.json()["status"] for a in answers} == {"running"}
        until(
            lambda: len(http.get(f"/tournaments/{tournament_id}").json()["games"]) >= 1,
            "the first game began",
        )
        again = http.get(f"/tournaments/{tournament_id}").json()
        assert again["status"] == "running" and len(again["games"]) == 1
        assert held(server) == 1  # its runner runs here
        assert http.post(f"/tournaments/{tournament_id}/cancel", headers=owner).is_success
        until(lambda: held(server) == 0, "the cancelled tournament was let go")


def test_a_cancel_while_a_game_is_being_created_answers_what_is_stored(
    server: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cancel that lands between a game's row and its match waits for that step: its answer
    names every game stored, each stopped, and reading the tournament back says the same."""
    from server.tournaments.store import TournamentStore

    stored = threading.Event()
    release = threading.Event()
    original = TournamentStore.add_game

    async def add_game_then_hold(self: TournamentStore, *args: Any, **kwargs: Any) -> None:
        await original(self, *args, **kwargs)
        stored.set()
        await asyncio.to_thread(release.wait, 60)

    monkeypatch.setattr(TournamentStore, "add_game", add_game_then_hold)
    with httpx.Client(base_url=server.url, timeout=60) as http:
        owner = auth_headers(http)
        # The owner never plays its own moves: no game ends by itself.
        state = create(http, owner, **{**SMALL, "bots": ["player:organiser", "random"]})
        tournament_id = state["tournament_id"]
        assert http.post(f"/tournaments/{tournament_id}/start", headers=owner).is_success
        assert stored.wait(60), "no game was stored"
        answers: list[httpx.Response] = []
        cancel = threading.Thread(
            target=lambda: answers.append(
                http.post(f"/tournaments/{tournament_id}/cancel", headers=owner)
            )
        )
        cancel.start()

        def listed_as_cancelled() -> bool:
            tournaments = http.get("/tournaments").json()["tournaments"]
            return any(
                t["tournament_id"] == tournament_id and t["status"] == "cancelled"
                for t in tournaments
            )

        until(listed_as_cancelled, "the cancel was stored")
        release.set()
        cancel.join(60)
        (answer,) = answers
        assert answer.status_code == 200, answer.text
        games = answer.json()["games"]
        assert games, "the game stored before the cancel is not in its answer"
        until(lambda: held(server) == 0, "the cancelled tournament was let go")
        again = http.get(f"/tournaments/{tournament_id}").json()
        assert again == answer.json()
        for game in games:
            match = http.get(f"/matches/{game['match_id']}")
            assert match.status_code == 200, match.text
            assert match.json()["status"] != "active", game
