"""The quick start `arena serve` prints works when pasted into a shell, again and again."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from cli.server import arena_command, quick_start
from server.settings import Settings
from tests.server.conftest import RunningServer


def play_block(banner: str) -> str:
    """Return the banner's lines meant to be pasted: from BASE= to the last curl, as a script."""
    lines = [line.strip() for line in banner.splitlines()]
    start = next(i for i, line in enumerate(lines) if line.startswith("BASE="))
    end = next(
        i for i, line in enumerate(lines) if line.startswith("curl -s $BASE/matches/$MATCH ")
    )
    return "\n".join(lines[start : end + 1])


def test_the_pasted_quick_start_plays_a_move_twice(live_server: RunningServer) -> None:
    """Pasted twice (a second terminal, a second day), the commands work both times."""
    for _ in range(2):
        banner = quick_start(Settings(), port=live_server.port)
        assert f"Arena on {live_server.url}" in banner
        script = "set -euo pipefail\n" + play_block(banner) + '\necho "MATCH=$MATCH"\n'
        done = subprocess.run(
            ["bash", "-c", script], capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 0, done.stdout + done.stderr
        # The move's answer, the state's answer, then the match id.
        match_id = re.search(r"MATCH=(\S+)", done.stdout)
        assert match_id is not None, done.stdout
        state = httpx.get(f"{live_server.url}/matches/{match_id.group(1)}").json()
        assert state["moves"][0] == "11-15"
        assert state["seats"][1]["bot"] == Settings().house_bots[0]


def test_each_banner_registers_a_fresh_name() -> None:
    names = {
        json.loads(re.search(r"-d '(\{\"name\".*?\})'", quick_start(Settings())).group(1))["name"]  # type: ignore[union-attr]
        for _ in range(5)
    }
    assert len(names) == 5


def test_the_banner_names_arena_as_the_user_can_run_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """After `make run`, .venv/bin is not on PATH: the banner must say .venv/bin/arena."""
    exe = Path(sys.executable).parent / "arena"
    monkeypatch.chdir(exe.parents[2])
    monkeypatch.setattr(sys, "argv", [str(exe), "serve"])
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    expected = str(exe.relative_to(exe.parents[2]))
    assert arena_command() == expected
    assert f"{expected} grader starter --out my-solution" in quick_start(Settings())
    monkeypatch.setenv("PATH", f"{exe.parent}:/usr/bin:/bin")
    assert arena_command() == "arena"
