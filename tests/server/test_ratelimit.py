"""Rate limits end to end: a real uvicorn server, real HTTP and WebSocket clients.

Another client address is a real one: the client binds 127.0.0.2 (loopback, like 127.0.0.1),
so the server sees a different socket peer.

The counts are tested with windows of a day and WebSocket rates of a minute, which no test
outlasts however loaded the machine, so a count never depends on how fast the requests went.
That a refused client gets through after the wait it is told is tested on the WebSocket
buckets with a clock the test moves (`RateLimiter(clock=...)`), and once on a REST window of 2
seconds, where a slow machine only lets more time pass.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from limits import parse
from pydantic import ValidationError
from websockets.exceptions import ConnectionClosed

from protocol.messages import ErrorResponse
from server.connections import address_key
from server.limits.rates import RateLimiter
from server.settings import Settings, setting_named
from tests.ports import free_port
from tests.server.conftest import RunningServer, start_server
from tests.wsclient import ClientConnection, connect

HELLO = {"type": "hello", "protocol_version": "1.0", "client": "test"}
TIMEOUT = 30.0
"""Seconds a wait for the server may take before the test fails: generous, for a loaded machine."""


@pytest.fixture
def make_server(server_settings: Settings) -> Iterator[Any]:
    """Start servers on the test's database with some settings changed; stop them after."""
    running: list[RunningServer] = []

    def make(**changes: Any) -> RunningServer:
        settings = Settings(**{**server_settings.model_dump(), **changes})
        server = start_server(settings)
        running.append(server)
        return server

    yield make
    for server in running:
        server.stop()


def client(server: RunningServer, address: str = "127.0.0.1") -> httpx.Client:
    """An HTTP client of `server` whose requests come from `address`."""
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=server.url, transport=transport, timeout=30)


def register(http: httpx.Client, name: str) -> dict[str, str]:
    """Register `name`; return the authorization header of its token."""
    response = http.post("/players", json={"name": name})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


def new_match(http: httpx.Client, auth: dict[str, str]) -> httpx.Response:
    """POST a match against a house bot."""
    body = {"game": "tictactoe", "seats": [{"bot": "random"}, "open"]}
    return http.post("/matches", json=body, headers=auth)


def assert_rate_limited(response: httpx.Response, scope: str, limit: str) -> float:
    """Check a 429 as PROTOCOL.md documents it; return the seconds it says to wait."""
    assert response.status_code == 429, response.text
    body = ErrorResponse.model_validate(response.json())
    assert body.code == "RATE_LIMITED"
    assert body.details["scope"] == scope and body.details["limit"] == limit
    wait_ms = body.details["retry_after_ms"]
    assert isinstance(wait_ms, int) and 0 < wait_ms <= parse(limit).get_expiry() * 1000
    retry_after = int(response.headers["Retry-After"])
    assert retry_after == -(-wait_ms // 1000)
    return wait_ms / 1000


def test_registrations_are_limited_per_address(make_server: Any) -> None:
    server = make_server(rate_registrations_per_address="3/day")
    with client(server) as http, client(server, "127.0.0.2") as other:
        for name in ("a1", "a2", "a3"):
            register(http, name)
        refused = http.post("/players", json={"name": "a4"})
        assert_rate_limited(refused, "address", "3 per 1 day")
        assert "registrations" in refused.json()["message"]
        # Another address has its own count; nothing was registered by the refused request.
        register(other, "b1")
        register(other, "a4")


def test_a_refused_client_gets_through_after_the_wait_it_is_told(make_server: Any) -> None:
    # A window of 2 seconds on the wall clock, which the `limits` library keeps the counts on.
    # Time passing only frees the window: a loaded machine makes this test easier, not harder.
    server = make_server(rate_registrations_per_address="2/2 seconds")
    with client(server) as http:
        for number in range(20):  # the third is refused, unless the machine is very slow
            refused = http.post("/players", json={"name": f"a{number}"})
            if refused.status_code != 201:
                break
        wait = assert_rate_limited(refused, "address", "2 per 2 second")
        time.sleep(wait + 0.05)
        register(http, "late")


def test_match_creation_is_limited_per_token_and_per_address(make_server: Any) -> None:
    server = make_server(rate_matches_per_player="3/day", rate_matches_per_address="5/day")
    with client(server) as http, client(server, "127.0.0.2") as other:
        alice, bob, carol = register(http, "alice"), register(http, "bob"), register(other, "c")
        for _ in range(3):
            assert new_match(http, alice).status_code == 201
        # Alice floods: refused per token, and her refusals do not use her address's budget...
        for _ in range(5):
            assert_rate_limited(new_match(http, alice), "token", "3 per 1 day")
        # ...so Bob, at the same address, still has its remaining two.
        assert new_match(http, bob).status_code == 201
        assert new_match(http, bob).status_code == 201
        assert_rate_limited(new_match(http, bob), "address", "5 per 1 day")
        # Another address is not affected.
        assert new_match(other, carol).status_code == 201
        # The refused requests created nothing.
        listed = http.get("/matches", params={"limit": 200}).json()["matches"]
        assert len(listed) == 6


def test_tournament_creation_is_limited_per_token(make_server: Any) -> None:
    server = make_server(rate_tournaments_per_player="2/day")
    body = {"game": "tictactoe", "bots": ["random", "greedy"], "games_per_pairing": 2}
    with client(server) as http:
        alice, bob = register(http, "alice"), register(http, "bob")
        for _ in range(2):
            assert http.post("/tournaments", json=body, headers=alice).status_code == 201
        refused = http.post("/tournaments", json=body, headers=alice)
        assert_rate_limited(refused, "token", "2 per 1 day")
        assert http.post("/tournaments", json=body, headers=bob).status_code == 201
        assert len(http.get("/tournaments").json()["tournaments"]) == 3


def test_tournament_creation_is_limited_per_address(make_server: Any) -> None:
    server = make_server(rate_tournaments_per_address="2/day")
    body = {"game": "tictactoe", "bots": ["random", "greedy"], "games_per_pairing": 2}
    with client(server) as http, client(server, "127.0.0.2") as other:
        alice, bob = register(http, "alice"), register(other, "bob")
        for _ in range(2):
            assert http.post("/tournaments", json=body, headers=alice).status_code == 201
        refused = http.post("/tournaments", json=body, headers=alice)
        assert_rate_limited(refused, "address", "2 per 1 day")
        assert_rate_limited(
            http.post("/tournaments", json=body, headers=bob), "address", "2 per 1 day"
        )
        assert other.post("/tournaments", json=body, headers=bob).status_code == 201


def test_grader_uploads_are_limited_per_token_and_per_address(make_server: Any) -> None:
    server = make_server(rate_uploads_per_player="2/day", rate_uploads_per_address="3/day")
    files = [("files", ("checkers.py", b"print('hi')\n", "text/x-python"))]

    def upload(http: httpx.Client, headers: dict[str, str] | None = None) -> httpx.Response:
        # An unknown profile is refused at once (422); the attempt counts all the same.
        return http.post("/grader/jobs", data={"profile": "nope"}, files=files, headers=headers)

    with client(server) as http, client(server, "127.0.0.2") as other:
        alice = register(http, "alice")
        assert upload(http, alice).status_code == 422
        assert upload(http, alice).status_code == 422
        assert_rate_limited(upload(http, alice), "token", "2 per 1 day")
        # Uploads need a token: a second player at the same address meets the address's limit.
        bob = register(http, "bob")
        carol = register(other, "carol")
        assert upload(http, bob).status_code == 422
        assert_rate_limited(upload(http, bob), "address", "3 per 1 day")
        assert upload(other, carol).status_code == 422


def test_rate_limits_can_be_turned_off(make_server: Any) -> None:
    server = make_server(rate_limits_enabled=False, rate_registrations_per_address="1/minute")
    with client(server) as http:
        for name in ("a1", "a2", "a3"):
            register(http, name)


def test_the_defaults_let_a_bot_author_work_and_stop_a_registration_flood(
    make_server: Any,
) -> None:
    server = make_server()
    with client(server) as http:
        alice = register(http, "alice")
        for _ in range(30):
            assert new_match(http, alice).status_code == 201
        # A flood of registrations is refused after 10 in a minute. The counts are kept per
        # minute of the clock: a flood that spans the turn of a minute may get up to 20 through
        # (the sliding window's documented bound), never more.
        registered = 1
        for name in range(20):
            flood = http.post("/players", json={"name": f"p{name}"})
            if flood.status_code != 201:
                break
            registered += 1
        assert 10 <= registered <= 20
        assert_rate_limited(flood, "address", "10 per 1 minute")


def test_ipv6_clients_are_counted_by_their_64_network() -> None:
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:bbbb::2")
    assert address_key("2001:db8:1:2::1") != address_key("2001:db8:1:3::1")
    assert address_key("::ffff:192.0.2.7") == address_key("192.0.2.7") == "192.0.2.7"
    assert address_key(None) == "unknown"


# -- WebSocket messages -------------------------------------------------------------------------


async def receive(ws: ClientConnection) -> dict[str, Any]:
    message: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT))
    return message


async def open_ws(url: str, token: str | None = None) -> ClientConnection:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    ws = await connect(url, additional_headers=headers)
    await ws.send(json.dumps(HELLO))
    assert (await receive(ws))["type"] == "welcome"
    return ws


async def ping(ws: ClientConnection, n: int) -> None:
    await ws.send(json.dumps({"type": "ping", "time_ms": n}))


async def test_websocket_messages_are_limited_per_player(make_server: Any) -> None:
    # Rates of a minute: no token comes back, and no refusal is forgotten, while the test runs.
    server = make_server(rate_ws_messages="10/minute", rate_ws_burst=5, rate_ws_refusals="3/minute")
    async with httpx.AsyncClient(base_url=server.url) as http:
        tokens = [
            (await http.post("/players", json={"name": name})).json()["token"]
            for name in ("alice", "bob")
        ]
    alice = await open_ws(f"{server.ws_url}/ws", tokens[0])
    bob = await open_ws(f"{server.ws_url}/ws", tokens[1])
    # A burst of 5 passes; the sixth is dropped with RATE_LIMITED and how long to wait.
    for n in range(6):
        await ping(alice, n)
    assert [(await receive(alice))["time_ms"] for _ in range(5)] == [0, 1, 2, 3, 4]
    error = await receive(alice)
    assert error["type"] == "error" and error["code"] == "RATE_LIMITED", error
    wait_ms = error["details"]["retry_after_ms"]
    assert 0 < wait_ms <= 6000 and error["details"]["limit"] == "10 per 1 minute"
    # Bob's connection has its own bucket.
    await ping(bob, 7)
    assert (await receive(bob))["type"] == "pong"
    # (That waiting as told is enough: test_the_wait_a_websocket_refusal_names_is_enough.)
    # Sending on regardless: 3 refusals in a minute are tolerated (the first was above), the
    # fourth closes the connection with 1008; nothing sent after it is answered.
    with contextlib.suppress(ConnectionClosed):
        for n in range(20):
            await ping(alice, 100 + n)
    answers = []
    with pytest.raises(ConnectionClosed):
        while True:
            answers.append(await receive(alice))
    assert alice.close_code == 1008
    assert [answer.get("code") for answer in answers if answer["type"] == "error"] == [
        "RATE_LIMITED"
    ] * 2
    await ping(bob, 9)
    assert (await receive(bob))["type"] == "pong"
    await bob.close()


async def test_reconnecting_does_not_refill_a_players_bucket(make_server: Any) -> None:
    server = make_server(rate_ws_messages="1/minute", rate_ws_burst=3)
    async with httpx.AsyncClient(base_url=server.url) as http:
        token = (await http.post("/players", json={"name": "alice"})).json()["token"]
    first = await open_ws(f"{server.ws_url}/ws", token)
    for n in range(3):
        await ping(first, n)
    assert [(await receive(first))["type"] for _ in range(3)] == ["pong"] * 3
    second = await open_ws(f"{server.ws_url}/ws", token)
    await ping(second, 3)
    refused = await receive(second)
    assert refused["code"] == "RATE_LIMITED" and 0 < refused["details"]["retry_after_ms"] <= 60_000
    await second.close()


async def test_spectators_and_tournament_watchers_are_limited_too(make_server: Any) -> None:
    server = make_server(rate_ws_messages="1/minute", rate_ws_burst=2)
    async with httpx.AsyncClient(base_url=server.url) as http:
        token = (await http.post("/players", json={"name": "alice"})).json()["token"]
        auth = {"Authorization": f"Bearer {token}"}
        match = await http.post(
            "/matches", json={"game": "nim", "seats": ["alice", "open"]}, headers=auth
        )
        tournament = await http.post(
            "/tournaments", json={"game": "nim", "bots": ["random", "greedy"]}, headers=auth
        )
    urls = [
        f"{server.ws_url}/ws/matches/{match.json()['match_id']}",
        f"{server.ws_url}/ws/tournaments/{tournament.json()['tournament_id']}",
    ]
    for url in urls:
        watcher = await open_ws(url)
        assert (await receive(watcher))["type"] in ("match_state", "tournament_state")
        for n in range(3):
            await ping(watcher, n)
        # The answers to the pings, in order; the tournament's own news (a game finished, if
        # it still runs on a slow machine) may come between them.
        answers: list[dict[str, Any]] = []
        while len(answers) < 3:
            message = await receive(watcher)
            if message["type"] in ("pong", "error"):
                answers.append(message)
        assert [answer["type"] for answer in answers] == ["pong", "pong", "error"], answers
        assert answers[2]["code"] == "RATE_LIMITED"
        assert 0 < answers[2]["details"]["retry_after_ms"] <= 60_000
        await watcher.close()


# -- addresses behind a proxy, and where the counts are kept ----------------------------------


def test_a_trusted_proxy_names_the_client_and_others_cannot(make_server: Any) -> None:
    # X-Forwarded-For is taken from the proxies named in trusted_proxies only.
    server = make_server(rate_registrations_per_address="1/day", trusted_proxies="127.0.0.1")

    def via(http: httpx.Client, forwarded: str, name: str) -> httpx.Response:
        return http.post("/players", json={"name": name}, headers={"X-Forwarded-For": forwarded})

    with client(server) as proxy, client(server, "127.0.0.2") as direct:
        assert via(proxy, "203.0.113.1", "a1").status_code == 201
        assert_rate_limited(via(proxy, "203.0.113.1", "a2"), "address", "1 per 1 day")
        assert via(proxy, "203.0.113.2", "b1").status_code == 201
        # An untrusted peer is counted as itself whatever it forwards.
        assert via(direct, "203.0.113.1", "c1").status_code == 201
        assert_rate_limited(via(direct, "203.0.113.3", "c2"), "address", "1 per 1 day")


REDIS_URL = os.environ.get("ARENA_TEST_REDIS_URL")


@pytest.mark.skipif(not REDIS_URL, reason="ARENA_TEST_REDIS_URL is not set")
def test_redis_shares_the_counts_between_servers(make_server: Any) -> None:
    limits = {"rate_registrations_per_address": "3/day", "rate_matches_per_player": "2/day"}
    # Without Redis each server counts alone: the control that makes the test meaningful.
    alone = [make_server(**limits) for _ in range(2)]
    with client(alone[0]) as first, client(alone[1]) as second:
        for name in ("m1", "m2", "m3"):
            register(first, name)
        register(second, "m4")
    shared = {**limits, "redis_url": REDIS_URL, "redis_key_prefix": f"test-{uuid.uuid4().hex}"}
    servers = [make_server(**shared) for _ in range(2)]
    with client(servers[0]) as first, client(servers[1]) as second:
        alice = register(first, "r1")
        register(first, "r2")
        register(second, "r3")
        for http in (first, second):
            refused = http.post("/players", json={"name": "r4"})
            assert_rate_limited(refused, "address", "3 per 1 day")
        assert new_match(first, alice).status_code == 201
        assert new_match(second, alice).status_code == 201
        assert_rate_limited(new_match(first, alice), "token", "2 per 1 day")


def test_an_unreachable_redis_lets_requests_through(make_server: Any) -> None:
    server = make_server(
        redis_url=f"redis://127.0.0.1:{free_port()}/0", rate_registrations_per_address="1/minute"
    )
    with client(server) as http:
        for name in ("a1", "a2", "a3"):
            register(http, name)


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("rate_matches_per_player", "lots"),
        ("rate_registrations_per_address", "10 a minute"),
        ("rate_ws_messages", "0/second"),
        ("rate_ws_messages", "50/second;1000/minute"),
        ("rate_ws_refusals", "x"),
        ("redis_url", "http://127.0.0.1:6379"),
    ],
)
def test_a_bad_rate_setting_is_refused_at_start_up(setting: str, value: str) -> None:
    named = setting_named(setting)
    assert named is not None and named.group is not None
    with pytest.raises(ValidationError, match=rf"{named.group}\.{named.field_name}"):
        Settings(**{setting: value})


def test_openapi_documents_the_429_of_each_limited_route(make_server: Any) -> None:
    server = make_server()
    with client(server) as http:
        paths = http.get("/openapi.json").json()["paths"]
    for path in ("/players", "/matches", "/tournaments", "/grader/jobs"):
        answer = paths[path]["post"]["responses"]["429"]
        assert "Retry-After" in answer["headers"], path
        assert answer["content"]["application/json"]["schema"]["$ref"].endswith("ErrorResponse")


class _Sink:
    """What `RateLimiter.admit` uses of a connection, recording what it is sent."""

    def __init__(self, player_id: int | None) -> None:
        self.player_id = player_id
        self.closed = False
        self.sent: list[Any] = []

    def send(self, message: Any) -> None:
        self.sent.append(message)

    def close(self, code: int, reason: str = "") -> None:
        self.closed = True


class _Clock:
    """A clock that moves only when the test moves it."""

    def __init__(self) -> None:
        self.now = 1024.0  # whole and binary fractions of seconds add up exactly from here

    def __call__(self) -> float:
        return self.now


def test_the_wait_a_websocket_refusal_names_is_enough() -> None:
    clock = _Clock()
    limiter = RateLimiter(
        Settings(rate_ws_messages="4/second", rate_ws_burst=5, rate_ws_refusals="3/10 seconds"),
        clock=clock,
    )
    alice = _Sink(1)
    assert all(limiter.admit(alice) for _ in range(5))  # type: ignore[arg-type]
    assert not limiter.admit(alice)  # type: ignore[arg-type]
    assert alice.sent[-1].details["retry_after_ms"] == 250  # one token at 4 a second
    # Half the wait: still refused, and told the rest of it.
    clock.now += 0.125
    assert not limiter.admit(alice)  # type: ignore[arg-type]
    assert alice.sent[-1].details["retry_after_ms"] == 125
    # Waiting as told is enough.
    clock.now += 0.125
    assert limiter.admit(alice)  # type: ignore[arg-type]
    assert len(alice.sent) == 2 and not alice.closed


def test_refusals_close_the_connection_only_when_too_many_come_in_their_window() -> None:
    clock = _Clock()
    limiter = RateLimiter(
        Settings(rate_ws_messages="1/minute", rate_ws_burst=1, rate_ws_refusals="3/10 seconds"),
        clock=clock,
    )
    alice = _Sink(1)
    assert limiter.admit(alice)  # type: ignore[arg-type]
    for _ in range(3):
        assert not limiter.admit(alice)  # type: ignore[arg-type]
    # Ten seconds on, those three are out of the window: a fourth refusal is tolerated.
    clock.now += 10
    assert not limiter.admit(alice)  # type: ignore[arg-type]
    assert not alice.closed and len(alice.sent) == 4
    # Three more within the window make four in it: the connection is closed, unanswered.
    for _ in range(3):
        assert not limiter.admit(alice)  # type: ignore[arg-type]
    assert alice.closed and len(alice.sent) == 6


def test_idle_players_buckets_are_forgotten(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("server.limits.rates._PRUNE_FROM", 3)
    clock = _Clock()
    limiter = RateLimiter(Settings(rate_ws_messages="1/second", rate_ws_burst=1), clock=clock)
    for player_id in range(1, 5):
        assert limiter.admit(_Sink(player_id))  # type: ignore[arg-type]
    # Nobody was idle when the fourth came: all four are kept, and still limited.
    assert not limiter.admit(_Sink(1))  # type: ignore[arg-type]
    assert len(limiter._player_buckets) == 4
    clock.now += 1.1
    for player_id in range(5, 8):
        assert limiter.admit(_Sink(player_id))  # type: ignore[arg-type]
    # At the seventh, the buckets refilled and without a recent refusal (2, 3 and 4) were
    # forgotten; 1's refusal above keeps it for the refusals' window.
    assert sorted(limiter._player_buckets) == [1, 5, 6, 7]


async def test_arena_bot_waits_and_sends_again_when_rate_limited(
    make_server: Any, caplog: pytest.LogCaptureFixture
) -> None:
    from client.session import BotClient

    # One message at once, one every 2 seconds: the bot's replies to the house bot's instant
    # moves arrive too fast (on any machine, at least one of them), are dropped, and must be
    # sent again for the match to finish.
    server = make_server(rate_ws_messages="1/2 seconds", rate_ws_burst=1)
    async with httpx.AsyncClient(base_url=server.url) as http:
        token = (await http.post("/players", json={"name": "alice"})).json()["token"]
        body = {"game": "tictactoe", "seats": ["alice", {"bot": "random"}]}
        created = await http.post(
            "/matches", json=body, headers={"Authorization": f"Bearer {token}"}
        )
        assert created.status_code == 201, created.text
        bot = BotClient(server.url, token, "random", log=logging.getLogger("test.ratebot"))
        with caplog.at_level(logging.INFO, logger="test.ratebot"):
            assert await asyncio.wait_for(bot.run(max_matches=1), 120) == 1
        assert any("rate limited" in record.getMessage() for record in caplog.records)
        match = (await http.get(f"/matches/{created.json()['match_id']}")).json()
        assert match["status"] == "finished" and match["result"]["reason"] == "rules"
