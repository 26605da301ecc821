"""Agent assignments on a live server: a generated suite's public examples and private
positions, and what a student sees of a private agent suite before and after the due date."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from autograder.agent_checks import EXAMPLES_TEST
from autograder.agent_suite import CATEGORIES, PLAYERS, AgentSuite, position_categories
from autograder.agent_suite_file import load_agent_suite, save_agent_suite
from autograder.agent_suite_maker import make_agent_suite
from games.checkers import Checkers, parse_board
from protocol.courses import Submission
from protocol.errors import ErrorCode
from server.settings import Settings
from tests.server.conftest import RunningServer, start_server
from tests.server.courses.test_courses import (
    Client,
    add_assignment,
    course_settings,
    iso,
    new_course,
    students,
)
from tests.server.grading.test_grading import sandboxed

ROOT = Path(__file__).resolve().parents[3]
REFERENCE = ROOT / "autograder" / "reference" / "agent_solution.py"
ILLEGAL = ROOT / "tests" / "autograder" / "agents" / "illegal.py"
GAME = Checkers()
# The tests of a default agent suite besides its examples': legal moves, exact minimax at
# depths 1 to 3, four opponents, time.
DEFAULT_PARTS = 1 + 3 + 4 + 1


@pytest.fixture
def course_server(server_settings: Settings) -> Iterator[RunningServer]:
    running = start_server(course_settings(server_settings))
    try:
        yield running
    finally:
        running.stop()


def submit_agent(student: Client, cid: int, aid: int, agent: Path) -> str:
    body = student.call(
        "POST",
        f"/courses/{cid}/assignments/{aid}/submissions",
        202,
        files=[("files", ("agent.py", agent.read_bytes(), "text/x-python"))],
    )
    return str(body["submission_id"])


def test_a_generated_agent_suite_has_public_examples_and_private_positions(
    course_server: RunningServer, server_settings: Settings
) -> None:
    prof, cid = new_course(course_server.url)
    made = add_assignment(prof, cid, profile="agent", suite=None, public_count=3, private_count=8)
    assert made["suite_version"] == 1
    # The examples' test is the one students see before the due date; the rest is private.
    assert (made["public_tests"], made["private_tests"]) == (1, DEFAULT_PARTS)
    path = server_settings.grader.dir / "suites" / f"assignment-{made['assignment_id']}.json"
    suite = load_agent_suite(path)
    assert not suite.public
    assert len(suite.legal_positions) == 8 and len(suite.example_positions) == 3
    assert [name.split(" (")[0] for name, _, _ in suite.example_positions] == [
        "example 1",
        "example 2",
        "example 3",
    ]
    # The private positions cover every category with both colours, as the rules certify;
    # no example gives one of them away.
    covered = set()
    for _, board, player in suite.legal_positions:
        covered |= {(c, player) for c in position_categories(parse_board(GAME, board, player))}
    assert covered == {(c, p) for c in CATEGORIES for p in PLAYERS}
    graded = {(board, player) for _, board, player in suite.legal_positions}
    assert not graded & {(board, player) for _, board, player in suite.example_positions}

    # Without private tests the suite is public: its positions are the public ones.
    shown = add_assignment(prof, cid, profile="agent", suite=None, public_count=8, private_count=0)
    assert (shown["public_tests"], shown["private_tests"]) == (DEFAULT_PARTS, 0)
    path = server_settings.grader.dir / "suites" / f"assignment-{shown['assignment_id']}.json"
    public = load_agent_suite(path)
    assert public.public and len(public.legal_positions) == 8 and not public.example_positions

    # The private positions alone must cover the categories: one cannot, however many examples.
    now = datetime.now(UTC)
    refused = prof.error(
        "POST",
        f"/courses/{cid}/assignments",
        422,
        ErrorCode.VALIDATION_ERROR,
        json={
            "name": "too few",
            "profile": "agent",
            "due_at": iso(now + timedelta(days=1)),
            "public_count": 20,
            "private_count": 1,
        },
    )
    assert "1 positions cannot cover every category" in refused["message"]


def small_private_suite(tmp_path: Path) -> dict[str, Any]:
    """A private suite with two examples, short to grade: the file's JSON."""
    base = AgentSuite(exact_depths=(1,), exact_positions=1, opponents=(), example_points=4.0)
    suite = make_agent_suite(2, count=6, examples=2, base=base, public=False)
    path = tmp_path / "agent-suite.json"
    save_agent_suite(path, suite)
    data: dict[str, Any] = json.loads(path.read_text())
    return data


@sandboxed
def test_a_student_sees_a_private_agent_suites_examples_before_the_due_date(
    course_server: RunningServer, tmp_path: Path
) -> None:
    url = course_server.url
    prof, cid = new_course(url)
    suite = small_private_suite(tmp_path)
    assignment = add_assignment(
        prof, cid, profile="agent", name="agent", suite=suite, before_due="public"
    )
    aid = assignment["assignment_id"]
    # Legal moves, exact minimax at depth 1 and time are private; the examples are not.
    assert (assignment["public_tests"], assignment["private_tests"]) == (1, 3)
    people = students(prof, url, cid, "s1", "s2")
    ada, bob = people["s1"], people["s2"]
    good = submit_agent(ada, cid, aid, REFERENCE)
    bad = submit_agent(bob, cid, aid, ILLEGAL)

    # Before the due date: the examples' test alone, its points the score shown.
    done = ada.wait(cid, good)
    assert done.filtered and done.hidden_tests == 3
    assert (done.score, done.max_score) == (4.0, 4.0)
    results = ada.call("GET", f"/courses/{cid}/submissions/{good}/results", 200)
    assert [(t["name"], t["score"], t["max_score"]) for t in results["tests"]] == [
        (EXAMPLES_TEST, 4.0, 4.0)
    ]
    assert "3 private tests: results after the due date" in results["output"]
    page = ada.call("GET", f"/courses/{cid}/submissions/{good}/report", 200).text
    assert EXAMPLES_TEST in page and "exact minimax" not in page
    # An agent that steps where it must capture fails the first example (a forced capture)
    # and is shown its board; the private positions' failures are not shown yet.
    failed = bob.wait(cid, bad)
    assert failed.max_score == 4.0 and failed.score is not None and failed.score < 4.0
    shown = bob.call("GET", f"/courses/{cid}/submissions/{bad}/results", 200)["tests"]
    assert [t["name"] for t in shown] == [EXAMPLES_TEST]
    first = suite["example_positions"][0]
    assert first["name"] in shown[0]["output"]
    assert "\n".join(f"    {row}" for row in first["board"]) in shown[0]["output"]
    assert "captures are compulsory" in shown[0]["output"]

    # After the due date: every test, the full score.
    prof.call(
        "PATCH",
        f"/courses/{cid}/assignments/{aid}",
        200,
        json={"due_at": iso(datetime.now(UTC) - timedelta(seconds=1))},
    )
    after = Submission.model_validate(ada.call("GET", f"/courses/{cid}/submissions/{good}", 200))
    assert not after.filtered and after.hidden_tests == 0
    assert after.score == after.max_score == 4.0 + 20.0 + 10.0 + 10.0
    results = ada.call("GET", f"/courses/{cid}/submissions/{good}/results", 200)
    assert [t["name"] for t in results["tests"]] == [
        EXAMPLES_TEST,
        "legal moves",
        "exact minimax, depth 1",
        "time",
    ]
    legal = next(
        t
        for t in bob.call("GET", f"/courses/{cid}/submissions/{bad}/results", 200)["tests"]
        if t["name"] == "legal moves"
    )
    assert legal["score"] < legal["max_score"] and "captures are compulsory" in legal["output"]
