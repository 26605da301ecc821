"""Swiss tournaments on a live server: rounds paired from the results before them, every rule
checked on the stored games, the pairing the same as competition.swiss's from those results,
the standings' table from them, and a server killed mid-tournament resumed without a game lost
or played twice."""

from __future__ import annotations

import collections
import os
import signal
import time
from typing import Any

import httpx
import pytest

from competition.openings import default_openings
from competition.schedule import GameTask
from competition.swiss_schedule import swiss_round
from games import get_game
from server.settings import Settings
from tests.server.conftest import RunningServer, arena_serve
from tests.server.tournaments.test_tournaments import auth_headers, create

BOTS = [
    "alphabeta:depth=2",
    "alphabeta:depth=1",
    "greedy",
    "mcts:simulations=20,seed=1",
    "random:seed=1",
    "random:seed=2",
    "random:seed=3",
]
SWISS: dict[str, Any] = {
    "game": "connect4",
    "bots": BOTS,
    "seed": 5,
    "ply_cap": 42,
    "concurrency": 2,
    "swiss": {"rounds": 3},
}
V14 = {"Arena-Protocol-Version": "1.4"}
FINISH_S = 300
"""A liveness bound: it keeps a stuck tournament from hanging the run."""


def wait_until(http: httpx.Client, tournament_id: str, done: Any) -> dict[str, Any]:
    deadline = time.monotonic() + FINISH_S
    while True:
        state: dict[str, Any] = http.get(f"/tournaments/{tournament_id}", headers=V14).json()
        if done(state):
            return state
        assert time.monotonic() < deadline, state
        time.sleep(0.2)


def check_swiss(state: dict[str, Any]) -> None:
    """Check every Swiss rule on a finished tournament's stored games, and that each round is
    the pairing competition.swiss makes from the results before it."""
    games = sorted(state["games"], key=lambda g: g["index"])
    bots, rounds = state["spec"]["bots"], state["spec"]["swiss"]["rounds"]
    assert state["games_total"] == len(games) == rounds * (len(bots) // 2) * 2
    by_round: dict[int, list[dict[str, Any]]] = collections.defaultdict(list)
    for game in games:
        assert game["result"] is not None
        by_round[game["round"]].append(game)
    assert sorted(by_round) == list(range(rounds))
    met: set[frozenset[str]] = set()
    byes: collections.Counter[str] = collections.Counter()
    openings = default_openings(get_game("connect4"), rounds, state["spec"]["seed"])
    earlier: list[list[GameTask]] = []
    results: dict[int, float] = {}
    for number in range(rounds):
        played = by_round[number]
        boards: dict[int, list[dict[str, Any]]] = collections.defaultdict(list)
        for game in played:
            boards[game["pair"]].append(game)
        seated: list[str] = []
        for board in boards.values():
            first, second = board
            # A board: one opening, colours swapped.
            assert (first["first"], first["second"]) == (second["second"], second["first"])
            assert first["opening"] == second["opening"]
            pair = frozenset((first["first"], first["second"]))
            assert pair not in met, f"{sorted(pair)} met twice"
            met.add(pair)
            seated += [first["first"], first["second"]]
        assert len(seated) == len(set(seated)) == len(bots) - 1
        (bye,) = set(bots) - set(seated)
        byes[bye] += 1
        expected = swiss_round(bots, openings, state["spec"]["seed"], earlier, results)
        assert [(t.index, t.first, t.second) for t in expected] == [
            (g["index"], g["first"], g["second"]) for g in played
        ]
        earlier.append(expected)
        results.update({g["index"]: g["result"] for g in played})
    assert max(byes.values()) == 1  # nobody has a second bye before everyone has had one
    # The table: each bot's games' points and two per bye (a bye is a board won).
    points = {bot: 0.0 for bot in bots}
    for game in games:
        points[game["first"]] += game["result"]
        points[game["second"]] += 1 - game["result"]
    table = state["standings"]["swiss"]
    assert [row["rank"] for row in table] == list(range(1, len(bots) + 1))
    for row in table:
        assert row["score"] == pytest.approx(points[row["bot"]] + 2 * byes[row["bot"]])
        assert row["byes"] == byes[row["bot"]] and row["boards"] == rounds - row["byes"]
    ordered = [(-r["score"], -r["buchholz"], -r["sonneborn_berger"]) for r in table]
    assert ordered == sorted(ordered)


def test_a_swiss_tournament_pairs_each_round_from_the_results_before_it(
    live_server: RunningServer,
) -> None:
    with httpx.Client(base_url=live_server.url, timeout=30) as http:
        headers = auth_headers(http)
        created = create(http, headers, **SWISS)
        assert created["games_total"] == 3 * 3 * 2
        http.post(f"/tournaments/{created['tournament_id']}/start", headers=headers)
        state = wait_until(http, created["tournament_id"], lambda s: s["status"] == "finished")
        check_swiss(state)
        page = http.get(
            f"/tournaments/{created['tournament_id']}", headers={"Accept": "text/html"}
        ).text
        assert "Swiss standings" in page and "Round 3:" in page
        assert "a Swiss of 3 rounds, 7 players" in page
        assert page.count("<tr><td>") == len(BOTS)  # a row per bot in the Swiss table
        # An older client is not shown what it does not know.
        old = http.get(f"/tournaments/{created['tournament_id']}").json()
        assert "swiss" not in old["spec"] and "round" not in old["games"][0]


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"swiss": {"rounds": 7}}, "7 bots meet each other in 6 rounds"),
        ({"games_per_pairing": 4}, "games_per_pairing is 2"),
        ({"sprt": {"elo0": 0, "elo1": 5}}, "a Swiss tournament or an SPRT, not both"),
        ({"swiss": None, "bots": [f"random:seed={i}" for i in range(17)]}, "at most 16 bots"),
        ({"swiss": {"rounds": 0}}, "must be at least 1, not 0"),
    ],
)
def test_bad_swiss_settings_are_refused(
    live_server: RunningServer, change: dict[str, Any], words: str
) -> None:
    with httpx.Client(base_url=live_server.url, timeout=30) as http:
        headers = auth_headers(http)
        response = http.post("/tournaments", json={**SWISS, **change}, headers=headers | V14)
        assert response.status_code == 422, response.text
        assert response.json()["code"] == "VALIDATION_ERROR"
        assert words in response.text


def test_a_large_swiss_tournament_is_accepted_and_ranked_by_its_table(
    live_server: RunningServer,
) -> None:
    bots = [f"random:seed={i}" for i in range(40)]
    with httpx.Client(base_url=live_server.url, timeout=30) as http:
        headers = auth_headers(http)
        body = {"game": "tictactoe", "bots": bots, "ply_cap": 9, "swiss": {"rounds": 2}}
        created = create(http, headers, **body)
        assert created["games_total"] == 2 * 20 * 2
        assert "past 16 bots" in created["standings"]["rating_note"]


def test_a_swiss_tournament_killed_mid_round_resumes_and_plays_no_game_twice(
    server_settings: Settings,
) -> None:
    url = server_settings.database_url
    with arena_serve(url) as (process, base), httpx.Client(base_url=base, timeout=30) as http:
        headers = auth_headers(http)
        tournament_id = create(http, headers, **SWISS)["tournament_id"]
        http.post(f"/tournaments/{tournament_id}/start", headers=headers)
        # Killed once the second round has begun: its pairing stored, its games under way.
        before = wait_until(
            http,
            tournament_id,
            lambda s: any(g["round"] == 1 for g in s["games"]) or s["status"] == "finished",
        )
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    assert before["status"] == "running", "it finished before it could be killed"
    kept = {g["index"]: g for g in before["games"] if g["result"] is not None}
    with arena_serve(url) as (_, base), httpx.Client(base_url=base, timeout=30) as http:
        state = wait_until(http, tournament_id, lambda s: s["status"] == "finished")
        check_swiss(state)
        after = {g["index"]: g for g in state["games"]}
        for index, game in kept.items():
            assert after[index] == game  # kept as it was, never played again
        matches = http.get("/matches", params={"limit": 200}).json()["matches"]
        assert len(matches) == len(state["games"])  # one match per game
