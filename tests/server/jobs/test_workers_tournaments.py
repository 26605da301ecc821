"""Tournament games on workers: one game played in-process and stored once, the tournament
finished once; then (with PostgreSQL and Redis) `arena serve` and two `arena worker` processes."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from sqlalchemy import func, select, text

from competition.runner import GameTask
from competition.runner import play_game as play_locally
from protocol.messages import ServerMessage, TournamentCreate, TournamentGame
from server.db.engine import create_engine, migrate, session_factory
from server.db.models import Match, MatchEvent
from server.db.models import TournamentGame as GameRow
from server.jobs import JobRuntime, build_queue, ensure_schema
from server.jobs.tournament_games import TASK, GamePlayer, defer_games
from server.matches.service import MatchService, new_match_id
from server.settings import Settings
from server.tournaments import TournamentService
from server.tournaments.notices import ended_notice, game_notice
from server.tournaments.planning import plan
from server.tournaments.played import PlayedGame, play_game
from server.tournaments.store import TournamentStore
from server.tournaments.tournament import HostedTournament
from tests.server.conftest import _reset_database, arena_serve
from tests.wsclient import connect

HELLO = {"type": "hello", "protocol_version": "1.0", "client": "test"}
TIMEOUT = 60.0
TICTACTOE = {
    "game": "tictactoe",
    "bots": ["alphabeta:depth=2", "alphabeta:depth=9", "greedy"],
    "games_per_pairing": 2,
    "seed": 7,
    "ply_cap": 9,
}


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh database: SQLite in the test's directory, PostgreSQL when
    ARENA_TEST_DATABASE_URL is set."""
    if request.param == "postgresql":
        url = os.environ.get("ARENA_TEST_DATABASE_URL")
        if not url:
            pytest.skip("ARENA_TEST_DATABASE_URL is not set")
        asyncio.run(_reset_database(url))
        return url
    return f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}"


class World:
    """A migrated database with a tournament store and a match service on it."""

    def __init__(self, url: str, tmp_path: Path) -> None:
        self.settings = Settings(database_url=url, grader_dir=tmp_path / "grader")
        self.engine = create_engine(url)
        self.sessions = session_factory(self.engine)
        self.store = TournamentStore(self.sessions)
        self.matches = MatchService(self.sessions, self.settings)

    async def tournament(self, **overrides: object) -> tuple[HostedTournament, list[GameTask]]:
        """Store a running tournament of TICTACTOE (with `overrides`); return it and its tasks."""
        body = TournamentCreate.model_validate(TICTACTOE | overrides)
        _spec, tasks = plan(body, self.settings)
        tournament = HostedTournament(
            id="t_" + uuid.uuid4().hex[:16],
            body=body,
            status="running",
            games_total=len(tasks),
            created_ms=0,
        )
        await self.store.add(tournament)
        return tournament, tasks

    def play(self, tournament: HostedTournament, task: GameTask) -> PlayedGame:
        return play_game(
            tournament.id, tournament.body, task, self.settings, match_id=new_match_id()
        )


@pytest_asyncio.fixture
async def world(database_url: str, tmp_path: Path) -> AsyncIterator[World]:
    made = World(database_url, tmp_path)
    await migrate(made.engine)
    try:
        yield made
    finally:
        await made.matches.close()
        await made.engine.dispose()


async def test_a_played_game_is_the_runner_s_game_stored_as_a_finished_match(
    world: World,
) -> None:
    tournament, tasks = await world.tournament()
    for task in tasks:
        played = world.play(tournament, task)
        recorded = await world.store.record_game(played)
        assert recorded.recorded and recorded.game == played.game
        # The same game as the local runner's (deterministic bots), the opening's moves aside.
        local = play_locally(task, tournament.body.ply_cap)
        assert played.game.result == local.result
        state = await world.matches.state(played.game.match_id)
        assert state.status == "finished"
        assert [seat.bot for seat in state.seats] == [task.first, task.second]
        assert state.result is not None and state.result.description == played.game.reason
        assert state.start_position == task.opening.position_text()
        record = await world.matches.read(played.game.match_id, lambda live: live.referee)
        assert tuple(m.move for m in record.move_log) == local.moves[len(task.opening.moves) :]
        assert record.result is not None and record.result.code == local.code
    loaded = await world.store.load(tournament.id)
    assert loaded is not None and loaded.status == "finished"
    assert [g.result for g in loaded.ordered_games()] == [
        play_locally(task, tournament.body.ply_cap).result for task in tasks
    ]


async def test_a_game_is_recorded_once_and_the_tournament_finished_once(world: World) -> None:
    tournament, tasks = await world.tournament(bots=["alphabeta:depth=2", "greedy"])
    assert len(tasks) == 2
    first, again = world.play(tournament, tasks[0]), world.play(tournament, tasks[0])
    recorded = await world.store.record_game(first)
    assert (recorded.recorded, recorded.finished, recorded.games_done) == (True, False, 1)
    # A re-run of the same game (a job retried) is not counted again: the first result stands.
    duplicate = await world.store.record_game(again)
    assert (duplicate.recorded, duplicate.finished, duplicate.games_done) == (False, False, 1)
    assert duplicate.game == first.game
    second = world.play(tournament, tasks[1])
    last = await world.store.record_game(second)
    assert (last.recorded, last.finished, last.games_done, last.status) == (
        True,
        True,
        2,
        "finished",
    )
    late = await world.store.record_game(world.play(tournament, tasks[1]))
    assert (late.recorded, late.finished, late.status) == (False, False, "finished")
    async with world.sessions() as session:
        games = (
            await session.scalars(select(GameRow).where(GameRow.tournament_id == tournament.id))
        ).all()
        assert sorted(g.game_index for g in games) == [0, 1]
        ids = [g.match_id for g in games]
        assert first.game.match_id in ids and again.game.match_id not in ids
        # Only the recorded games' matches are stored, with every event.
        matches = await session.scalar(select(func.count()).select_from(Match))
        assert matches == 2
        for played in (first, second):
            stored = await session.scalar(
                select(func.count())
                .select_from(MatchEvent)
                .where(MatchEvent.match_id == played.game.match_id)
            )
            assert stored == len(played.events) > 0


async def test_a_cancelled_tournament_records_no_more_games(world: World) -> None:
    tournament, tasks = await world.tournament(bots=["alphabeta:depth=2", "greedy"])
    tournament.status = "cancelled"
    await world.store.store_status(tournament)
    recorded = await world.store.record_game(world.play(tournament, tasks[0]))
    assert (recorded.recorded, recorded.finished, recorded.status) == (False, False, "cancelled")
    loaded = await world.store.load(tournament.id)
    assert loaded is not None and loaded.games == {}


async def test_concurrent_records_count_each_game_once_and_finish_once(world: World) -> None:
    tournament, tasks = await world.tournament()
    copies = [world.play(tournament, task) for task in tasks for _ in range(3)]
    results = await asyncio.gather(*(world.store.record_game(p) for p in copies))
    assert sorted(r.game.index for r in results if r.recorded and r.game) == [
        t.index for t in tasks
    ]
    assert sum(r.finished for r in results) == 1
    loaded = await world.store.load(tournament.id)
    assert loaded is not None and loaded.status == "finished"
    assert loaded.done == len(tasks)


class FakeQueue:
    """A game queue that only remembers what was deferred."""

    def __init__(self) -> None:
        self.deferred: list[tuple[str, list[int]]] = []

    async def defer(self, tournament_id: str, indexes: Sequence[int]) -> None:
        self.deferred.append((tournament_id, list(indexes)))


async def test_a_server_defers_the_games_and_tells_each_notice_once(world: World) -> None:
    queue = FakeQueue()
    service = TournamentService(world.sessions, world.matches, games=queue)
    await service.resume()
    try:
        owner = await world.matches.players.register("organiser", "0" * 64)
        state = await service.create(
            TournamentCreate.model_validate(TICTACTOE | {"bots": ["greedy", "random"]}), owner
        )
        tournament_id = state.tournament_id
        received: list[ServerMessage] = []
        await service.watch(tournament_id, received.append)
        started = await service.start(tournament_id, owner)
        assert started.status == "running" and started.games == ()
        assert queue.deferred == [(tournament_id, [0, 1])]
        assert world.matches.store.live_matches() == []  # nothing is played here
        _spec, tasks = plan(TournamentCreate.model_validate(started.spec.model_dump()))
        for task in tasks:
            played = play_game(
                tournament_id, started.spec, task, world.settings, match_id=new_match_id()
            )
            recorded = await world.store.record_game(played)
            assert recorded.game is not None
            # A notice may come twice (a job re-run): the watcher is told once.
            for _ in range(2):
                await service.on_notice(game_notice(tournament_id, recorded.game))
        assert recorded.finished
        for _ in range(2):
            await service.on_notice(ended_notice(tournament_id))
        kinds = [type(message).__name__ for message in received]
        assert kinds == [
            "TournamentState",
            "TournamentGameFinished",
            "TournamentGameFinished",
            "TournamentFinished",
        ]
        assert [m.games_done for m in received[1:3]] == [1, 2]  # type: ignore[attr-defined]
        final = await service.state(tournament_id)
        assert final.status == "finished" and final.games_done == 2
        assert await service.resume() == 0  # nothing running to resume
    finally:
        await service.close()


async def test_a_lost_notice_is_read_back_from_the_database(world: World) -> None:
    service = TournamentService(world.sessions, world.matches, games=FakeQueue())
    await service.resume()
    try:
        owner = await world.matches.players.register("organiser", "1" * 64)
        body = TournamentCreate.model_validate(TICTACTOE | {"bots": ["greedy", "random"]})
        tournament_id = (await service.create(body, owner)).tournament_id
        received: list[ServerMessage] = []
        await service.watch(tournament_id, received.append)
        await service.start(tournament_id, owner)
        _spec, tasks = plan(body)
        for task in tasks:
            played = play_game(tournament_id, body, task, world.settings, match_id=new_match_id())
            await world.store.record_game(played)
        # No notice at all: the end's notice alone (or the follower) reads every game back.
        await service.on_notice(ended_notice(tournament_id))
        assert [type(m).__name__ for m in received] == [
            "TournamentState",
            "TournamentGameFinished",
            "TournamentGameFinished",
            "TournamentFinished",
        ]
    finally:
        await service.close()


async def test_with_a_player_the_tournament_is_played_here_not_deferred(world: World) -> None:
    queue = FakeQueue()
    service = TournamentService(world.sessions, world.matches, games=queue)
    await service.resume()
    try:
        owner = await world.matches.players.register("organiser", "2" * 64)
        body = TournamentCreate.model_validate(
            TICTACTOE | {"bots": ["player:organiser", "random"], "concurrency": 1}
        )
        tournament_id = (await service.create(body, owner)).tournament_id
        await service.start(tournament_id, owner)
        assert queue.deferred == []
        # Its games are live matches of this process: the player is seated in the first.
        deadline = time.monotonic() + TIMEOUT
        while not await world.matches.store.held_ids(owner.id):
            assert time.monotonic() < deadline
            await asyncio.sleep(0.02)
        await service.cancel(tournament_id, owner)
    finally:
        await service.close()


async def test_a_tournament_played_here_tells_the_other_processes_too(world: World) -> None:
    notices: list[dict[str, Any]] = []

    async def notify(payload: dict[str, Any]) -> None:
        notices.append(payload)

    # No game queue (role all, or a tournament with players): the runner plays it here.
    service = TournamentService(world.sessions, world.matches, notify=notify)
    world.matches.listeners.append(service.on_broadcast)
    await service.resume()
    try:
        owner = await world.matches.players.register("organiser", "3" * 64)
        body = TournamentCreate.model_validate(TICTACTOE)
        tournament_id = (await service.create(body, owner)).tournament_id
        await service.start(tournament_id, owner)
        # The end is told after the status is stored and shown: wait for the notice itself.
        deadline = time.monotonic() + TIMEOUT
        while not any(n["kind"] == "ended" for n in notices):
            assert time.monotonic() < deadline
            await asyncio.sleep(0.02)
        assert (await service.state(tournament_id)).status == "finished"
        games = [n["game"]["index"] for n in notices if n["kind"] == "game"]
        assert sorted(games) == list(range(6))
        assert notices[-1] == ended_notice(tournament_id)
        assert sum(n["kind"] == "ended" for n in notices) == 1
    finally:
        await service.close()


async def test_a_worker_job_plays_records_and_tells(world: World) -> None:
    notices: list[dict[str, Any]] = []

    async def notify(payload: dict[str, Any]) -> None:
        notices.append(payload)

    runtime = JobRuntime(world.settings, world.engine, world.sessions, 1, 64000)
    player = GamePlayer(runtime, notify)
    tournament, _tasks = await world.tournament(bots=["alphabeta:depth=2", "greedy"])
    await player.play(tournament.id, 0)
    assert [n["kind"] for n in notices] == ["game"]
    first = notices[0]["game"]
    # A job run again (its first run's notice lost, say) tells the stored game again.
    await player.play(tournament.id, 0)
    assert notices[1:] == [game_notice(tournament.id, TournamentGame.model_validate(first))]
    await player.play(tournament.id, 1)
    assert [n["kind"] for n in notices[2:]] == ["game", "ended"]
    loaded = await world.store.load(tournament.id)
    assert loaded is not None and loaded.status == "finished" and loaded.done == 2
    # A job whose last try raised fails the tournament once.
    other, _ = await world.tournament(bots=["alphabeta:depth=2", "greedy"])
    notices.clear()
    for _ in range(2):
        await player.fail(other.id, 1, RuntimeError("the database is away"))
    assert notices == [ended_notice(other.id)]
    failed = await world.store.load(other.id)
    assert failed is not None and failed.status == "failed"
    assert failed.reason is not None and "RuntimeError: the database is away" in failed.reason
    await player.play(other.id, 0)  # not running: not played
    assert (await world.store.game(other.id, 0)) == ("failed", None)


async def test_a_worker_queues_again_the_games_without_a_job(world: World) -> None:
    if world.engine.dialect.name != "postgresql":
        pytest.skip("the job queue lives in PostgreSQL")
    await ensure_schema(world.settings)
    runtime = JobRuntime(world.settings, world.engine, world.sessions, 1, 64000)
    player = GamePlayer(runtime, None)
    tournament, tasks = await world.tournament(bots=["alphabeta:depth=2", "greedy"])
    await world.store.record_game(world.play(tournament, tasks[1]))
    with_player, _ = await world.tournament(bots=["player:someone", "greedy"])
    app = build_queue(world.settings)
    async with app.open_async():
        # Only the worker tournament's unplayed game: one with a player is played by a server.
        assert await player.requeue_orphans(app) == 1
        assert await player.requeue_orphans(app) == 0  # it has a job now
        jobs = await app.job_manager.list_jobs_async(task=TASK, status="todo")
        mine = [j.task_kwargs for j in jobs if j.task_kwargs["tournament_id"] == tournament.id]
        assert mine == [{"tournament_id": tournament.id, "game_index": 0}]
        assert not [j for j in jobs if j.task_kwargs["tournament_id"] == with_player.id]
        # Deferring it again (a server's start racing the check) queues nothing twice.
        assert await defer_games(app, tournament.id, [0]) == 0
        async with world.engine.begin() as connection:
            await connection.execute(
                text("DELETE FROM procrastinate_jobs WHERE task_name = :task"), {"task": TASK}
            )


# -- real processes: `arena serve` (role server) and two `arena worker`s ------------------------

REDIS_URL = os.environ.get("ARENA_TEST_REDIS_URL")
POSTGRES_URL = os.environ.get("ARENA_TEST_DATABASE_URL") or ""
CONNECT4 = {
    "game": "connect4",
    "bots": ["alphabeta:depth=6", "alphabeta:depth=5", "mcts:simulations=300", "greedy"],
    "games_per_pairing": 2,
    "seed": 3,
    "ply_cap": 42,
}
WORKER_ENV = {
    # A killed worker's job is queued again within stalled + heartbeat + poll seconds.
    "ARENA_WORKER_STALLED_S": "2",
    "ARENA_WORKER_HEARTBEAT_S": "0.5",
    "ARENA_WORKER_POLL_S": "0.5",
}


@contextmanager
def arena_worker(database_url: str, log: Path, **env: str) -> Iterator[subprocess.Popen[bytes]]:
    """Run `arena worker` (2 jobs at once), its log to `log`; kill it on the way out."""
    exe = shutil.which("arena", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the arena console script is not installed in this environment")
    with log.open("wb") as out:
        process = subprocess.Popen(
            [exe, "worker", "--database", database_url, "--concurrency", "2"],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, **env},
        )
        try:
            yield process
        finally:
            if process.poll() is None:
                process.kill()
            process.wait(timeout=10)


async def watch(url: str, received: list[dict[str, Any]], ready: asyncio.Event) -> None:
    """Collect a tournament socket's messages until `tournament_finished`."""
    async with connect(url) as ws:
        await ws.send(json.dumps(HELLO))
        while not received or received[-1]["type"] != "tournament_finished":
            received.append(json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT)))
            if received[-1]["type"] == "tournament_state":
                ready.set()


def check_watched(received: list[dict[str, Any]], total: int) -> dict[str, Any]:
    """Each game was told once, in games_done order, then the end once; return the end."""
    assert [m["type"] for m in received[:2]] == ["welcome", "tournament_state"]
    games = [m for m in received if m["type"] == "tournament_game_finished"]
    assert sorted(m["game"]["index"] for m in games) == list(range(total))
    assert [m["games_done"] for m in games] == list(range(1, total + 1))
    ends = [m for m in received if m["type"] == "tournament_finished"]
    assert len(ends) == 1 and received[-1] is ends[0] and ends[0]["games_done"] == total
    return ends[0]


async def doing_jobs(url: str) -> int:
    """Return how many procrastinate jobs are running now."""
    engine = create_engine(url)
    try:
        async with engine.connect() as connection:
            count = await connection.scalar(
                text("SELECT count(*) FROM procrastinate_jobs WHERE status = 'doing'")
            )
            return int(count or 0)
    finally:
        await engine.dispose()


@pytest.mark.parametrize("notices", ["bus", "database"])
def test_a_tournament_on_two_workers_survives_a_killed_worker(tmp_path: Path, notices: str) -> None:
    """Two role-server processes and two workers; a worker is SIGKILLed in the middle.

    `bus`: the watchers learn everything from the notices over Redis (the servers' own reads of
    the database are an hour apart). `database`: no Redis at all; the servers read the
    database every half second.
    """
    if not POSTGRES_URL.startswith("postgresql"):
        pytest.skip("ARENA_TEST_DATABASE_URL (PostgreSQL) is not set")
    env = {
        "ARENA_ROLE": "server",
        "ARENA_GRADER_DIR": str(tmp_path / "grader"),
        "ARENA_TOURNAMENT_FOLLOW_S": "0.5",
        **WORKER_ENV,
    }
    if notices == "bus":
        if not REDIS_URL:
            pytest.skip("ARENA_TEST_REDIS_URL is not set")
        env |= {
            "ARENA_REDIS_URL": REDIS_URL,
            "ARENA_REDIS_KEY_PREFIX": f"test-{uuid.uuid4().hex}",
            "ARENA_TOURNAMENT_FOLLOW_S": "3600",
        }
    asyncio.run(_reset_database(POSTGRES_URL))
    with (
        arena_serve(POSTGRES_URL, **env) as (_first, first_url),
        arena_serve(POSTGRES_URL, **env) as (_second, second_url),
        arena_worker(POSTGRES_URL, tmp_path / "doomed.log", **env) as doomed,
        arena_worker(POSTGRES_URL, tmp_path / "survivor.log", **env),
    ):
        asyncio.run(_play_and_kill(first_url, second_url, doomed))
        survivor_log = (tmp_path / "survivor.log").read_text()
    # The killed worker was playing: its game was queued again and played by the other.
    assert "arena.tournament_game) of a dead worker is queued again" in survivor_log


async def _play_and_kill(first_url: str, second_url: str, doomed: subprocess.Popen[bytes]) -> None:
    # A connection per request: the clients idle for longer than the servers keep an idle
    # connection (ARENA_HTTP_IDLE_TIMEOUT_S), and a request sent on one the server is closing at
    # that moment is lost with "Server disconnected" (HTTP's keep-alive race, not the servers').
    fresh = httpx.Limits(max_keepalive_connections=0)
    async with (
        httpx.AsyncClient(base_url=first_url, timeout=30, limits=fresh) as first,
        httpx.AsyncClient(base_url=second_url, timeout=30, limits=fresh) as second,
    ):
        token = (await first.post("/players", json={"name": "organiser"})).json()["token"]
        headers = {"Authorization": f"Bearer {token}"}
        created = await first.post("/tournaments", json=CONNECT4, headers=headers)
        assert created.status_code == 201, created.text
        tournament_id, total = created.json()["tournament_id"], created.json()["games_total"]
        assert total == 12
        # A watcher on each server process: the one that starts it and the other.
        watched: list[list[dict[str, Any]]] = [[], []]
        watchers = []
        for url, received in zip((first_url, second_url), watched, strict=True):
            ready = asyncio.Event()
            socket_url = url.replace("http", "ws", 1) + f"/ws/tournaments/{tournament_id}"
            watchers.append(asyncio.create_task(watch(socket_url, received, ready)))
            await asyncio.wait_for(ready.wait(), TIMEOUT)
        started = await first.post(f"/tournaments/{tournament_id}/start", headers=headers)
        assert started.status_code == 200, started.text
        # Kill a worker in the middle of its games (both workers busy).
        deadline = time.monotonic() + TIMEOUT
        while await doing_jobs(POSTGRES_URL) < 3:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        doomed.send_signal(signal.SIGKILL)
        await asyncio.wait_for(asyncio.gather(*watchers), 2 * TIMEOUT)
        ends = [check_watched(received, total) for received in watched]
        shown = []
        for http in (first, second):
            state = (await http.get(f"/tournaments/{tournament_id}")).json()
            shown.append({g["index"]: (g["match_id"], g["result"]) for g in state["games"]})
            assert state["status"] == "finished"
            assert state["games_done"] == total == len(state["games"])
            # The standings are the stored games' results.
            assert state["standings"]["points"] == ends[0]["standings"]["points"]
            points = dict.fromkeys(CONNECT4["bots"], 0.0)
            for game in state["games"]:
                points[game["first"]] += game["result"]
                points[game["second"]] += 1 - game["result"]
            assert {row["bot"]: row["points"] for row in state["standings"]["points"]} == points
            for game in state["games"]:
                match = (await http.get(f"/matches/{game['match_id']}")).json()
                assert match["status"] == "finished"
                assert [seat["bot"] for seat in match["seats"]] == [game["first"], game["second"]]
                assert game["reason"] == match["result"]["description"]
    # Each game counted once: one game row and one stored match per game, nothing more.
    engine = create_engine(POSTGRES_URL)
    try:
        async with engine.connect() as connection:
            rows = (
                await connection.execute(
                    select(GameRow.game_index, GameRow.match_id, GameRow.result).where(
                        GameRow.tournament_id == tournament_id
                    )
                )
            ).all()
            assert sorted(index for index, _, _ in rows) == list(range(total))
            stored = {index: (match_id, result) for index, match_id, result in rows}
            assert shown == [stored, stored]  # what both servers show is what is stored
            matches = await connection.scalar(select(func.count()).select_from(Match))
            assert matches == total
    finally:
        await engine.dispose()
