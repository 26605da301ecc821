"""The Redis bus between server processes (server.cluster): its API against a real Redis, the
bridge's ordering, and two real `arena serve` processes sharing PostgreSQL and Redis.

Needs ARENA_TEST_REDIS_URL (and ARENA_TEST_DATABASE_URL for the processes); each test uses a
fresh key prefix (pub/sub channels are global to a Redis server). The tests that restart Redis
start their own `redis-server` on a free port.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from protocol.messages import DrawDeclined, DrawOffered, MatchState, SeatInfo, ServerMessage
from server.cluster.bridge import MatchBridge
from server.cluster.bus import Bus, BusUnavailable, MatchNotice, RemoteError
from server.hub import Hub
from server.publisher import Broadcast
from server.settings import Settings
from tests.server.conftest import free_port

REDIS_URL = os.environ.get("ARENA_TEST_REDIS_URL")
DATABASE_URL = os.environ.get("ARENA_TEST_DATABASE_URL")

needs_redis = pytest.mark.skipif(not REDIS_URL, reason="ARENA_TEST_REDIS_URL is not set")


def bus_settings(prefix: str, url: str | None = None) -> Settings:
    return Settings(
        redis_url=url or REDIS_URL,
        redis_key_prefix=prefix,
        bus_rpc_timeout_s=2.0,
        bus_reconnect_max_s=0.2,
    )


@contextlib.asynccontextmanager
async def buses(count: int, url: str | None = None) -> AsyncIterator[list[Bus]]:
    """Start `count` buses on one fresh prefix (as many processes would); close them after."""
    prefix = f"test-{uuid.uuid4().hex}"
    started = [Bus(bus_settings(prefix, url), process_id=f"p{i}") for i in range(count)]
    try:
        for bus in started:
            await bus.start()
            assert bus.connected
        yield started
    finally:
        for bus in started:
            await bus.close()


def offer(match_id: str, seq: int) -> Broadcast:
    return Broadcast(match_id, (1, 2), (DrawOffered(match_id=match_id, seq=seq, seat=seq % 2),))


async def until(predicate: Any, timeout_s: float = 10.0) -> None:
    """Wait until `predicate()` is true (a failure is the timeout, never a speed claim)."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.02)


# -- the bus ---------------------------------------------------------------------------------


@needs_redis
async def test_match_broadcasts_reach_the_other_processes_in_order_not_their_origin() -> None:
    async with buses(3) as (owner, second, third):
        got: dict[str, list[Broadcast | MatchNotice]] = {"p0": [], "p1": [], "p2": []}
        for bus in (owner, second, third):
            bus.on_match(lambda item, pid=bus.process_id: _append(got[pid], item))
        sent = [offer("m_1", seq) for seq in range(1, 101)]
        for broadcast in sent:
            await owner.publish_match(broadcast)
        await until(lambda: len(got["p1"]) == 100 and len(got["p2"]) == 100)
        assert got["p1"] == sent  # equal messages, players and match, in order
        assert got["p2"] == sent
        assert got["p0"] == []


async def _append(into: list[Any], item: Any) -> None:
    into.append(item)


@needs_redis
async def test_a_prefix_keeps_deployments_apart() -> None:
    async with buses(1) as (mine,), buses(1) as (theirs,):
        seen: list[Any] = []
        theirs.on_match(lambda item: _append(seen, item))
        theirs.subscribe("news", lambda payload: _append(seen, payload))
        await mine.publish_match(offer("m_1", 1))
        await mine.publish("news", {"n": 1})
        with pytest.raises(BusUnavailable, match="no process p9"):
            await mine.request("p9", {"x": 1})
        # A message that would have reached `theirs` would be there by the time a round trip on
        # the same Redis is done: ask `mine` itself something, then look.
        mine.serve(_echo)
        assert await mine.request(mine.process_id, {"x": 1}) == {"x": 1, "by": "p0"}
        assert seen == []


async def _echo(payload: dict[str, Any]) -> dict[str, Any]:
    return {**payload, "by": "p0"}


@needs_redis
async def test_a_request_is_answered_by_the_process_it_names() -> None:
    async with buses(3) as (asker, first, second):

        async def answer_as(name: str, payload: dict[str, Any]) -> dict[str, Any]:
            if payload.get("fail"):
                raise ValueError("refused on purpose")
            if payload.get("slow"):
                await asyncio.sleep(5)
            return {"by": name, "twice": payload["n"] * 2}

        first.serve(lambda payload: answer_as("first", payload))
        second.serve(lambda payload: answer_as("second", payload))
        answers = await asyncio.gather(
            *(asker.request("p1" if n % 2 else "p2", {"n": n}) for n in range(20))
        )
        assert answers == [
            {"by": "first" if n % 2 else "second", "twice": n * 2} for n in range(20)
        ]
        with pytest.raises(RemoteError, match="ValueError: refused on purpose"):
            await asker.request("p1", {"n": 1, "fail": True})
        with pytest.raises(BusUnavailable, match=r"did not answer within 0\.3 s"):
            await asker.request("p1", {"n": 1, "slow": True}, timeout_s=0.3)
        with pytest.raises(BusUnavailable, match="no process nobody listens"):
            await asker.request("nobody", {"n": 1})
        with pytest.raises(RemoteError, match="serves no requests"):
            await first.request("p0", {"n": 1})


@needs_redis
async def test_a_topic_reaches_every_subscriber_in_every_process_until_unsubscribed() -> None:
    async with buses(2) as (first, second):
        got: list[tuple[str, Any]] = []
        stop_first = first.subscribe("games", lambda p: _append(got, ("first", p["n"])))
        second.subscribe("games", lambda p: _append(got, ("second", p["n"])))
        second.subscribe("other", lambda p: _append(got, ("other", p["n"])))
        for n in range(3):
            await first.publish("games", {"n": n})
        await until(lambda: len(got) == 6)
        assert [n for who, n in got if who == "first"] == [0, 1, 2]
        assert [n for who, n in got if who == "second"] == [0, 1, 2]
        stop_first()
        await second.publish("games", {"n": 3})
        await second.publish("other", {"n": 4})
        await until(lambda: ("other", 4) in got)
        assert ("second", 3) in got
        assert ("first", 3) not in got


@contextlib.contextmanager
def own_redis() -> Iterator[tuple[str, Any]]:
    """Run a throw-away redis-server on a free port; yield its URL and a restart function."""
    exe = shutil.which("redis-server")
    if exe is None:
        pytest.skip("redis-server is not installed")
    port = free_port()
    process: list[subprocess.Popen[bytes]] = []

    def start() -> None:
        process.append(
            subprocess.Popen(
                [exe, "--port", str(port), "--save", "", "--appendonly", "no"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        deadline = time.monotonic() + 10
        while (
            subprocess.run(
                ["redis-cli", "-p", str(port), "ping"], capture_output=True, check=False
            ).stdout.strip()
            != b"PONG"
        ):
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)

    def stop() -> None:
        process[-1].kill()
        process[-1].wait(timeout=10)

    start()
    try:
        yield f"redis://127.0.0.1:{port}/0", (start, stop)
    finally:
        if process[-1].poll() is None:
            stop()


@needs_redis
async def test_a_redis_restart_is_survived_and_lost_broadcasts_are_announced() -> None:
    with own_redis() as (url, (start, stop)):
        async with buses(2, url) as (owner, follower):
            got: list[Broadcast | MatchNotice] = []
            reconnects: list[int] = []
            follower.on_match(lambda item: _append(got, item))
            follower.on_reconnect(lambda: _append(reconnects, 1))
            follower.serve(_echo)
            await owner.publish_match(offer("m_1", 1))
            await until(lambda: len(got) == 1)
            stop()
            await until(lambda: not owner.connected and not follower.connected)
            with pytest.raises(BusUnavailable):
                await owner.request("p1", {"x": 1})
            with pytest.raises(BusUnavailable):
                await owner.publish("news", {"x": 1})
            for seq in (2, 3, 4):
                await owner.publish_match(offer("m_1", seq))
            await owner.publish_match(offer("m_2", 7))
            await asyncio.sleep(0.5)  # let the sender find Redis away
            start()
            assert await owner.wait_connected(10)
            assert await follower.wait_connected(10)
            await until(lambda: reconnects == [1] and len(got) == 3)
            notices = sorted(got[1:], key=lambda item: item.match_id)
            assert notices == [MatchNotice("m_1", (1, 2), 4), MatchNotice("m_2", (1, 2), 7)]
            await owner.publish_match(offer("m_1", 5))
            await until(lambda: len(got) == 4)
            assert got[3] == offer("m_1", 5)
            assert await owner.request("p1", {"x": 2}) == {"x": 2, "by": "p0"}


# -- the bridge ------------------------------------------------------------------------------


class _Follower:
    """What the hub and the bridge use of a connection, recording what it is sent."""

    def __init__(self, player_id: int | None) -> None:
        self.player_id = player_id
        self.version = "1.2"
        self.sent: list[tuple[str, int]] = []

    def deliver(self, match_id: str, seq: int, text: str) -> None:
        self.sent.append(("event", seq))

    def sync(self, state: MatchState) -> None:
        self.sent.append((f"state:{state.your_seat}", state.seq))


class _Service:
    """What the bridge uses of the match service: the state, as read from the database, is
    at `seq`."""

    def __init__(self) -> None:
        self.seq = 0
        self.reads = 0
        self.release = asyncio.Event()
        self.release.set()
        self.store = self

    async def held_ids(self, player_id: int) -> list[str]:
        return ["m_1"]

    async def read(self, match_id: str, reader: Any) -> tuple[MatchState, tuple[int, int]]:
        self.reads += 1
        await self.release.wait()
        state = MatchState(
            match_id=match_id,
            game="nim",
            start_position="3 4",
            position="3 4",
            to_move=0,
            seats=(SeatInfo(seat=0, side="first"), SeatInfo(seat=1, side="second")),
            status="active",
            seq=self.seq,
        )
        return state, (1, 2)


def events(match_id: str, *seqs: int) -> Broadcast:
    messages: list[ServerMessage] = [
        DrawOffered(match_id=match_id, seq=s, seat=0)
        if s % 2
        else DrawDeclined(match_id=match_id, seq=s, seat=1)
        for s in seqs
    ]
    return Broadcast(match_id, (1, 2), tuple(messages))


def bridge_with(
    *followers: _Follower, spectators: tuple[_Follower, ...] = ()
) -> tuple[MatchBridge, _Service]:
    hub = Hub()
    for follower in followers:
        assert follower.player_id is not None
        hub.players[follower.player_id] = follower  # type: ignore[assignment]
    for spectator in spectators:
        hub.watch("m_1", spectator)  # type: ignore[arg-type]
    service = _Service()
    return MatchBridge(hub, service), service  # type: ignore[arg-type]


async def test_the_bridge_drops_duplicates_and_resyncs_a_gap_before_later_events() -> None:
    alice, bob, watcher = _Follower(1), _Follower(2), _Follower(None)
    bridge, service = bridge_with(alice, bob, spectators=(watcher,))
    await bridge.deliver(events("m_1", 1))
    await bridge.deliver(events("m_1", 2, 3))
    await bridge.deliver(events("m_1", 3))  # a duplicate
    assert watcher.sent == [("event", 1), ("event", 2), ("event", 3)]
    assert service.reads == 0
    # 4 and 5 are lost; 6 arrives, then 7 while the state is being read (at seq 6).
    service.seq = 6
    service.release.clear()
    await bridge.deliver(events("m_1", 6))
    await until(lambda: service.reads == 1)
    await bridge.deliver(events("m_1", 7))
    assert watcher.sent[3:] == []
    service.release.set()
    await until(lambda: len(watcher.sent) == 5)
    assert watcher.sent[3:] == [("state:None", 6), ("event", 7)]
    assert alice.sent[3:] == [("state:0", 6), ("event", 7)]
    assert bob.sent[3:] == [("state:1", 6), ("event", 7)]
    await bridge.deliver(events("m_1", 8))
    assert watcher.sent[-1] == ("event", 8)
    await bridge.close()


async def test_the_bridge_resyncs_on_a_notice_or_a_reconnect_only_what_is_followed_here() -> None:
    alice = _Follower(1)
    bridge, service = bridge_with(alice)
    # Followed by nobody here: a gap costs no read.
    await bridge.deliver(Broadcast("m_9", (7, 8), (DrawOffered(match_id="m_9", seq=1, seat=0),)))
    await bridge.deliver(Broadcast("m_9", (7, 8), (DrawOffered(match_id="m_9", seq=5, seat=0),)))
    await bridge.deliver(MatchNotice("m_9", (7, 8), 9))
    assert service.reads == 0
    await bridge.deliver(events("m_1", 1))
    await bridge.deliver(MatchNotice("m_1", (1, 2), 1))  # nothing newer: nothing to do
    assert service.reads == 0
    service.seq = 3
    await bridge.deliver(MatchNotice("m_1", (1, 2), 3))
    await until(lambda: len(alice.sent) == 2)
    assert alice.sent == [("event", 1), ("state:0", 3)]
    await bridge.deliver(events("m_1", 2, 3))  # late: the state showed them
    await bridge.deliver(events("m_1", 4))
    assert alice.sent[2:] == [("event", 4)]
    service.seq = 4
    await bridge.resync_all()
    assert alice.sent[3:] == [("state:0", 4)]
    await bridge.close()
