"""`arena grader submit`: upload to a real server, wait, show the grade; refusals exit 2."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from cli.main import create_cli
from sandbox import can_isolate
from server.settings import Settings
from tests.server.conftest import RunningServer, start_server

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "autograder" / "reference" / "endgame_solver.py"
PUBLIC_SUITE = ROOT / "autograder" / "examples" / "endgame-puzzles.json"


def register(server: RunningServer, name: str = "student") -> str:
    """Register a player on `server`; return its token."""
    response = httpx.post(f"{server.url}/players", json={"name": name})
    assert response.status_code == 201, response.text
    return str(response.json()["token"])


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RunningServer]:
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}",
        grader_dir=tmp_path / "grader",
        grader_endgame_suite=PUBLIC_SUITE,
    )
    running = start_server(settings)
    try:
        yield running
    finally:
        running.stop()


@pytest.mark.skipif(
    os.geteuid() != 0 or not can_isolate(), reason="the sandbox with its uids needs root"
)
def test_a_folder_is_uploaded_graded_and_its_results_written(
    server: RunningServer, tmp_path: Path
) -> None:
    folder = tmp_path / "my-work"
    folder.mkdir()
    (folder / "checkers.py").write_bytes(REFERENCE.read_bytes())
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "junk.pyc").write_bytes(b"junk")
    results = tmp_path / "results.json"
    html = tmp_path / "report.html"
    outcome = CliRunner().invoke(
        create_cli(),
        [
            "grader",
            "submit",
            str(folder),
            "--server",
            server.url,
            "--token",
            register(server),
            "--results",
            str(results),
            "--html",
            str(html),
            "--json",
        ],
    )
    assert outcome.exit_code == 0, outcome.output
    data = json.loads(results.read_text())
    puzzles = len(json.loads(PUBLIC_SUITE.read_text())["puzzles"])
    assert data["score"] == data["max_score"] == puzzles
    assert "<html" in html.read_text().lower()


def test_a_refused_upload_exits_2_with_the_servers_reason(
    server: RunningServer, tmp_path: Path
) -> None:
    program = tmp_path / "solution.py"
    program.write_text("print(1)\n")
    outcome = CliRunner().invoke(
        create_cli(),
        ["grader", "submit", str(program), "--server", server.url],
        env={"ARENA_TOKEN": register(server)},
    )
    assert outcome.exit_code == 2
    assert "BAD_SUBMISSION" in outcome.output and "checkers.py" in outcome.output


def test_an_upload_without_a_token_exits_2_and_says_how_to_pass_one(
    server: RunningServer, tmp_path: Path
) -> None:
    program = tmp_path / "checkers.py"
    program.write_text("print(1)\n")
    outcome = CliRunner().invoke(
        create_cli(),
        ["grader", "submit", str(program), "--server", server.url],
        env={"ARENA_TOKEN": None},
    )
    assert outcome.exit_code == 2
    assert "UNAUTHORIZED" in outcome.output and "--token" in outcome.output


def test_an_unreachable_server_is_a_clear_error(tmp_path: Path) -> None:
    program = tmp_path / "checkers.py"
    program.write_text("print(1)\n")
    outcome = CliRunner().invoke(
        create_cli(), ["grader", "submit", str(program), "--server", "http://127.0.0.1:9"]
    )
    assert outcome.exit_code == 2
    assert "cannot reach http://127.0.0.1:9" in outcome.output
