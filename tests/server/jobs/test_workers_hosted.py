"""Hosted bots' tournament games on a worker (server.jobs.tournament_games): the worker runs
each seat's program in its own sandbox from the servers' hosted files, stores the game as the
match of the version that played, and tells the owners what the match service tells them: a
failure with its words (a crasher), or a game played to its end."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from competition.runner import GameTask
from protocol.messages import TournamentCreate
from server.db.engine import create_engine, session_factory
from server.db.models import HostedBot
from server.jobs import JobRuntime
from server.jobs.tournament_games import GamePlayer
from server.matches.service import MatchService
from server.settings import Settings
from server.tournaments.planning import plan
from server.tournaments.played import is_for_workers
from server.tournaments.store import TournamentStore
from server.tournaments.tournament import HostedTournament
from tests.server.conftest import RunningServer, _reset_database, arena_serve, start_server
from tests.server.hosted.test_hosted_bots import CRASHER, RANDOM_ENGINE, SECRET, TIMEOUT, Client
from tests.server.jobs.test_workers_tournaments import WORKER_ENV, arena_worker

BOTS = ["hosted:ada/rnd", "hosted:bob/crash", "greedy"]


@pytest.fixture
def server(server_settings: Settings, tmp_path: Path) -> Iterator[tuple[RunningServer, Settings]]:
    """A server to upload the bots to (its database and hosted files are the worker's too)."""
    settings = Settings(
        database_url=server_settings.database_url,
        grader_dir=tmp_path / "grader",
        hosted_dir=tmp_path / "hosted",
        hosted_allow_unsandboxed=True,
        hosted_failures_to_pause=100,
    )
    running = start_server(settings)
    try:
        yield running, settings
    finally:
        running.stop()


def test_a_worker_plays_hosted_bots_games_and_tells_their_owners(
    server: tuple[RunningServer, Settings],
) -> None:
    running, settings = server
    client = Client(running)
    try:
        for who, name, program in (("ada", "rnd", RANDOM_ENGINE), ("bob", "crash", CRASHER)):
            client.register(who)
            assert client.create(who, name).status_code == 201
            version = client.upload(who, name, "engine", {"bot.py": program})
            assert version.json()["status"] == "ready", version.text
        crashed_in = asyncio.run(_play_on_a_worker(settings))
        # The crasher's owner reads each lost game's words, its stderr among them; the other
        # bot's owner has no failure to read.
        failures = client.http.get("/hosted-bots/bob/crash/failures", headers=client.auth("bob"))
        listed = failures.json()["failures"]
        assert sorted(f["match_id"] for f in listed) == sorted(crashed_in)
        assert all(SECRET in f["words"] and f["version"] == 1 for f in listed), listed
        clean = client.http.get("/hosted-bots/ada/rnd/failures", headers=client.auth("ada"))
        assert clean.json()["failures"] == []
    finally:
        client.http.close()


async def _play_on_a_worker(settings: Settings) -> list[str]:
    """Play the tournament's games as a worker's jobs; return the crasher's matches."""
    engine = create_engine(settings.database_url)
    sessions = session_factory(engine)
    store = TournamentStore(sessions)
    matches = MatchService(sessions, settings)
    try:
        body = TournamentCreate.model_validate(
            {"game": "tictactoe", "bots": BOTS, "games_per_pairing": 2, "seed": 3, "ply_cap": 9}
        )
        assert is_for_workers(body)
        assert not is_for_workers(body, hosted=False)
        _spec, tasks = plan(body, settings)
        tournament = HostedTournament(
            id="t_" + uuid.uuid4().hex[:16],
            body=body,
            status="running",
            games_total=len(tasks),
            created_ms=0,
        )
        await store.add(tournament)
        uid_base = int(os.environ.get("ARENA_GRADER_UID_BASE", "64000")) + 300
        runtime = JobRuntime(settings, engine, sessions, 1, uid_base)
        assert runtime.hosted_uids == range(uid_base + 1, uid_base + 3)
        notices: list[dict[str, Any]] = []

        async def notify(payload: dict[str, Any]) -> None:
            notices.append(payload)

        player = GamePlayer(runtime, notify, _hosted_of(runtime))
        for task in tasks:
            await player.play(tournament.id, task.index)
        await player.play(tournament.id, 0)  # a job run again: not played, only told again
        loaded = await store.load(tournament.id)
        assert loaded is not None and loaded.status == "finished", loaded
        games = loaded.ordered_games()
        assert len(games) == len(tasks) == 6
        await _check_games(matches, tasks, games)
        # The crasher lost each of its four games with its own words; each version's record
        # says so: four failures of bob's, none of ada's (its two games reached their ends).
        async with sessions() as session:
            rows = {
                row.name: row.failures_in_row for row in await session.scalars(select(HostedBot))
            }
        assert rows == {"rnd": 0, "crash": 4}
        assert [n["kind"] for n in notices].count("game") == 6 + 1
        return [g.match_id for g in games if "hosted:bob/crash" in (g.first, g.second)]
    finally:
        await matches.close()
        await engine.dispose()


def _hosted_of(runtime: JobRuntime) -> Any:
    from server.jobs.tournament_games import _hosted_bots

    hosted = _hosted_bots(runtime)
    assert hosted is not None
    return hosted


async def _check_games(matches: MatchService, tasks: list[GameTask], games: list[Any]) -> None:
    for task, game in zip(tasks, games, strict=True):
        state = await matches.state(game.match_id)
        assert state.status == "finished"
        seats = [seat.bot for seat in state.seats]
        # The match names the version that played; the game row, the participant.
        assert [game.first, game.second] == [task.first, task.second]
        assert seats == [
            f"{spec}@1" if spec.startswith("hosted:") else spec
            for spec in (task.first, task.second)
        ]
        assert state.result is not None
        if "hosted:bob/crash" in (task.first, task.second):
            crasher = 0 if task.first == "hosted:bob/crash" else 1
            assert state.result.code == "bot_failure"
            assert state.result.winner == 1 - crasher
            assert game.result == (1.0 if crasher == 1 else 0.0)
        else:
            assert state.result.code != "bot_failure"


# -- a role-server process and a worker process --------------------------------------------------


def test_a_servers_hosted_tournament_is_played_by_a_worker_process(tmp_path: Path) -> None:
    """`arena serve` with ARENA_ROLE=server defers a tournament of hosted bots to an `arena
    worker`, which runs their programs from the servers' hosted files."""
    url = os.environ.get("ARENA_TEST_DATABASE_URL") or ""
    if not url.startswith("postgresql"):
        pytest.skip("ARENA_TEST_DATABASE_URL (PostgreSQL) is not set")
    asyncio.run(_reset_database(url))
    env = {
        "ARENA_ROLE": "server",
        "ARENA_GRADER_DIR": str(tmp_path / "grader"),
        "ARENA_HOSTED_DIR": str(tmp_path / "hosted"),  # the volume servers and workers share
        "ARENA_HOSTED_ALLOW_UNSANDBOXED": "true",
        "ARENA_TOURNAMENT_FOLLOW_S": "0.5",
        **WORKER_ENV,
    }
    log = tmp_path / "worker.log"
    with (
        arena_serve(url, **env) as (_server, base),
        arena_worker(url, log, **env) as worker,
        httpx.Client(base_url=base, timeout=60) as http,
    ):
        tokens = {}
        for who, name, program in (("ada", "rnd", RANDOM_ENGINE), ("bob", "crash", CRASHER)):
            tokens[who] = {
                "Authorization": "Bearer "
                + http.post("/players", json={"name": who}).json()["token"]
            }
            made = http.post(
                "/hosted-bots", json={"name": name, "game": "tictactoe"}, headers=tokens[who]
            )
            assert made.status_code == 201, made.text
            version = http.post(
                f"/hosted-bots/{who}/{name}/versions",
                data={"kind": "engine"},
                files=[("files", ("bot.py", program))],
                headers=tokens[who],
            )
            assert version.json()["status"] == "ready", version.text
        body = {"game": "tictactoe", "bots": BOTS, "games_per_pairing": 2, "seed": 5}
        created = http.post("/tournaments", json=body, headers=tokens["ada"])
        assert created.status_code == 201, created.text
        tournament_id = created.json()["tournament_id"]
        started = http.post(f"/tournaments/{tournament_id}/start", headers=tokens["ada"])
        assert started.status_code == 200, started.text
        deadline = time.monotonic() + 3 * TIMEOUT  # a liveness bound, not a speed claim
        while (state := http.get(f"/tournaments/{tournament_id}").json())["status"] == "running":
            assert time.monotonic() < deadline, state
            assert worker.poll() is None, log.read_text()
            time.sleep(0.2)
        assert state["status"] == "finished", state
        games = state["games"]
        assert len(games) == 6 and all(g["result"] is not None for g in games)
        for game in games:
            match = http.get(f"/matches/{game['match_id']}").json()
            assert [seat["bot"] for seat in match["seats"]] == [
                f"{spec}@1" if spec.startswith("hosted:") else spec
                for spec in (game["first"], game["second"])
            ]
        failures = http.get("/hosted-bots/bob/crash/failures", headers=tokens["bob"]).json()
        assert len(failures["failures"]) == 4
    worked = log.read_text()
    assert worked.count(f"tournament {tournament_id} game") == 6, worked
