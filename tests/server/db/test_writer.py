"""The group-commit writer: batches, what it stores, failure isolation, close (SQLite, PG)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, text, update
from sqlalchemy.ext.asyncio import AsyncEngine

from server.db.engine import create_engine, migrate
from server.db.models import Base, Match, MatchEvent
from server.db.writer import (
    MATCH_STATE_COLUMNS,
    BatchWriter,
    FencedError,
    MatchWrite,
    WriterClosedError,
)

POSTGRES = os.environ.get("ARENA_TEST_DATABASE_URL")


@pytest.fixture(params=["sqlite", "postgresql"])
async def engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    if request.param == "postgresql":
        if not POSTGRES:
            pytest.skip("ARENA_TEST_DATABASE_URL is not set")
        url = POSTGRES
    else:
        url = f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}"
    engine = create_engine(url)
    async with engine.begin() as connection:
        await connection.run_sync(Base.metadata.drop_all)
        await connection.execute(text("DROP TABLE IF EXISTS alembic_version"))
    await migrate(engine)
    yield engine
    await engine.dispose()


def state(seq: int, status: str = "active", **changes: Any) -> dict[str, Any]:
    values: dict[str, Any] = dict.fromkeys(MATCH_STATE_COLUMNS)
    values.update(status=status, seq=seq, **changes)
    return values


def new_match(match_id: str) -> MatchWrite:
    row = {
        "id": match_id,
        "game": "checkers",
        "options": {"a": "b"},
        "start_position": None,
        "base_ms": 60_000,
        "increment_ms": 1_000,
        "move_cap_ms": None,
        "max_plies": None,
        "created_by": None,
    }
    event = {
        "match_id": match_id,
        "seq": 1,
        "kind": "start",
        "player": None,
        "move": None,
        "elapsed_ms": 0,
        "at_ms": 5,
    }
    return MatchWrite(match_id, state(1), row, [event])


def move(match_id: str, seq: int, text: str, **changes: Any) -> MatchWrite:
    event = {
        "match_id": match_id,
        "seq": seq,
        "kind": "move",
        "player": seq % 2,
        "move": text,
        "elapsed_ms": 7,
        "at_ms": 9,
    }
    return MatchWrite(match_id, state(seq, **changes), None, [event])


async def stored(engine: AsyncEngine, match_id: str) -> tuple[Any, list[tuple[int, str | None]]]:
    async with engine.connect() as connection:
        row = (await connection.execute(select(Match).where(Match.id == match_id))).one()
        events = (
            await connection.execute(
                select(MatchEvent.seq, MatchEvent.move)
                .where(MatchEvent.match_id == match_id)
                .order_by(MatchEvent.seq)
            )
        ).all()
    return row, [(seq, text) for seq, text in events]


async def test_writes_arriving_together_share_a_commit(engine: AsyncEngine) -> None:
    writer = BatchWriter(engine)
    await asyncio.gather(*(writer.write(new_match(f"m{i}")) for i in range(20)))
    assert writer.writes == 20
    assert writer.batches < 20  # the first write's commit let the others gather
    await asyncio.gather(*(writer.write(move(f"m{i}", 2, "11-15")) for i in range(20)))
    await writer.write(move("m3", 3, "23-19", status="finished", result_winner=1))
    await writer.close()
    row, events = await stored(engine, "m3")
    assert (row.status, row.seq, row.result_winner, row.options) == ("finished", 3, 1, {"a": "b"})
    assert (row.base_ms, row.increment_ms, row.move_cap_ms) == (60_000, 1_000, None)
    assert row.created_at is not None and row.updated_at >= row.created_at
    assert events == [(1, None), (2, "11-15"), (3, "23-19")]
    row, events = await stored(engine, "m7")
    assert (row.status, row.seq) == ("active", 2)
    assert events == [(1, None), (2, "11-15")]


async def test_a_failing_write_fails_alone(engine: AsyncEngine) -> None:
    writer = BatchWriter(engine, commit_delay=0.01)
    await writer.write(new_match("m1"))
    await writer.write(new_match("m2"))
    good = [writer.write(move("m1", 2, "9-13")), writer.write(move("m2", 2, "9-14"))]
    duplicate = writer.write(move("m1", 1, "10-14"))  # seq 1 is stored already
    results = await asyncio.gather(*good, duplicate, return_exceptions=True)
    assert results[:2] == [None, None]
    assert isinstance(results[2], Exception)
    await writer.close()
    assert (await stored(engine, "m1"))[1] == [(1, None), (2, "9-13")]
    assert (await stored(engine, "m2"))[1] == [(1, None), (2, "9-14")]


async def test_close_stores_what_is_queued_then_refuses(engine: AsyncEngine) -> None:
    writer = BatchWriter(engine, commit_delay=0.01)
    await writer.write(new_match("m1"))
    pending = asyncio.ensure_future(writer.write(move("m1", 2, "9-13")))
    await asyncio.sleep(0)  # queued, waiting for the commit delay
    await writer.close()
    await pending
    assert (await stored(engine, "m1"))[1] == [(1, None), (2, "9-13")]
    with pytest.raises(WriterClosedError):
        await writer.write(move("m1", 3, "22-18"))


async def test_a_cancelled_caller_does_not_withdraw_its_write(engine: AsyncEngine) -> None:
    writer = BatchWriter(engine, commit_delay=0.01)
    await writer.write(new_match("m1"))
    task = asyncio.ensure_future(writer.write(move("m1", 2, "9-13")))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await writer.close()
    assert (await stored(engine, "m1"))[1] == [(1, None), (2, "9-13")]


def fenced(write: MatchWrite, epoch: int) -> MatchWrite:
    """`write` made under owner epoch `epoch` (a new match: owned from epoch 1 on)."""
    if write.new_match is not None:
        row = write.new_match | {"owner_id": "p1", "owner_epoch": epoch}
        return MatchWrite(write.match_id, write.state, row, write.events, epoch)
    return MatchWrite(write.match_id, write.state, None, write.events, epoch)


async def test_a_stale_epoch_write_fails_only_its_own_caller(engine: AsyncEngine) -> None:
    writer = BatchWriter(engine, commit_delay=0.01)
    for match_id in ("m1", "m2", "m3"):
        await writer.write(fenced(new_match(match_id), 1))
    # Another process claims m2: its owner epoch moves on to 2.
    async with engine.begin() as connection:
        await connection.execute(
            update(Match).where(Match.id == "m2").values(owner_id="p2", owner_epoch=2)
        )
    writes = [
        writer.write(fenced(move("m1", 2, "9-13"), 1)),
        writer.write(fenced(move("m2", 2, "9-14"), 1)),  # the stale owner's
        writer.write(fenced(move("m3", 2, "10-14"), 1)),
        writer.write(move("m2", 2, "10-15")),  # not fenced (a single process): stored
    ]
    results = await asyncio.gather(*writes, return_exceptions=True)
    assert results[0] is None and results[2] is None and results[3] is None
    assert isinstance(results[1], FencedError)
    assert (results[1].match_id, results[1].epoch, results[1].stored) == ("m2", 1, 2)
    # The new owner's write, at its epoch, is stored.
    await writer.write(fenced(move("m2", 3, "22-18"), 2))
    await writer.close()
    assert writer.writes == 3 + 3 + 1
    assert (await stored(engine, "m1"))[1] == [(1, None), (2, "9-13")]
    row, events = await stored(engine, "m2")
    assert events == [(1, None), (2, "10-15"), (3, "22-18")]
    assert (row.owner_id, row.owner_epoch, row.seq) == ("p2", 2, 3)
    assert (await stored(engine, "m3"))[1] == [(1, None), (2, "10-14")]


async def test_a_fenced_write_in_a_failing_batch_is_still_fenced(engine: AsyncEngine) -> None:
    writer = BatchWriter(engine, commit_delay=0.01)
    await writer.write(fenced(new_match("m1"), 1))
    await writer.write(fenced(new_match("m2"), 1))
    async with engine.begin() as connection:
        await connection.execute(update(Match).where(Match.id == "m2").values(owner_epoch=2))
    results = await asyncio.gather(
        writer.write(fenced(move("m1", 2, "9-13"), 1)),
        writer.write(fenced(move("m1", 1, "10-14"), 1)),  # seq 1 is stored: fails the batch
        writer.write(fenced(move("m2", 2, "9-14"), 1)),
        return_exceptions=True,
    )
    await writer.close()
    assert results[0] is None
    assert isinstance(results[1], Exception) and not isinstance(results[1], FencedError)
    assert isinstance(results[2], FencedError)
    assert (await stored(engine, "m1"))[1] == [(1, None), (2, "9-13")]
    assert (await stored(engine, "m2"))[1] == [(1, None)]
