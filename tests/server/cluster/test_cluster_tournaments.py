"""A tournament with a registered player across three `arena serve` processes: one runner only,
taken over by one live process when the process running it is killed (SIGKILL).

Needs ARENA_TEST_DATABASE_URL (PostgreSQL) and ARENA_TEST_REDIS_URL.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select, update

from protocol.messages import TournamentCreate, TournamentGame
from server.cluster.leases import share
from server.db.engine import create_engine
from server.db.models import ArenaProcess, Match
from server.db.models import Tournament as TournamentRow
from server.db.models import TournamentGame as GameRow
from server.tournaments.owners import Owner, TournamentOwners
from server.tournaments.store import FencedTournamentError, TournamentStore
from server.tournaments.tournament import HostedTournament
from tests.ports import free_port
from tests.server.cluster.test_cluster_takeover import TestPlayer, add_player, add_process, database
from tests.server.conftest import _reset_database
from tests.server.jobs.test_workers_tournaments import check_watched, watch

DATABASE_URL = os.environ.get("ARENA_TEST_DATABASE_URL") or ""
REDIS_URL = os.environ.get("ARENA_TEST_REDIS_URL")
TIMEOUT = 60.0
BODY = {
    "game": "connect4",
    "bots": ["player:alice", "alphabeta:depth=2", "greedy"],
    "games_per_pairing": 2,
    "seed": 5,
    "concurrency": 3,
}
"""6 games, 4 of them alice's (she moves after a pause: the kill finds games in play)."""

pytestmark = pytest.mark.skipif(
    not (DATABASE_URL.startswith("postgresql") and REDIS_URL),
    reason="ARENA_TEST_DATABASE_URL (PostgreSQL) and ARENA_TEST_REDIS_URL are needed",
)


@contextlib.contextmanager
def server(tmp_path: Path, name: str, prefix: str) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """Run a clustered `arena serve` whose output goes to `tmp_path/name.log`; kill it after.

    The runners follow their matches over the bus only (their stored states are read once an
    hour): a match end must come through the bridge."""
    exe = shutil.which("arena", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the arena console script is not installed in this environment")
    assert REDIS_URL is not None
    env = {
        **os.environ,
        "ARENA_REDIS_URL": REDIS_URL,
        "ARENA_REDIS_KEY_PREFIX": prefix,
        "ARENA_LEASE_TTL_MS": "2000",
        "ARENA_HEARTBEAT_MS": "500",
        "ARENA_RATE_LIMITS_ENABLED": "false",
        "ARENA_TOURNAMENT_FOLLOW_S": "3600",
        "ARENA_GRADER_DIR": str(tmp_path / f"grader-{name}"),
    }
    port = free_port()
    with (tmp_path / f"{name}.log").open("wb") as log:
        process = subprocess.Popen(
            [exe, "serve", "--port", str(port), "--database", DATABASE_URL],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            # Start-up takes a second or two; the margin is for a machine loaded by other work.
            deadline = time.monotonic() + 60
            while True:
                try:
                    httpx.get(f"{base}/health", timeout=1)
                    break
                except httpx.HTTPError:
                    assert process.poll() is None and time.monotonic() < deadline
                    time.sleep(0.1)
            yield process, base
        finally:
            if process.poll() is None:
                process.kill()
            process.wait(timeout=10)


async def test_a_tournament_has_one_owner_and_a_stale_runner_is_fenced() -> None:
    """Start claims it; a live owner keeps it; once its owner is dead another claims it, and
    the stale runner's writes are refused; a released tournament is claimable again."""
    async with database() as (_engine, sessions):
        await add_process(sessions, "p1")
        await add_process(sessions, "p2")
        organiser = await add_player(sessions, "organiser")
        store = TournamentStore(sessions)
        body = TournamentCreate.model_validate(BODY | {"bots": ["player:organiser", "greedy"]})
        tournament = HostedTournament(
            id="t_1",
            body=body,
            status="created",
            games_total=2,
            created_ms=0,
            owner_id=organiser.id,
        )
        await store.add(tournament)
        first, second = (TournamentOwners(sessions, p, 2000) for p in ("p1", "p2"))
        assert await first.start("t_1") == 1
        assert await second.start("t_1") is None  # started once
        assert await second.claim("t_1") is None  # p1 lives
        assert await second.claimable() == []
        game = TournamentGame(
            index=0,
            pair=0,
            first="player:organiser",
            second="greedy",
            opening="-",
            match_id="m_1",
        )
        await store.add_game("t_1", game, epoch=1)
        async with sessions() as session, session.begin():
            await session.execute(
                update(ArenaProcess)
                .where(ArenaProcess.id == "p1")
                .values(heartbeat_at=datetime.now(UTC) - timedelta(minutes=1))
            )
        assert await second.claimable() == ["t_1"]
        assert await second.claim("t_1") == 2
        # p1's runner, stalled past its lease, can store nothing more.
        scored = game.model_copy(update={"result": 1.0, "reason": "four in a row"})
        with pytest.raises(FencedTournamentError):
            await store.store_result("t_1", scored, epoch=1)
        with pytest.raises(FencedTournamentError):
            await store.add_game("t_1", game.model_copy(update={"index": 1}), epoch=1)
        with pytest.raises(FencedTournamentError):
            await store.end("t_1", "finished", None, epoch=1)
        assert await first.claim("t_1") is None  # p2 lives
        await store.store_result("t_1", scored, epoch=2)
        assert (await first.owners(["t_1"]))["t_1"] == Owner("p2", 2, "running")
        await second.release(["t_1"])
        assert await first.claimable() == ["t_1"]  # no owner: anyone alive may claim it
        assert await first.claim("t_1") == 3
        # Cancelled (on any process): its owner's runner stores no result of a stopped game.
        assert await store.end("t_1", "cancelled", "cancelled by organiser", epoch=3)
        with pytest.raises(FencedTournamentError):
            await store.store_result("t_1", scored.model_copy(update={"index": 1}), epoch=3)
        assert await first.claim("t_1") is None and await first.claimable() == []
        loaded = await store.load("t_1")
        assert loaded is not None and [g.result for g in loaded.ordered_games()] == [1.0]


def test_a_killed_owner_tournament_is_run_by_one_other_process(tmp_path: Path) -> None:
    asyncio.run(_reset_database(DATABASE_URL))
    prefix = f"test-{uuid.uuid4().hex}"
    with (
        server(tmp_path, "a", prefix) as (first, first_url),
        server(tmp_path, "b", prefix) as (second, second_url),
        server(tmp_path, "c", prefix) as (third, third_url),
    ):
        survivors = {second.pid: second_url, third.pid: third_url}
        tournament_id = asyncio.run(_play_and_kill(first, first_url, survivors))
    logs = {name: (tmp_path / f"{name}.log").read_text() for name in "abc"}
    for name, text in logs.items():
        assert "Traceback" not in text and "ERROR" not in text, (name, text[-3000:])
        # No runner ever lost a write to another: there was never a second runner.
        assert "run by another process now" not in text, (name, text[-3000:])
    asyncio.run(_check_stored(tournament_id, first.pid))


async def _away_from_the_tournament(tournament_id: str, survivors: dict[int, str]) -> str:
    """Return the URL of the survivor that will not take the tournament over (the reapers
    share it by its id, server.cluster.leases.share): alice's matches go there on her first
    touch, and the new runner must see them end over the bus."""
    engine = create_engine(DATABASE_URL)
    try:
        async with engine.connect() as connection:
            rows = (await connection.execute(select(ArenaProcess.id, ArenaProcess.pid))).all()
    finally:
        await engine.dispose()
    ids = {pid: process_id for process_id, pid in rows if pid in survivors}
    assert len(ids) == 2
    for pid, process_id in ids.items():
        if not share([tournament_id], list(ids.values()), process_id):
            return survivors[pid]
    raise AssertionError("the share gave the tournament to both survivors")


async def _play_and_kill(
    first: subprocess.Popen[bytes], first_url: str, survivors: dict[int, str]
) -> str:
    second_url, third_url = survivors.values()
    async with httpx.AsyncClient(timeout=30) as http:
        tokens = {}
        for name in ("organiser", "alice"):
            registered = await http.post(f"{first_url}/players", json={"name": name})
            assert registered.status_code == 201, registered.text
            tokens[name] = registered.json()["token"]
        auth = {name: {"Authorization": f"Bearer {token}"} for name, token in tokens.items()}
        created = await http.post(f"{first_url}/tournaments", json=BODY, headers=auth["organiser"])
        assert created.status_code == 201, created.text
        tournament_id, total = created.json()["tournament_id"], created.json()["games_total"]
        assert total == 6
        accepted = await http.post(
            f"{second_url}/tournaments/{tournament_id}/accept", headers=auth["alice"]
        )
        assert accepted.status_code == 200, accepted.text
        # Watchers on the two processes that survive.
        watched: list[list[dict[str, Any]]] = [[], []]
        watchers = []
        for url, received in zip((second_url, third_url), watched, strict=True):
            ready = asyncio.Event()
            socket_url = url.replace("http", "ws", 1) + f"/ws/tournaments/{tournament_id}"
            watchers.append(asyncio.create_task(watch(socket_url, received, ready)))
            await asyncio.wait_for(ready.wait(), TIMEOUT)
        away = await _away_from_the_tournament(tournament_id, survivors)
        ws = [url.replace("http", "ws", 1) for url in (first_url, away)]
        alice = TestPlayer(tokens["alice"], ws, seed=3)  # on the first, then a survivor
        playing = asyncio.create_task(alice.run(4))
        started = await http.post(
            f"{first_url}/tournaments/{tournament_id}/start", headers=auth["organiser"]
        )
        assert started.status_code == 200, started.text
        # Kill the first process (its runner, its matches, alice's connection) mid-game.
        deadline = time.monotonic() + TIMEOUT
        while not any(len(moves) >= 3 for moves in alice.acknowledged.values()):
            assert time.monotonic() < deadline, "alice's games did not get going"
            assert not playing.done(), playing.exception()
            await asyncio.sleep(0.05)
        in_play = await http.get(f"{second_url}/tournaments/{tournament_id}")
        assert in_play.json()["games_done"] < total
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=20)

        try:
            await asyncio.wait_for(playing, TIMEOUT)
            await asyncio.wait_for(asyncio.gather(*watchers), TIMEOUT)
        except TimeoutError:
            shown = [
                (await http.get(f"{url}/tournaments/{tournament_id}")).json()
                for url in (second_url, third_url)
            ]
            raise AssertionError(
                f"not finished: alice ended {sorted(alice.ended)}, views {alice.views}, "
                f"connections {alice.connections}; shown {shown}; stored {await _stored()}"
            ) from None
        assert alice.connections[0] == ws[0] and ws[1] in alice.connections[1:]
        assert len(alice.ended) == 4
        ends = [check_watched(received, total) for received in watched]
        for url in (second_url, third_url):
            state = (await http.get(f"{url}/tournaments/{tournament_id}")).json()
            assert state["status"] == "finished", state
            assert state["games_done"] == state["games_total"] == total == len(state["games"])
            assert state["standings"]["points"] == ends[0]["standings"]["points"]
            points = {participant: 0.0 for participant in BODY["bots"]}
            for game in state["games"]:
                points[game["first"]] += game["result"]
                points[game["second"]] += 1 - game["result"]
                match = (await http.get(f"{url}/matches/{game['match_id']}")).json()
                assert match["status"] == "finished", match
                assert game["reason"] == match["result"]["description"]
            assert {row["bot"]: row["points"] for row in state["standings"]["points"]} == points
        return str(tournament_id)


async def _stored() -> dict[str, Any]:
    """Return the stored matches and processes (a failure's explanation)."""
    engine = create_engine(DATABASE_URL)
    try:
        async with engine.connect() as connection:
            matches = (
                await connection.execute(
                    select(Match.id, Match.status, Match.owner_id, Match.owner_epoch)
                )
            ).all()
            processes = (await connection.execute(select(ArenaProcess.id, ArenaProcess.pid))).all()
            tournaments = (
                await connection.execute(
                    select(TournamentRow.owner_id, TournamentRow.owner_epoch, TournamentRow.status)
                )
            ).all()
    finally:
        await engine.dispose()
    return {
        "matches": [tuple(row) for row in matches],
        "processes": [tuple(row) for row in processes],
        "tournaments": [tuple(row) for row in tournaments],
    }


async def _check_stored(tournament_id: str, killed_pid: int) -> None:
    """Each game stored once with one match; the tournament claimed once after the kill."""
    engine = create_engine(DATABASE_URL)
    try:
        async with engine.connect() as connection:
            games = (
                await connection.execute(
                    select(GameRow.game_index, GameRow.match_id, GameRow.result).where(
                        GameRow.tournament_id == tournament_id
                    )
                )
            ).all()
            assert sorted(index for index, _, _ in games) == list(range(len(games)))
            assert len(games) == 6 and all(result is not None for _, _, result in games)
            matches = await connection.scalar(select(func.count()).select_from(Match))
            assert matches == 6  # no game's match was made twice
            owner_id, epoch, status = (
                await connection.execute(
                    select(
                        TournamentRow.owner_id, TournamentRow.owner_epoch, TournamentRow.status
                    ).where(TournamentRow.id == tournament_id)
                )
            ).one()
            pids = dict((await connection.execute(select(ArenaProcess.id, ArenaProcess.pid))).all())
            match_owners = dict(
                (
                    await connection.execute(
                        select(Match.owner_id, func.count()).group_by(Match.owner_id)
                    )
                ).all()
            )
    finally:
        await engine.dispose()
    assert status == "finished"
    # The matches were played last by the tournament's owner or by the other survivor (its
    # runner then saw their ends over the bus), never by a process unknown.
    assert set(match_owners) <= set(pids), match_owners
    # Claimed at the start (1), then by exactly one survivor (2); never by a second runner.
    assert epoch == 2
    assert owner_id is not None and pids.get(owner_id) not in (None, killed_pid)


def test_a_tournament_cancelled_on_another_process_stops_on_its_owner(tmp_path: Path) -> None:
    asyncio.run(_reset_database(DATABASE_URL))
    prefix = f"test-{uuid.uuid4().hex}"
    with (
        server(tmp_path, "owner", prefix) as (_owner, owner_url),
        server(tmp_path, "other", prefix) as (_other, other_url),
    ):
        asyncio.run(_cancel_elsewhere(owner_url, other_url))
    for name in ("owner", "other"):
        text = (tmp_path / f"{name}.log").read_text()
        # (The owner's runner may meet the fence first: a match it waited for was stopped by
        # the cancel, and its result refused; that is the fence working, not an error.)
        assert "Traceback" not in text, text[-3000:]


async def _cancel_elsewhere(owner_url: str, other_url: str) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        tokens = {}
        for name in ("organiser", "alice"):
            registered = await http.post(f"{owner_url}/players", json={"name": name})
            tokens[name] = registered.json()["token"]
        auth = {name: {"Authorization": f"Bearer {token}"} for name, token in tokens.items()}
        created = await http.post(f"{owner_url}/tournaments", json=BODY, headers=auth["organiser"])
        tournament_id = created.json()["tournament_id"]
        await http.post(f"{owner_url}/tournaments/{tournament_id}/accept", headers=auth["alice"])
        received: list[dict[str, Any]] = []
        ready = asyncio.Event()
        socket_url = owner_url.replace("http", "ws", 1) + f"/ws/tournaments/{tournament_id}"
        watching = asyncio.create_task(watch(socket_url, received, ready))
        await asyncio.wait_for(ready.wait(), TIMEOUT)
        alice = TestPlayer(tokens["alice"], [owner_url.replace("http", "ws", 1)], seed=4)
        playing = asyncio.create_task(alice.run(4))
        started = await http.post(
            f"{owner_url}/tournaments/{tournament_id}/start", headers=auth["organiser"]
        )
        assert started.status_code == 200, started.text
        deadline = time.monotonic() + TIMEOUT
        while not any(len(moves) >= 2 for moves in alice.acknowledged.values()):
            assert time.monotonic() < deadline, "alice's games did not get going"
            await asyncio.sleep(0.05)
        cancelled = await http.post(
            f"{other_url}/tournaments/{tournament_id}/cancel", headers=auth["organiser"]
        )
        assert cancelled.status_code == 200, cancelled.text
        assert cancelled.json()["status"] == "cancelled"
        # The owner's watcher is told the end once; every game stopped in play ends.
        await asyncio.wait_for(watching, TIMEOUT)
        assert [m["type"] for m in received].count("tournament_finished") == 1
        shown = [
            (await http.get(f"{url}/tournaments/{tournament_id}")).json()
            for url in (owner_url, other_url)
        ]
        # Alice is told the end of each of her games that was begun (the cancel may come
        # before all four of hers are: the runner keeps three games in flight).
        hers = {
            game["match_id"]
            for game in shown[0]["games"]
            if "player:alice" in (game["first"], game["second"])
        }
        deadline = time.monotonic() + TIMEOUT
        while not hers <= alice.ended:
            assert not playing.done(), playing
            untold = hers - alice.ended
            assert time.monotonic() < deadline, f"alice was not told the end of {untold}"
            await asyncio.sleep(0.05)
        playing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await playing
        assert [s["status"] for s in shown] == ["cancelled", "cancelled"]
        assert shown[0]["games_done"] == shown[1]["games_done"] < shown[0]["games_total"]
    engine = create_engine(DATABASE_URL)
    try:
        async with engine.connect() as connection:
            games = (
                await connection.execute(
                    select(GameRow.result, Match.status)
                    .join(Match, Match.id == GameRow.match_id)
                    .where(GameRow.tournament_id == tournament_id)
                )
            ).all()
    finally:
        await engine.dispose()
    assert all(status in ("finished", "aborted") for _, status in games), games
    assert sum(result is not None for result, _ in games) == shown[0]["games_done"]
