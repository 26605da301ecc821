"""`arena tournament` writes the JSON results, the HTML report and the game records."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cli.main import create_cli
from cli.tournament import leaders
from tournament.runner import GameRecord

STRONG = "alphabeta:depth=4"


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
