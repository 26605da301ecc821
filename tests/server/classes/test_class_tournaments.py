"""Class tournaments on a live server: staff start one among the students' graded agents, every
game played in the sandbox; the standings, each reader's view and the CSV come from its games."""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from protocol.class_tournaments import ClassTournament
from protocol.errors import ErrorCode
from server.settings import Settings
from tests.server.conftest import RunningServer, start_server
from tests.server.courses.test_courses import (
    Client,
    add_assignment,
    course_settings,
    new_course,
    register,
    students,
)
from tests.server.courses.test_courses_agent import small_private_suite
from tests.server.grading.test_grading import sandboxed

ROOT = Path(__file__).resolve().parents[3]
REFERENCE = (ROOT / "autograder" / "reference" / "agent_solution.py").read_bytes()
AGENTS = ROOT / "tests" / "autograder" / "agents"
CRASH = (AGENTS / "crash.py").read_bytes()
ILLEGAL = (AGENTS / "illegal.py").read_bytes()
BROKEN = b"def select_move(board, player, depth_limit, time_limit)\n    return None\n"
FINISH_S = 600
"""A liveness bound on the whole tournament: it keeps a stuck one from hanging the run."""


@pytest.fixture
def server(server_settings: Settings, tmp_path: Path) -> Iterator[RunningServer]:
    settings = course_settings(
        server_settings,
        grader_dir=tmp_path / "grader",
        hosted_dir=tmp_path / "hosted",
        hosted_move_seconds=0.2,
        hosted_failures_to_pause=2,
        hosted_max_running=8,
    )
    running = start_server(settings)
    try:
        yield running
    finally:
        running.stop()


def submit(student: Client, cid: int, aid: int, program: bytes) -> str:
    body = student.call(
        "POST",
        f"/courses/{cid}/assignments/{aid}/submissions",
        202,
        files=[("files", ("agent.py", program, "text/x-python"))],
    )
    return str(student.wait(cid, body["submission_id"]).submission_id)


def finished(reader: Client, cid: int, class_id: int) -> ClassTournament:
    deadline = time.monotonic() + FINISH_S
    while True:
        body = reader.call("GET", f"/courses/{cid}/tournaments/{class_id}", 200)
        tournament = ClassTournament.model_validate(body)
        if tournament.status in ("finished", "failed", "cancelled"):
            return tournament
        assert time.monotonic() < deadline, tournament
        time.sleep(0.5)


@sandboxed
def test_staff_run_a_class_tournament_and_each_reader_sees_their_part(
    server: RunningServer, tmp_path: Path
) -> None:
    url = server.url
    prof, cid = new_course(url)
    aid = add_assignment(prof, cid, profile="agent", suite=small_private_suite(tmp_path))[
        "assignment_id"
    ]
    people = students(prof, url, cid, "s1", "s2", "s3", "s4", "s5")
    best = submit(people["s1"], cid, aid, REFERENCE)
    latest = submit(people["s1"], cid, aid, ILLEGAL)  # later, and graded lower
    crasher = submit(people["s2"], cid, aid, CRASH)
    steady = submit(people["s3"], cid, aid, REFERENCE)
    broken = submit(people["s4"], cid, aid, BROKEN)
    # s5 submits nothing: not an entrant.

    body: dict[str, Any] = {
        "pick": "best",
        "house_bots": ["random"],
        "games_per_pairing": 2,
        "ply_cap": 40,
        "concurrency": 2,
        "grade_share": 20,
    }
    path = f"/courses/{cid}/assignments/{aid}/tournaments"
    # Only staff start one; a stranger is not told the course exists.
    people["s1"].error("POST", path, 403, ErrorCode.FORBIDDEN, json=body)
    register(url).error("POST", path, 404, ErrorCode.UNKNOWN_COURSE, json=body)
    too_wide = prof.error(
        "POST", path, 422, ErrorCode.VALIDATION_ERROR, json=body | {"concurrency": 5}
    )
    assert "at most 4" in too_wide["message"]

    started = ClassTournament.model_validate(prof.call("POST", path, 201, json=body))
    by_submission = {e.submission_id: e for e in started.entrants if not e.house_bot}
    # The best of s1's two, each other student's one; the broken one kept out with why.
    assert set(by_submission) == {best, crasher, steady, broken}
    assert latest not in by_submission
    assert "does not compile" in (by_submission[broken].refused or "") or "line 1" in (
        by_submission[broken].refused or ""
    )
    playing = [e for e in started.entrants if e.refused is None]
    assert len(playing) == 4  # three students and the house bot
    assert started.games_total == 4 * 3  # a round robin, two games a pairing

    staff = finished(prof, cid, started.class_tournament_id)
    assert staff.status == "finished" and staff.games_done == staff.games_total == 12
    scores = {e.submission_id: e for e in staff.entrants}
    # Every game counted once on each side; the crashing agent lost every one of its six
    # games and was never paused (the tournament went on to its end).
    assert sum(e.games for e in staff.entrants) == 2 * 12
    assert sum(e.score for e in staff.entrants) == pytest.approx(12)
    assert (scores[crasher].games, scores[crasher].score) == (6, 0.0)
    assert scores[broken].games == 0 and scores[broken].grade_points == 0.0
    for entrant in staff.entrants:
        if not entrant.house_bot and entrant.games:
            assert entrant.grade_points == round(20 * entrant.score / entrant.games, 2)
    assert [e.score / max(e.games, 1) for e in staff.entrants] == sorted(
        (e.score / max(e.games, 1) for e in staff.entrants), reverse=True
    )
    assert len(staff.games) == 12
    assert {e.label for e in staff.entrants} >= {"Student s1 (s1)", "random"}

    # The tournament itself is an ordinary one: its standings with intervals and crosstable.
    plain = prof.call("GET", f"/tournaments/{staff.tournament_id}", 200)
    assert plain["status"] == "finished" and plain["standings"]["crosstable"]
    assert {p["bot"] for p in plain["standings"]["points"]} == {e.spec for e in playing}

    # A student: themself as `you`, the others by number, their own games only.
    mine = finished(people["s2"], cid, started.class_tournament_id)
    you = [e for e in mine.entrants if e.you]
    assert [(e.label, e.submission_id) for e in you] == [("you", crasher)]
    others = [e for e in mine.entrants if not e.you and not e.house_bot]
    assert {e.label for e in others} == {"student 1", "student 3", "student 4"}
    assert all(e.submission_id is None and e.refused is None for e in others)
    assert len(mine.games) == 6 and all("you" in (g.first, g.second) for g in mine.games)
    assert all(g.result is not None for g in mine.games)
    people["s2"].error(
        "GET",
        f"/courses/{cid}/tournaments/{started.class_tournament_id}.csv",
        403,
        ErrorCode.FORBIDDEN,
    )

    # The staff's CSV: a row per student entrant, the same figures.
    response = prof.call(
        "GET", f"/courses/{cid}/tournaments/{started.class_tournament_id}.csv", 200
    )
    assert response.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert {row["student_id"] for row in rows} == {"s1", "s2", "s3", "s4"}
    for row in rows:
        entrant = scores[row["submission_id"]]
        assert (int(row["games"]), float(row["score"])) == (entrant.games, entrant.score)
        assert row["status"] == ("refused" if entrant.refused else "played")
        assert float(row["grade_points"]) == entrant.grade_points

    listed = people["s3"].call("GET", path, 200)["tournaments"]
    assert [t["class_tournament_id"] for t in listed] == [started.class_tournament_id]


@sandboxed
def test_a_class_too_large_for_a_round_robin_plays_a_swiss(
    server: RunningServer, tmp_path: Path
) -> None:
    url = server.url
    prof, cid = new_course(url)
    aid = add_assignment(prof, cid, profile="agent", suite=small_private_suite(tmp_path))[
        "assignment_id"
    ]
    people = students(prof, url, cid, "s1", "s2", "s3")
    for student in people.values():
        submit(student, cid, aid, REFERENCE)
    path = f"/courses/{cid}/assignments/{aid}/tournaments"
    body: dict[str, Any] = {"house_bots": ["random", "greedy"], "ply_cap": 30}
    # Five entrants cannot play five Swiss rounds without meeting twice: refused in words.
    refused = prof.error(
        "POST", path, 422, ErrorCode.VALIDATION_ERROR, json=body | {"swiss_rounds": 5}
    )
    assert "5 bots meet each other in 4 rounds" in refused["message"]
    started = ClassTournament.model_validate(
        prof.call("POST", path, 201, json=body | {"swiss_rounds": 2})
    )
    assert started.games_total == 2 * 2 * 2  # two rounds of two boards (one bye), two games each
    done = finished(prof, cid, started.class_tournament_id)
    assert done.status == "finished" and done.games_done == 8
    plain = prof.call(
        "GET", f"/tournaments/{done.tournament_id}", 200, headers={"Arena-Protocol-Version": "1.4"}
    )
    table = plain["standings"]["swiss"]
    assert len(table) == 5 and sum(row["byes"] for row in table) == 2
    assert {g["round"] for g in plain["games"]} == {0, 1}
