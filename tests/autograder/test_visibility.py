"""What each reader sees of a report, the Gradescope file's top-level output, the reasons each
profile gives, and the order private tests run in (a seeded order, repeatable, differing
between seeds; the public tests first)."""

from __future__ import annotations

import json
import os
import random
import re
from dataclasses import replace
from pathlib import Path

import pytest

from autograder.agent import grade_agent
from autograder.agent_checks import EXAMPLES_TEST
from autograder.agent_suite import AgentSuite
from autograder.agent_suite_maker import make_agent_suite
from autograder.endgame import grade_endgame
from autograder.endgame_suite import Puzzle, load_puzzles
from autograder.job import JOB_FILE, RESULTS_FILE, SUBMISSION_DIR, Job, main
from autograder.results import GradeReport, TestResult
from autograder.visibility import (
    GRADESCOPE_STUDENT,
    OWNER,
    UPLOADER,
    Reader,
    gradescope_json,
    holds_back,
    run_order,
    shows_times,
    view,
)

REPO = Path(__file__).resolve().parents[2]
PUBLIC_SUITE = REPO / "autograder" / "examples" / "endgame-puzzles.json"
PYTHON = "/usr/bin/python3"
needs_python = pytest.mark.skipif(not os.path.exists(PYTHON), reason=f"{PYTHON} is missing")

BOARD = "........\n...b....\n........\n........\n..R.....\n........\n........\n........"
REPORT = GradeReport(
    profile="endgame",
    tests=[
        TestResult("puzzle 1 (3 plies)", 1.0, 1.0, "the line wins in 3 plies"),
        TestResult(
            "puzzle 2 (9 plies)",
            0.0,
            1.0,
            f"your program exited with code 1\nlast lines of stderr:\n{BOARD}",
            "after_published",
            ("crashed",),
        ),
        TestResult("puzzle 3 (7 plies)", 1.0, 1.0, "7 plies", "after_published"),
    ],
    output="1 of 3 puzzles solved with full marks (puzzle 2: 9 plies)",
)


def text_of(report: GradeReport) -> str:
    return json.dumps(report.to_json())


def test_the_owner_sees_the_report_as_graded() -> None:
    assert view(REPORT, OWNER) is REPORT
    assert not holds_back(REPORT, OWNER)
    assert shows_times(OWNER, None) and shows_times(OWNER, REPORT)


def test_the_uploader_sees_a_private_tests_outcome_only() -> None:
    seen = view(REPORT, UPLOADER)
    assert [t.name for t in seen.tests] == [
        "puzzle 1 (3 plies)",
        "private test 1",
        "private test 2",
    ]
    assert [(t.score, t.max_score) for t in seen.tests] == [(1, 1), (0, 1), (1, 1)]
    assert seen.tests[1].output == (
        "points lost: crashed. The details of a private test are not shown."
    )
    assert seen.tests[1].reasons == ("crashed",)
    assert seen.tests[2].output.startswith("passed.")
    text = text_of(seen)
    for secret in ("9 plies", "7 plies", "...b....", "exited with code"):
        assert secret not in text
    assert seen.output == "score 2 of 3; the 2 private tests show their points and reasons only."
    # A private test's reasons survive the results.json round trip.
    again = GradeReport.from_json(json.loads(text), "endgame")
    assert again.tests[1].reasons == ("crashed",)
    # The times of a grading whose view holds something back are not shown, nor while it runs.
    assert not shows_times(UPLOADER, REPORT) and not shows_times(UPLOADER, None)
    public = GradeReport("endgame", tests=[REPORT.tests[0]], output="1 of 1")
    assert view(public, UPLOADER) is public and shows_times(UPLOADER, public)


def test_a_reader_who_waits_is_told_when() -> None:
    until = "after the due date (2026-12-01 12:00 UTC)"
    omitted = view(REPORT, Reader(hold="omit", until=until))
    assert [t.name for t in omitted.tests] == ["puzzle 1 (3 plies)"]
    assert omitted.output == (
        "score 1 of 1 on the 1 public test; 2 private tests: results after the due date "
        "(2026-12-01 12:00 UTC)."
    )
    outcome = view(REPORT, Reader(until=until))
    assert outcome.tests[1].output == f"points lost: crashed. Details {until}."


def test_the_gradescope_file_keeps_every_test_but_its_summary_names_no_private_one() -> None:
    data = gradescope_json(REPORT)
    assert [t["name"] for t in data["tests"]] == [t.name for t in REPORT.tests]
    assert [t["visibility"] for t in data["tests"]] == ["visible", *["after_published"] * 2]
    assert data["tests"][1]["extra_data"] == {"reasons": ["crashed"]}
    assert data["output"] == view(REPORT, GRADESCOPE_STUDENT).output
    assert "9 plies" not in data["output"] and "2 private tests" in data["output"]
    public = GradeReport("endgame", tests=[REPORT.tests[0]], output="1 of 1")
    assert gradescope_json(public)["output"] == "1 of 1"


def test_run_order_puts_the_public_tests_first_and_shuffles_the_private_ones() -> None:
    private = [False, True, True, False, True, True, True]
    first = run_order(private, random.Random(1))
    assert first[:2] == [0, 3] and sorted(first) == list(range(7))
    assert run_order(private, random.Random(1)) == first
    assert run_order(private, random.Random(2)) != first


# -- the profiles ------------------------------------------------------------------------------

# Tells when it ran: the grader quotes the end of stderr of a failed run.
WHEN = b"import sys, time\nprint('RAN', time.monotonic_ns(), file=sys.stderr)\nsys.exit(1)\n"


def executed(report: GradeReport) -> list[int]:
    """Return the indexes of the report's tests in the order they ran (from WHEN's stderr)."""
    moments = [int(re.findall(r"RAN (\d+)", t.output)[-1]) for t in report.tests]
    return sorted(range(len(moments)), key=moments.__getitem__)


@needs_python
def test_endgame_private_puzzles_run_in_a_seeded_order(tmp_path: Path) -> None:
    puzzles: list[Puzzle] = [
        replace(p, public=index == 0) for index, p in enumerate(load_puzzles(PUBLIC_SUITE))
    ]
    (tmp_path / "checkers.py").write_bytes(WHEN)

    def order(seed: int) -> list[int]:
        report = grade_endgame(tmp_path, puzzles, python=PYTHON, order=random.Random(seed))
        # The report lists the puzzles in the suite's order, whatever order they ran in.
        assert [t.name.split(" (")[0] for t in report.tests] == [p.name for p in puzzles]
        assert {t.reasons for t in report.tests} == {("crashed",)}
        return executed(report)

    first, again, second = order(1), order(1), order(2)
    assert first == again
    assert first != second
    assert first[0] == second[0] == 0  # the public puzzle runs first


# Tells the order of its calls within a session.
COUNTS = b"""calls = []
def select_move(board, player, depth_limit, time_limit):
    calls.append(1)
    raise RuntimeError(f"CALL {len(calls)}")
"""


@needs_python
def test_agent_private_calls_run_in_a_seeded_order_after_the_examples(tmp_path: Path) -> None:
    base = AgentSuite(exact_depths=(1,), exact_positions=1, opponents=())
    suite = make_agent_suite(5, count=6, examples=3, base=base, public=False)
    (tmp_path / "agent.py").write_bytes(COUNTS)

    def order(seed: int) -> tuple[list[int], list[int]]:
        tests = grade_agent(tmp_path, python=PYTHON, suite=suite, order=random.Random(seed)).tests
        by_name = {t.name: t for t in tests}
        legal = [int(n) for n in re.findall(r"CALL (\d+)", by_name["legal moves"].output)]
        examples = [int(n) for n in re.findall(r"CALL (\d+)", by_name[EXAMPLES_TEST].output)]
        assert by_name["legal moves"].reasons == ("crashed",)
        return examples, legal

    (examples, first), (_, again), (_, second) = order(1), order(1), order(2)
    # The examples run in their own session, in order; the private positions after, shuffled.
    assert examples == [1, 2, 3]
    assert sorted(first) == list(range(1, 7))
    assert first == again
    assert first != second


def test_a_grader_error_tells_the_uploader_its_kind_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The suite's own error quotes the suite (here its file name and a bad row); the uploader
    # is told the kind of failure, the log (the child's stderr) the rest.
    suite = tmp_path / "suite-4f2a9c.json"
    board = ["rrrrbbbb", *["........"] * 7]
    puzzle = {"name": "puzzle 1", "plies": 3, "public": False, "board": board}
    suite.write_text(
        json.dumps({"format": "arena-endgame-puzzles", "version": 1, "puzzles": [puzzle]})
    )
    job_dir = tmp_path / "job"
    (job_dir / SUBMISSION_DIR).mkdir(parents=True)
    (job_dir / SUBMISSION_DIR / "checkers.py").write_bytes(WHEN)
    job = Job(profile="endgame", suite=suite, python=PYTHON, uid=65534, gid=65534)
    (job_dir / JOB_FILE).write_text(json.dumps(job.to_json()))
    assert main([str(job_dir)]) == 1
    results = (job_dir / RESULTS_FILE).read_text()
    assert "grader error" in results and "its suite could not be used" in results
    assert "4f2a9c" not in results
    assert "4f2a9c" in capsys.readouterr().err
