"""Tournament games on workers (server.jobs.tournament_games): hosted bots, each seat's program
in the worker's own sandbox from the servers' hosted files, the game stored as the match of the
version that played, the owners told what the match service tells them (a failure with its
words, or a game played to its end); and a Swiss tournament queued a round at a time."""

from __future__ import annotations

import asyncio
import os
import signal
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from competition.runner import GameTask
from protocol.messages import TournamentCreate
from server.db.engine import create_engine, session_factory
from server.db.models import HostedBot, Match
from server.jobs import JobRuntime
from server.jobs.tournament_games import GamePlayer
from server.matches.service import MatchService
from server.settings import Settings
from server.tournaments.planning import current_round, next_swiss_round, plan
from server.tournaments.played import is_for_workers
from server.tournaments.store import TournamentStore
from server.tournaments.tournament import HostedTournament
from tests.server.conftest import RunningServer, _reset_database, arena_serve, start_server
from tests.server.hosted.test_hosted_bots import CRASHER, RANDOM_ENGINE, SECRET, Client
from tests.server.jobs.test_workers_tournaments import WORKER_ENV, arena_worker, doing_jobs
from tests.waiting import wait_for

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


def _cluster(tmp_path: Path) -> tuple[str, dict[str, str]]:
    """A fresh PostgreSQL database (skip without one), and the environment of its servers and
    workers: role server, and one hosted volume they share."""
    url = os.environ.get("ARENA_TEST_DATABASE_URL") or ""
    if not url.startswith("postgresql"):
        pytest.skip("ARENA_TEST_DATABASE_URL (PostgreSQL) is not set")
    asyncio.run(_reset_database(url))
    return url, {
        "ARENA_ROLE": "server",
        "ARENA_GRADER_DIR": str(tmp_path / "grader"),
        "ARENA_HOSTED_DIR": str(tmp_path / "hosted"),
        "ARENA_HOSTED_ALLOW_UNSANDBOXED": "true",
        "ARENA_TOURNAMENT_FOLLOW_S": "0.5",
        **WORKER_ENV,
    }


def test_a_servers_hosted_tournament_is_played_by_a_worker_process(tmp_path: Path) -> None:
    """`arena serve` with ARENA_ROLE=server defers a tournament of hosted bots to an `arena
    worker`, which runs their programs from the servers' hosted files."""
    url, env = _cluster(tmp_path)
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

        def read() -> dict[str, Any]:
            assert worker.poll() is None, log.read_text()
            state: dict[str, Any] = http.get(f"/tournaments/{tournament_id}").json()
            return state

        state = wait_for("the tournament's end", read, lambda s: s["status"] != "running")
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


# -- a Swiss tournament on workers: a round at a time ---------------------------------------------


def test_workers_play_a_swiss_round_by_round_as_a_servers_runner_pairs_it(
    server: tuple[RunningServer, Settings],
) -> None:
    _running, settings = server
    asyncio.run(_swiss_on_a_worker(settings))


async def _swiss_on_a_worker(settings: Settings) -> None:
    engine = create_engine(settings.database_url)
    sessions = session_factory(engine)
    store = TournamentStore(sessions)
    try:
        bots = ["random", "greedy", "alphabeta:depth=1", "alphabeta:depth=2", "mcts:simulations=20"]
        body = TournamentCreate.model_validate(
            {"game": "tictactoe", "bots": bots, "seed": 11, "ply_cap": 9, "swiss": {"rounds": 3}}
        )
        assert is_for_workers(body)
        first = plan(body, settings)[1]
        per_round = len(first)
        assert per_round == 4  # five bots: two boards of two games, one bye
        tournament = HostedTournament(
            id="t_" + uuid.uuid4().hex[:16],
            body=body,
            status="running",
            games_total=3 * per_round,
            created_ms=0,
        )
        await store.add(tournament)
        # What a server queues at the start: the first round alone.
        assert current_round(body, 12, list(range(12))) == [0, 1, 2, 3]
        queued: list[list[int]] = []

        async def defer(tournament_id: str, indexes: Sequence[int]) -> int:
            assert tournament_id == tournament.id
            queued.append(list(indexes))
            return len(indexes)

        runtime = JobRuntime(settings, engine, sessions, 1, 64000)
        player = GamePlayer(runtime, None, None, defer)
        # A job of the second round come early (a queue's accident) plays nothing.
        await player.play(tournament.id, per_round)
        assert (await store.game(tournament.id, per_round)) == ("running", None)
        round_games = [task.index for task in first]
        for number in range(3):
            for index in round_games:
                await player.play(tournament.id, index)
            if number < 2:
                # The last game of the round queued the next round, once.
                assert queued[-1] == [i + per_round for i in round_games]
                round_games = queued[-1]
        assert len(queued) == 2
        loaded = await store.load(tournament.id)
        assert loaded is not None and loaded.status == "finished"
        results = {i: g.result for i, g in loaded.games.items() if g.result is not None}
        assert sorted(results) == list(range(12))
        # Each round is the pairing the server's runner makes from the results before it.
        earlier = [first]
        for _round in (2, 3):
            expected = next_swiss_round(body, earlier, results)
            stored = [loaded.games[task.index] for task in expected]
            assert [(g.first, g.second, g.round) for g in stored] == [
                (t.first, t.second, t.round) for t in expected
            ]
            earlier.append(expected)
    finally:
        await engine.dispose()


def test_a_swiss_of_hosted_bots_on_two_workers_survives_a_killed_worker(tmp_path: Path) -> None:
    """A role-server process, two workers, a Swiss of hosted and house bots; a worker is
    SIGKILLed mid-tournament: every game is played once, each round paired from the last."""
    url, env = _cluster(tmp_path)
    with (
        arena_serve(url, **env) as (_server, base),
        arena_worker(url, tmp_path / "doomed.log", **env) as doomed,
        arena_worker(url, tmp_path / "survivor.log", **env),
        httpx.Client(
            base_url=base,
            timeout=60,
            limits=httpx.Limits(max_keepalive_connections=0),
            headers={"Arena-Protocol-Version": "1.5"},  # a game's round
        ) as http,
    ):
        token = http.post("/players", json={"name": "ada"}).json()["token"]
        auth = {"Authorization": f"Bearer {token}"}
        for name in ("one", "two"):
            assert http.post(
                "/hosted-bots", json={"name": name, "game": "tictactoe"}, headers=auth
            ).is_success
            version = http.post(
                f"/hosted-bots/ada/{name}/versions",
                data={"kind": "engine"},
                files=[("files", ("bot.py", RANDOM_ENGINE))],
                headers=auth,
            )
            assert version.json()["status"] == "ready", version.text
        bots = ["hosted:ada/one", "hosted:ada/two", "random", "greedy", "alphabeta:depth=1"]
        body = {"game": "tictactoe", "bots": bots, "seed": 4, "swiss": {"rounds": 3}}
        created = http.post("/tournaments", json=body, headers=auth)
        assert created.status_code == 201, created.text
        tournament_id, total = created.json()["tournament_id"], created.json()["games_total"]
        assert total == 12
        assert http.post(f"/tournaments/{tournament_id}/start", headers=auth).is_success
        wait_for(
            "a job under way, two games played",
            lambda: asyncio.run(doing_jobs(url)) >= 1 and _done(http, tournament_id) >= 2,
            every_s=0.05,
        )
        doomed.send_signal(signal.SIGKILL)
        state = wait_for(
            "the tournament's end",
            lambda: http.get(f"/tournaments/{tournament_id}").json(),
            lambda s: s["status"] != "running",
        )
        assert state["status"] == "finished", state
    assert sorted(g["index"] for g in state["games"]) == list(range(12))
    assert all(g["result"] is not None for g in state["games"])
    assert [g["round"] for g in sorted(state["games"], key=lambda g: g["index"])] == [
        r for r in (0, 1, 2) for _ in range(4)
    ]
    # One finished match per game: the killed worker's game stored nothing, and was played
    # again from its start by the other.
    assert asyncio.run(_matches(url)) == 12


def _done(http: httpx.Client, tournament_id: str) -> int:
    return int(http.get(f"/tournaments/{tournament_id}").json()["games_done"])


async def _matches(url: str) -> int:
    engine = create_engine(url)
    try:
        async with engine.connect() as connection:
            return int(await connection.scalar(select(func.count()).select_from(Match)) or 0)
    finally:
        await engine.dispose()
