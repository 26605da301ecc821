"""Match ownership across server processes (server.cluster): fencing, the takeover of a dead
process's matches and their sharing, the clock rule, forwarding; and two real `arena serve`
processes, one of them killed with SIGKILL while it owns 20 live matches.

Needs ARENA_TEST_DATABASE_URL (PostgreSQL); the processes' test needs ARENA_TEST_REDIS_URL too,
with a fresh key prefix (pub/sub channels are global to a Redis server).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar, cast

import httpx
import pytest
from pydantic import BaseModel
from sqlalchemy import delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from protocol.errors import ErrorCode
from protocol.messages import MatchCreate, TimeControl
from server.auth import new_token
from server.cluster.bus import Bus
from server.cluster.forwarding import BusRemote, decode_error
from server.cluster.leases import Leases, share
from server.cluster.processes import Membership, ProcessTable
from server.cluster.routing import MatchRouter
from server.db.engine import create_engine, migrate, session_factory
from server.db.models import ArenaProcess, Match, MatchEvent, Player
from server.db.writer import BatchWriter
from server.errors import MatchError
from server.matches.commands import MatchCall, PlayMove
from server.matches.ownership import NotOwnerError
from server.matches.service import MatchService
from server.settings import Settings
from tests.server.conftest import _reset_database, arena_serve
from tests.wsclient import connect

DATABASE_URL = os.environ.get("ARENA_TEST_DATABASE_URL")
REDIS_URL = os.environ.get("ARENA_TEST_REDIS_URL")

needs_postgres = pytest.mark.skipif(not DATABASE_URL, reason="ARENA_TEST_DATABASE_URL is not set")
needs_cluster = pytest.mark.skipif(
    not (DATABASE_URL and REDIS_URL),
    reason="ARENA_TEST_DATABASE_URL and ARENA_TEST_REDIS_URL are needed",
)

TTL_MS = 2000
"""The lease of the killed test's processes (short: the test waits for it to expire)."""

T = TypeVar("T")

UNIT_TTL_MS = 60_000
"""The lease in the tests within one process: a row written at the start stays alive."""

LONG_AGO = timedelta(minutes=10)
"""How long ago a dead process's last heartbeat was."""


# -- forwarding, without a network ---------------------------------------------------------------


async def test_an_owner_runs_a_forwarded_call_once_however_often_it_is_sent() -> None:
    """A retried call (its answer lost, or late) gets the first answer; it is not run again."""
    runs: list[str] = []

    class Ply(BaseModel):
        ply: int

    async def serve(call: MatchCall[Any]) -> Any:
        assert isinstance(call, PlayMove) and call.counted
        runs.append(call.text)
        await asyncio.sleep(0.05)
        if call.text == "9":
            raise MatchError(ErrorCode.INVALID_MOVE, "no column 9", legal_moves=["1", "2"])
        return Ply(ply=len(runs))

    remote = BusRemote(cast(Bus, None), serve)

    def request(call_id: str, text: str = "4") -> dict[str, Any]:
        call = {
            "match_id": "m_1",
            "call_id": call_id,
            "player": {"id": 1, "name": "alice"},
            "text": text,
            "expected_seq": None,
            "search": None,
        }
        return {"kind": "match_call", "op": "move", "call": call}

    first, again = await asyncio.gather(remote.handle(request("c1")), remote.handle(request("c1")))
    later = await remote.handle(request("c1"))
    assert first == again == later == {"result": {"ply": 1}}
    assert await remote.handle(request("c2")) == {"result": {"ply": 2}}
    refused = await remote.handle(request("c3", "9"))
    assert await remote.handle(request("c3", "9")) == refused
    assert refused == {
        "error": {
            "code": "INVALID_MOVE",
            "message": "no column 9",
            "details": {},
            "legal_moves": ["1", "2"],
        }
    }
    assert runs == ["4", "4", "9"]  # each call id run once
    error = decode_error(refused["error"], "m_1")
    assert (error.code, error.legal_moves, error.match_id) == (
        ErrorCode.INVALID_MOVE,
        ("1", "2"),
        "m_1",
    )


# -- in one test process, on PostgreSQL --------------------------------------------------------


@contextlib.asynccontextmanager
async def database() -> AsyncIterator[tuple[AsyncEngine, async_sessionmaker[AsyncSession]]]:
    assert DATABASE_URL is not None
    await _reset_database(DATABASE_URL)
    engine = create_engine(DATABASE_URL)
    await migrate(engine)
    try:
        yield engine, session_factory(engine)
    finally:
        await engine.dispose()


async def add_process(
    sessions: async_sessionmaker[AsyncSession], process_id: str, heartbeat: datetime | None = None
) -> None:
    """Insert a process row; its heartbeat now (alive) unless `heartbeat` says when."""
    async with sessions() as session, session.begin():
        moment = heartbeat or datetime.now(UTC)
        await session.execute(
            insert(ArenaProcess).values(
                id=process_id,
                role="server",
                host="h",
                pid=1,
                started_at=moment,
                heartbeat_at=moment,
            )
        )


async def add_player(sessions: async_sessionmaker[AsyncSession], name: str) -> Player:
    async with sessions() as session, session.begin():
        player = Player(name=name, token_hash=new_token()[1])
        session.add(player)
    return player


def settings() -> Settings:
    assert DATABASE_URL is not None
    return Settings(database_url=DATABASE_URL, lease_ttl_ms=UNIT_TTL_MS, heartbeat_ms=500)


def service_of(
    engine: AsyncEngine,
    sessions: async_sessionmaker[AsyncSession],
    process_id: str | None,
    clock: Any = time.monotonic,
) -> MatchService:
    """Return a match service; with `process_id`, one process of a cluster: its calls routed
    by a `MatchRouter` (reach it with `router_of`)."""
    if process_id is None:
        return MatchService(sessions, settings(), clock=clock, writer=BatchWriter(engine))
    leases = Leases(sessions, process_id, UNIT_TTL_MS)
    service = MatchService(
        sessions, settings(), clock=clock, writer=BatchWriter(engine), ownership=leases
    )
    service.route = MatchRouter(service, leases, UNIT_TTL_MS)
    return service


def router_of(service: MatchService) -> MatchRouter:
    """Return the router of a clustered service built by `service_of`."""
    assert isinstance(service.route, MatchRouter)
    return service.route


class InProcessRemote:
    """Forwards calls straight to the routers of other "processes" (no bus)."""

    def __init__(self, services: dict[str, MatchService]) -> None:
        self.routers = {process_id: router_of(s) for process_id, s in services.items()}
        self.calls: list[tuple[str, str]] = []

    async def call(self, owner_id: str, call: MatchCall[T], call_id: str) -> T:
        self.calls.append((owner_id, type(call).__name__))
        return await self.routers[owner_id].serve(call)


@needs_postgres
async def test_a_stale_owner_is_fenced_and_the_call_goes_to_the_new_owner() -> None:
    async with database() as (engine, sessions):
        alice, bob = await add_player(sessions, "alice"), await add_player(sessions, "bob")
        for process_id in ("p1", "p2"):
            await add_process(sessions, process_id)
        first, second = service_of(engine, sessions, "p1"), service_of(engine, sessions, "p2")
        remote = InProcessRemote({"p1": first, "p2": second})
        router_of(first).remote = router_of(second).remote = remote
        try:
            body = {"game": "connect4", "seats": ["alice", "bob"]}
            created = await first.create_match(MatchCreate.model_validate(body), creator=alice)
            match_id = created.match_id
            await first.accept(match_id, bob)  # challenged: bob accepts
            await first.move(match_id, alice, "4", None)
            assert first.store.in_memory(match_id) is not None
            # p1 stalls; p2 takes the match over (as if p1's lease had expired).
            async with sessions() as session, session.begin():
                await session.execute(
                    update(ArenaProcess)
                    .where(ArenaProcess.id == "p1")
                    .values(heartbeat_at=datetime.now(UTC) - LONG_AGO)
                )
            assert await second.lifecycle.take_over(match_id)
            async with sessions() as session, session.begin():
                await session.execute(
                    update(ArenaProcess)
                    .where(ArenaProcess.id == "p1")
                    .values(heartbeat_at=datetime.now(UTC))
                )
            # p1 wakes up still holding its copy: bob's move there is fenced out, and the
            # call goes on to p2, which plays it once.
            made = await first.move(match_id, bob, "4", 2)
            assert (made.seq, made.ply, made.move) == (3, 2, "4")
            assert first.store.in_memory(match_id) is None
            assert remote.calls == [("p2", "PlayMove")]
            # A refusal at the owner reaches the caller with its code and legal moves.
            with pytest.raises(MatchError) as refused:
                await first.move(match_id, alice, "9", None)
            assert refused.value.code is ErrorCode.INVALID_MOVE
            assert "column 1-7" in refused.value.message
            assert refused.value.match_id == match_id
            state = await first.state(match_id, bob)
            assert state.moves == ("4", "4") and state.your_seat == 1
        finally:
            await first.close()
            await second.close()
        async with sessions() as session:
            row = await session.get(Match, match_id)
            assert row is not None and (row.owner_id, row.owner_epoch, row.seq) == ("p2", 2, 3)
            moves = (
                await session.scalars(
                    select(MatchEvent.move)
                    .where(MatchEvent.match_id == match_id, MatchEvent.kind == "move")
                    .order_by(MatchEvent.seq)
                )
            ).all()
            assert moves == ["4", "4"]


@needs_postgres
async def test_a_live_owner_keeps_its_match_and_a_read_elsewhere_is_a_copy() -> None:
    async with database() as (engine, sessions):
        alice = await add_player(sessions, "alice")
        for process_id in ("p1", "p2"):
            await add_process(sessions, process_id)
        first, second = service_of(engine, sessions, "p1"), service_of(engine, sessions, "p2")
        try:
            body = {"game": "connect4", "seats": ["alice", {"bot": "alphabeta:depth=1"}]}
            created = await first.create_match(MatchCreate.model_validate(body), creator=alice)
            with pytest.raises(NotOwnerError):
                await second.store.load(created.match_id)
            assert not await second.lifecycle.take_over(created.match_id)
            seats = await second.read(created.match_id, lambda live: live.players)
            assert seats == [alice.id, None]
            assert second.store.in_memory(created.match_id) is None
            async with sessions() as session:
                row = await session.get(Match, created.match_id)
                assert row is not None and (row.owner_id, row.owner_epoch) == ("p1", 1)
        finally:
            await first.close()
            await second.close()


@needs_postgres
async def test_takeover_shares_a_dead_process_matches_among_the_live_ones() -> None:
    async with database() as (_engine, sessions):
        long_ago = datetime.now(UTC) - LONG_AGO
        await add_process(sessions, "dead", heartbeat=long_ago)
        async with sessions() as session, session.begin():
            for n in range(30):
                owner = "dead" if n < 24 else None  # a few had no owner (from before)
                session.add(
                    Match(
                        id=f"m_{n:02d}",
                        game="connect4",
                        options={},
                        status="active",
                        seq=1,
                        owner_id=owner,
                    )
                )
            session.add(Match(id="m_over", game="connect4", options={}, status="finished"))
        taken: dict[str, list[str]] = {"p1": [], "p2": []}

        class Claimer:
            def __init__(self, leases: Leases) -> None:
                self.leases = leases

            async def take_over(self, match_id: str) -> bool:
                try:
                    claimed = await self.leases.claim(match_id)
                except NotOwnerError:
                    return False
                if claimed is None:
                    return False
                taken[self.leases.process_id].append(match_id)
                return True

            def owned_ids(self) -> list[str]:
                return taken[self.leases.process_id]

            def drop_all(self) -> int:
                return 0

        members = []
        for process_id in ("p1", "p2"):
            leases = Leases(sessions, process_id, UNIT_TTL_MS)
            table = ProcessTable(sessions, process_id, "server", UNIT_TTL_MS)
            members.append(
                Membership(
                    table, leases, Claimer(leases), lease_ttl_ms=UNIT_TTL_MS, heartbeat_ms=500
                )
            )
        for member in members:
            await member.table.register()
        # One round each: each takes its own share, nobody's twice.
        first_round = [await member.reap() for member in members]
        assert sorted(taken["p1"] + taken["p2"]) == [f"m_{n:02d}" for n in range(30)]
        assert first_round == [len(taken["p1"]), len(taken["p2"])]
        assert taken["p1"] and taken["p2"]
        ids = [f"m_{n:02d}" for n in range(30)]
        assert set(taken["p1"]) == set(share(ids, ["p1", "p2"], "p1"))
        assert [await member.reap() for member in members] == [0, 0]
        async with sessions() as session:
            rows = (
                await session.execute(select(Match.id, Match.owner_id, Match.owner_epoch))
            ).all()
        owners = {match_id: (owner, epoch) for match_id, owner, epoch in rows}
        assert owners["m_over"] == (None, 0)
        for match_id in ids:
            owner = "p1" if match_id in taken["p1"] else "p2"
            assert owners[match_id] == (owner, 1)


@needs_postgres
async def test_a_match_unclaimed_for_a_round_is_taken_by_anyone_alive() -> None:
    """A process that believes another is alive leaves that one's share; if it stays unclaimed
    for a whole round (that process is dead too), it is taken anyway: none is stranded."""
    async with database() as (_engine, sessions):
        long_ago = datetime.now(UTC) - LONG_AGO
        await add_process(sessions, "dead", heartbeat=long_ago)
        await add_process(sessions, "ghost")  # alive for now, but never reaps
        async with sessions() as session, session.begin():
            for n in range(12):
                session.add(
                    Match(
                        id=f"m_{n:02d}",
                        game="connect4",
                        options={},
                        status="active",
                        owner_id="dead",
                    )
                )
        leases = Leases(sessions, "p1", UNIT_TTL_MS)
        claimed: list[str] = []

        class Claimer:
            async def take_over(self, match_id: str) -> bool:
                if await leases.claim(match_id) is None:
                    return False
                claimed.append(match_id)
                return True

            def owned_ids(self) -> list[str]:
                return claimed

            def drop_all(self) -> int:
                return 0

        table = ProcessTable(sessions, "p1", "server", UNIT_TTL_MS)
        member = Membership(table, leases, Claimer(), lease_ttl_ms=UNIT_TTL_MS, heartbeat_ms=500)
        await table.register()
        first = await member.reap()
        assert 0 < first < 12  # its share beside "ghost"
        assert await member.reap() == 12 - first
        assert sorted(claimed) == [f"m_{n:02d}" for n in range(12)]


@needs_postgres
async def test_the_clock_rule_charges_the_mover_up_to_the_dead_owner_last_heartbeat() -> None:
    """Taken over from a dead owner, the side to move is charged until that owner's last
    heartbeat, not for the ownerless time after it; no owner (a restart) charges nothing."""
    frozen = 1000.0  # the referee's clock stands still: the clocks are exact
    async with database() as (engine, sessions):
        alice, bob = await add_player(sessions, "alice"), await add_player(sessions, "bob")
        last_event = datetime.now(UTC) - LONG_AGO
        heartbeat = last_event + timedelta(seconds=4)  # it died 4 s after the last move
        await add_process(sessions, "dead", heartbeat=heartbeat)
        await add_process(sessions, "p2")
        at_ms = int(last_event.timestamp() * 1000)
        async with sessions() as session, session.begin():
            for match_id, owner in (("m_dead", "dead"), ("m_none", None)):
                session.add(
                    Match(
                        id=match_id,
                        game="connect4",
                        options={},
                        base_ms=60_000,
                        increment_ms=0,
                        seat0_player_id=alice.id,
                        seat1_player_id=bob.id,
                        status="active",
                        seq=2,
                        owner_id=owner,
                        owner_epoch=3,
                    )
                )
                await session.flush()
                start = {"match_id": match_id, "player": None, "move": None}
                session.add(
                    MatchEvent(seq=1, kind="start", elapsed_ms=0, at_ms=at_ms - 1500, **start)
                )
                session.add(
                    MatchEvent(
                        match_id=match_id,
                        seq=2,
                        kind="move",
                        player=0,
                        move="4",
                        elapsed_ms=1500,
                        at_ms=at_ms,
                    )
                )
        service = service_of(engine, sessions, "p2", clock=lambda: frozen)
        plain = service_of(engine, sessions, None, clock=lambda: frozen)
        try:
            taken = await service.state("m_dead")
            restarted = await service.state("m_none")
            single = await plain.read("m_dead", lambda live: live.referee.clocks_at(1_000_000))
        finally:
            await service.close()
            await plain.close()
        assert taken.clocks is not None and restarted.clocks is not None
        # Seat 0 used 1.5 s on its move; seat 1, to move, is charged the 4 s until the death.
        assert taken.clocks.remaining_ms == (58_500, 56_000)
        assert restarted.clocks.remaining_ms == (58_500, 60_000)
        assert single == (58_500, 60_000)  # a single process's restart: today's rule
        async with sessions() as session:
            rows = (await session.execute(select(Match.id, Match.owner_epoch))).all()
        epochs = {match_id: epoch for match_id, epoch in rows}
        assert epochs == {"m_dead": 4, "m_none": 4}


@needs_postgres
async def test_a_process_that_cannot_renew_its_lease_drops_its_matches() -> None:
    async with database() as (_engine, sessions):
        dropped: list[int] = []

        class Holder:
            async def take_over(self, match_id: str) -> bool:
                return False

            def owned_ids(self) -> list[str]:
                return [] if dropped else ["m_1"]

            def drop_all(self) -> int:
                dropped.append(1)
                return 1

        # A lease far longer than the heartbeat: on a loaded machine a heartbeat may be late by
        # more than a short lease, and the process would drop its matches for that reason too.
        table = ProcessTable(sessions, "p1", "server", 30_000)
        member = Membership(
            table, Leases(sessions, "p1", 30_000), Holder(), lease_ttl_ms=30_000, heartbeat_ms=100
        )
        await member.start()
        try:
            await asyncio.sleep(0.3)
            assert dropped == []
            # Its row is deleted (taken for dead long ago): it drops everything, registers again.
            async with sessions() as session, session.begin():
                await session.execute(update(ArenaProcess).values(id="p1-forgotten"))
            for _ in range(50):
                if dropped:
                    break
                await asyncio.sleep(0.05)
            assert dropped == [1]
            async with sessions() as session:
                ids = set((await session.scalars(select(ArenaProcess.id))).all())
            assert ids == {"p1", "p1-forgotten"}
        finally:
            await member.close()
        async with sessions() as session:
            ids = set((await session.scalars(select(ArenaProcess.id))).all())
        assert ids == {"p1-forgotten"}  # a clean stop deletes its row


@needs_postgres
async def test_matches_dropped_with_the_lease_are_resumed_once_it_is_back() -> None:
    """A process taken for dead drops its matches; alive again, it resumes those nobody
    claimed meanwhile (its own, in the database): none is left unplayed."""
    async with database() as (engine, sessions):
        alice, bob = await add_player(sessions, "alice"), await add_player(sessions, "bob")
        service = service_of(engine, sessions, "p1")
        leases = Leases(sessions, "p1", UNIT_TTL_MS)
        table = ProcessTable(sessions, "p1", "server", 400)
        member = Membership(table, leases, service.lifecycle, lease_ttl_ms=400, heartbeat_ms=100)
        await member.start()
        try:
            body = {"game": "connect4", "seats": ["alice", "bob"]}
            created = await service.create_match(MatchCreate.model_validate(body), creator=alice)
            match_id = created.match_id
            await service.accept(match_id, bob)
            first_copy = service.store.in_memory(match_id)
            assert first_copy is not None and first_copy.epoch == 1
            async with sessions() as session, session.begin():
                await session.execute(delete(ArenaProcess))  # taken for dead, long ago
            for _ in range(100):
                again = service.store.in_memory(match_id)
                if again is not None and again is not first_copy:
                    break
                await asyncio.sleep(0.05)
            again = service.store.in_memory(match_id)
            assert again is not None and again is not first_copy and again.epoch == 2
            made = await service.move(match_id, alice, "4", None)
            assert made.ply == 1
        finally:
            await service.close()
            await member.close()


# -- two real processes, one killed --------------------------------------------------------------


@contextlib.contextmanager
def cluster_process(tmp_path: Path, name: str, prefix: str) -> Iterator[tuple[Any, str]]:
    assert DATABASE_URL is not None and REDIS_URL is not None
    env = {
        "ARENA_REDIS_URL": REDIS_URL,
        "ARENA_REDIS_KEY_PREFIX": prefix,
        "ARENA_LEASE_TTL_MS": str(TTL_MS),
        "ARENA_HEARTBEAT_MS": "500",
        "ARENA_RATE_LIMITS_ENABLED": "false",
        "ARENA_GRADER_DIR": str(tmp_path / f"grader-{name}"),
    }
    with arena_serve(DATABASE_URL, None, **env) as (process, base):
        yield process, base


class TestPlayer:
    """A player's WebSocket client: random legal moves after a short pause, reconnecting to
    the next server when its connection drops; every `move_made` of its own seat is an
    acknowledged move."""

    __test__ = False

    def __init__(self, token: str, urls: list[str], seed: int) -> None:
        self.token = token
        self.urls = urls
        self.rng = random.Random(seed)
        self.acknowledged: dict[str, dict[int, str]] = {}
        self.views: dict[str, dict[str, Any]] = {}
        self.ended: set[str] = set()
        self.connections: list[str] = []
        self.unavailable = 0
        self._socket: Any = None

    async def run(self, matches: int) -> None:
        attempt = 0
        while len(self.ended) < matches:
            url = self.urls[attempt % len(self.urls)]
            attempt += 1
            try:
                async with connect(
                    url + "/ws", additional_headers={"Authorization": f"Bearer {self.token}"}
                ) as socket:
                    self._socket = socket
                    self.connections.append(url)
                    await socket.send(json.dumps({"type": "hello", "protocol_version": "1.2"}))
                    async for raw in socket:
                        await self._handle(json.loads(raw))
                        if len(self.ended) >= matches:
                            return
            except (OSError, ConnectionClosed, InvalidHandshake):
                await asyncio.sleep(0.2)

    async def _handle(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        match_id: str = message.get("match_id") or ""
        if kind == "match_state":
            if message["status"] in ("finished", "aborted"):
                self.ended.add(match_id)
                return
            self.views[match_id] = {
                "seq": message["seq"],
                "to_move": message["to_move"],
                "legal": message["legal_moves"],
                "seat": message["your_seat"],
            }
            self._play(match_id)
        elif kind == "move_made":
            view = self.views.get(match_id)
            if view is None or message["seq"] <= view["seq"]:
                return
            if message["seat"] == view["seat"]:
                self.acknowledged.setdefault(match_id, {})[message["ply"]] = message["move"]
            view.update(
                seq=message["seq"], to_move=message["to_move"], legal=message["legal_moves"]
            )
            self._play(match_id)
        elif kind == "match_ended":
            self.ended.add(match_id)
        elif kind == "error":
            assert message["code"] in ("STALE_SEQ", "UNAVAILABLE", "NOT_YOUR_TURN", "MATCH_OVER"), (
                message
            )
            if message["code"] == "UNAVAILABLE" and match_id in self.views:
                self.unavailable += 1
                view = self.views[match_id]
                view["sent"] = None  # nothing was done: play the position again
                self._play(match_id, delay=message["details"].get("retry_after_ms", 200) / 1000)

    def _play(self, match_id: str, delay: float = 0.1) -> None:
        view = self.views[match_id]
        if view["to_move"] != view["seat"] or not view["legal"] or view.get("sent") == view["seq"]:
            return
        view["sent"] = view["seq"]
        asyncio.get_running_loop().create_task(self._send_later(match_id, view["seq"], delay))

    async def _send_later(self, match_id: str, seq: int, delay: float) -> None:
        await asyncio.sleep(delay)
        view = self.views[match_id]
        if view["seq"] != seq or match_id in self.ended:
            return
        move = self.rng.choice(view["legal"])
        with contextlib.suppress(ConnectionClosed, AttributeError):
            await self._socket.send(
                json.dumps(
                    {"type": "move", "match_id": match_id, "move": move, "expected_seq": seq}
                )
            )


class Spectator:
    """Watches one match on one server; checks the order of what it is sent as it comes."""

    def __init__(self, url: str, match_id: str) -> None:
        self.url = url
        self.match_id = match_id
        self.moves: list[str] = []
        self.last_seq = -1
        self.ended = 0
        self.states = 0
        self.problems: list[str] = []

    async def run(self) -> None:
        async with connect(f"{self.url}/ws/matches/{self.match_id}") as socket:
            await socket.send(json.dumps({"type": "hello", "protocol_version": "1.2"}))
            async for raw in socket:
                self._see(json.loads(raw))
                if self.ended:
                    return

    def _see(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        seq: int = message.get("seq", -1)
        if kind == "match_state":
            self.states += 1
            if seq < self.last_seq or list(message["moves"][: len(self.moves)]) != self.moves:
                self.problems.append(f"a state behind what was seen: {seq} after {self.last_seq}")
            self.moves = list(message["moves"])
            self.last_seq = seq
            if message["status"] in ("finished", "aborted"):
                self.ended += 1
        elif kind == "move_made":
            if seq <= self.last_seq:
                self.problems.append(f"move_made {seq} after {self.last_seq} (duplicate/reorder)")
            if message["ply"] != len(self.moves) + 1:
                self.problems.append(f"ply {message['ply']} after {len(self.moves)} moves (gap)")
            self.moves.append(message["move"])
            self.last_seq = seq
        elif kind == "match_ended":
            if seq < self.last_seq:
                self.problems.append(f"match_ended {seq} after {self.last_seq}")
            self.ended += 1


@needs_cluster
@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGTERM], ids=["kill", "term"])
def test_a_killed_process_matches_are_taken_over_and_finished(
    tmp_path: Path, stop: signal.Signals
) -> None:
    """SIGKILL: the matches wait for the lease to expire; SIGTERM: the process stores what
    it has, releases its matches and the other takes them at its next reaper round."""
    assert DATABASE_URL is not None
    asyncio.run(_reset_database(DATABASE_URL))
    prefix = f"test-{uuid.uuid4().hex}"
    with (
        cluster_process(tmp_path, "a", prefix) as (first, first_url),
        cluster_process(tmp_path, "b", prefix) as (second, second_url),
    ):
        match_ids = asyncio.run(_play_and_stop(first, first_url, second_url, stop))
        asyncio.run(_check_owners(match_ids, first.pid, second.pid, stop))


async def _check_owners(match_ids: list[str], first: int, second: int, stop: int) -> None:
    """Every match was taken over by the second process; the first's row is gone after a
    clean stop, kept (dead) after a kill."""
    assert DATABASE_URL is not None
    engine = create_engine(DATABASE_URL)
    try:
        async with engine.connect() as connection:
            rows = (await connection.execute(select(ArenaProcess.id, ArenaProcess.pid))).all()
            owners = (
                await connection.execute(
                    select(Match.owner_id, Match.owner_epoch).where(Match.id.in_(match_ids))
                )
            ).all()
    finally:
        await engine.dispose()
    pids = {process_id: pid for process_id, pid in rows}
    assert (first in pids.values()) == (stop == signal.SIGKILL)
    assert {pids.get(owner or "") for owner, _ in owners} == {second}
    assert all(epoch >= 2 for _, epoch in owners)


async def _play_and_stop(
    first: Any, first_url: str, second_url: str, stop: signal.Signals
) -> list[str]:
    async with httpx.AsyncClient(timeout=30) as http:
        tokens = {}
        for name in ("alice", "bob"):
            registered = await http.post(f"{first_url}/players", json={"name": name})
            tokens[name] = registered.json()["token"]
        auth = {name: {"Authorization": f"Bearer {token}"} for name, token in tokens.items()}
        body = {
            "game": "connect4",
            "seats": ["alice", "bob"],
            "time_control": TimeControl(base_ms=300_000, increment_ms=0).model_dump(),
        }
        match_ids = []
        for n in range(20):
            created = await http.post(f"{first_url}/matches", json=body, headers=auth["alice"])
            assert created.status_code == 201, created.text
            match_ids.append(created.json()["match_id"])
            # bob accepts half of them through the other process (forwarded to the owner)
            where = second_url if n % 2 else first_url
            accepted = await http.post(
                f"{where}/matches/{match_ids[-1]}/accept", headers=auth["bob"]
            )
            assert accepted.status_code == 200, accepted.text

        spectators = [Spectator(second_url.replace("http", "ws"), m) for m in match_ids]
        watching = [asyncio.create_task(s.run()) for s in spectators]
        await asyncio.sleep(0.5)  # the spectators are in before the first move
        ws = {url: url.replace("http", "ws") for url in (first_url, second_url)}
        alice = TestPlayer(tokens["alice"], [ws[first_url], ws[second_url]], seed=1)
        bob = TestPlayer(tokens["bob"], [ws[second_url], ws[first_url]], seed=2)
        playing = [asyncio.create_task(p.run(len(match_ids))) for p in (alice, bob)]

        def plies(match_id: str) -> int:
            return len(alice.acknowledged.get(match_id, {})) + len(
                bob.acknowledged.get(match_id, {})
            )

        deadline = time.monotonic() + 30
        while not all(plies(m) >= 4 for m in match_ids):
            assert time.monotonic() < deadline, "the matches did not get going"
            assert not any(task.done() for task in playing), [t.exception() for t in playing]
            await asyncio.sleep(0.05)
        unfinished_at_kill = sum(1 for m in match_ids if m not in alice.ended)
        os.kill(first.pid, stop)
        first.wait(timeout=20)

        await asyncio.wait_for(asyncio.gather(*playing), timeout=45)
        await asyncio.wait_for(asyncio.gather(*watching), timeout=15)

        finals = {}
        for match_id in match_ids:
            response = await http.get(f"{second_url}/matches/{match_id}")
            assert response.status_code == 200, response.text
            finals[match_id] = response.json()

    assert unfinished_at_kill >= 10  # killed mid-game: the takeover had matches to finish
    assert alice.connections[0] == ws[first_url] and ws[second_url] in alice.connections[1:]
    for match_id, final in finals.items():
        assert final["status"] == "finished", final
        for player in (alice, bob):
            for ply, move in player.acknowledged.get(match_id, {}).items():
                assert final["moves"][ply - 1] == move, (match_id, ply)
    for spectator in spectators:
        assert spectator.problems == []
        assert spectator.moves == finals[spectator.match_id]["moves"]
        assert spectator.ended == 1
    return match_ids


async def test_a_slow_heartbeat_is_waited_for_never_cut_off() -> None:
    """A renewal slower than the heartbeat's period goes on (cutting a query off in the middle
    of its transaction can leave the process's row locked in the database, and every later
    write to it waiting); the next beats wait for it instead of starting another, and once it
    answers, the process counts as renewed again. No database: the table is a stand-in."""
    answer = asyncio.Event()
    calls: list[str] = []

    class SlowTable:
        process_id = "p1"

        async def renew(self) -> bool:
            calls.append("start")
            try:
                await answer.wait()
            except asyncio.CancelledError:
                calls.append("cut off")
                raise
            calls.append("done")
            return True

    class Holder:
        def owned_ids(self) -> list[str]:
            return []

        def drop_all(self) -> int:
            return 0

    member = Membership(
        cast(ProcessTable, SlowTable()),
        cast(Leases, None),
        cast(Any, Holder()),
        lease_ttl_ms=60_000,
        heartbeat_ms=20,
    )
    beat = asyncio.create_task(member._beat_forever())
    try:
        for _ in range(100):  # many periods go by while the renewal hangs
            await asyncio.sleep(0.01)
        assert calls == ["start"], calls
        assert member._failing
        answer.set()
        for _ in range(3000):
            if not member._failing:
                break
            await asyncio.sleep(0.01)
        assert not member._failing, "the renewal's answer was not taken"
        assert "cut off" not in calls and calls[:2] == ["start", "done"], calls
    finally:
        beat.cancel()
        await asyncio.gather(beat, return_exceptions=True)
