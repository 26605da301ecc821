"""Bot specs and game sizes beyond the server's maxima are refused at once, with the maximum."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from tests.server.conftest import RunningServer


def player(http: httpx.Client, name: str) -> dict[str, str]:
    response = http.post("/players", json={"name": name})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


def refused(response: httpx.Response, field: str, *words: str) -> None:
    """Assert `response` is the documented VALIDATION_ERROR naming `field` and `words`."""
    assert response.status_code == 422, response.text
    error = response.json()
    assert error["code"] == "VALIDATION_ERROR"
    assert error["message"].startswith(f"{field}: "), error
    assert field in error["details"], error
    for word in words:
        assert word in error["message"], error


@pytest.mark.parametrize(
    ("bot", "words"),
    [
        ("alphabeta:depth=40", ("depth is 40", "maximum of 10")),
        ("alphabeta:depth=" + "9" * 100, ("depth is a number of 100 characters", "at most 128")),
        ("minimax:depth=11", ("depth is 11", "maximum of 10")),
        ("mcts:simulations=1000000", ("simulations is 1000000", "maximum of 100000")),
        ("mcts:time=31", ("time is 31.0", "maximum of 30")),
        ("id:time=0,depth=64", ("depth is 64", "maximum of 10")),
        ("id:nodes=20000000", ("nodes is 20000000", "maximum of 1e+07")),
    ],
)
def test_house_bots_beyond_the_maxima_are_refused(
    live_server: RunningServer, bot: str, words: tuple[str, ...]
) -> None:
    with httpx.Client(base_url=live_server.url, timeout=10) as http:
        alice = player(http, "alice")
        started = time.monotonic()
        response = http.post(
            "/matches", json={"game": "checkers", "seats": ["alice", {"bot": bot}]}, headers=alice
        )
        refused(response, "seats.1.bot", *words)
        tournament = http.post(
            "/tournaments",
            json={"game": "tictactoe", "bots": ["random", bot]},
            headers=alice,
        )
        refused(tournament, "bots", *words)
        assert time.monotonic() - started < 2
        # Nothing was created.
        assert http.get("/matches").json()["matches"] == []
        assert http.get("/tournaments").json()["tournaments"] == []


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"options": {"heaps": "1000000"}}, "options", ("1000000 objects", "maximum of 64")),
        ({"options": {"heaps": "1,2,3,4,5,6,7,8,9"}}, "options", ("9 heaps", "maximum of 8")),
        ({"start_position": "1,65/2"}, "start_position", ("heap 2 has 65", "maximum of 64")),
    ],
)
def test_nim_matches_beyond_the_maxima_are_refused(
    live_server: RunningServer, body: dict[str, Any], field: str, words: tuple[str, ...]
) -> None:
    with httpx.Client(base_url=live_server.url, timeout=10) as http:
        alice = player(http, "alice")
        started = time.monotonic()
        response = http.post(
            "/matches",
            json={"game": "nim", "seats": ["alice", {"bot": "random"}], **body},
            headers=alice,
        )
        refused(response, field, *words)
        assert time.monotonic() - started < 2
        # At the maxima, the match is played.
        fine = http.post(
            "/matches",
            json={
                "game": "nim",
                "options": {"heaps": ",".join(["64"] * 8)},
                "seats": ["alice", {"bot": "random"}],
            },
            headers=alice,
        )
        assert fine.status_code == 201, fine.text
        assert len(fine.json()["legal_moves"]) == 512


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"options": {"heaps": "1000000"}}, "options", ("1000000 objects", "maximum of 64")),
        ({"options": {"heaps": "1,1,1,1,1,1,1,1,1"}}, "options", ("9 heaps",)),
        ({"openings": ["fen:3,5", "fen:100,100"]}, "openings", ("entry 1", "heap 1 has 100")),
    ],
)
def test_nim_tournaments_beyond_the_maxima_are_refused_at_once(
    live_server: RunningServer, body: dict[str, Any], field: str, words: tuple[str, ...]
) -> None:
    with httpx.Client(base_url=live_server.url, timeout=30) as http:
        alice = player(http, "alice")
        started = time.monotonic()
        response = http.post(
            "/tournaments",
            json={"game": "nim", "bots": ["random", "greedy"], "games_per_pairing": 10, **body},
            headers=alice,
        )
        refused(response, field, *words)
        assert time.monotonic() - started < 2
