"""`arena course` and `arena grader submit --course` against a real server, as staff and students.

Each test drives the command line (typer's CliRunner, the real httpx client) against a real
uvicorn server on SQLite: the staff set a course up, a student submits with the token of their
invite link, and what each command prints and writes is checked.
"""

from __future__ import annotations

import csv
import json
import os
import re
import stat
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import get_args

import httpx
import pytest
from typer.testing import CliRunner, Result

import cli.course.options
import protocol.courses
from cli.course.common import parse_when
from cli.course.roster import LINK_COLUMNS
from cli.main import create_cli
from server.settings import Settings
from tests.server.conftest import RunningServer, start_server

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "autograder" / "reference" / "endgame_solver.py"
PUBLIC = ROOT / "autograder" / "examples" / "endgame-puzzles.json"
GRADEBOOK_COLUMNS = [
    "student_id",
    "name",
    "email",
    "score",
    "max_score",
    "late",
    "days_late",
    "attempts",
    "submitted_at",
]
ROSTER = (
    "student_id,name,email,role\n"
    "s1,Ada Lovelace,ada@example.edu,student\n"
    "s2,Alan Turing,alan@example.edu,student\n"
    "t1,Grace Hopper,grace@example.edu,ta\n"
)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RunningServer]:
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}",
        grader_dir=tmp_path / "grader",
        # Without root there is no sandbox: grade the trusted reference anyway.
        grader_allow_unsandboxed=os.geteuid() != 0,
    )
    running = start_server(settings)
    try:
        yield running
    finally:
        running.stop()


def register(server: RunningServer, name: str) -> str:
    """Register a player on `server`; return its token."""
    response = httpx.post(f"{server.url}/players", json={"name": name})
    assert response.status_code == 201, response.text
    return str(response.json()["token"])


def arena(server: RunningServer, token: str | None, *args: str) -> Result:
    """Run `arena ARGS` against `server` with `token` (from the environment, as a user would)."""
    env = {"ARENA_SERVER": server.url, "ARENA_TOKEN": token}
    return CliRunner().invoke(create_cli(), list(args), env=env)


def ok(result: Result) -> str:
    """Return the output of a command that must have succeeded."""
    assert result.exit_code == 0, result.output
    return result.output


def set_up_course(
    server: RunningServer, tmp_path: Path, *assignment_options: str
) -> tuple[str, dict[str, str]]:
    """Create a course with one assignment `hw` and the roster; return the instructor's token
    and each member's invite token by student id."""
    staff = register(server, "prof")
    assert "created" in ok(arena(server, staff, "course", "create", "Search 101"))
    ok(
        arena(
            server,
            staff,
            *("course", "assignment", "add", "Search 101", "hw"),
            *("--public-count", "1", "--private-count", "1"),
            *assignment_options,
        )
    )
    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER)
    links = tmp_path / "links.csv"
    command = ("course", "roster", "import", "Search 101", str(roster), "--links", str(links))
    ok(arena(server, staff, *command))
    with links.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    return staff, {row["student_id"]: row["invite_url"].rsplit("/join/", 1)[1] for row in rows}


def submit(server: RunningServer, token: str, tmp_path: Path, *extra: str) -> Result:
    """Submit the reference solution to Search 101's `hw` with `token`."""
    folder = tmp_path / "work"
    folder.mkdir(exist_ok=True)
    (folder / "checkers.py").write_bytes(REFERENCE.read_bytes())
    return arena(
        server,
        token,
        *("grader", "submit", str(folder), "--course", "Search 101", "--assignment", "hw"),
        *extra,
    )


def test_staff_set_up_a_course_a_student_submits_and_staff_export_and_regrade(
    server: RunningServer, tmp_path: Path
) -> None:
    staff, invites = set_up_course(server, tmp_path, "--due", "+7d", "--daily-limit", "1")
    links = tmp_path / "links.csv"
    assert stat.S_IMODE(links.stat().st_mode) == 0o600
    with links.open(newline="") as handle:
        lines = list(csv.reader(handle))
    assert tuple(lines[0]) == LINK_COLUMNS
    assert {row[0]: row[3] for row in lines[1:]} == {"s1": "student", "s2": "student", "t1": "ta"}

    # A student submits with the token of their link: graded, the private test held back.
    results = tmp_path / "results.json"
    outcome = submit(server, invites["s1"], tmp_path, "--results", str(results))
    output = ok(outcome)
    assert "submission" in output and "queued" in output
    shown = json.loads(results.read_text())
    assert shown["score"] == shown["max_score"] == 1
    # Before the due date the private test is left out; the summary says when it shows.
    assert len(shown["tests"]) == 1
    assert "private test" in shown["output"] and "results after the due date" in shown["output"]

    # The second submission in 24 hours is over the limit of 1: refused, saying when to retry.
    refused = submit(server, invites["s1"], tmp_path)
    assert refused.exit_code == 2, refused.output
    assert "SUBMISSION_LIMIT" in refused.output and "next is allowed" in refused.output

    # Staff see the whole score in the gradebook and its export; s2 has not submitted.
    export = tmp_path / "grades.csv"
    output = ok(
        arena(server, staff, "course", "gradebook", "Search 101", "hw", "--csv", str(export))
    )
    assert "1 of 2 students graded" in output
    with export.open(newline="") as handle:
        book = csv.DictReader(handle)
        assert book.fieldnames == GRADEBOOK_COLUMNS
        rows = {row["student_id"]: row for row in book}
    assert set(rows) == {"s1", "s2"}
    assert float(rows["s1"]["score"]) == float(rows["s1"]["max_score"]) == 2
    assert rows["s1"]["attempts"] == "1"
    assert rows["s2"]["score"] == "" and rows["s2"]["attempts"] == "0"

    # A regrade of every submission, followed to its end.
    output = ok(arena(server, staff, "course", "regrade", "Search 101", "hw", "--wait"))
    assert "1 submission queued again" in output
    assert "1 graded, 0 failed" in output
    listed = ok(arena(server, staff, "course", "submissions", "Search 101", "hw"))
    assert "regraded 1x" in listed

    # Students and TAs have their own rights: no gradebook for a student, one for a TA.
    denied = arena(server, invites["s2"], "course", "gradebook", "Search 101", "hw")
    assert denied.exit_code == 2
    assert "FORBIDDEN" in denied.output
    assert "1 of 2 students graded" in ok(
        arena(server, invites["t1"], "course", "gradebook", "Search 101", "hw")
    )


def test_late_work_is_penalised_and_a_hard_deadline_refuses(
    server: RunningServer, tmp_path: Path
) -> None:
    staff, invites = set_up_course(
        server,
        tmp_path,
        *("--release", "-2d", "--due", "-1h"),
        *("--late-policy", "penalty", "--penalty-per-day", "25", "--late-days", "2"),
    )
    results = tmp_path / "results.json"
    output = ok(submit(server, invites["s1"], tmp_path, "--results", str(results)))
    # After the due date the student sees every test; an hour late costs a whole day: 25%.
    shown = json.loads(results.read_text())
    assert shown["score"] == shown["max_score"] == 2
    assert "submitted 1 day(s) late: counted 1.5 of 2" in output

    export = tmp_path / "grades.csv"
    ok(arena(server, staff, "course", "gradebook", "Search 101", "hw", "--csv", str(export)))
    with export.open(newline="") as handle:
        row = next(r for r in csv.DictReader(handle) if r["student_id"] == "s1")
    assert float(row["score"]) == 1.5 and row["days_late"] == "1"

    # A new suite (the 5 public examples), then the submission graded again with it.
    replace = ("course", "assignment", "suite", "Search 101", "hw", str(PUBLIC))
    assert "suite version 2: 5 public and 0 private tests" in ok(arena(server, staff, *replace))
    submission = re.search(r"submission (\S+) queued", output)
    assert submission is not None
    regrade = ("course", "regrade", "Search 101", "hw", "--submission", submission[1], "--wait")
    assert "1 graded, 0 failed" in ok(arena(server, staff, *regrade))
    ok(arena(server, staff, "course", "gradebook", "Search 101", "hw", "--csv", str(export)))
    with export.open(newline="") as handle:
        row = next(r for r in csv.DictReader(handle) if r["student_id"] == "s1")
    assert (float(row["score"]), float(row["max_score"])) == (3.75, 5)

    hard = ("course", "assignment", "update", "Search 101", "hw", "--late-policy", "hard")
    ok(arena(server, staff, *hard))
    refused = submit(server, invites["s2"], tmp_path)
    assert refused.exit_code == 2, refused.output
    assert "DEADLINE_PASSED" in refused.output


def test_a_reissued_link_replaces_the_old_one(server: RunningServer, tmp_path: Path) -> None:
    staff, invites = set_up_course(server, tmp_path, "--due", "+7d")
    outcome = arena(server, staff, "course", "invite", "Search 101", "s2")
    new_token = ok(outcome).split("/join/", 1)[1].split()[0]
    assert new_token != invites["s2"]
    old = arena(server, invites["s2"], "course", "list")
    assert old.exit_code == 2 and "UNAUTHORIZED" in old.output
    assert "Search 101" in ok(arena(server, new_token, "course", "list"))
    roster = ok(arena(server, staff, "course", "roster", "list", "Search 101"))
    assert "2 students enrolled" in roster

    # A dropped student's link stops working; their place on the roster says so.
    drop = ("course", "roster", "drop", "Search 101", "s1")
    assert "no longer works" in ok(arena(server, staff, *drop))
    dropped = arena(server, invites["s1"], "course", "list")
    assert dropped.exit_code == 2 and "UNAUTHORIZED" in dropped.output
    roster = ok(arena(server, staff, "course", "roster", "list", "Search 101"))
    assert "1 student enrolled" in roster and "dropped" in roster


def test_a_bad_roster_is_refused_whole_naming_the_line(
    server: RunningServer, tmp_path: Path
) -> None:
    staff = register(server, "prof")
    ok(arena(server, staff, "course", "create", "Search 101"))
    roster = tmp_path / "roster.csv"
    roster.write_text("student_id,name,email\ns1,Ada,ada@example.edu\n,Nobody,x@example.edu\n")
    refused = arena(server, staff, "course", "roster", "import", "Search 101", str(roster))
    assert refused.exit_code == 2
    assert "BAD_ROSTER" in refused.output and "line 3" in refused.output
    assert "0 students enrolled" in ok(
        arena(server, staff, "course", "roster", "list", "Search 101")
    )


def test_a_suite_of_another_profile_is_refused_before_anything_is_sent(
    server: RunningServer,
) -> None:
    staff = register(server, "prof")
    ok(arena(server, staff, "course", "create", "Search 101"))
    add = ("course", "assignment", "add", "Search 101", "hw", "--due", "+1d", "--profile", "agent")
    refused = arena(server, staff, *add, "--suite", str(PUBLIC))
    assert refused.exit_code == 2
    assert "not an agent suite" in refused.output
    assert "no assignment" in ok(arena(server, staff, "course", "assignment", "list", "Search 101"))


def test_an_unknown_course_name_says_how_to_list_yours(server: RunningServer) -> None:
    outcome = arena(server, register(server, "prof"), "course", "assignment", "list", "Nope")
    assert outcome.exit_code == 2
    assert "no course named 'Nope'" in outcome.output and "arena course list" in outcome.output


def test_a_missing_token_is_refused_with_how_to_give_one(server: RunningServer) -> None:
    outcome = arena(server, None, "course", "list")
    assert outcome.exit_code == 2
    assert "UNAUTHORIZED" in outcome.output and "--token" in outcome.output


NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("now", NOW),
        ("+7d", NOW + timedelta(days=7)),
        ("+1w2d", NOW + timedelta(days=9)),
        ("+36h", NOW + timedelta(hours=36)),
        ("-90m", NOW - timedelta(minutes=90)),
        ("2026-12-01T23:59Z", datetime(2026, 12, 1, 23, 59, tzinfo=UTC)),
        (
            "2026-12-01T23:59+01:00",
            datetime(2026, 12, 1, 23, 59, tzinfo=timezone(timedelta(hours=1))),
        ),
    ],
)
def test_dates_are_iso_8601_or_from_now(text: str, expected: datetime) -> None:
    assert parse_when(text, NOW) == expected


def test_a_date_without_a_zone_is_local_time() -> None:
    when = parse_when("2026-12-01T23:59", NOW)
    assert when.tzinfo is not None
    assert when.replace(tzinfo=None) == datetime(2026, 12, 1, 23, 59)
    assert when.utcoffset() == datetime(2026, 12, 1, 23, 59).astimezone().utcoffset()


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("2026-12-01", "without a time"),
        ("next friday", "ISO-8601"),
        ("+7x", "ISO-8601"),
        ("+99999999999w", "further from now than any date"),
    ],
)
def test_an_unreadable_date_is_refused_saying_what_is_accepted(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_when(text, NOW)


@pytest.mark.parametrize("name", ["AssignmentProfile", "LatePolicy", "ScorePolicy", "BeforeDue"])
def test_the_options_choices_are_the_protocols(name: str) -> None:
    """The command repeats the protocol's choices so that `arena --help` needs no pydantic."""
    assert get_args(getattr(cli.course.options, name)) == get_args(getattr(protocol.courses, name))
