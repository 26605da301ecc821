"""The schema, its migration, and storing a match as its events (SQLite; PostgreSQL if set)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from server.auth import new_token
from server.db.engine import alembic_config, create_engine, migrate, session_factory
from server.db.models import Base, Match, MatchEvent, Player, is_arena_schema
from server.matches.translation import stored_result
from server.ratings import RatingService

POSTGRES = os.environ.get("ARENA_TEST_DATABASE_URL")


def database_urls(tmp_path: Path) -> list[str]:
    urls = [f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}"]
    if POSTGRES:
        urls.append(POSTGRES)
    return urls


@pytest.fixture(params=["sqlite", "postgresql"])
async def engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    if request.param == "postgresql":
        if not POSTGRES:
            pytest.skip("ARENA_TEST_DATABASE_URL is not set")
        url = POSTGRES
    else:
        url = f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}"
    engine = create_engine(url)
    await _drop_everything(engine)
    await migrate(engine)
    yield engine
    await _drop_everything(engine)
    await engine.dispose()


async def _drop_everything(engine: AsyncEngine) -> None:
    async with engine.begin() as connection:
        await connection.run_sync(Base.metadata.drop_all)
        await connection.execute(text("DROP TABLE IF EXISTS alembic_version"))


async def test_the_migration_matches_the_models(engine: AsyncEngine) -> None:
    if engine.dialect.name == "postgresql":
        # A cluster's job queue (server.jobs) keeps its own tables in the same database.
        from server.jobs.queue import ensure_schema
        from server.settings import Settings

        await ensure_schema(Settings(database_url=POSTGRES or ""))

    def differences(connection: object) -> list[object]:
        # The job queue's tables (procrastinate's own, server.jobs) may share the database.
        context = MigrationContext.configure(
            connection,  # type: ignore[arg-type]
            opts={"include_name": is_arena_schema},
        )
        return list(compare_metadata(context, Base.metadata))

    async with engine.connect() as connection:
        diff = await connection.run_sync(differences)
    assert diff == []


async def test_migrating_twice_is_harmless(engine: AsyncEngine) -> None:
    await migrate(engine)
    async with engine.connect() as connection:
        version = (
            await connection.execute(text("SELECT version_num FROM alembic_version"))
        ).scalar()
    # The newest migration, as the scripts name it (a new migration must not need this edited).
    from alembic.script import ScriptDirectory

    assert version == ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert version is not None and int(version) >= 4


async def test_processes_migrating_an_empty_database_at_once_take_turns(
    engine: AsyncEngine,
) -> None:
    """Cluster processes starting together on an empty database all start (server.db.engine)."""
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite is one process")
    await _drop_everything(engine)
    others = [create_engine(POSTGRES or "") for _ in range(3)]
    try:
        await asyncio.gather(*(migrate(other) for other in others))
    finally:
        for other in others:
            await other.dispose()
    async with engine.connect() as connection:
        versions = (await connection.execute(text("SELECT version_num FROM alembic_version"))).all()
    from alembic.script import ScriptDirectory

    assert [v for (v,) in versions] == [
        ScriptDirectory.from_config(alembic_config()).get_current_head()
    ]


async def test_a_match_is_stored_as_its_events(engine: AsyncEngine) -> None:
    sessions = session_factory(engine)
    _token, token_hash = new_token()
    async with sessions() as session:
        player = Player(name="alice", token_hash=token_hash)
        session.add(player)
        await session.flush()
        match = Match(
            id="m1",
            game="checkers",
            options={},
            base_ms=60_000,
            increment_ms=1_000,
            seat0_player_id=player.id,
            seat1_bot="alphabeta:depth=4",
            status="active",
            seq=0,
        )
        session.add(match)
        for seq, (player_index, move) in enumerate([(0, "11-15"), (1, "23-19"), (0, "8-11")], 1):
            session.add(
                MatchEvent(
                    match_id="m1",
                    seq=seq,
                    kind="move",
                    player=player_index,
                    move=move,
                    elapsed_ms=100 * seq,
                    at_ms=1000 * seq,
                )
            )
        await session.commit()
    async with sessions() as session:
        stored = (await session.execute(select(Match).where(Match.id == "m1"))).scalar_one()
        events = (
            (
                await session.execute(
                    select(MatchEvent).where(MatchEvent.match_id == "m1").order_by(MatchEvent.seq)
                )
            )
            .scalars()
            .all()
        )
        assert stored.seat1_bot == "alphabeta:depth=4"
        assert [e.move for e in events] == ["11-15", "23-19", "8-11"]
        assert [e.seq for e in events] == [1, 2, 3]


async def test_an_event_sequence_number_is_stored_once(engine: AsyncEngine) -> None:
    sessions = session_factory(engine)
    async with sessions() as session:
        session.add(Match(id="m2", game="nim", options={}, status="active", seq=0, increment_ms=0))
        session.add(MatchEvent(match_id="m2", seq=1, kind="move", player=0, move="1:1", at_ms=1))
        await session.commit()
    async with sessions() as session:
        session.add(MatchEvent(match_id="m2", seq=1, kind="move", player=1, move="2:1", at_ms=2))
        with pytest.raises(IntegrityError):
            await session.commit()


async def test_player_names_and_tokens_are_unique(engine: AsyncEngine) -> None:
    sessions = session_factory(engine)
    async with sessions() as session:
        session.add(Player(name="bob", token_hash=new_token()[1]))
        await session.commit()
    async with sessions() as session:
        session.add(Player(name="bob", token_hash=new_token()[1]))
        with pytest.raises(IntegrityError):
            await session.commit()


async def test_a_match_from_before_0006_keeps_its_broad_reason_and_has_no_cap(
    engine: AsyncEngine,
) -> None:
    await _drop_everything(engine)
    await migrate(engine, "0005")
    async with engine.begin() as connection:
        await connection.execute(
            text(
                "INSERT INTO matches (id, game, options, increment_ms, status, result_winner, "
                "result_reason, result_detail, seq, created_at, updated_at) VALUES ('m_old', "
                "'tictactoe', '{}', 0, 'finished', 0, 'rules', 'three in a row', 6, "
                "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
            )
        )
    await migrate(engine)
    async with session_factory(engine)() as session:
        row = (await session.execute(select(Match).where(Match.id == "m_old"))).scalar_one()
    assert (row.max_plies, row.result_reason, row.result_detail) == (
        None,
        "rules",
        "three in a row",
    )
    shown = stored_result(row.result_winner, row.result_reason, row.result_detail)
    assert (shown.winner, shown.reason, shown.code) == (0, "rules", None)
    assert shown.description == "three in a row"


async def test_a_match_finished_before_0007_is_rated_at_the_next_start(
    engine: AsyncEngine,
) -> None:
    await _drop_everything(engine)
    await migrate(engine, "0006")
    async with engine.begin() as connection:
        await connection.execute(
            text(
                "INSERT INTO players (id, name, token_hash, created_at) VALUES "
                "(1, 'ada', 'h1', CURRENT_TIMESTAMP), (2, 'bob', 'h2', CURRENT_TIMESTAMP)"
            )
        )
        await connection.execute(
            text(
                "INSERT INTO matches (id, game, options, increment_ms, status, seat0_player_id, "
                "seat1_player_id, result_winner, result_reason, result_detail, seq, created_at, "
                "updated_at) VALUES ('m_old', 'tictactoe', '{}', 0, 'finished', 1, 2, 1, "
                "'resign', 'resigned', 3, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
            )
        )
    await migrate(engine)
    ratings = RatingService(session_factory(engine))
    assert await ratings.resume() == 1
    assert await ratings.resume() == 0
    board = await ratings.leaderboard("tictactoe")
    assert [(r.player, r.games) for r in board.ratings] == [("bob", 1), ("ada", 1)]
    assert board.ratings[0].rating == pytest.approx(1662.31, abs=0.01)


async def test_move_events_from_before_0008_have_no_search_and_new_ones_keep_theirs(
    engine: AsyncEngine,
) -> None:
    await _drop_everything(engine)
    await migrate(engine, "0007")
    async with engine.begin() as connection:
        await connection.execute(
            text(
                "INSERT INTO matches (id, game, options, increment_ms, status, seq, created_at, "
                "updated_at) VALUES ('m_old', 'tictactoe', '{}', 0, 'active', 2, "
                "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
            )
        )
        await connection.execute(
            text(
                "INSERT INTO match_events (match_id, seq, kind, player, move, elapsed_ms, at_ms, "
                "created_at) VALUES ('m_old', 2, 'move', 0, '4', 10, 0, CURRENT_TIMESTAMP)"
            )
        )
    await migrate(engine)
    search = {"depth": 9, "nodes": 549, "score": -0.5, "pv": ["0", "4"]}
    async with session_factory(engine)() as session:
        session.add(
            MatchEvent(
                match_id="m_old", seq=3, kind="move", player=1, move="0", at_ms=1, search=search
            )
        )
        await session.commit()
    async with session_factory(engine)() as session:
        events = (await session.scalars(select(MatchEvent).order_by(MatchEvent.seq))).all()
    assert [(e.seq, e.search) for e in events] == [(2, None), (3, search)]
    async with engine.connect() as connection:
        stored = (await connection.execute(text("SELECT search FROM match_events"))).all()
    assert sorted(row[0] is None for row in stored) == [False, True]  # SQL NULL, not 'null'
