"""`arena trace`: the traced tree as text, JSON, SVG and HTML, and its refusals."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bots.spec import create_bot
from cli.main import create_cli
from games import get_game

runner = CliRunner()
app = create_cli()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_trace_is_an_arena_command() -> None:
    code, out, _ = run("--help")
    assert code == 0 and "trace" in out


def test_text_output_is_the_indented_tree() -> None:
    code, out, _ = run(
        "trace", "tictactoe", "--bot", "alphabeta_lecture:depth=2", "--position", "XX.OO...."
    )
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "alphabeta on tictactoe XX.OO...."
    assert lines[2] == "* #0 root MAX <-∞,∞> = W1"
    assert lines[3] == "  * #1 2 MIN <-∞,∞> = W1 (terminal)"
    assert lines[4] == "  - #2 5 MIN <W1,∞> = ≤-4 cut, never searched: 6 7 8"
    assert lines[-1] == "nodes by depth: 1, 5, 4"


def test_json_matches_the_bots_own_statistics() -> None:
    state = get_game("connect4").parse_position("4455")
    for spec in ("alphabeta:depth=3", "negamax:depth=3", "minimax:depth=2,prune=on"):
        code, out, _ = run("trace", "connect4", "--bot", spec, "--position", "4455", "--json")
        assert code == 0
        data = json.loads(out)
        result = create_bot(spec, get_game("connect4")).choose(state)
        assert data["stats"]["nodes"] == result.stats.nodes == len(data["nodes"])
        assert data["stats"]["cutoffs"] == result.stats.cutoffs
        assert data["pv"] == result.stats.pv
        assert data["nodes"][0]["children"][0] == 1


def test_the_oracle_count_from_the_command_line() -> None:
    code, out, _ = run(
        "trace", "tictactoe", "--bot", "alphabeta_lecture:soft=on", "--to-end",
        "--scoring", "lecture", "--window=-1,1", "--json",
    )  # fmt: skip
    data = json.loads(out)
    assert code == 0 and data["stats"]["nodes"] == 16_811 and data["window"] == [-1, 1]
    assert data["search"] == "alphabeta_soft" and data["depth"] is None


def test_svg_and_html_files(tmp_path: Path) -> None:
    svg = tmp_path / "tree.svg"
    code, out, _ = run("trace", "nim", "--option", "heaps=3,2", "--search", "minimax_prune",
                       "--to-end", "--scoring", "lecture", "--svg", str(svg))  # fmt: skip
    assert code == 0 and out.startswith(f"wrote {svg}: minimax_prune")
    root = ET.fromstring(svg.read_text(encoding="utf-8"))
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    page = tmp_path / "tree.html"
    code, out, _ = run("trace", "checkers", "--bot", "alphabeta:depth=3", "--html", str(page))
    assert code == 0
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and 'id="trace-data"' in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bot", "mcts"], "bot mcts cannot be traced"),
        (["--bot", "minimax:depth=x"], "must be a whole number"),
        (["--bot", "minimax", "--search", "minimax"], "--bot SPEC or --search NAME"),
        ([], "--bot SPEC or --search NAME"),
        (["--search", "bogus"], "unknown search 'bogus'"),
        (["--bot", "minimax:depth=9"], "more than 20,000 nodes"),
        (["--bot", "minimax", "--depth", "2", "--to-end"], "not both"),
        (["--bot", "minimax", "--window", "1,0"], "ALPHA < BETA"),
        (["--bot", "minimax", "--window", "1"], "ALPHA,BETA"),
        (["--bot", "minimax", "--window", "a,b"], "numbers or inf"),
        (["--bot", "minimax", "--window=-1e99,1"], "within"),
        (["--bot", "minimax", "--scoring", "odd"], "unknown scoring"),
        (["--bot", "minimax", "--eval", "lines"], "spec's eval option"),
        (["--search", "minimax", "--eval", "nope"], "nope"),
        (["--bot", "minimax", "--json", "--svg", "x.svg"], "not --json and --svg"),
        (["--bot", "minimax", "--position", "XXXOO...."], "game is over"),
        (["--bot", "minimax", "--position", "XX"], "expected 9"),
    ],
)
def test_bad_requests_exit_2_with_a_message(args: list[str], message: str) -> None:
    code, out, err = run("trace", "tictactoe", *args)
    assert code == 2
    assert message in " ".join(err.split())
    assert "Traceback" not in err + out


@pytest.mark.parametrize(
    ("args", "word"),
    [
        (["--max-nodes", "1000001"], "--max-nodes"),
        (["--max-nodes", "0"], "--max-nodes"),
        (["--depth", "129"], "--depth"),
        (["--show", "2001"], "--show"),
    ],
)
def test_every_number_has_a_limit(args: list[str], word: str) -> None:
    code, _, err = run("trace", "tictactoe", "--bot", "minimax:depth=1", *args)
    assert code == 2 and word in err


def test_an_unwritable_file_is_a_message(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "tree.svg"
    code, _, err = run("trace", "tictactoe", "--bot", "minimax:depth=1", "--svg", str(target))
    assert code == 2 and "cannot write" in err
