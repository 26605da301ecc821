"""Group commit: one task writes every match change; changes waiting together share a commit.

Every accepted move must be committed before it is acknowledged. Committing each move in its
own transaction on its own connection makes concurrent matches queue for SQLite's single write
lock (and pay a commit each on PostgreSQL). `BatchWriter` instead writes from one task: the
writes that arrived while the previous commit ran are stored together, in one transaction with
one multi-row statement per table, and each caller's `write` returns once that transaction has
committed.

On SQLite the batch is written by a blocking pysqlite connection in the writer's own thread,
in one hand-off (server.db.engine.sqlite_writer_engine); aiosqlite would cost a thread round
trip per statement. Other databases are written through the async engine.

A failing batch is rolled back and its writes are retried one by one, each in its own
transaction, so one bad write fails only its own caller. A write is carried out even when its
caller is cancelled: the caller has already changed its in-memory state.

Fencing (several processes, server.cluster.leases): a write may name the `epoch` of the match's
owner it was made under. The batch's transaction first locks the rows of those matches
(`SELECT ... FOR UPDATE` on PostgreSQL) and reads their `owner_epoch`; a write whose epoch is
no longer the stored one (another process has claimed the match since) is left out of the
batch and its caller gets FencedError, while the rest of the batch is stored. The row lock
holds a concurrent claim back until the batch commits, so a claim never lands between the check
and the write. Writes without an epoch (a single process) are not checked and cost no query.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Dialect, Engine, bindparam, insert, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from server.db.engine import sqlite_writer_engine
from server.db.models import Match, MatchEvent, utcnow

log = logging.getLogger(__name__)

MAX_BATCH = 512
"""Writes committed together at most."""

MATCH_STATE_COLUMNS = (
    "seat0_player_id",
    "seat1_player_id",
    "seat0_challenged_id",
    "seat1_challenged_id",
    "seat0_bot",
    "seat1_bot",
    "status",
    "seq",
    "result_winner",
    "result_reason",
    "result_detail",
)
"""The columns of a match row that change during play; a `MatchWrite.state` sets all of them."""


class WriterClosedError(RuntimeError):
    """The writer was closed before the write could be stored."""


class FencedError(RuntimeError):
    """The write names an owner's epoch the match no longer has: it was not stored.

    Another process claimed the match after this one loaded it (server.cluster.leases); the
    in-memory copy the write came from is stale.
    """

    def __init__(self, match_id: str, epoch: int, stored: int | None) -> None:
        super().__init__(
            f"match {match_id} is at owner epoch {stored}, not {epoch}: another process owns it"
        )
        self.match_id = match_id
        self.epoch = epoch
        self.stored = stored


@dataclass(frozen=True)
class MatchWrite:
    """One change of one match: a new row (`new_match`) or its changed `state`, plus events.

    `new_match` maps every column of `matches` but the state, the owner and the time stamps
    to its value (the owner columns may be given; by default none, epoch 0); `state` maps every
    name of MATCH_STATE_COLUMNS to its new value; each of `events` maps the columns of a
    `match_events` row (without its id) to values. `epoch` (None: not fenced) is the owner epoch
    the change was made under: the change of an existing match is stored only while the match
    is still at that epoch (see the module).
    """

    match_id: str
    state: dict[str, Any]
    new_match: dict[str, Any] | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    epoch: int | None = None


_UPDATE = (
    update(Match)
    .where(Match.id == bindparam("b_id"))
    .values({name: bindparam(f"b_{name}") for name in (*MATCH_STATE_COLUMNS, "updated_at")})
)


class BatchWriter:
    """Stores `MatchWrite`s in batches from one task; `write` returns after its commit."""

    def __init__(
        self, engine: AsyncEngine, max_batch: int = MAX_BATCH, commit_delay: float = 0.0
    ) -> None:
        self._engine = engine
        self._commit_delay = commit_delay
        blocking = sqlite_writer_engine(engine)
        self._blocking = None if blocking is None else _SQLiteWriter(blocking)
        self._executor: ThreadPoolExecutor | None = None
        if self._blocking is not None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="arena-db-writer")
        self._max_batch = max_batch
        self._queue: asyncio.Queue[tuple[MatchWrite, asyncio.Future[None]] | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self.batches = 0
        """Transactions committed (for tests and statistics)."""
        self.writes = 0
        """Writes stored."""

    async def write(self, change: MatchWrite) -> None:
        """Store `change` in the next batch; return when it is committed, or raise its error."""
        if self._closed:
            raise WriterClosedError("the database writer is closed")
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="arena-db-writer")
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait((change, future))
        await future  # cancelling the caller does not withdraw the write

    async def close(self) -> None:
        """Store what is queued, then stop; later writes raise WriterClosedError."""
        self._closed = True
        if self._task is None or self._task.done():
            return
        self._queue.put_nowait(None)
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        if self._executor is not None and self._blocking is not None:
            await asyncio.get_running_loop().run_in_executor(self._executor, self._blocking.close)
            self._executor.shutdown(wait=True)

    async def _run(self) -> None:
        stopping = False
        while not stopping:
            first = await self._queue.get()
            if first is None:
                return
            if self._commit_delay:
                # Let the writes of the next moment join this commit (PostgreSQL's
                # commit_delay): a little latency for far fewer commits under load.
                await asyncio.sleep(self._commit_delay)
            batch = [first]
            while len(batch) < self._max_batch and not self._queue.empty():
                item = self._queue.get_nowait()
                if item is None:
                    stopping = True
                    break
                batch.append(item)
            changes = [change for change, _ in batch]
            try:
                fenced = await self._store(changes)
            except Exception as error:  # noqa: BLE001 -- handed to the callers, never lost
                if len(batch) == 1:
                    _settle(batch[0][1], error)
                    continue
                log.warning("a batch of %d writes failed (%s); retrying each", len(batch), error)
                for change, future in batch:
                    try:
                        alone = await self._store([change])
                    except Exception as single:  # noqa: BLE001 -- handed to its caller
                        _settle(future, single)
                    else:
                        _settle(future, alone.get(0))
                continue
            for index, (_, future) in enumerate(batch):
                _settle(future, fenced.get(index))

    async def _store(self, changes: list[MatchWrite]) -> dict[int, FencedError]:
        """Write `changes` in one transaction: new matches, then match updates, then events.

        Returns the changes left out by the fence (by index in `changes`), with their error.
        """
        now = utcnow()
        if self._blocking is not None:
            loop = asyncio.get_running_loop()
            fenced = await loop.run_in_executor(self._executor, self._blocking.store, changes, now)
        else:
            async with self._engine.begin() as connection:
                fenced = await connection.run_sync(_execute, changes, now)
        self.batches += 1
        self.writes += len(changes) - len(fenced)
        return fenced


Rows = list[dict[str, Any]]

_MATCH_INSERT = insert(Match)
_EVENT_INSERT = insert(MatchEvent)
EVENT_COLUMNS = (
    "match_id",
    "seq",
    "kind",
    "player",
    "move",
    "elapsed_ms",
    "at_ms",
    "created_at",
    "search",
)


NO_OWNER = {"owner_id": None, "owner_epoch": 0}
"""The owner columns of a new match that names none (a single process)."""


def _fenced_ids(changes: list[MatchWrite]) -> list[str]:
    """Return the ids of the existing matches whose changes are fenced (sorted: rows are
    locked in one order by every process, so two batches never deadlock)."""
    return sorted({c.match_id for c in changes if c.epoch is not None and c.new_match is None})


def _fence(
    changes: list[MatchWrite], epochs: dict[str, int]
) -> tuple[list[MatchWrite], dict[int, FencedError]]:
    """Split `changes` by the stored owner `epochs` of their matches: those to store, and the
    fenced-out ones (by index) with their error."""
    kept: list[MatchWrite] = []
    fenced: dict[int, FencedError] = {}
    for index, change in enumerate(changes):
        if change.epoch is None or change.new_match is not None:
            kept.append(change)
            continue
        stored = epochs.get(change.match_id)
        if stored == change.epoch:
            kept.append(change)
        else:
            fenced[index] = FencedError(change.match_id, change.epoch, stored)
    return kept, fenced


def _rows(changes: list[MatchWrite], now: datetime) -> tuple[Rows, Rows, Rows]:
    """Return the parameters of the new matches, the match updates and the events."""
    stamps = {"created_at": now, "updated_at": now}
    inserts = [
        NO_OWNER | stamps | change.new_match | change.state
        for change in changes
        if change.new_match
    ]
    updates = [
        {"b_id": c.match_id, "b_updated_at": now}
        | {f"b_{name}": c.state[name] for name in MATCH_STATE_COLUMNS}
        for c in changes
        if c.new_match is None
    ]
    # A move's `search` is optional: an event row without it stores none.
    events = [
        {"search": None} | event | {"created_at": now}
        for change in changes
        for event in change.events
    ]
    return inserts, updates, events


def _execute(
    connection: Connection, changes: list[MatchWrite], now: datetime
) -> dict[int, FencedError]:
    """Store `changes` on `connection` (in its transaction); return the fenced-out ones."""
    fenced: dict[int, FencedError] = {}
    ids = _fenced_ids(changes)
    if ids:
        locked = (
            select(Match.id, Match.owner_epoch)
            .where(Match.id.in_(ids))
            .order_by(Match.id)  # rows are locked in this order: two batches never deadlock
            .with_for_update()
        )
        epochs = {match_id: epoch for match_id, epoch in connection.execute(locked)}
        changes, fenced = _fence(changes, epochs)
    inserts, updates, events = _rows(changes, now)
    # New matches first: events refer to them.
    if inserts:
        connection.execute(_MATCH_INSERT, inserts)
    if updates:
        connection.execute(_UPDATE, updates)
    if events:
        connection.execute(_EVENT_INSERT, events)
    return fenced


class _Statement:
    """A statement compiled once for a dialect, run on a DBAPI cursor with converted rows.

    The SQL and the conversion of each value (datetimes, JSON) come from SQLAlchemy's
    compiler and column types, so nothing here restates the schema.
    """

    def __init__(self, statement: Any, dialect: Dialect, keys: tuple[str, ...]) -> None:
        compiled = statement.compile(dialect=dialect, column_keys=list(keys))
        self.sql: str = compiled.string
        order = compiled.positiontup
        if order is None:
            raise ValueError(f"the {dialect.name} dialect does not use positional parameters")
        self.keys = tuple(order)
        self.processors = [
            compiled.binds[key].type.dialect_impl(dialect).bind_processor(dialect)
            for key in self.keys
        ]

    def parameters(self, rows: Rows) -> list[tuple[Any, ...]]:
        """Return `rows` as DBAPI parameter tuples, in the compiled statement's order."""
        pairs = list(zip(self.keys, self.processors, strict=True))
        return [tuple(row[k] if p is None else p(row[k]) for k, p in pairs) for row in rows]


class _SQLiteWriter:
    """Writes batches on one blocking pysqlite connection, used only in the writer's thread."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        dialect = engine.dialect
        match_keys = tuple(column.key for column in Match.__table__.columns)
        update_keys = tuple(f"b_{name}" for name in (*MATCH_STATE_COLUMNS, "updated_at"))
        self.insert = _Statement(_MATCH_INSERT, dialect, match_keys)
        self.update = _Statement(_UPDATE, dialect, ("b_id", *update_keys))
        self.events = _Statement(_EVENT_INSERT, dialect, EVENT_COLUMNS)
        self._connection: Any = None

    def store(self, changes: list[MatchWrite], now: datetime) -> dict[int, FencedError]:
        """Write one batch in one transaction (rolled back, then raised, on any error); return
        the fenced-out changes."""
        if self._connection is None:
            self._connection = self.engine.raw_connection()
        connection = self._connection
        fenced: dict[int, FencedError] = {}
        try:
            cursor = connection.cursor()
            cursor.execute("BEGIN")
            ids = _fenced_ids(changes)
            if ids:
                marks = ", ".join("?" for _ in ids)
                # Only the placeholders are formatted into the text; the ids are parameters.
                cursor.execute(f"SELECT id, owner_epoch FROM matches WHERE id IN ({marks})", ids)
                changes, fenced = _fence(changes, dict(cursor.fetchall()))
            inserts, updates, events = _rows(changes, now)
            if inserts:
                cursor.executemany(self.insert.sql, self.insert.parameters(inserts))
            if updates:
                cursor.executemany(self.update.sql, self.update.parameters(updates))
            if events:
                cursor.executemany(self.events.sql, self.events.parameters(events))
            cursor.close()
            connection.commit()
        except BaseException:
            with contextlib.suppress(Exception):
                connection.rollback()
            raise
        return fenced

    def close(self) -> None:
        """Return the connection and dispose of the engine."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        self.engine.dispose()


def _settle(future: asyncio.Future[None], error: BaseException | None = None) -> None:
    if future.done():
        return
    if error is None:
        future.set_result(None)
    else:
        future.set_exception(error)
