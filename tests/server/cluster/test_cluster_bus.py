"""The Redis bus between server processes (server.cluster): its API against a real Redis, the
bridge's ordering, and two real `arena serve` processes sharing PostgreSQL and Redis.

Needs ARENA_TEST_REDIS_URL (and ARENA_TEST_DATABASE_URL for the processes); each test uses a
fresh key prefix (pub/sub channels are global to a Redis server). The tests that restart Redis
start their own `redis-server` on a free port.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from protocol.messages import DrawDeclined, DrawOffered, MatchState, SeatInfo, ServerMessage
from server.cluster.bridge import MatchBridge
from server.cluster.bus import Bus
from server.cluster.envelopes import BusUnavailable, MatchNotice, RemoteError
from server.hub import Hub
from server.matches.publisher import Broadcast
from server.settings import Settings
from tests.ports import free_port

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
async def test_beyond_the_queue_bound_a_broadcast_is_announced_by_a_notice_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from server.cluster import sender as sender_module

    monkeypatch.setattr(sender_module, "MAX_QUEUED", 10)
    async with buses(2) as (owner, follower):
        got: list[Broadcast | MatchNotice] = []
        follower.on_match(lambda item: _append(got, item))
        for seq in range(1, 16):  # the sender does not run in between: nothing awaits
            await owner.publish_match(offer("m_1", seq))
        await until(lambda: len(got) == 11)
        assert got == [MatchNotice("m_1", (1, 2), 15)] + [offer("m_1", s) for s in range(1, 11)]


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


class _CutLink:
    """The owner's publishing client with its link to Redis cut while `cut` is set: publish and
    ping fail as on a lost connection, while every other process stays connected."""

    def __init__(self, redis: Any) -> None:
        self._redis = redis
        self.cut = True

    async def publish(self, channel: str, text: str) -> int:
        if self.cut:
            raise RedisConnectionError("the link is cut")
        receivers: int = await self._redis.publish(channel, text)
        return receivers

    async def ping(self) -> bool:
        if self.cut:
            raise RedisConnectionError("the link is cut")
        answer: bool = await self._redis.ping()
        return answer


@needs_redis
async def test_broadcasts_the_owner_could_not_publish_are_announced_once_it_can(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with buses(2) as (owner, follower):
        got: list[Broadcast | MatchNotice] = []
        follower.on_match(lambda item: _append(got, item))
        await owner.publish_match(offer("m_1", 1))
        await until(lambda: len(got) == 1)
        link = _CutLink(owner._sender._redis)
        monkeypatch.setattr(owner._sender, "_redis", link)
        for seq in (2, 3, 4):
            await owner.publish_match(offer("m_1", seq))
        await owner.publish_match(offer("m_2", 7))
        lost = {"m_1": MatchNotice("m_1", (1, 2), 4), "m_2": MatchNotice("m_2", (1, 2), 7)}
        await until(lambda: owner._sender._unpublished == lost)  # all four noted, none sent
        assert follower.connected
        assert got == [offer("m_1", 1)]
        link.cut = False
        # The follower stayed subscribed: the notices reach it, one per match, newest seq.
        await until(lambda: len(got) == 3)
        notices = sorted(got[1:], key=lambda item: item.match_id)
        assert notices == [MatchNotice("m_1", (1, 2), 4), MatchNotice("m_2", (1, 2), 7)]
        await owner.publish_match(offer("m_1", 5))
        await until(lambda: len(got) == 4)
        assert got[3] == offer("m_1", 5)


@needs_redis
async def test_a_redis_restart_is_survived_and_the_followers_resync(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="server.cluster.bus")
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
            # The follower lost Redis too: what it missed is its reconnect handlers' to fetch
            # (the bridge resyncs every match it follows). The owner's notices reach it only if
            # it subscribed again before the owner published them; any that came are right.
            await until(lambda: reconnects == [1])
            expected = {MatchNotice("m_1", (1, 2), 4), MatchNotice("m_2", (1, 2), 7)}
            await owner.publish_match(offer("m_1", 5))
            await until(lambda: offer("m_1", 5) in got)
            assert got[0] == offer("m_1", 1) and got[-1] == offer("m_1", 5)
            assert set(got[1:-1]) <= expected, got
            assert len(got[1:-1]) == len(set(got[1:-1]))
            assert await owner.request("p1", {"x": 2}) == {"x": 2, "by": "p0"}
    # One warning when Redis went away and one when it came back, per bus: not one per failure.
    logged = [r.getMessage().split(" (")[0] for r in caplog.records]
    assert sorted(logged) == ["the bus lost Redis"] * 2 + ["the bus reached Redis again"] * 2, (
        logged
    )


@needs_redis
async def test_a_bus_started_while_redis_is_away_connects_when_it_comes() -> None:
    with own_redis() as (url, (start, stop)):
        stop()
        settings = bus_settings(f"test-{uuid.uuid4().hex}", url).model_copy(
            update={"bus_rpc_timeout_s": 0.3}
        )
        bus = Bus(settings, process_id="late")
        reconnects: list[int] = []
        bus.on_reconnect(lambda: _append(reconnects, 1))
        try:
            await bus.start()  # does not fail
            assert not bus.connected
            with pytest.raises(BusUnavailable, match="not connected"):
                await bus.request("late", {})
            await bus.publish_match(offer("m_1", 1))  # noted, not raised
            start()
            assert await bus.wait_connected(10)
            # Broadcasts may have been missed before: the handlers resync as after an outage.
            await until(lambda: reconnects == [1])
            bus.serve(_echo)
            assert await bus.request("late", {"x": 3}) == {"x": 3, "by": "p0"}
        finally:
            await bus.close()


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


# -- two real `arena serve` processes ----------------------------------------------------------

needs_cluster = pytest.mark.skipif(
    not (REDIS_URL and DATABASE_URL),
    reason="ARENA_TEST_REDIS_URL and ARENA_TEST_DATABASE_URL are needed",
)

GAME_TIMEOUT_S = 45.0
RETRYABLE = {"UNAVAILABLE", "INTERNAL_ERROR"}
"""Errors after which a player sends its move again (with the same expected_seq: a move that
was played after all is then refused as STALE_SEQ, never played twice)."""


@contextlib.contextmanager
def two_servers(
    redis_url: str | None = None, prefix: str | None = None
) -> Iterator[tuple[str, str]]:
    """Run two `arena serve` processes on one fresh PostgreSQL database and one Redis (a fresh
    key prefix unless `prefix`); yield their base URLs."""
    from tests.server.conftest import _reset_database, arena_serve

    assert DATABASE_URL is not None
    asyncio.run(_reset_database(DATABASE_URL))
    env = {
        "ARENA_REDIS_URL": redis_url or REDIS_URL or "",
        "ARENA_REDIS_KEY_PREFIX": prefix or f"test-{uuid.uuid4().hex}",
        "ARENA_RATE_LIMITS_ENABLED": "false",
        "ARENA_BUS_RECONNECT_MAX_S": "0.2",
    }
    with contextlib.ExitStack() as stack:
        # One after the other: the first migrates the database.
        _, first = stack.enter_context(arena_serve(DATABASE_URL, **env))
        _, second = stack.enter_context(arena_serve(DATABASE_URL, **env))
        yield first, second


@pytest.fixture
def cluster() -> Iterator[tuple[str, str]]:
    """Two `arena serve` processes sharing PostgreSQL and the test Redis."""
    with two_servers() as urls:
        yield urls


def ws_url(base: str) -> str:
    return base.replace("http://", "ws://")


class Follower:
    """A WebSocket client following one match (a player, or a spectator when `seat` is None).

    A player plays the `pick`ed legal move whenever it is to move. Every message is checked
    as it comes: after a `match_state`, each `move_made` must be the next seq and ply (no gap,
    no duplicate), and a later `match_state` must agree with every move seen; what breaks
    that is recorded in `problems`.
    """

    def __init__(
        self, name: str, base: str, match_id: str, token: str | None = None, seat: int | None = None
    ) -> None:
        self.name = name
        self.base = base
        self.match_id = match_id
        self.token = token
        self.seat = seat
        self.moves: list[str] = []
        self.seq = -1
        self.to_move: int | None = None
        self.legal: list[str] = []
        self.ended: dict[str, Any] | None = None
        self.states = 0
        self.acknowledged: list[tuple[int, str]] = []
        """(ply, move) of each of this player's moves the server announced as played."""
        self.problems: list[str] = []
        self.errors: list[dict[str, Any]] = []
        self._sent_at_seq: int | None = None
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def wait_ended(self) -> None:
        assert self._task is not None
        await asyncio.wait_for(asyncio.shield(self._task), GAME_TIMEOUT_S)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task

    def report(self) -> str:
        return (
            f"{self.name}: seq {self.seq}, {len(self.moves)} moves, states {self.states}, "
            f"ended {self.ended is not None}, errors {self.errors[-3:]}, problems {self.problems}"
        )

    async def _run(self) -> None:
        from tests.wsclient import connect

        if self.seat is None:
            url, headers = f"{ws_url(self.base)}/ws/matches/{self.match_id}", {}
        else:
            url, headers = f"{ws_url(self.base)}/ws", {"Authorization": f"Bearer {self.token}"}
        async with connect(url, additional_headers=headers) as ws:
            await ws.send(json.dumps({"type": "hello", "protocol_version": "1.2", "client": "t"}))
            while self.ended is None:
                try:
                    text = await asyncio.wait_for(ws.recv(), 0.3)
                except TimeoutError:
                    text = None
                if text is not None:
                    self._take(json.loads(text))
                if self._is_my_turn():
                    self._sent_at_seq = self.seq
                    move = self.legal[(len(self.moves) * 7) % len(self.legal)]
                    await ws.send(
                        json.dumps(
                            {
                                "type": "move",
                                "match_id": self.match_id,
                                "move": move,
                                "expected_seq": self.seq,
                            }
                        )
                    )

    def _is_my_turn(self) -> bool:
        return (
            self.seat is not None
            and self.ended is None
            and self.seq >= 0
            and self.to_move == self.seat
            and self._sent_at_seq != self.seq
            and bool(self.legal)
        )

    def _take(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "error":
            self.errors.append(message)
            if message["code"] in RETRYABLE:
                self._sent_at_seq = None  # send it again
            return
        if message.get("match_id") != self.match_id:
            return
        if kind == "match_state":
            self.states += 1
            if message["moves"][: len(self.moves)] != self.moves:
                self.problems.append(f"a state contradicts the moves seen at seq {self.seq}")
            if message["seq"] < self.seq:
                self.problems.append(f"a state went back from seq {self.seq} to {message['seq']}")
            self.moves = list(message["moves"])
            self.seq = message["seq"]
            self.to_move, self.legal = message["to_move"], list(message["legal_moves"])
            if message["status"] in ("finished", "aborted"):
                self.ended = message
        elif kind == "move_made":
            if self.seq < 0:
                self.problems.append("a move before any state")
            if message["seq"] != self.seq + 1 or message["ply"] != len(self.moves) + 1:
                self.problems.append(
                    f"move_made seq {message['seq']} ply {message['ply']} after seq {self.seq} "
                    f"and {len(self.moves)} moves"
                )
            self.moves.append(message["move"])
            self.seq = message["seq"]
            self.to_move, self.legal = message["to_move"], list(message["legal_moves"])
            if message["seat"] == self.seat:
                self.acknowledged.append((message["ply"], message["move"]))
        elif kind == "match_ended":
            if message["seq"] != self.seq:
                self.problems.append(f"match_ended seq {message['seq']} after seq {self.seq}")
            self.ended = message


async def register_at(http: Any, base: str, name: str) -> str:
    response = await http.post(f"{base}/players", json={"name": name})
    assert response.status_code == 201, response.text
    token: str = response.json()["token"]
    return token


async def new_game(http: Any, base: str, creator: str, invited: str, names: list[str]) -> str:
    """Create a checkers match on `base` challenging the other player, who accepts there too;
    it ends at 40 plies at the latest."""
    body = {"game": "checkers", "seats": names, "max_plies": 40}
    created = await http.post(
        f"{base}/matches", json=body, headers={"Authorization": f"Bearer {creator}"}
    )
    assert created.status_code == 201, created.text
    match_id: str = created.json()["match_id"]
    accepted = await http.post(
        f"{base}/matches/{match_id}/accept", headers={"Authorization": f"Bearer {invited}"}
    )
    assert accepted.status_code == 200, accepted.text
    return match_id


async def stored_moves(http: Any, base: str, match_id: str) -> list[str]:
    response = await http.get(f"{base}/matches/{match_id}")
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "finished", response.text
    moves: list[str] = response.json()["moves"]
    return moves


def check_against_record(followers: list[Follower], record: list[str]) -> None:
    """Each follower saw the whole game in order, and each player's acknowledged moves are
    the record's."""
    for follower in followers:
        assert follower.problems == [], follower.report()
        assert follower.ended is not None, follower.report()
        assert follower.moves == record, follower.report()
        for ply, move in follower.acknowledged:
            assert record[ply - 1] == move, follower.report()


@needs_cluster
async def test_spectators_on_another_process_see_every_move_of_a_match_in_order(
    cluster: tuple[str, str],
) -> None:
    import httpx

    first, second = cluster
    if True:
        async with httpx.AsyncClient(timeout=30) as http:
            alice = await register_at(http, first, "alice")
            bob = await register_at(http, first, "bob")
            match_id = await new_game(http, first, alice, bob, ["alice", "bob"])
            early = Follower("early", second, match_id)
            early.start()
            await until(lambda: early.states == 1)
            players = [
                Follower("alice", first, match_id, alice, 0),
                Follower("bob", first, match_id, bob, 1),
            ]
            for player in players:
                player.start()
            await until(lambda: len(early.moves) >= 10, GAME_TIMEOUT_S)
            late = Follower("late", second, match_id)
            late.start()
            try:
                for follower in (*players, early, late):
                    await follower.wait_ended()
            finally:
                for follower in (*players, early, late):
                    await follower.stop()
            record = await stored_moves(http, first, match_id)
            assert len(record) > 10
            check_against_record([*players, early, late], record)
            assert early.states == 1  # nothing was lost: no resync was needed


@needs_cluster
async def test_players_on_two_processes_play_a_game_watched_from_both(
    cluster: tuple[str, str],
) -> None:
    import httpx

    first, second = cluster
    async with httpx.AsyncClient(timeout=30) as http:
        alice = await register_at(http, first, "alice")
        bob = await register_at(http, second, "bob")
        # Created on the first process (its owner), accepted on the second (forwarded).
        body = {"game": "checkers", "seats": ["alice", "bob"], "max_plies": 40}
        created = await http.post(
            f"{first}/matches", json=body, headers={"Authorization": f"Bearer {alice}"}
        )
        assert created.status_code == 201, created.text
        match_id = created.json()["match_id"]
        accepted = await http.post(
            f"{second}/matches/{match_id}/accept", headers={"Authorization": f"Bearer {bob}"}
        )
        assert accepted.status_code == 200, accepted.text
        assert accepted.json()["your_seat"] == 1 and accepted.json()["status"] == "active"
        followers = [
            Follower("alice on the first", first, match_id, alice, 0),
            Follower("bob on the second", second, match_id, bob, 1),
            Follower("watcher on the second", second, match_id),
            Follower("watcher on the first", first, match_id),
        ]
        for follower in followers:
            follower.start()
        try:
            for follower in followers:
                await follower.wait_ended()
        finally:
            for follower in followers:
                await follower.stop()
        record = await stored_moves(http, first, match_id)
        assert await stored_moves(http, second, match_id) == record
        check_against_record(followers, record)
        assert followers[0].acknowledged and followers[1].acknowledged


@needs_cluster
async def test_rest_moves_sent_to_either_process_are_played_once_in_order(
    cluster: tuple[str, str],
) -> None:
    import httpx

    first, second = cluster
    async with httpx.AsyncClient(timeout=30) as http:
        tokens = [await register_at(http, first, "alice"), await register_at(http, second, "bob")]
        match_id = await new_game(http, second, tokens[0], tokens[1], ["alice", "bob"])
        watchers = [
            Follower("on the first", first, match_id),
            Follower("on the second", second, match_id),
        ]
        for watcher in watchers:
            watcher.start()
        await until(lambda: all(w.states == 1 for w in watchers))
        played: list[str] = []
        try:
            for ply in range(1, 41):
                # Each player sends to both processes in turn; reads go to the other one.
                to, other = (first, second) if (ply // 2) % 2 else (second, first)
                state = (await http.get(f"{other}/matches/{match_id}")).json()
                if state["status"] != "active":
                    break
                assert state["moves"] == played and state["seq"] == ply
                move = state["legal_moves"][(ply * 7) % len(state["legal_moves"])]
                response = await http.post(
                    f"{to}/matches/{match_id}/moves",
                    json={"move": move, "expected_seq": state["seq"]},
                    headers={"Authorization": f"Bearer {tokens[state['to_move']]}"},
                )
                assert response.status_code == 200, response.text
                made = response.json()
                assert (made["ply"], made["move"], made["seq"]) == (ply, move, ply + 1)
                played.append(move)
                # The same move again (the same expected_seq) is refused, not played twice.
                again = await http.post(
                    f"{other}/matches/{match_id}/moves",
                    json={"move": move, "expected_seq": state["seq"]},
                    headers={"Authorization": f"Bearer {tokens[state['to_move']]}"},
                )
                assert again.status_code == 409 and again.json()["code"] == "STALE_SEQ", again.text
            for watcher in watchers:
                await watcher.wait_ended()
        finally:
            for watcher in watchers:
                await watcher.stop()
        record = await stored_moves(http, first, match_id)
        assert record == played
        check_against_record(watchers, record)


@pytest.fixture
def cluster_on_own_redis() -> Iterator[tuple[str, str, Any]]:
    """Two `arena serve` processes on a Redis of their own; yield its (start, stop) too."""
    with own_redis() as (url, control), two_servers(url) as (first, second):
        yield first, second, control


@needs_cluster
async def test_a_game_across_two_processes_survives_a_redis_restart(
    cluster_on_own_redis: tuple[str, str, Any],
) -> None:
    import httpx

    first, second, (start_redis, stop_redis) = cluster_on_own_redis
    async with httpx.AsyncClient(timeout=30) as http:
        alice = await register_at(http, first, "alice")
        bob = await register_at(http, second, "bob")
        match_id = await new_game(http, first, alice, bob, ["alice", "bob"])
        followers = [
            Follower("alice on the first", first, match_id, alice, 0),
            Follower("bob on the second", second, match_id, bob, 1),
            Follower("watcher on the second", second, match_id),
        ]
        for follower in followers:
            follower.start()
        try:
            await until(lambda: len(followers[2].moves) >= 10, GAME_TIMEOUT_S)
            stop_redis()
            await asyncio.sleep(1.0)  # moves go on meanwhile where the owner can play them
            start_redis()
            for follower in followers:
                await follower.wait_ended()
        finally:
            for follower in followers:
                await follower.stop()
        record = await stored_moves(http, first, match_id)
        assert len(record) == 40  # played to the ply cap: nobody was stuck
        check_against_record(followers, record)


async def test_the_bridge_wants_only_followed_matches_but_counts_the_others() -> None:
    alice, watcher = _Follower(1), _Follower(None)
    bridge, service = bridge_with(alice)
    assert bridge.wanted("m_1", (1, 2), (1, 1))  # alice plays it
    assert bridge.wanted("m_2", (2, 1), None)  # a challenge for alice
    assert not bridge.wanted("m_9", (7, 8), (1, 1))
    assert not bridge.wanted("m_9", (7, 8), (2, 2))
    bridge._hub.watch("m_9", watcher)  # type: ignore[arg-type]
    assert bridge.wanted("m_9", (7, 8), (4, 4))
    # 3 was lost: the counted seq shows the gap, and the state is sent.
    service.seq = 4
    await bridge.deliver(Broadcast("m_9", (7, 8), (DrawDeclined(match_id="m_9", seq=4, seat=1),)))
    await until(lambda: watcher.sent == [("state:None", 4)])
    await bridge.close()


@pytest.fixture
def cluster_and_prefix() -> Iterator[tuple[str, str, str]]:
    """Two `arena serve` processes sharing the test Redis, and their Redis key prefix."""
    prefix = f"test-{uuid.uuid4().hex}"
    with two_servers(prefix=prefix) as (first, second):
        yield first, second, prefix


@needs_cluster
async def test_a_newer_connection_in_another_process_replaces_a_players_older_one(
    cluster_and_prefix: tuple[str, str, str],
) -> None:
    import httpx
    from websockets.exceptions import ConnectionClosed

    from server.cluster.bridge import PLAYERS_TOPIC
    from tests.wsclient import connect

    first, second, prefix = cluster_and_prefix
    async with httpx.AsyncClient(timeout=30) as http:
        token = await register_at(http, first, "alice")
    heard: list[Any] = []
    async with contextlib.AsyncExitStack() as stack:
        listener = Bus(bus_settings(prefix), process_id="listener")
        await listener.start()
        stack.push_async_callback(listener.close)
        listener.subscribe(PLAYERS_TOPIC, lambda payload: _append(heard, payload))
        headers = {"Authorization": f"Bearer {token}"}
        hello = json.dumps({"type": "hello", "protocol_version": "1.2", "client": "t"})
        connections = []
        for base in (first, second, first):
            ws = await stack.enter_async_context(
                connect(f"{ws_url(base)}/ws", additional_headers=headers)
            )
            await ws.send(hello)
            assert json.loads(await asyncio.wait_for(ws.recv(), 10))["type"] == "welcome"
            connections.append(ws)
            # Wait for its announcement to reach every process (it then counts as older).
            await until(lambda: len(heard) == len(connections))
        for older in connections[:2]:
            with pytest.raises(ConnectionClosed):
                while True:
                    await asyncio.wait_for(older.recv(), 10)
            assert older.close_code == 4002
        newest = connections[2]
        await newest.send(json.dumps({"type": "ping", "time_ms": 5}))
        assert json.loads(await asyncio.wait_for(newest.recv(), 10))["time_ms"] == 5
