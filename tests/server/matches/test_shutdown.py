"""SIGTERM stops `arena serve` while house bots search, losing no acknowledged move; after a
restart, no search runs for a match that ended.

No test measures seconds: the house bots search for ten minutes a move, so a server that exits
within the one-minute deadline did not wait for its searches, and CPU time shows whether the
searches run (it grows by seconds) or have stopped (it hardly grows).
"""

from __future__ import annotations

import math
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

LONG_BOT = {"bot": "mcts:time=600"}
"""A house bot that searches for ten minutes a move unless stopped."""

DEADLINE = 60.0
"""Seconds a wait may take before the test fails: generous, and far short of LONG_BOT's move."""


@contextmanager
def served(database_url: str) -> Iterator[tuple[subprocess.Popen[str], httpx.Client]]:
    """Run `arena serve` with two search threads, both usable by one player; yield the
    process and a client of it."""
    with (
        arena_serve(
            database_url,
            ARENA_BOT_THREADS="2",
            ARENA_BOT_SEARCHES_PER_PLAYER="2",
            ARENA_BOT_MAX_SECONDS="600",
        ) as (process, base),
        httpx.Client(base_url=base, timeout=10) as http,
    ):
        yield process, http


def cpu_seconds(pid: int) -> float:
    """Return the CPU time (user + system) process `pid` has used, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def terminate(process: subprocess.Popen[str]) -> None:
    """Send SIGTERM and wait for the process to exit (fail after DEADLINE seconds)."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the server did not exit within {DEADLINE:g} s of SIGTERM")


def player(http: httpx.Client, name: str) -> dict[str, str]:
    response = http.post("/players", json={"name": name})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


SEARCHING_CPU_SECONDS = 2.0
"""CPU time a searching server uses within seconds, and an idle one (about 1% of a CPU) not
within DEADLINE."""


def wait_until_searching(process: subprocess.Popen[str]) -> None:
    """Wait until `process` has used SEARCHING_CPU_SECONDS more CPU time: its searches run."""
    target = cpu_seconds(process.pid) + SEARCHING_CPU_SECONDS
    deadline = time.monotonic() + DEADLINE
    while cpu_seconds(process.pid) < target:
        assert time.monotonic() < deadline, f"the server did not search within {DEADLINE:g} s"
        time.sleep(0.1)


def busy(process: subprocess.Popen[str], seconds: float) -> float:
    """Return the share of one CPU `process` used over the next `seconds`.

    Only ever asserted small: a loaded machine makes the share smaller, never larger.
    """
    before = cpu_seconds(process.pid)
    time.sleep(seconds)
    return (cpu_seconds(process.pid) - before) / seconds


def quiet_within(process: subprocess.Popen[str], seconds: float) -> bool:
    """Return True once `process` uses under a tenth of a CPU over 1.5 s, trying for
    `seconds` of windows (each counted by the windows tried, not by a clock)."""
    return any(busy(process, 1.5) < 0.1 for _ in range(math.ceil(seconds / 1.5)))


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
        wait_until_searching(process)
        terminate(process)
    with served(url) as (process, http):
        state = http.get(f"/matches/{match_id}").json()
        assert state["moves"] == ["4"]
        assert state["status"] == "active" and state["to_move"] == 1
        assert http.get(f"/matches/{other}").json()["status"] == "active"
        # Their bots search again after the restart, and stop again on SIGTERM.
        wait_until_searching(process)
        terminate(process)


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
        wait_until_searching(process)
        assert http.post(f"/matches/{ids[0]}/resign", headers=alice).status_code == 200
        assert http.post(f"/matches/{ids[1]}/abort", headers=alice).status_code == 200
        time.sleep(0.5)
        assert busy(process, 1.5) < 0.1  # both searches stopped
        terminate(process)
    with served(url) as (process, http):
        # A starting server loads the compiled search on a thread of its own; a resumed search
        # of a house bot would keep it busy for far longer than this wait.
        assert quiet_within(process, 20.0)
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
            json={"game": "checkers", "seats": [LONG_BOT, {"bot": "mcts:time=600,seed=1"}]},
            headers=alice,
        )
        assert created.status_code == 201, created.text
        deadline = time.monotonic() + DEADLINE
        while not (searchers := children(process.pid)):
            assert time.monotonic() < deadline, "no play-ahead child started"
            time.sleep(0.05)
        time.sleep(0.5)
        assert all(running(pid) for pid in searchers)
        terminate(process)
        # The child notices its server is gone at its next look and ends; it would otherwise
        # search on for ten minutes a move.
        deadline = time.monotonic() + DEADLINE
        while any(running(pid) for pid in searchers):
            assert time.monotonic() < deadline, "a played-ahead search outlived its server"
            time.sleep(0.05)
