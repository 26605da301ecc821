"""A tournament killed with SIGKILL resumes from its journal without replaying a finished game."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

BOTS = ["alphabeta:depth=3", "alphabeta:depth=2", "greedy"]


def game_lines(journal: Path) -> list[str]:
    if not journal.exists():
        return []
    lines = journal.read_text(encoding="utf-8").splitlines()
    return [line for line in lines[1:] if line.strip()]


def command(exe: str, journal: Path, out: Path) -> list[str]:
    return [
        exe,
        "tournament",
        "--game",
        "checkers",
        "--bots",
        *BOTS,
        "--games",
        "6",
        "--seed",
        "7",
        "--concurrency",
        "1",
        "--journal",
        str(journal),
        "--json",
        str(out),
    ]


def test_a_killed_tournament_resumes_without_replaying(tmp_path: Path) -> None:
    exe = shutil.which("arena", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the arena console script is not installed in this environment")
    journal, out = tmp_path / "run.journal", tmp_path / "out.json"
    process = subprocess.Popen(
        command(exe, journal, out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        # A liveness bound only (the first games wait for the engine's compiled code, slower
        # on a loaded machine): it keeps a broken runner from hanging the run.
        deadline = time.monotonic() + 300
        while len(game_lines(journal)) < 4:
            assert process.poll() is None, "the tournament ended before it could be killed"
            assert time.monotonic() < deadline, "no game finished within 300 s"
            time.sleep(0.05)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
    finally:
        if process.poll() is None:
            process.kill()
    before = journal.read_text(encoding="utf-8")
    finished = game_lines(journal)
    assert 4 <= len(finished) < 18  # killed mid-run (3 pairings x 6 games)
    assert not out.exists()

    resumed = subprocess.run(
        command(exe, journal, out), capture_output=True, text=True, timeout=300, check=False
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    after = journal.read_text(encoding="utf-8")
    # Only appended: every game finished before the kill is kept as it was, none played again.
    kept = before if before.endswith("\n") else before[: before.rfind("\n") + 1]
    assert after.startswith(kept)
    indexes = [json.loads(line)["game"]["index"] for line in game_lines(journal)]
    assert sorted(indexes) == list(range(18))

    # The same tournament played without interruption gives the same games.
    fresh_journal, fresh_out = tmp_path / "fresh.journal", tmp_path / "fresh.json"
    fresh = subprocess.run(
        command(exe, fresh_journal, fresh_out),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr

    def games(path: Path) -> list[tuple[int, list[str], float, str]]:
        data = json.loads(path.read_text(encoding="utf-8"))
        return [(g["index"], g["moves"], g["result"], g["reason"]) for g in data["games"]]

    assert games(out) == games(fresh_out)
