"""The quick start `arena serve` prints works when pasted into a shell, again and again."""

from __future__ import annotations

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
    end = next(i for i, line in enumerate(lines) if "# the whole state" in line)
    return "\n".join(lines[start : end + 1])


def test_the_pasted_quick_start_plays_a_move_twice(live_server: RunningServer) -> None:
    """The same banner pasted twice (a second terminal, a second try) works both times."""
    banner = quick_start(Settings(), port=live_server.port)
    assert f"Arena on {live_server.url}" in banner
    script = "set -euo pipefail\n" + play_block(banner) + '\necho "MATCH=$MATCH NAME=$NAME"\n'
    names = set()
    for _ in range(2):
        done = subprocess.run(
            ["bash", "-c", script], capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 0, done.stdout + done.stderr
        found = re.search(r"MATCH=(\S+) NAME=(\S+)", done.stdout)
        assert found is not None, done.stdout
        names.add(found.group(2))
        state = httpx.get(f"{live_server.url}/matches/{found.group(1)}").json()
        assert state["moves"][0] == "11-15"
        assert state["seats"][0]["player"] == found.group(2)
        assert state["seats"][1]["bot"] == Settings().house_bots[0]
    assert len(names) == 2


def test_a_refused_request_in_the_paste_says_why(live_server: RunningServer) -> None:
    """A name already taken stops the paste with the server's message, not a traceback."""
    banner = quick_start(Settings(), port=live_server.port)
    httpx.post(f"{live_server.url}/players", json={"name": "you-7"})
    script = "set -euo pipefail\n" + play_block(banner).replace("NAME=you-$RANDOM", "NAME=you-7")
    done = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode != 0
    assert "you-7" in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_the_banner_names_arena_as_the_user_can_run_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """After `make run`, .venv/bin is not on PATH: the banner must say .venv/bin/arena."""
    exe = Path(sys.executable).parent / "arena"
    monkeypatch.chdir(exe.parents[2])
    monkeypatch.setattr(sys, "argv", [str(exe), "serve"])
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    expected = str(exe.relative_to(exe.parents[2]))
    assert arena_command() == expected
    assert f"{expected} grader starter --out my-solution" in quick_start(Settings())
    assert f'{expected} course create "My course" --server $BASE' in quick_start(Settings())
    monkeypatch.setenv("PATH", f"{exe.parent}:/usr/bin:/bin")
    assert arena_command() == "arena"


def test_every_page_the_banner_names_is_served(live_server: RunningServer) -> None:
    """The addresses the banner sends a newcomer to (the lobby, the API docs, the search
    explorer) all answer with a page."""
    banner = quick_start(Settings(), port=live_server.port)
    urls = set(re.findall(rf"{re.escape(live_server.url)}/[\w/]*", banner))
    assert f"{live_server.url}/explore" in urls
    for url in urls:
        response = httpx.get(url, headers={"Accept": "text/html"})  # as a browser asks
        assert response.status_code == 200, url
        assert response.headers["content-type"].startswith("text/html"), url


def test_the_banner_says_how_student_code_is_graded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A newcomer learns at start-up whether uploads are sandboxed, refused, or run bare."""
    from sandbox import Mode, Support, sandbox_support

    assert "student code runs in bubblewrap's sandbox" in quick_start(Settings()) or (
        sandbox_support().mode is Mode.NONE
    )
    missing = Support(Mode.NONE, "the kernel refuses unprivileged user namespaces")
    monkeypatch.setattr("sandbox.sandbox_support", lambda: missing)
    banner = quick_start(Settings())
    assert "grading is off here: no sandbox (the kernel refuses unprivileged user" in banner
    banner = quick_start(Settings(grader_allow_unsandboxed=True))
    assert "WARNING: student code runs WITHOUT a sandbox here (the kernel refuses" in banner
    monkeypatch.setattr("sandbox.sandbox_support", lambda: Support(Mode.USER, ""))
    assert "bubblewrap's sandbox, in a user namespace" in quick_start(Settings())
    monkeypatch.setattr("sandbox.sandbox_support", lambda: Support(Mode.ROOT, ""))
    assert "bubblewrap's sandbox, as uids of its own" in quick_start(Settings())
