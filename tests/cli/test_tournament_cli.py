"""`arena tournament`: results, reports, records, and openings from a deck or a file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from cli.main import create_cli
from cli.tournament import leaders
from competition.openings import deck
from competition.runner import GameRecord

STRONG = "alphabeta:depth=4"
REPOSITORY = Path(__file__).resolve().parents[2]
PACKAGES = ("games", "bots", "protocol", "competition", "autograder", "server", "cli")
ACF = {opening.name for opening in deck("acf-3move")}


def test_tournament_writes_json_html_and_records(tmp_path: Path) -> None:
    out, page, folder = tmp_path / "r.json", tmp_path / "r.html", tmp_path / "games"
    result = CliRunner().invoke(
        create_cli(),
        [
            "tournament", "--game", "tictactoe", "--bots", "random", STRONG, "--games", "2",
            "--json", str(out), "--html", str(page), "--records", str(folder),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "95% interval" in result.stdout or "not rated" in result.stdout
    assert "nodes/s" in result.stdout

    data = json.loads(out.read_text())
    assert data["spec"]["bots"] == ["random", STRONG]
    assert len(data["games"]) == 2
    assert data["standings"][0]["bot"] == STRONG
    assert {row["bot"] for row in data["search"]} == {"random", STRONG}
    assert data["elo"] is not None
    assert data["elo"]["ratings"][0]["bot"] == STRONG

    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "<svg" in html and STRONG in html

    files = sorted(folder.iterdir())
    assert [f.name for f in files] == ["game-0001.json", "game-0002.json"]
    records = [GameRecord.from_dict(json.loads(f.read_text())) for f in files]
    assert [r.to_dict() for r in records] == data["games"]


def test_unwritable_output_exits_2_without_traceback(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = CliRunner().invoke(
        create_cli(),
        [
            "tournament", "--game", "tictactoe", "--bots", "random", "greedy",
            "--records", str(blocker / "games"),
        ],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "cannot write the results" in result.stderr
    assert "Traceback" not in result.output


def test_leaders_shows_the_best_bots_escaped_leader_first() -> None:
    text = leaders({"a": 1.0, "[b]": 2.5, "c": 0.5, "d": 0.0})
    assert text.startswith("[bold]\\[b] 2.5[/bold]")
    assert "a 1" in text and "c 0.5" in text and "d 0" not in text
    assert text.endswith(" ...")


def test_the_readme_checkers_example_runs_in_a_clone_with_nothing_beside_it(
    tmp_path: Path,
) -> None:
    # A copy of the packages with no ../shared beside it (or beside the working directory)
    # stands for a user's fresh clone; PYTHONPATH puts it before the installed Arena.
    clone, work = tmp_path / "clone", tmp_path / "work"
    for package in PACKAGES:
        shutil.copytree(
            REPOSITORY / package,
            clone / package,
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        )
    work.mkdir()
    assert not (tmp_path / "shared").exists()
    env = {**os.environ, "PYTHONPATH": str(clone)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, *args],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    where = run("-c", "import competition.openings as o; print(o.__file__)")
    assert Path(where.stdout.strip()).is_relative_to(clone), where
    arena = "from cli.main import main; main()"
    result = run(
        "-c", arena, "tournament", "--game", "checkers",
        "--bots", "alphabeta:depth=1", "alphabeta:depth=2", "--games", "2", "--json", "out.json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    games = json.loads((work / "out.json").read_text())["games"]
    assert len(games) == 2
    assert {game["opening"] for game in games} <= ACF


def test_openings_names_a_deck(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = CliRunner().invoke(
        create_cli(),
        [
            "tournament", "--game", "checkers", "--bots", "alphabeta:depth=1", "greedy",
            "--games", "4", "--seed", "3", "--openings", "acf-3move", "--json", str(out),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    openings = [game["opening"] for game in json.loads(out.read_text())["games"]]
    assert len(openings) == 4 and set(openings) <= ACF
    assert len(set(openings)) == 2


def test_openings_that_are_no_deck_no_file_or_another_game_exit_2(tmp_path: Path) -> None:
    for game, choice, message in (
        ("checkers", str(tmp_path / "missing.txt"), "is neither a deck (acf-3move) nor a file"),
        ("tictactoe", "acf-3move", "deck 'acf-3move' is for checkers, not tictactoe"),
    ):
        result = CliRunner().invoke(
            create_cli(),
            ["tournament", "--game", game, "--bots", "random", "greedy", "--openings", choice],
        )
        assert result.exit_code == 2, result.output
        # rich wraps the message to the terminal's width.
        assert message in " ".join(result.stderr.split())
        assert "Traceback" not in result.output


def test_openings_reads_a_file(tmp_path: Path) -> None:
    path, out = tmp_path / "mine.txt", tmp_path / "r.json"
    path.write_text("# two openings\n4 0\n0 4 # corner then centre\n")
    result = CliRunner().invoke(
        create_cli(),
        [
            "tournament", "--game", "tictactoe", "--bots", "random", "greedy", "--games", "4",
            "--openings", str(path), "--json", str(out),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    openings = {game["opening"] for game in json.loads(out.read_text())["games"]}
    assert openings == {"4 0", "0 4"}
