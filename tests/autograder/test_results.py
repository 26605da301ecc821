"""results.json: the totals, the entries, the cut of long explanations, bad scores refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autograder.results import MAX_OUTPUT, GradeReport, TestResult


def test_a_report_adds_up_and_writes_gradescope_json(tmp_path: Path) -> None:
    report = GradeReport("endgame", output="3 puzzles")
    report.tests.append(TestResult("puzzle 1", 1.0, 1.0, "ok"))
    report.tests.append(TestResult("puzzle 2", 0.25, 1.0, "x" * (MAX_OUTPUT + 10)))
    report.tests.append(TestResult("puzzle 3 (private)", 0.0, 2.0, "timeout", "after_published"))
    report.write(tmp_path / "results.json")
    data = json.loads((tmp_path / "results.json").read_text())
    assert (data["score"], data["max_score"], data["output"]) == (1.25, 4.0, "3 puzzles")
    assert [t["name"] for t in data["tests"]] == ["puzzle 1", "puzzle 2", "puzzle 3 (private)"]
    assert data["tests"][1]["output"].endswith("(cut)")
    assert len(data["tests"][1]["output"]) < MAX_OUTPUT + 20
    assert data["tests"][2]["visibility"] == "after_published"


@pytest.mark.parametrize("score", [-0.5, 1.5])
def test_a_score_outside_the_test_is_refused(score: float) -> None:
    with pytest.raises(ValueError, match="outside"):
        TestResult("t", score, 1.0)


def test_a_report_survives_its_json_round_trip() -> None:
    report = GradeReport(
        profile="endgame",
        tests=[
            TestResult("a", 1.0, 1.0, "fine"),
            TestResult("b", 0.25, 1.0, "lost: optimal", visibility="after_published"),
        ],
        output="1 of 2",
    )
    again = GradeReport.from_json(json.loads(json.dumps(report.to_json())), "endgame")
    assert again == report


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"tests": [{"name": "a"}]},
        {"tests": [{"name": "a", "score": 2, "max_score": 1}]},
        {"tests": [{"name": "a", "score": 0, "max_score": 1, "visibility": "public"}]},
        [],
    ],
)
def test_a_bad_results_object_is_a_value_error(data: object) -> None:
    with pytest.raises(ValueError):
        GradeReport.from_json(data, "endgame")
