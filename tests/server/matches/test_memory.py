"""Finished matches leave memory: play hundreds of matches and count what stays behind.

bench/server.py measures the server's RSS over 10,000 finished matches (the target: at most 50 MB
above the RSS after 100). RSS moves with the allocator's whims at a test's smaller count, so
this test counts Python objects instead: after a warm-up, every kind of object the collector
tracks (referees, live matches, locks, queues, dicts...) may not grow with the number of
matches played. A match that leaves one object behind shows as hundreds.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from server.settings import Settings
from tests.server.conftest import RunningServer, start_server

WARM_UP = 40
MEASURED = 300
ALLOWED_GROWTH = 100
"""Objects of one type that may appear while MEASURED matches are played: caches filling up
once (51 bound methods stay the same from 300 to 900 matches); a leak of one object per match
is three times that."""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RunningServer]:
    running = start_server(
        Settings(
            database_url=f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}",
            grader_dir=tmp_path / "g",
            rate_limits_enabled=False,
        )
    )
    try:
        yield running
    finally:
        running.stop()


def _register(http: httpx.Client, name: str) -> dict[str, str]:
    response = http.post("/players", json={"name": name})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


def _play_matches(http: httpx.Client, seats: list[dict[str, str]], count: int) -> None:
    """Create `count` tic-tac-toe matches between the two players and play each to its end."""
    for _ in range(count):
        created = http.post(
            "/matches",
            json={
                "game": "tictactoe",
                "seats": ["ann", "ben"],
                "time_control": {"base_ms": 60_000, "increment_ms": 1_000},
            },
            headers=seats[0],
        )
        assert created.status_code == 201, created.text
        match_id = created.json()["match_id"]
        accepted = http.post(f"/matches/{match_id}/accept", headers=seats[1])
        assert accepted.status_code == 200, accepted.text
        made = accepted.json()
        while made["legal_moves"]:  # a move_made after the first, the match_state before
            response = http.post(
                f"/matches/{match_id}/moves",
                json={"move": made["legal_moves"][0]},
                headers=seats[made["to_move"]],
            )
            assert response.status_code == 200, response.text
            made = response.json()
        final = http.get(f"/matches/{match_id}").json()
        assert final["status"] == "finished", final


def _census() -> Counter[str]:
    gc.collect()
    return Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in gc.get_objects())


def test_finished_matches_leave_no_objects_behind(server: RunningServer) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as http:
        seats = [_register(http, "ann"), _register(http, "ben")]
        _play_matches(http, seats, WARM_UP)
        before = _census()
        _play_matches(http, seats, MEASURED)
        after = _census()
    grown = {kind: after[kind] - before[kind] for kind in after}
    leaks = {kind: n for kind, n in grown.items() if n > ALLOWED_GROWTH}
    assert not leaks, f"objects that grew with {MEASURED} finished matches: {leaks}"
