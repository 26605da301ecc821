"""SIGTERM stops `arena serve` within seconds while house bots search, losing no acknowledged
move; after a restart, no search runs for a match that ended."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from server.settings import Settings
from tests.server.conftest import arena_serve

LONG_BOT = {"bot": "mcts:time=30"}


@contextmanager
def served(database_url: str) -> Iterator[tuple[subprocess.Popen[str], httpx.Client]]:
    """Run `arena serve` with two search threads, both usable by one player; yield the
    process and a client of it."""
    with (
        arena_serve(database_url, ARENA_BOT_THREADS="2", ARENA_BOT_SEARCHES_PER_PLAYER="2") as (
            process,
            base,
        ),
        httpx.Client(base_url=base, timeout=10) as http,
    ):
        yield process, http


def cpu_seconds(pid: int) -> float:
    """Return the CPU time (user + system) process `pid` has used, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def terminate(process: subprocess.Popen[str]) -> float:
    """Send SIGTERM; return the seconds until the process exited (fail after 5)."""
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pytest.fail("the server did not exit within 5 s of SIGTERM")
    return time.monotonic() - started


def player(http: httpx.Client, name: str) -> dict[str, str]:
    response = http.post("/players", json={"name": name})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


def busy(process: subprocess.Popen[str], seconds: float) -> float:
    """Return the share of one CPU `process` used over the next `seconds`."""
    before = cpu_seconds(process.pid)
    time.sleep(seconds)
    return (cpu_seconds(process.pid) - before) / seconds


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_sigterm_stops_the_server_during_searches_and_loses_no_move(
    server_settings: Settings,
) -> None:
    url = server_settings.database_url
    with served(url) as (process, http):
        alice, bob = player(http, "alice"), player(http, "bob")
        # Alice plays first; the house bot searches its reply for up to 30 s.
        replied = http.post(
            "/matches", json={"game": "connect4", "seats": ["alice", LONG_BOT]}, headers=alice
        )
        match_id = replied.json()["match_id"]
        moved = http.post(f"/matches/{match_id}/moves", json={"move": "4"}, headers=alice)
        assert moved.status_code == 200, moved.text
        # Bob's house bot searches its first move.
        other = http.post(
            "/matches", json={"game": "checkers", "seats": [LONG_BOT, "bob"]}, headers=bob
        ).json()["match_id"]
        assert busy(process, 1.0) > 0.15  # the searches run
        assert terminate(process) < 5
    with served(url) as (process, http):
        state = http.get(f"/matches/{match_id}").json()
        assert state["moves"] == ["4"]
        assert state["status"] == "active" and state["to_move"] == 1
        assert http.get(f"/matches/{other}").json()["status"] == "active"
        # Their bots search again after the restart, and stop again on SIGTERM.
        assert busy(process, 1.0) > 0.15
        assert terminate(process) < 5


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_restart_resumes_no_search_of_a_finished_match(server_settings: Settings) -> None:
    url = server_settings.database_url
    with served(url) as (process, http):
        alice = player(http, "alice")
        ids = []
        for game in ("checkers", "connect4"):
            created = http.post(
                "/matches", json={"game": game, "seats": [LONG_BOT, "alice"]}, headers=alice
            )
            ids.append(created.json()["match_id"])
        assert busy(process, 1.0) > 0.15
        assert http.post(f"/matches/{ids[0]}/resign", headers=alice).status_code == 200
        assert http.post(f"/matches/{ids[1]}/abort", headers=alice).status_code == 200
        time.sleep(0.5)
        assert busy(process, 1.5) < 0.1  # both searches stopped
        assert terminate(process) < 5
    with served(url) as (process, http):
        time.sleep(0.5)
        assert busy(process, 1.5) < 0.1
        assert [http.get(f"/matches/{i}").json()["status"] for i in ids] == ["finished", "aborted"]


def children(pid: int) -> list[int]:
    """Return the ids of the processes whose parent is `pid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def running(pid: int) -> bool:
    """Return True while process `pid` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_played_ahead_searches_end_with_their_server(server_settings: Settings) -> None:
    url = server_settings.database_url
    with served(url) as (process, http):
        alice = player(http, "alice")
        # Two untimed house bots: played ahead in a child process of the server.
        created = http.post(
            "/matches",
            json={"game": "checkers", "seats": [LONG_BOT, {"bot": "mcts:time=30,seed=1"}]},
            headers=alice,
        )
        assert created.status_code == 201, created.text
        deadline = time.monotonic() + 5
        while not (searchers := children(process.pid)):
            assert time.monotonic() < deadline, "no play-ahead child started"
            time.sleep(0.05)
        time.sleep(0.5)
        assert all(running(pid) for pid in searchers)
        assert terminate(process) < 5
        # The child notices its server is gone at its next look and ends.
        deadline = time.monotonic() + 2
        while any(running(pid) for pid in searchers):
            assert time.monotonic() < deadline, "a played-ahead search outlived its server"
            time.sleep(0.05)
