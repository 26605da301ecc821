"""`arena match` and `arena tournament --sprt`: real processes that play until the SPRT
decides, resume from their journal after a kill, and refuse bad settings in one line."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from competition.stats.sprt import SprtTest, pentanomial

STRONG, WEAK = "alphabeta:depth=1", "random"


def arena() -> str:
    exe = shutil.which("arena", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the arena console script is not installed in this environment")
    return exe


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return complete([arena(), *args])


def complete(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)


def check_counts(data: dict[str, object]) -> None:
    """The reported counts and LLR are those of the games reported, every pair complete."""
    sprt = data["sprt"]
    games = data["games"]
    assert isinstance(sprt, dict) and isinstance(games, list)
    first = sprt["bots"][0]
    by_pair: dict[int, list[float]] = {}
    for game in games:
        score = game["result"] if game["first"] == first else 1 - game["result"]
        by_pair.setdefault(game["pair"], []).append(score)
    assert all(len(scores) == 2 for scores in by_pair.values())
    penta = pentanomial(sum(scores) for scores in by_pair.values())
    assert sprt["pentanomial"] == list(penta)
    scores = [s for pair in by_pair.values() for s in pair]
    assert [sprt["wins"], sprt["draws"], sprt["losses"]] == [
        scores.count(1.0),
        scores.count(0.5),
        scores.count(0.0),
    ]
    test = SprtTest(**sprt["test"])
    assert sprt["llr"] == pytest.approx(test.llr(penta))


@pytest.mark.parametrize("concurrency", ["1", "2"])
def test_a_stronger_bot_is_accepted_as_stronger(tmp_path: Path, concurrency: str) -> None:
    out = tmp_path / "m.json"
    result = run(
        "match", STRONG, WEAK, "--game", "tictactoe", "--sprt", "elo0=0", "elo1=50",
        "--max-games", "400", "-j", concurrency, "--json", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"H1 accepted: {STRONG} is stronger than {WEAK}" in result.stdout
    data = json.loads(out.read_text())
    sprt = data["sprt"]
    assert sprt["verdict"] == "H1"
    assert sprt["llr"] >= sprt["upper_bound"] == pytest.approx(2.944438979)
    assert sprt["games"] < 400
    assert sprt["elo"]["elo"] > 0
    check_counts(data)
    # The test stops at the first pair that crosses the bound (one worker: in order).
    if concurrency == "1":
        test = SprtTest(0, 50)
        by_pair: dict[int, float] = {}
        for game in data["games"]:
            by_pair[game["pair"]] = by_pair.get(game["pair"], 0) + (
                game["result"] if game["first"] == STRONG else 1 - game["result"]
            )
        pairs = [by_pair[k] for k in sorted(by_pair)]
        assert sorted(by_pair) == list(range(len(pairs)))
        assert test.decide(test.llr(pentanomial(pairs[:-1]))) is None


def test_a_weaker_bot_is_not_accepted_and_the_tournament_form_agrees(tmp_path: Path) -> None:
    match = run(
        "match", WEAK, STRONG, "--game", "tictactoe", "--sprt", "elo0=0 elo1=50",
        "--max-games", "400",
    )  # fmt: skip
    assert match.returncode == 0, match.stderr
    assert f"H0 accepted: {WEAK} is not elo1 stronger than {STRONG}" in match.stdout
    same = run(
        "tournament", "--game", "tictactoe", "--bots", WEAK, STRONG,
        "--sprt", "elo0=0", "elo1=50", "--max-games", "400",
    )  # fmt: skip
    assert same.returncode == 0, same.stderr
    assert same.stdout == match.stdout


def match_command(journal: Path, out: Path, max_games: int) -> list[str]:
    return [
        arena(), "match", "alphabeta:depth=2", "alphabeta:depth=1", "--game", "connect4",
        "--sprt", "elo0=0 elo1=5", "--max-games", str(max_games), "--seed", "3",
        "--journal", str(journal), "--json", str(out),
    ]  # fmt: skip


def journal_games(journal: Path) -> list[dict[str, object]]:
    if not journal.exists():
        return []
    lines = journal.read_text(encoding="utf-8").splitlines()[1:]
    games = []
    for line in lines:
        with contextlib.suppress(ValueError):  # a line cut short by the kill
            games.append(json.loads(line)["game"])
    return games


def test_a_killed_match_resumes_and_counts_every_game_once(tmp_path: Path) -> None:
    journal, out = tmp_path / "m.journal", tmp_path / "m.json"
    process = subprocess.Popen(
        match_command(journal, out, 40), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        # Each game is bounded by its ply cap and the bots' limits: the match either journals
        # games or ends, which fails the test.
        while len(journal_games(journal)) < 5:
            assert process.poll() is None, "the match ended before it could be killed"
            time.sleep(0.02)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
    finally:
        if process.poll() is None:
            process.kill()
    killed = len(journal_games(journal))
    assert 5 <= killed < 40
    assert not out.exists()

    resumed = complete(match_command(journal, out, 40))
    assert resumed.returncode == 0, resumed.stderr
    indexes = sorted(int(str(g["index"])) for g in journal_games(journal))
    assert indexes == list(range(40))  # nothing played twice, nothing left out
    data = json.loads(out.read_text())
    assert data["sprt"]["verdict"] == "inconclusive"
    assert data["sprt"]["games"] == 40
    check_counts(data)

    # The same match without the kill: the same games and the same verdict, word for word.
    fresh_journal, fresh_out = tmp_path / "f.journal", tmp_path / "f.json"
    fresh = complete(match_command(fresh_journal, fresh_out, 40))
    assert fresh.returncode == 0, fresh.stderr
    assert fresh.stdout.replace(str(fresh_out), "") == resumed.stdout.replace(str(out), "")
    assert json.loads(fresh_out.read_text())["sprt"] == data["sprt"]

    # Rerun as it is: nothing more to play; with a larger cap: it plays on from there.
    again = complete(match_command(journal, out, 40))
    assert again.stdout == resumed.stdout
    assert len(journal_games(journal)) == 40
    more = complete(match_command(journal, out, 44))
    assert more.returncode == 0, more.stderr
    assert sorted(int(str(g["index"])) for g in journal_games(journal)) == list(range(44))
    check_counts(json.loads(out.read_text()))


def test_a_journal_of_another_match_is_refused(tmp_path: Path) -> None:
    journal = tmp_path / "m.journal"
    first = run(
        "match", STRONG, WEAK, "--game", "nim", "--sprt", "elo0=0 elo1=50",
        "--max-games", "4", "--journal", str(journal),
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    other = run(
        "match", STRONG, WEAK, "--game", "nim", "--sprt", "elo0=0 elo1=20",
        "--max-games", "4", "--journal", str(journal),
    )  # fmt: skip
    assert other.returncode == 2
    assert "records a different tournament (differs in: sprt)" in other.stderr
    assert "Traceback" not in other.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["match", "random", "greedy", "--sprt", "elo0=5 elo1=0"], "elo1 (0) must be greater"),
        (["match", "random", "greedy", "--sprt", "elo0=0", "elo1=5", "alpha=1.5"], "alpha must"),
        (["match", "random", "greedy", "--sprt", "elo0=0 elo1=5 beta=0"], "beta must be"),
        (["match", "random", "greedy", "--sprt", "elo0=0 elo1=5 tau=1"], "unknown SPRT setting"),
        (["match", "random", "greedy", "minimax", "--sprt", "elo0=0 elo1=5"], "between 2 bots"),
        (
            ["tournament", "--bots", "random", "greedy", "minimax", "--sprt", "elo0=0 elo1=5"],
            "between 2 bots",
        ),
        (["match", "random", "greedy", "--sprt", "elo0=0 elo1=5", "--max-games", "7"], "even"),
        (
            ["tournament", "-b", "random", "greedy", "--sprt", "elo0=0 elo1=5", "--games", "4"],
            "--max-games",
        ),
        (["match", "random", "nonsense", "--sprt", "elo0=0 elo1=5"], "nonsense"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = run(*args, "--game", "nim")
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr
