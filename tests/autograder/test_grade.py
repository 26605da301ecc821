"""The endgame profile end to end: the reference scores full marks, broken submissions score 0
with the right reason, and results.json is always written (also through `arena grade`)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autograder.agent_suite import AgentSuite, describe_agent_suite
from autograder.agent_suite_file import load_agent_suite, save_agent_suite
from autograder.agent_suite_maker import make_agent_suite
from autograder.endgame import grade_endgame
from autograder.endgame_puzzle_options import PuzzleOptions, parse_material
from autograder.endgame_puzzles import make_puzzle_suite
from autograder.endgame_suite import Puzzle, load_puzzles, save_puzzles
from autograder.grade import GradeError, GradeOptions, grade, write_suite
from autograder.html import html_report, report_body
from autograder.results import GradeReport, TestResult
from cli.main import create_cli
from sandbox import MIB, Limits, Mode, Support, can_isolate

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "autograder" / "reference" / "endgame_solver.py"
PUBLIC_SUITE = REPO / "autograder" / "examples" / "endgame-puzzles.json"
PUBLIC_AGENT_SUITE = REPO / "autograder" / "examples" / "agent-suite.json"
AGENT_REFERENCE = REPO / "autograder" / "reference" / "agent_solution.py"
SUBMISSIONS = Path(__file__).parent / "submissions"
AGENTS = Path(__file__).parent / "agents"
# The student's interpreter must be readable by the sandbox uid (the venv's may live under /root).
PYTHON = "/usr/bin/python3"

sandboxed = pytest.mark.skipif(
    os.geteuid() != 0 or not can_isolate() or not os.path.exists(PYTHON),
    reason=f"these tests need root (the sandbox uid), the sandbox and {PYTHON}",
)

SMALL = Limits(cpu_seconds=5, wall_seconds=2.0, memory_bytes=256 * MIB, output_bytes=64 * 1024)


@pytest.fixture(scope="module")
def public() -> list[Puzzle]:
    return load_puzzles(PUBLIC_SUITE)


@pytest.fixture
def reference(tmp_path: Path) -> Path:
    submission = tmp_path / "reference"
    submission.mkdir()
    shutil.copyfile(REFERENCE, submission / "checkers.py")
    return submission


def run_gallery(name: str, puzzles: list[Puzzle], tmp_path: Path) -> GradeReport:
    """Grade tests/autograder/submissions/`name`; check that results.json and HTML are written."""
    report = grade_endgame(SUBMISSIONS / name, puzzles, limits=SMALL, python=PYTHON)
    path = tmp_path / "results.json"
    report.write(path)
    data = json.loads(path.read_text())
    assert data["score"] == pytest.approx(report.score)
    assert len(data["tests"]) == len(report.tests)
    assert "<!DOCTYPE html>" in html_report(report)
    return report


# ---- the reference and the gallery of broken submissions ----


@sandboxed
def test_reference_gets_full_marks_on_the_public_suite(
    reference: Path, public: list[Puzzle], tmp_path: Path
) -> None:
    report = grade_endgame(reference, public, python=PYTHON)
    assert report.score == report.max_score == 5
    assert report.tests[0].name == f"puzzle 1 ({public[0].plies} plies)"
    assert all(t.visibility == "visible" for t in report.tests)
    assert all("fastest forced win" in t.output for t in report.tests)
    assert report.output.startswith("5 of 5 puzzles")


@sandboxed
def test_a_single_checkers_py_file_is_a_submission(reference: Path, public: list[Puzzle]) -> None:
    report = grade_endgame(reference / "checkers.py", public[:1], python=PYTHON, points=2.0)
    assert (report.score, report.max_score) == (2.0, 2.0)


@sandboxed
def test_private_puzzles_are_shown_after_publication(reference: Path, public: list[Puzzle]) -> None:
    private = [replace(p, public=False) for p in public[:1]]
    report = grade_endgame(reference, private, python=PYTHON)
    assert [t.visibility for t in report.tests] == ["after_published"]


@sandboxed
def test_infinite_loop_is_stopped_at_the_wall_limit(public: list[Puzzle], tmp_path: Path) -> None:
    report = run_gallery("infinite_loop", public[:2], tmp_path)
    assert report.score == 0 and report.max_score == 2
    for test in report.tests:
        assert "more than 2 s of wall time" in test.output
        assert "stopped at a limit" in test.output


@sandboxed
def test_crash_names_the_exception(public: list[Puzzle], tmp_path: Path) -> None:
    report = run_gallery("crash", public[:2], tmp_path)
    assert report.score == 0
    for test in report.tests:
        assert "exited with code 1: RuntimeError: board parser failed" in test.output
        assert "last lines of stderr:" in test.output
        assert "Traceback" in test.output


@sandboxed
def test_garbage_output_cannot_be_read(public: list[Puzzle], tmp_path: Path) -> None:
    report = run_gallery("garbage", public[:2], tmp_path)
    assert report.score == 0
    for test in report.tests:
        assert "cannot read the output" in test.output
        assert "red forces the win" in test.output  # the points lost are named


@sandboxed
def test_positional_arguments_are_told_how_the_grader_calls_the_program(
    public: list[Puzzle], tmp_path: Path
) -> None:
    report = run_gallery("positional_args", public[:1], tmp_path)
    (test,) = report.tests
    assert test.score == 0
    assert "FileNotFoundError" in test.output
    assert (
        "the grader ran: python3 checkers.py --inputfile input.txt --outputfile output.txt"
        in test.output
    )
    assert "read the input file's path after --inputfile" in test.output


@sandboxed
def test_no_output_file(public: list[Puzzle], tmp_path: Path) -> None:
    report = run_gallery("no_output", public[:1], tmp_path)
    assert report.score == 0
    assert "wrote no output file" in report.tests[0].output


@sandboxed
def test_illegal_move_is_located(public: list[Puzzle], tmp_path: Path) -> None:
    report = run_gallery("illegal_move", public[:2], tmp_path)
    assert report.score == 0
    for test in report.tests:
        assert "ply 1 (state 2, line 10): not one legal move of red" in test.output


@sandboxed
def test_too_slow_loses_only_the_long_puzzles(public: list[Puzzle], tmp_path: Path) -> None:
    submission = tmp_path / "too_slow"
    shutil.copytree(SUBMISSIONS / "too_slow", submission)
    shutil.copyfile(REFERENCE, submission / "reference_solver.py")
    suite = [public[0], next(p for p in public if p.plies >= 9)]
    report = grade_endgame(submission, suite, limits=SMALL, python=PYTHON)
    fast, slow = report.tests
    assert (fast.score, slow.score) == (1.0, 0.0)
    assert "wall time" in slow.output


def test_missing_program_scores_zero_with_the_reason(public: list[Puzzle], tmp_path: Path) -> None:
    report = run_gallery("missing_program", public, tmp_path)
    (test,) = report.tests
    assert (test.score, test.max_score) == (0.0, 5.0)
    assert "no checkers.py" in test.output and "solution.py" in test.output
    wrong_name = grade_endgame(SUBMISSIONS / "missing_program" / "solution.py", public)
    assert "must be named checkers.py" in wrong_name.tests[0].output
    nowhere = grade_endgame(tmp_path / "nothing-here", public)
    assert "does not exist" in nowhere.tests[0].output


def test_grade_selects_profiles_by_name(tmp_path: Path) -> None:
    with pytest.raises(GradeError, match="unknown profile"):
        grade("chess", tmp_path, GradeOptions(suite=PUBLIC_SUITE))
    with pytest.raises(GradeError, match="needs a puzzle suite"):
        grade("endgame", tmp_path, GradeOptions())
    report = grade("endgame", tmp_path, GradeOptions(suite=PUBLIC_SUITE))
    assert report.profile == "endgame" and report.score == 0


@sandboxed
def test_agent_reference_scores_full_marks_on_the_generated_public_suite() -> None:
    report = grade("agent", AGENT_REFERENCE, GradeOptions(suite=PUBLIC_AGENT_SUITE, python=PYTHON))
    assert report.profile == "agent"
    lost = {t.name: t.output for t in report.tests if t.score != t.max_score}
    assert not lost
    assert report.score == report.max_score == 100
    assert {t.visibility for t in report.tests} == {"visible"}


def test_grade_agent_rejects_a_bad_suite_file_with_the_reason(tmp_path: Path) -> None:
    bad = tmp_path / "agent.json"
    bad.write_text('{"format": "arena-agent-suite", "version": 1}')
    with pytest.raises(GradeError, match=re.escape(f"{bad}: missing public, legal_positions")):
        grade("agent", tmp_path, GradeOptions(suite=bad))
    with pytest.raises(GradeError, match="is not an agent suite"):
        grade("agent", tmp_path, GradeOptions(suite=PUBLIC_SUITE))


def test_grade_agent_uses_the_suite_file(tmp_path: Path) -> None:
    # Nothing to run (no agent.py), so every call fails at once and names its position.
    suite = make_agent_suite(4, count=5, base=AgentSuite(opponents=()))
    path = tmp_path / "agent.json"
    save_agent_suite(path, suite)
    report = grade("agent", tmp_path / "missing", GradeOptions(suite=path))
    legal = report.tests[0]
    assert legal.name == "legal moves" and legal.output.startswith("0/5 earned.")
    assert suite.legal_positions[0][0] in legal.output
    assert {t.visibility for t in report.tests} == {"after_published"}
    default = grade("agent", tmp_path / "missing", GradeOptions())
    assert default.tests[0].output.startswith("0/9 earned.")  # the hand-made LEGAL_SUITE


@pytest.mark.parametrize("public", [True, False])
def test_write_suite_makes_and_saves_both_profiles(tmp_path: Path, public: bool) -> None:
    mode = 0o644 if public else 0o600
    agent = tmp_path / "agent.json"
    summary = write_suite("agent", agent, 9, public=public, count=6)
    suite = load_agent_suite(agent)
    assert suite == make_agent_suite(9, count=6, public=public)
    assert summary == f"wrote {agent}: {describe_agent_suite(suite)}"
    assert agent.stat().st_mode & 0o777 == mode
    endgame = tmp_path / "endgame.json"
    options = PuzzleOptions(pieces=(3, 4), max_plies=5)
    summary = write_suite("endgame", endgame, 7, public=public, count=2, options=options)
    puzzles = load_puzzles(endgame)
    assert puzzles == make_puzzle_suite(7, 2, options, public=public)
    assert summary.startswith(f"wrote {endgame}: 2 ") and "endgame puzzles (plies: " in summary
    assert endgame.stat().st_mode & 0o777 == mode


def test_write_suite_errors_are_grade_errors(tmp_path: Path) -> None:
    with pytest.raises(GradeError, match="unknown profile 'chess'"):
        write_suite("chess", tmp_path / "x.json", 1, public=False)
    with pytest.raises(GradeError, match="cannot cover every category"):
        write_suite("agent", tmp_path / "x.json", 1, public=False, count=1)
    with pytest.raises(GradeError, match="cannot write the suite"):
        write_suite("agent", tmp_path / "no" / "x.json", 1, public=False)


def test_html_report_escapes_everything() -> None:
    report = GradeReport(
        "endgame",
        [TestResult("<b>puzzle</b>", 0.5, 1.0, output="<script>alert(1)</script>")],
        output="a & b",
    )
    page = html_report(report)
    body = report_body(report)
    for html in (page, body):
        assert "<script>" not in html and "&lt;script&gt;" in html
        assert "&lt;b&gt;puzzle&lt;/b&gt;" in html and "a &amp; b" in html
        assert "0.5</strong> of 1" in html
        assert '<section id="test-1" class="partial">' in html
    # The body goes inside the server's pages, whose policy refuses inline styles.
    assert body.startswith('<div class="grade-report">') and body.endswith("</div>")
    assert "<style" not in body and "style=" not in body
    # The page of its own (a file on disk) carries its style, and the same body.
    assert "<style>" in page and body in page


# ---- the command line ----


@sandboxed
def test_cli_grades_writes_results_and_html_and_exits_zero_for_a_crash(tmp_path: Path) -> None:
    suite = tmp_path / "suite.json"
    save_puzzles(suite, load_puzzles(PUBLIC_SUITE)[:2])
    results, page = tmp_path / "results.json", tmp_path / "report.html"
    outcome = CliRunner().invoke(
        create_cli(),
        [
            "grade", str(SUBMISSIONS / "crash"), "--profile", "endgame", "--puzzles", str(suite),
            "--results", str(results), "--html", str(page), "--python", PYTHON,
        ],
    )  # fmt: skip
    assert outcome.exit_code == 0, outcome.output
    assert "total: 0 / 2" in outcome.stdout
    data = json.loads(results.read_text())
    assert data["score"] == 0 and data["max_score"] == 2
    assert "RuntimeError" in data["tests"][0]["output"]
    assert "RuntimeError" in page.read_text()


@sandboxed
def test_cli_json_prints_results_for_the_reference_on_the_default_suite(reference: Path) -> None:
    outcome = CliRunner().invoke(
        create_cli(), ["grade", str(reference), "--json", "--python", PYTHON]
    )
    assert outcome.exit_code == 0, outcome.output
    data = json.loads(outcome.stdout)
    assert data["score"] == data["max_score"] == 5


@sandboxed
def test_cli_gradescope_mode_grades_a_missing_program_zero_and_writes_results(
    tmp_path: Path,
) -> None:
    results = tmp_path / "results.json"
    outcome = CliRunner().invoke(
        create_cli(),
        [
            "grade", str(SUBMISSIONS / "missing_program"), "--gradescope",
            "--results", str(results),
        ],
    )  # fmt: skip
    assert outcome.exit_code == 0, outcome.output
    assert json.loads(results.read_text())["tests"][0]["score"] == 0


@pytest.mark.parametrize(
    ("name", "profile", "message"),
    [
        ("notes.txt", "endgame", "is not a Python program (.py)"),
        ("notes.txt", "agent", "is not a Python program (.py)"),
        ("solution.py", "endgame", "is not named checkers.py, the name the grader runs it by"),
        ("folder", "endgame", "has no checkers.py at its top level (it holds solution.py)"),
        ("folder", "agent", "has no agent.py at its top level (it holds solution.py)"),
        ("/dev/null", "endgame", "is neither a folder nor a file"),
    ],
)
def test_cli_a_submission_that_cannot_be_graded_exits_2_saying_why(
    tmp_path: Path, name: str, profile: str, message: str
) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "solution.py").write_text("print('hi')\n")
    (tmp_path / "notes.txt").write_text("my notes\n")
    (tmp_path / "solution.py").write_text("print('hi')\n")
    results = tmp_path / "results.json"
    target = name if name.startswith("/") else str(tmp_path / name)
    outcome = CliRunner().invoke(
        create_cli(), ["grade", target, "--profile", profile, "--results", str(results)]
    )
    assert outcome.exit_code == 2, outcome.output
    lines = outcome.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], outcome.stderr
    assert "Traceback" not in outcome.output
    assert not results.exists()


def test_cli_says_plainly_when_it_grades_without_a_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    why = "bubblewrap cannot make a sandbox here: No permissions to create a new namespace"
    # The command line asks the package; the run asks the module that runs it.
    monkeypatch.setattr("sandbox.sandbox_support", lambda: Support(Mode.NONE, why))
    monkeypatch.setattr("sandbox.support.sandbox_support", lambda: Support(Mode.NONE, why))
    results = tmp_path / "results.json"

    outcome = CliRunner().invoke(
        create_cli(),
        ["grade", str(SUBMISSIONS / "missing_program"), "--gradescope", "--results", str(results)],
    )

    assert outcome.exit_code == 0, outcome.output
    assert f"no sandbox here ({why}): the program runs as you" in outcome.stderr
    assert results.is_file()


@pytest.mark.parametrize("profile", ["endgame", "agent"])
def test_cli_a_missing_submission_is_a_usage_error(tmp_path: Path, profile: str) -> None:
    results = tmp_path / "results.json"
    missing = tmp_path / "no-such-folder"
    outcome = CliRunner().invoke(
        create_cli(), ["grade", str(missing), "--profile", profile, "--results", str(results)]
    )
    assert outcome.exit_code == 2
    assert f"the submission {missing} does not exist" in outcome.stderr
    assert "Traceback" not in outcome.output
    assert not results.exists()


def test_cli_gradescope_mode_grades_a_missing_submission_zero_and_writes_results(
    tmp_path: Path,
) -> None:
    """On a course platform the results file must exist whatever was uploaded."""
    results = tmp_path / "results.json"
    missing = tmp_path / "no-such-folder"
    outcome = CliRunner().invoke(
        create_cli(), ["grade", str(missing), "--gradescope", "--results", str(results)]
    )
    assert outcome.exit_code == 0, outcome.output
    data = json.loads(results.read_text())
    assert data["score"] == 0 and data["max_score"] == 5
    assert f"the submission {missing} does not exist" in data["tests"][0]["output"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--profile", "chess"], "unknown profile"),
        (["--puzzles", "/nonexistent/suite.json"], "does not exist"),
        (["--python", "/nonexistent/python"], "not executable"),
    ],
)
def test_cli_usage_errors_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "checkers.py").write_text("print('hi')\n")
    outcome = CliRunner().invoke(create_cli(), ["grade", str(tmp_path), *args])
    assert outcome.exit_code == 2
    assert message in outcome.output
    assert "Traceback" not in outcome.output


@sandboxed
def test_cli_grades_the_agent_profile_with_a_suite_file(tmp_path: Path) -> None:
    suite = tmp_path / "agent.json"
    tiny = AgentSuite(exact_depths=(1,), exact_positions=1, opponents=())
    save_agent_suite(suite, make_agent_suite(3, count=6, base=tiny, public=True))
    outcome = CliRunner().invoke(
        create_cli(),
        [
            "grade", str(AGENTS / "crash.py"), "--profile", "agent", "--suite", str(suite),
            "--json", "--python", PYTHON,
        ],
    )  # fmt: skip
    assert outcome.exit_code == 0, outcome.output
    data = json.loads(outcome.stdout)
    assert [t["name"] for t in data["tests"]] == ["legal moves", "exact minimax, depth 1", "time"]
    assert data["tests"][0]["output"].startswith("0/6 earned.")
    assert "RuntimeError" in data["tests"][0]["output"]


def test_cli_agent_profile_defaults_to_the_public_example_suite(tmp_path: Path) -> None:
    outcome = CliRunner().invoke(
        create_cli(),
        ["grade", str(tmp_path / "missing"), "--profile", "agent", "--json", "--gradescope"],
    )
    assert outcome.exit_code == 0, outcome.output
    legal = json.loads(outcome.stdout)["tests"][0]["output"]
    shipped = load_agent_suite(PUBLIC_AGENT_SUITE)
    assert legal.startswith(f"0/{len(shipped.legal_positions)} earned.")
    assert all(name in legal for name, _, _ in shipped.legal_positions)


def test_cli_make_puzzles_agent_profile_writes_a_private_suite(tmp_path: Path) -> None:
    out = tmp_path / "agent.json"
    outcome = CliRunner().invoke(
        create_cli(),
        ["grader", "make-puzzles", "--profile", "agent", "--seed", "3", "--out", str(out)],
    )
    assert outcome.exit_code == 0, outcome.output
    assert load_agent_suite(out) == make_agent_suite(3)
    assert out.stat().st_mode & 0o777 == 0o600
    # rich wraps the line at the terminal's width, which differs between runners.
    assert "every category with both colours" in " ".join(outcome.stdout.split())
    plies = CliRunner().invoke(
        create_cli(),
        ["grader", "make-puzzles", "--profile", "agent", "--max-plies", "3", "--out", str(out)],
    )
    assert plies.exit_code == 2
    assert "endgame profile only" in plies.output


def test_cli_make_puzzles_writes_a_private_certified_suite(tmp_path: Path) -> None:
    out = tmp_path / "private.json"
    outcome = CliRunner().invoke(
        create_cli(),
        [
            "grader", "make-puzzles", "--count", "2", "--seed", "3", "--pieces", "3-4",
            "--max-plies", "5", "--out", str(out),
        ],
    )  # fmt: skip
    assert outcome.exit_code == 0, outcome.output
    suite = load_puzzles(out)
    assert len(suite) == 2 and not any(p.public for p in suite)
    assert out.stat().st_mode & 0o777 == 0o600
    bad = CliRunner().invoke(
        create_cli(), ["grader", "make-puzzles", "--count", "0", "--out", str(out)]
    )
    assert bad.exit_code == 2


def test_cli_make_puzzles_chooses_material_kings_and_difficulty(tmp_path: Path) -> None:
    out = tmp_path / "mixes.json"
    args = [
        "grader", "make-puzzles", "--count", "2", "--seed", "4", "--material", "2v1",
        "--material", "2v2", "--kings", "0", "--min-plies", "3", "--max-plies", "9",
        "--max-best", "2", "--public", "--out", str(out),
    ]  # fmt: skip
    outcome = CliRunner().invoke(create_cli(), args)
    assert outcome.exit_code == 0, outcome.output
    suite = load_puzzles(out)
    assert sorted(p.material or "" for p in suite) == ["2v1", "2v2"]  # one of each share
    assert all(set(p.board) <= set(".rb\n") for p in suite)  # men only
    assert all(p.difficulty is not None and p.difficulty.best <= 2 for p in suite)
    assert "material: 2v1, 2v2" in " ".join(outcome.stdout.split())
    assert suite == make_puzzle_suite(
        4,
        2,
        PuzzleOptions(
            materials=(parse_material("2v1"), parse_material("2v2")),
            kings=0.0,
            max_plies=9,
            max_best=2,
        ),
        public=True,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--material", "3x5"], "material '3x5' is not RED v BLACK"),
        (["--pieces", "3-20"], "need 2 <= fewest <= most <= 12"),
        (["--pieces", "3-5", "--material", "2v2"], "give --pieces or --material, not both"),
        (["--kings", "2"], "kings is a probability from 0 to 1"),
        (["--min-plies", "9", "--max-plies", "5"], "need 1 <= min plies <= max plies"),
        (
            ["--material", "1v3", "--kings", "0", "--tries", "5", "--count", "2"],
            "found 0 of 2 puzzles in 5 positions",
        ),
        (["--profile", "agent", "--material", "2v2"], "--material apply to the endgame profile"),
    ],
)
def test_cli_make_puzzles_refuses_bad_options_in_one_line(
    tmp_path: Path, args: list[str], message: str
) -> None:
    outcome = CliRunner().invoke(
        create_cli(), ["grader", "make-puzzles", *args, "--out", str(tmp_path / "x.json")]
    )
    assert outcome.exit_code == 2
    assert message in " ".join(outcome.output.split())
    assert not (tmp_path / "x.json").exists()


def test_cli_make_puzzles_egdb_requires_a_database(tmp_path: Path) -> None:
    outcome = CliRunner().invoke(
        create_cli(),
        ["grader", "make-puzzles", "--egdb", "--out", str(tmp_path / "x.json")],
        env={"ARENA_EGDB_DIR": str(tmp_path / "none")},
    )
    assert outcome.exit_code == 2
    assert "no endgame database in" in outcome.output and "arena egdb build" in outcome.output


# ---- the starter files a course hands out ----


@pytest.mark.parametrize(("profile", "name"), [("endgame", "checkers.py"), ("agent", "agent.py")])
def test_starter_writes_the_profile_file_once(tmp_path: Path, profile: str, name: str) -> None:
    out = tmp_path / "mine"
    args = ["grader", "starter", "--profile", profile, "--out", str(out)]
    outcome = CliRunner().invoke(create_cli(), args)
    assert outcome.exit_code == 0, outcome.output
    written = out / name
    assert written.is_file() and "starter code for the assignment" in written.read_text()
    again = CliRunner().invoke(create_cli(), args)
    assert again.exit_code == 2 and "exists already" in again.stderr
    written.write_text("# my work\n")
    assert CliRunner().invoke(create_cli(), args).exit_code == 2
    assert written.read_text() == "# my work\n"  # nothing a student wrote is lost
    assert CliRunner().invoke(create_cli(), [*args, "--force"]).exit_code == 0


def test_the_endgame_starter_reads_and_writes_the_assignment_formats(tmp_path: Path) -> None:
    outcome = CliRunner().invoke(create_cli(), ["grader", "starter", "--out", str(tmp_path)])
    assert outcome.exit_code == 0
    board = load_puzzles(PUBLIC_SUITE)[0].board + "\n"
    (tmp_path / "in.txt").write_text(board)
    run = subprocess.run(
        [PYTHON, "checkers.py", "--inputfile", "in.txt", "--outputfile", "out.txt"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "out.txt").read_text() == board


@sandboxed
def test_grading_the_endgame_starter_says_what_is_missing(tmp_path: Path) -> None:
    CliRunner().invoke(create_cli(), ["grader", "starter", "--out", str(tmp_path)])
    report = grade("endgame", tmp_path, GradeOptions(suite=PUBLIC_SUITE, python=PYTHON))
    assert report.score < report.max_score
    for test in report.tests:
        assert "the line stops after 0 plies but the game is not over" in test.output
