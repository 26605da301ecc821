"""SPRT tournaments on the server: two house bots play colour-swapped pairs until the test
decides, watched live, counted again from the stored games, and continued after a restart."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
import pytest

from competition.runner import TournamentSpec
from competition.sequential import SprtTest, ordered_status
from protocol.messages import TournamentCreate, dump_server_message, parse_server_message
from server.settings import Settings
from server.tournaments.played import is_for_workers
from tests.server.conftest import RunningServer, start_server
from tests.server.tournaments.test_tournaments import TIMEOUT, auth_headers, check_matches, create
from tests.wsclient import connect

HELLO = {"type": "hello", "protocol_version": "1.3", "client": "test"}
V13 = {"Arena-Protocol-Version": "1.3"}
STRONG_FIRST = {
    "game": "tictactoe",
    "bots": ["alphabeta:depth=4", "random"],
    "seed": 1,
    "ply_cap": 9,
    "concurrency": 2,
    "sprt": {"elo0": 0, "elo1": 50, "max_pairs": 200},
}
WEAK_FIRST = {
    "game": "connect4",
    "bots": ["random", "alphabeta:depth=3"],
    "seed": 1,
    "ply_cap": 42,
    "concurrency": 1,
    "sprt": {"elo0": 0, "elo1": 50, "max_pairs": 200},
}


def recounted(state: dict[str, Any], games: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Return the SPRT state counted from `games` (default: the state's) by competition.sequential,
    as the wire has it."""
    body, settings = state["spec"], state["spec"]["sprt"]
    first = body["bots"][0]
    scores = {
        g["index"]: g["result"] if g["first"] == first else 1 - g["result"]
        for g in (state["games"] if games is None else games)
        if g["result"] is not None
    }
    test = SprtTest(settings["elo0"], settings["elo1"], settings["alpha"], settings["beta"])
    spec = TournamentSpec(game=body["game"], bots=tuple(body["bots"]))
    status = ordered_status(spec, test, 2 * settings["max_pairs"], scores).to_dict()
    return {
        "llr": pytest.approx(status["llr"]),
        "lower_bound": pytest.approx(status["lower_bound"]),
        "upper_bound": pytest.approx(status["upper_bound"]),
        "pairs": status["games"] // 2,
        "max_pairs": settings["max_pairs"],
        "pentanomial": status["pentanomial"],
        "wins": status["wins"],
        "draws": status["draws"],
        "losses": status["losses"],
        "verdict": status["verdict"],
        "elo": None if status["elo"] is None else pytest.approx(status["elo"]),
    }


POLL_S = 0.02
"""Seconds between two polls of a tournament."""


def wait_for(http: httpx.Client, tournament_id: str, done: Any) -> dict[str, Any]:
    """Poll a tournament (in protocol 1.3) until `done(state)`; return that state."""
    state: dict[str, Any] = {}
    for _ in range(round(TIMEOUT / POLL_S)):  # at least TIMEOUT seconds: a hang, not a speed
        state = http.get(f"/tournaments/{tournament_id}", headers=V13).json()
        if done(state):
            return state
        time.sleep(POLL_S)
    raise AssertionError(f"the tournament never got there: {state}")


def check_decided(http: httpx.Client, state: dict[str, Any], verdict: str) -> None:
    """The tournament finished on `verdict` before its cap, its state is the count of its
    stored games, every game begun was played out, and its listing shows the same state."""
    assert state["status"] == "finished" and state["reason"] is None
    sprt = state["sprt"]
    assert sprt["verdict"] == verdict and 0 < sprt["pairs"] < sprt["max_pairs"]
    assert sprt == recounted(state)
    beyond = (
        sprt["llr"] >= sprt["upper_bound"]
        if verdict == "H1"
        else sprt["llr"] <= sprt["lower_bound"]
    )
    assert beyond
    # Games under way at the decision were played out, not counted.
    assert state["games_done"] == len(state["games"]) >= 2 * sprt["pairs"]
    assert state["games_total"] == 2 * sprt["max_pairs"]
    check_matches(http, state)
    listed = http.get("/tournaments", headers=V13).json()["tournaments"]
    summary = next(t for t in listed if t["tournament_id"] == state["tournament_id"])
    assert summary["sprt"] == recounted(state)
    # A client of 1.2 or older hears nothing of the test (the field is new in 1.3).
    older = http.get(f"/tournaments/{state['tournament_id']}").json()
    assert "sprt" not in older and "sprt" not in older["spec"]


def test_an_sprt_tournament_stops_on_its_verdict_and_publishes_each_llr(
    live_server: RunningServer,
) -> None:
    with httpx.Client(base_url=live_server.url, timeout=30) as http:
        headers = auth_headers(http)
        created = http.post("/tournaments", json=STRONG_FIRST, headers={**headers, **V13})
        assert created.status_code == 201, created.text
        state = created.json()
        tournament_id = state["tournament_id"]
        assert state["games_total"] == 400
        assert state["sprt"] == {
            "llr": 0.0,
            "lower_bound": pytest.approx(-2.944, abs=1e-3),
            "upper_bound": pytest.approx(2.944, abs=1e-3),
            "pairs": 0,
            "max_pairs": 200,
            "pentanomial": [0, 0, 0, 0, 0],
            "wins": 0,
            "draws": 0,
            "losses": 0,
            "verdict": None,
            "elo": None,
        }

        async def watch() -> list[dict[str, Any]]:
            url = f"{live_server.ws_url}/ws/tournaments/{tournament_id}"
            received: list[dict[str, Any]] = []
            async with connect(url) as ws:
                await ws.send(json.dumps(HELLO))
                while not received or received[-1]["type"] != "tournament_finished":
                    text = await asyncio.wait_for(ws.recv(), TIMEOUT)
                    message = json.loads(text)
                    spoken = HELLO["protocol_version"]
                    again = dump_server_message(parse_server_message(text), spoken)
                    assert json.loads(again) == message
                    received.append(message)
                    if message["type"] == "tournament_state":
                        started = http.post(f"/tournaments/{tournament_id}/start", headers=headers)
                        assert started.status_code == 200, started.text
            return received

        messages = asyncio.run(watch())
        finished = [m for m in messages if m["type"] == "tournament_game_finished"]
        # Each game's message carries the test counted on the games finished until then.
        for at, message in enumerate(finished):
            assert message["sprt"] == recounted(
                messages[1], [m["game"] for m in finished[: at + 1]]
            ), at
        verdicts = [m["sprt"]["verdict"] for m in finished]
        decided_at = verdicts.index("H1")
        assert verdicts[:decided_at] == [None] * decided_at
        # Games that ended after the decision changed nothing.
        assert all(m["sprt"] == finished[decided_at]["sprt"] for m in finished[decided_at:])
        state = wait_for(http, tournament_id, lambda s: s["status"] == "finished")
        assert messages[-1]["sprt"] == state["sprt"] == finished[decided_at]["sprt"]
        assert len(finished) == state["games_done"]
        check_decided(http, state, "H1")


def test_a_restarted_server_counts_the_test_from_the_stored_games_and_goes_on(
    server_settings: Settings,
) -> None:
    first = start_server(server_settings)
    try:
        with httpx.Client(base_url=first.url, timeout=30) as http:
            headers = auth_headers(http)
            tournament_id = create(http, headers, **WEAK_FIRST)["tournament_id"]
            http.post(f"/tournaments/{tournament_id}/start", headers=headers)
            state = wait_for(http, tournament_id, lambda s: s["sprt"]["pairs"] >= 1)
            before = {g["index"]: g for g in state["games"] if g["result"] is not None}
    finally:
        first.stop()
    assert state["status"] == "running", "the test decided before the restart"
    second = start_server(server_settings)
    try:
        with httpx.Client(base_url=second.url, timeout=30) as http:
            state = wait_for(http, tournament_id, lambda s: s["status"] == "finished")
            check_decided(http, state, "H0")
            after = {g["index"]: g for g in state["games"]}
            for index, game in before.items():
                assert after[index] == game
            # One match per game: nothing was played twice.
            matches = http.get("/matches", params={"limit": 200}).json()["matches"]
            assert len(matches) == len(state["games"])
    finally:
        second.stop()


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"bots": ["alphabeta:depth=4", "random", "greedy"]}, "sprt", "exactly 2 bots, not 3"),
        ({"sprt": {"elo0": 5, "elo1": 0}}, "body.sprt", "must be greater than elo0"),
        ({"sprt": {"elo0": 0, "elo1": 5, "alpha": 0.5}}, "body.sprt.alpha", "less than 0.5"),
        ({"sprt": {"elo0": 0, "elo1": 5, "beta": 0}}, "body.sprt.beta", "more than 0"),
        ({"sprt": {"elo0": 0, "elo1": 5, "max_pairs": 5001}}, "body.sprt.max_pairs", "5000"),
    ],
)
def test_bad_sprt_settings_are_refused_by_their_field(
    live_server: RunningServer, change: dict[str, Any], field: str, words: str
) -> None:
    with httpx.Client(base_url=live_server.url, timeout=30) as http:
        headers = auth_headers(http)
        response = http.post("/tournaments", json={**STRONG_FIRST, **change}, headers=headers)
        assert response.status_code == 422, response.text
        error = response.json()
        assert error["code"] == "VALIDATION_ERROR"
        assert words in error["details"][field], error
        assert http.get("/tournaments").json()["tournaments"] == []


def test_workers_never_play_an_sprt_tournament() -> None:
    """Its test decides which games are played at all: a server's runner plays it."""
    sprt = TournamentCreate.model_validate(STRONG_FIRST)
    assert not is_for_workers(sprt)
    assert is_for_workers(sprt.model_copy(update={"sprt": None}))
