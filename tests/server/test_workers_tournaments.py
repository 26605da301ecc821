"""Tournament games on workers: one game played in-process and stored once, the tournament
finished once; then (with PostgreSQL and Redis) `arena serve` and two `arena worker` processes."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from sqlalchemy import func, select

from protocol.messages import TournamentCreate
from server.db.engine import create_engine, migrate, session_factory
from server.db.models import Match, MatchEvent
from server.db.models import TournamentGame as GameRow
from server.matches import MatchService, new_match_id
from server.settings import Settings
from server.tournaments.planning import plan
from server.tournaments.played import PlayedGame, play_game
from server.tournaments.store import TournamentStore
from server.tournaments.tournament import HostedTournament
from tests.server.conftest import _reset_database
from tournament.runner import GameTask
from tournament.runner import play_game as play_locally

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
