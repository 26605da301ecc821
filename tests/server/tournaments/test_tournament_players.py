"""A server tournament whose participants include bots connected over the network.

Two `arena bot` processes play as registered players (`player:NAME`) beside a house bot; with
deterministic bots the server gives the same games as the local runner with the same specs.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from competition.openings import default_openings
from competition.runner import TournamentSpec, run_tournament
from tests.server.conftest import RunningServer
from tests.server.tournaments.test_tournaments import auth_headers, create, wait_finished

PLAYERS = {"north": "alphabeta:depth=2", "south": "greedy"}
HOUSE = "alphabeta:depth=1"


def test_connected_bots_play_a_tournament_like_the_local_runner(
    live_server: RunningServer, tmp_path: Path
) -> None:
    exe = shutil.which("arena", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the arena console script is not installed in this environment")
    participants = ["player:north", "player:south", HOUSE]
    body = {"game": "connect4", "bots": participants, "games_per_pairing": 2, "seed": 5}
    processes: list[subprocess.Popen[bytes]] = []
    with httpx.Client(base_url=live_server.url, timeout=30) as http:
        headers = auth_headers(http)
        tokens = {name: auth_headers(http, name)["Authorization"][7:] for name in PLAYERS}
        bad = http.post(
            "/tournaments", json={**body, "bots": ["player:west", HOUSE]}, headers=headers
        )
        assert bad.status_code == 422 and "west" in bad.json()["message"], bad.text
        created = create(http, headers, **body)
        tournament_id = created["tournament_id"]
        # Naming players invites them: the owner cannot start until both have accepted.
        assert created["invitations"] == {"north": "pending", "south": "pending"}
        early = http.post(f"/tournaments/{tournament_id}/start", headers=headers)
        assert early.status_code == 409 and early.json()["code"] == "INVITATIONS_PENDING"
        for name in PLAYERS:
            answer = http.post(
                f"/tournaments/{tournament_id}/accept",
                headers={"Authorization": f"Bearer {tokens[name]}"},
            )
            assert answer.status_code == 200, answer.text
        assert answer.json()["invitations"] == {"north": "accepted", "south": "accepted"}
        try:
            for name, spec in PLAYERS.items():
                log = (tmp_path / f"{name}.log").open("wb")
                processes.append(
                    subprocess.Popen(
                        [
                            exe,
                            "bot",
                            "--server",
                            live_server.url,
                            "--token",
                            tokens[name],
                            "--bot",
                            spec,
                            "--matches",
                            "4",
                        ],
                        stdout=log,
                        stderr=subprocess.STDOUT,
                    )
                )
            started = http.post(f"/tournaments/{tournament_id}/start", headers=headers)
            assert started.status_code == 200, started.text
            state = wait_finished(http, tournament_id)
            for process in processes:
                assert process.wait(30) == 0
        finally:
            for process in processes:
                if process.poll() is None:
                    process.kill()
        logs = {name: (tmp_path / f"{name}.log").read_text() for name in PLAYERS}
        assert state["games_done"] == state["games_total"] == 6, logs
        points = {row["bot"]: row["points"] for row in state["standings"]["points"]}
        assert sum(points.values()) == 6

        # The same tournament with the players' bot specs, played locally.
        local_bots = (PLAYERS["north"], PLAYERS["south"], HOUSE)
        spec = TournamentSpec(game="connect4", bots=local_bots, games_per_pairing=2, seed=5)
        openings = default_openings(spec.build_game(), 1, 5)
        local = run_tournament(spec, openings)
        names = dict(zip(participants, local_bots, strict=True))
        by_name = {opening.name: opening for opening in openings}
        for game, record in zip(state["games"], local, strict=True):
            assert (names[game["first"]], names[game["second"]]) == (record.first, record.second)
            match = http.get(f"/matches/{game['match_id']}").json()
            seats = [seat["player"] or seat["bot"] for seat in match["seats"]]
            assert seats == [p.removeprefix("player:") for p in (game["first"], game["second"])]
            opening = by_name[record.opening]
            assert tuple(match["moves"]) == record.moves[len(opening.moves) :], logs
            assert (game["result"], game["reason"]) == (record.result, record.reason)
