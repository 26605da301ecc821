"""`arena egdb`: build with resume, status, probe, and one-line refusals of bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import create_cli

runner = CliRunner()
app = create_cli()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("egdb")
    code, out, _ = run("egdb", "build", "--pieces", "3", "--dir", str(directory))
    assert code == 0
    assert "268,316 positions (up to 3 pieces)" in out  # 120 + 6,972 + 261,224
    return directory


def test_status_lists_the_signatures(built: Path) -> None:
    code, out, _ = run("egdb", "status", "--dir", str(built), "--json")
    data = json.loads(out)
    assert code == 0 and data["pieces"] == 3 and data["damaged"] == []
    assert data["signatures"]["0201"]["losses"] == 0  # two kings against one never lose
    code, out, _ = run("egdb", "status", "--dir", str(built))
    assert code == 0 and "complete up to 3 pieces" in out


def test_status_shows_each_checksum_and_whether_it_was_verified(
    built: Path, tmp_path: Path
) -> None:
    manifest = json.loads((built / "manifest.json").read_text())["signatures"]
    code, out, _ = run("egdb", "status", "--dir", str(built), "--json")
    data = json.loads(out)
    assert code == 0 and data["verified"] is True
    for name, entry in data["signatures"].items():
        assert entry["sha256"] == manifest[name]["sha256"] and len(entry["sha256"]) == 64
        assert entry["verified"] is True
    code, out, _ = run("egdb", "status", "--dir", str(built))
    assert code == 0 and "verified: every table's SHA-256 equals the manifest's (34 tables)" in out
    row = next(line for line in out.splitlines() if " 0201 " in line)
    assert manifest["0201"]["sha256"][:12] in row and "ok" in row
    code, out, _ = run("egdb", "status", "--dir", str(built), "--no-verify")
    assert code == 0 and "checksums not verified (--no-verify)" in out and "not checked" in out
    code, out, _ = run("egdb", "status", "--dir", str(built), "--no-verify", "--json")
    assert json.loads(out)["signatures"]["0201"]["verified"] is None

    # A copy with one byte flipped: named in the table and the JSON, exit 1.
    copy = tmp_path / "copy"
    copy.mkdir()
    for file in built.iterdir():
        (copy / file.name).write_bytes(file.read_bytes())
    table = copy / "0201.u8"
    data_bytes = bytearray(table.read_bytes())
    data_bytes[7] ^= 1
    table.write_bytes(bytes(data_bytes))
    code, out, err = run("egdb", "status", "--dir", str(copy))
    row = next(line for line in out.splitlines() if " 0201 " in line)
    assert code == 1 and "DAMAGED" in row and "damaged tables (checksum differs): 0201" in err
    code, out, _ = run("egdb", "status", "--dir", str(copy), "--json")
    data = json.loads(out)
    assert code == 1 and data["damaged"] == ["0201"]
    assert data["signatures"]["0201"]["verified"] is False


def test_probe_gives_value_distance_and_best_moves(built: Path) -> None:
    code, out, _ = run("egdb", "probe", "W:WK18,K19:BK1", "--dir", str(built))
    assert code == 0
    assert out.splitlines() == ["White to move: win in 21 plies", "best: 18-14, 19-15"]
    code, out, _ = run("egdb", "probe", "B:W8,11:B4", "--dir", str(built))
    assert out.splitlines() == ["Black to move: loss in 0 plies"]


def test_a_second_build_keeps_everything(built: Path) -> None:
    before = (built / "manifest.json").read_text()
    code, _, _ = run("egdb", "build", "--pieces", "3", "--dir", str(built))
    assert code == 0 and (built / "manifest.json").read_text() == before


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("build", "--pieces", "9"), "--pieces must be 1 to 6, not 9"),
        (("probe", "W:WK18,K19,K20,K21:BK1,K2"), "the position has 6 pieces"),
        (("probe", "X:W1:B2"), "side to move must be B or W"),
    ],
)
def test_bad_input_exits_2_with_one_line(built: Path, args: tuple[str, ...], message: str) -> None:
    code, _, err = run("egdb", *args, "--dir", str(built))
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1


def test_probe_without_a_database_says_how_to_build_one(tmp_path: Path) -> None:
    code, _, err = run("egdb", "probe", "W:WK18:BK1", "--dir", str(tmp_path))
    assert code == 2 and "arena egdb build" in err
