"""Courses end to end on a real uvicorn with real clients: staff set a course up (assignments,
suites, roster and invite links), students submit with their invite tokens and read filtered
reports, deadlines, daily limits, late penalties, the gradebook and its CSV, regrades after a
suite change, dropped members, course jobs hidden from /grader/jobs, and a restart."""

from __future__ import annotations

import copy
import csv
import io
import json
import secrets
import stat
import time
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from protocol.courses import Gradebook, Regrade, Submission
from protocol.errors import ErrorCode
from server.settings import Settings
from tests.server.conftest import RunningServer, start_server
from tests.server.grading.test_grading import PUBLIC_SUITE, REFERENCE, sandboxed

ROOT = Path(__file__).resolve().parents[3]
CRASH = ROOT / "tests" / "autograder" / "submissions" / "crash" / "checkers.py"
SUITE: dict[str, Any] = json.loads(PUBLIC_SUITE.read_text())


def suite_of(public: int, private: int) -> dict[str, Any]:
    """The example puzzles, the first `public` shown to students, the next `private` not."""
    data = copy.deepcopy(SUITE)
    puzzles = data["puzzles"][: public + private]
    for index, puzzle in enumerate(puzzles):
        puzzle["public"] = index < public
    data["puzzles"] = puzzles
    return data


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()


def course_settings(base: Settings, **changes: Any) -> Settings:
    fields: dict[str, Any] = {"grader_workers": 2, "rate_limits_enabled": False, **changes}
    return base.model_copy(update=fields)


@pytest.fixture
def course_server(server_settings: Settings) -> Iterator[RunningServer]:
    running = start_server(course_settings(server_settings))
    try:
        yield running
    finally:
        running.stop()


class Client:
    """A client of the live server holding one bearer token."""

    def __init__(self, url: str, token: str | None) -> None:
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        self.http = httpx.Client(base_url=url, headers=headers, timeout=120)

    def call(self, method: str, path: str, expect: int, **kwargs: Any) -> Any:
        response = self.http.request(method, path, **kwargs)
        assert response.status_code == expect, (method, path, response.text)
        if response.headers.get("content-type", "").startswith("application/json"):
            return response.json()
        return response

    def error(self, method: str, path: str, expect: int, code: ErrorCode, **kwargs: Any) -> Any:
        body = self.call(method, path, expect, **kwargs)
        assert body["code"] == code.value, body
        return body

    def submit(self, cid: int, aid: int, program: bytes, expect: int = 202) -> Any:
        return self.call(
            "POST",
            f"/courses/{cid}/assignments/{aid}/submissions",
            expect,
            files=[("files", ("checkers.py", program, "text/x-python"))],
        )

    def wait(self, cid: int, sid: str, timeout: float = 180) -> Submission:
        deadline = time.monotonic() + timeout
        while True:
            body = self.call("GET", f"/courses/{cid}/submissions/{sid}", 200)
            submission = Submission.model_validate(body)
            if submission.status in ("done", "error"):
                return submission
            assert time.monotonic() < deadline, f"{sid} still {submission.status}"
            time.sleep(0.2)


def register(url: str) -> Client:
    response = httpx.post(f"{url}/players", json={"name": f"prof-{secrets.token_hex(4)}"})
    assert response.status_code == 201, response.text
    return Client(url, response.json()["token"])


def roster_csv(*rows: tuple[str, ...]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["student_id", "name", "email", "role"])
    writer.writerows(rows)
    return out.getvalue().encode()


def import_roster(prof: Client, cid: int, data: bytes) -> dict[str, Any]:
    result: dict[str, Any] = prof.call(
        "POST",
        f"/courses/{cid}/members",
        200,
        content=data,
        headers={"Content-Type": "text/csv"},
    )
    return result


def new_course(url: str) -> tuple[Client, int]:
    prof = register(url)
    created = prof.call("POST", "/courses", 201, json={"name": "CS 1 checkers"})
    return prof, int(created["course"]["course_id"])


def add_assignment(prof: Client, cid: int, **fields: Any) -> dict[str, Any]:
    now = datetime.now(UTC)
    body = {
        "name": f"endgame {secrets.token_hex(3)}",
        "profile": "endgame",
        "release_at": iso(now - timedelta(hours=1)),
        "due_at": iso(now + timedelta(days=2)),
        "suite": suite_of(1, 1),
        **fields,
    }
    created: dict[str, Any] = prof.call("POST", f"/courses/{cid}/assignments", 201, json=body)
    return created


def students(prof: Client, url: str, cid: int, *ids: str) -> dict[str, Client]:
    imported = import_roster(
        prof, cid, roster_csv(*((i, f"Student {i}", f"{i}@uni.edu") for i in ids))
    )
    return {
        invite["member"]["student_id"]: Client(url, invite["invite_token"])
        for invite in imported["created"]
    }


# -- set-up: courses, suites, roster ---------------------------------------------------------


def test_a_course_is_set_up_by_its_instructor(course_server: RunningServer) -> None:
    url = course_server.url
    prof = register(url)
    created = prof.call("POST", "/courses", 201, json={"name": "CS 1 checkers"})
    cid = created["course"]["course_id"]
    assert created["course"]["role"] == "instructor"
    assert created["invite_url"] == f"{url}/join/{created['invite_token']}"
    # The instructor's link signs in as the instructor (the web's cookie; here as a bearer).
    web_prof = Client(url, created["invite_token"])
    assert web_prof.call("GET", f"/courses/{cid}", 200)["role"] == "instructor"
    assert [c["course_id"] for c in prof.call("GET", "/courses", 200)["courses"]] == [cid]

    # A given suite: its public and private tests are counted.
    given = add_assignment(prof, cid, suite=suite_of(2, 3))
    assert (given["public_tests"], given["private_tests"], given["suite_version"]) == (2, 3, 1)
    # A bad suite is refused, at creation and as a replacement; the old one stays.
    bad = {**suite_of(1, 1), "format": "something-else"}
    body = {"name": "bad", "profile": "endgame", "due_at": iso(datetime.now(UTC)), "suite": bad}
    refused = prof.error(
        "POST", f"/courses/{cid}/assignments", 422, ErrorCode.VALIDATION_ERROR, json=body
    )
    assert "format" in refused["message"]
    aid = given["assignment_id"]
    prof.error(
        "PUT",
        f"/courses/{cid}/assignments/{aid}/suite",
        422,
        ErrorCode.VALIDATION_ERROR,
        json={"format": "arena-endgame-puzzles", "version": 1, "puzzles": []},
    )
    assert prof.call("GET", f"/courses/{cid}/assignments/{aid}", 200)["suite_version"] == 1
    replaced = prof.call("PUT", f"/courses/{cid}/assignments/{aid}/suite", 200, json=suite_of(1, 0))
    assert (replaced["public_tests"], replaced["private_tests"], replaced["suite_version"]) == (
        1,
        0,
        2,
    )
    # A name is the course's once.
    prof.error(
        "POST",
        f"/courses/{cid}/assignments",
        422,
        ErrorCode.VALIDATION_ERROR,
        json={**body, "name": given["name"], "suite": suite_of(1, 0)},
    )

    # The roster: a bad CSV is refused whole, naming the line; nothing is imported.
    bad_csv = roster_csv(("s1", "Ada", "ada@uni.edu"), ("s2", "Bob", "not-an-email"))
    refused = prof.error(
        "POST",
        f"/courses/{cid}/members",
        422,
        ErrorCode.BAD_ROSTER,
        content=bad_csv,
        headers={"Content-Type": "text/csv"},
    )
    assert "line 3" in refused["message"] and refused["details"]["column"] == "email"
    assert len(prof.call("GET", f"/courses/{cid}/members", 200)["members"]) == 1
    imported = import_roster(
        prof, cid, roster_csv(("s1", "Ada", "ada@uni.edu"), ("t1", "Tom", "tom@uni.edu", "ta"))
    )
    links = {i["member"]["student_id"]: i for i in imported["created"]}
    assert sorted(links) == ["s1", "t1"] and links["t1"]["member"]["role"] == "ta"
    assert links["s1"]["invite_url"] == f"{url}/join/{links['s1']['invite_token']}"
    # Importing again updates, makes no new link.
    again = import_roster(prof, cid, roster_csv(("s1", "Ada L.", "ada@uni.edu")))
    assert again["created"] == [] and again["updated"][0]["name"] == "Ada L."

    # The invite token is a bearer token; after a reissue the old one fails, the new works.
    ada = Client(url, links["s1"]["invite_token"])
    assert ada.call("GET", "/courses", 200)["courses"][0]["role"] == "student"
    mid = links["s1"]["member"]["member_id"]
    reissued = prof.call("POST", f"/courses/{cid}/members/{mid}/invite", 200)
    ada.error("GET", f"/courses/{cid}", 401, ErrorCode.UNAUTHORIZED)
    ada = Client(url, reissued["invite_token"])
    assert ada.call("GET", f"/courses/{cid}", 200)["role"] == "student"
    # A student may not change the course.
    ada.error("POST", f"/courses/{cid}/members/{mid}/invite", 403, ErrorCode.FORBIDDEN)
    # Dropped: the link fails at once, the member stays on the roster, marked.
    prof.call("DELETE", f"/courses/{cid}/members/{mid}", 204)
    ada.error("GET", f"/courses/{cid}", 401, ErrorCode.UNAUTHORIZED)
    roster = {
        m["student_id"]: m for m in prof.call("GET", f"/courses/{cid}/members", 200)["members"]
    }
    assert roster["s1"]["dropped_time_ms"] is not None and roster["t1"]["dropped_time_ms"] is None


def test_a_generated_suite_has_public_and_private_tests(
    course_server: RunningServer, server_settings: Settings
) -> None:
    prof, cid = new_course(course_server.url)
    made = add_assignment(prof, cid, suite=None, public_count=1, private_count=1)
    aid = made["assignment_id"]
    # An endgame suite is generated in the background; submissions wait for it.
    assert made["suite_version"] == 0
    ada = students(prof, course_server.url, cid, "s1")["s1"]
    deadline = time.monotonic() + 300
    while (made := prof.call("GET", f"/courses/{cid}/assignments/{aid}", 200))[
        "suite_version"
    ] == 0:
        response = ada.http.post(
            f"/courses/{cid}/assignments/{aid}/submissions",
            files=[("files", ("checkers.py", b"", "text/x-python"))],
        )
        if response.status_code == 202:
            # The suite was finished between the read above and this upload: accepted only
            # because it exists now.
            made = prof.call("GET", f"/courses/{cid}/assignments/{aid}", 200)
            assert made["suite_version"] == 1, response.text
            break
        assert response.status_code == 503, response.text
        assert response.json()["code"] == ErrorCode.GRADER_UNAVAILABLE.value, response.text
        assert time.monotonic() < deadline, "the suite was not generated"
        time.sleep(0.5)
    assert (made["suite_version"], made["public_tests"], made["private_tests"]) == (1, 1, 1)
    path = server_settings.grader.dir / "suites" / f"assignment-{aid}.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    puzzles = json.loads(path.read_text())["puzzles"]
    assert [(p["name"], p["public"]) for p in puzzles] == [("example 1", True), ("puzzle 1", False)]
    # An agent suite is made at once: private with its private positions, its public
    # examples one test students see (tests/server/courses/test_courses_agent.py).
    agent = add_assignment(prof, cid, profile="agent", suite=None, public_count=2, private_count=8)
    assert agent["suite_version"] == 1
    assert agent["public_tests"] == 1 and agent["private_tests"] > 1


# -- submissions, policies, gradebook, regrade -------------------------------------------------


@sandboxed
def test_students_submit_under_the_policies_and_staff_grade(
    course_server: RunningServer,
) -> None:
    url = course_server.url
    prof, cid = new_course(url)
    assignment = add_assignment(
        prof,
        cid,
        suite=suite_of(1, 1),
        before_due="public",
        daily_limit=2,
        late_policy="penalty",
        late_penalty_per_day=10,
        late_days_max=3,
    )
    aid = assignment["assignment_id"]
    people = students(prof, url, cid, "s1", "s2")
    ada, bob = people["s1"], people["s2"]
    reference = REFERENCE.read_bytes()

    first = ada.submit(cid, aid, reference)
    assert first["status"] == "queued" and first["student_id"] == "s1"
    broken = bob.submit(cid, aid, CRASH.read_bytes())
    done = ada.wait(cid, first["submission_id"])
    # Before the due date Ada sees the public test only; the private one is announced.
    assert done.filtered and done.hidden_tests == 1
    results = ada.call("GET", f"/courses/{cid}/submissions/{done.submission_id}/results", 200)
    names = [test["name"] for test in results["tests"]]
    assert len(names) == 1 and names[0].startswith("puzzle 1 ")
    assert "1 private test: results after the due date" in results["output"]
    assert done.score == results["score"] and done.max_score == results["max_score"] > 0
    report = ada.call("GET", f"/courses/{cid}/submissions/{done.submission_id}/report", 200)
    assert "puzzle 2" not in report.text and "private" in report.text
    # Staff see everything.
    full = Submission.model_validate(
        prof.call("GET", f"/courses/{cid}/submissions/{done.submission_id}", 200)
    )
    assert full.max_score is not None and done.max_score is not None
    assert not full.filtered and full.max_score > done.max_score
    # Another student cannot read it; nobody reads it at /grader/jobs.
    bob.error("GET", f"/courses/{cid}/submissions/{done.submission_id}", 404, ErrorCode.UNKNOWN_JOB)
    hidden = ada.error("GET", f"/grader/jobs/{done.submission_id}", 404, ErrorCode.UNKNOWN_JOB)
    assert f"/courses/{cid}/submissions/{done.submission_id}" in hidden["message"]
    prof.error("GET", f"/grader/jobs/{done.submission_id}/results.json", 404, ErrorCode.UNKNOWN_JOB)
    # The files come back as a zip to the student and to staff.
    files = prof.call("GET", f"/courses/{cid}/submissions/{done.submission_id}/files", 200)
    assert zipfile.ZipFile(io.BytesIO(files.content)).read("checkers.py") == reference

    # The daily limit: two in 24 hours, the third refused with when the next is allowed.
    second = ada.submit(cid, aid, reference)
    refused = ada.error(
        "POST",
        f"/courses/{cid}/assignments/{aid}/submissions",
        429,
        ErrorCode.SUBMISSION_LIMIT,
        files=[("files", ("checkers.py", reference, "text/x-python"))],
    )
    allowed = refused["details"]["next_allowed_time_ms"]
    assert allowed == first["created_time_ms"] + 24 * 3600 * 1000
    assert "2 of 2 submissions in the last 24 hours" in refused["message"]
    # Staff are exempt.
    prof.submit(cid, aid, reference)
    ada.wait(cid, second["submission_id"])

    # The due date passes (moved to just now; 3 late days allowed): the submissions made
    # before it stay on time and their reports are full; a new one is 1 day late, less 10%.
    now = datetime.now(UTC)
    prof.call(
        "PATCH",
        f"/courses/{cid}/assignments/{aid}",
        200,
        json={"due_at": iso(now - timedelta(seconds=1)), "daily_limit": 5},
    )
    after = ada.wait(cid, first["submission_id"])
    assert not after.filtered and after.max_score == full.max_score and not after.late
    late = ada.wait(cid, ada.submit(cid, aid, reference)["submission_id"])
    assert late.late and late.days_late == 1
    assert late.score is not None and late.final_score == pytest.approx(late.score * 0.9)
    # A hard deadline refuses it, with the due time.
    prof.call("PATCH", f"/courses/{cid}/assignments/{aid}", 200, json={"late_policy": "hard"})
    passed = ada.error(
        "POST",
        f"/courses/{cid}/assignments/{aid}/submissions",
        403,
        ErrorCode.DEADLINE_PASSED,
        files=[("files", ("checkers.py", reference, "text/x-python"))],
    )
    assert passed["details"]["due_time_ms"] < int(time.time() * 1000)
    prof.call("PATCH", f"/courses/{cid}/assignments/{aid}", 200, json={"late_policy": "penalty"})

    # The gradebook: best (on time, full) then last (the late one, less 10%).
    bob_done = bob.wait(cid, broken["submission_id"])
    book = Gradebook.model_validate(
        prof.call("GET", f"/courses/{cid}/assignments/{aid}/gradebook", 200)
    )
    rows = {row.student_id: row for row in book.rows}
    assert set(rows) == {"s1", "s2"}
    assert rows["s1"].score == after.score and not rows["s1"].late and rows["s1"].attempts == 3
    assert rows["s1"].job_id in (first["submission_id"], second["submission_id"])
    assert rows["s2"].score == bob_done.score and rows["s2"].attempts == 1
    prof.call("PATCH", f"/courses/{cid}/assignments/{aid}", 200, json={"score_policy": "last"})
    book = Gradebook.model_validate(
        prof.call("GET", f"/courses/{cid}/assignments/{aid}/gradebook", 200)
    )
    last = {row.student_id: row for row in book.rows}["s1"]
    assert last.job_id == late.submission_id and last.late and last.days_late == 1
    assert last.score == late.final_score
    exported = prof.call("GET", f"/courses/{cid}/assignments/{aid}/gradebook.csv", 200)
    lines = list(csv.reader(io.StringIO(exported.text)))
    assert lines[0] == [
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
    by_id = {line[0]: line for line in lines[1:]}
    assert by_id["s1"][1:3] == ["Student s1", "s1@uni.edu"]
    assert float(by_id["s1"][3]) == pytest.approx(late.final_score or 0)
    assert by_id["s1"][5:8] == ["true", "1", "3"]
    assert by_id["s1"][8].endswith("Z")
    # A student sees no gradebook.
    ada.error("GET", f"/courses/{cid}/assignments/{aid}/gradebook", 403, ErrorCode.FORBIDDEN)

    # A suite change, then a regrade of all: the scores follow the new suite.
    prof.call("PUT", f"/courses/{cid}/assignments/{aid}/suite", 200, json=suite_of(1, 3))
    regrade = Regrade.model_validate(
        prof.call("POST", f"/courses/{cid}/assignments/{aid}/regrade", 202, json={})
    )
    assert regrade.total == 5
    deadline = time.monotonic() + 300
    while not regrade.finished:
        assert time.monotonic() < deadline, regrade
        time.sleep(0.3)
        regrade = Regrade.model_validate(
            prof.call("GET", f"/courses/{cid}/regrades/{regrade.regrade_id}", 200)
        )
    assert regrade.done + regrade.error == 5 and regrade.queued == regrade.running == 0
    regraded = Submission.model_validate(
        prof.call("GET", f"/courses/{cid}/submissions/{first['submission_id']}", 200)
    )
    assert regraded.regrades == 1 and regraded.max_score is not None
    assert regraded.max_score > full.max_score and regraded.score == regraded.max_score
    # A TA may regrade one submission; an id of no submission of the assignment is refused.
    tom_link = import_roster(prof, cid, roster_csv(("t1", "Tom", "", "ta")))["created"][0]
    tom = Client(url, tom_link["invite_token"])
    one = tom.call(
        "POST",
        f"/courses/{cid}/assignments/{aid}/regrade",
        202,
        json={"submission_ids": [broken["submission_id"]]},
    )
    assert one["total"] == 1
    tom.error(
        "POST",
        f"/courses/{cid}/assignments/{aid}/regrade",
        404,
        ErrorCode.UNKNOWN_JOB,
        json={"submission_ids": ["not-a-submission"]},
    )

    # Dropping a member: their link fails; their work stays in the records.
    bob_member = bob.call("GET", f"/courses/{cid}", 200)["member_id"]
    prof.call("DELETE", f"/courses/{cid}/members/{bob_member}", 204)
    bob.error(
        "GET", f"/courses/{cid}/submissions/{broken['submission_id']}", 401, ErrorCode.UNAUTHORIZED
    )
    assert prof.call("GET", f"/courses/{cid}/submissions/{broken['submission_id']}", 200)


def test_an_assignment_is_hidden_from_students_until_released(course_server: RunningServer) -> None:
    url = course_server.url
    prof, cid = new_course(url)
    later = datetime.now(UTC) + timedelta(days=1)
    aid = add_assignment(prof, cid, release_at=iso(later), due_at=iso(later + timedelta(days=1)))[
        "assignment_id"
    ]
    ada = students(prof, url, cid, "s1")["s1"]
    assert ada.call("GET", f"/courses/{cid}/assignments", 200)["assignments"] == []
    ada.error("GET", f"/courses/{cid}/assignments/{aid}", 404, ErrorCode.UNKNOWN_ASSIGNMENT)
    ada.error(
        "POST",
        f"/courses/{cid}/assignments/{aid}/submissions",
        404,
        ErrorCode.UNKNOWN_ASSIGNMENT,
        files=[("files", ("checkers.py", b"", "text/x-python"))],
    )
    assert [
        a["released"] for a in prof.call("GET", f"/courses/{cid}/assignments", 200)["assignments"]
    ] == [False]
    # Staff are exempt from the release date.
    assert prof.submit(cid, aid, CRASH.read_bytes())["status"] == "queued"
    # A stranger learns nothing of the course.
    stranger = register(url)
    stranger.error("GET", f"/courses/{cid}", 404, ErrorCode.UNKNOWN_COURSE)
    stranger.error("GET", "/courses/999999", 404, ErrorCode.UNKNOWN_COURSE)


@sandboxed
def test_a_restart_grades_the_course_jobs_and_regrades_it_was_given(tmp_path: Path) -> None:
    settings = course_settings(
        Settings(
            database_url=f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}",
            grader_dir=tmp_path / "grader",
        ),
        grader_workers=1,
    )
    running = start_server(settings)
    try:
        prof, cid = new_course(running.url)
        aid = add_assignment(prof, cid, suite=suite_of(1, 0))["assignment_id"]
        ada = students(prof, running.url, cid, "s1")["s1"]
        slow = b"import time, sys\ntime.sleep(5)\nsys.exit(1)\n"
        ids = [ada.submit(cid, aid, slow)["submission_id"] for _ in range(2)]
        ada_token = ada.http.headers["Authorization"]
        # A regrade asked for before the stop is finished after the start.
        regrade = prof.call("POST", f"/courses/{cid}/assignments/{aid}/regrade", 202)
        assert regrade["total"] == 2
        # A suite being generated when the server stops is generated at the next start.
        generated = add_assignment(prof, cid, suite=None, public_count=1, private_count=0)
        assert generated["suite_version"] == 0
    finally:
        running.stop()
    running = start_server(settings)
    try:
        ada = Client(running.url, ada_token.removeprefix("Bearer "))
        for sid in ids:
            graded = ada.wait(cid, sid)
            assert graded.status == "done" and graded.score == 0 and graded.regrades == 1
        prof = Client(running.url, prof.http.headers["Authorization"].removeprefix("Bearer "))
        progress = prof.call("GET", f"/courses/{cid}/regrades/{regrade['regrade_id']}", 200)
        assert (progress["total"], progress["done"]) == (2, 2)
        path = f"/courses/{cid}/assignments/{generated['assignment_id']}"
        deadline = time.monotonic() + 300
        while prof.call("GET", path, 200)["suite_version"] == 0:
            assert time.monotonic() < deadline, "the suite was not generated after the restart"
            time.sleep(0.5)
        assert prof.call("GET", path, 200)["public_tests"] == 1
    finally:
        running.stop()


def test_the_count_limits_refuse_with_quota_exceeded(server_settings: Settings) -> None:
    limits = {
        "course_max_per_owner": 1,
        "course_max_assignments": 1,
        "course_max_members": 3,
        "course_max_roster_bytes": 1024,
    }
    running = start_server(course_settings(server_settings, **limits))
    try:
        prof, cid = new_course(running.url)
        refused = prof.error(
            "POST", "/courses", 403, ErrorCode.QUOTA_EXCEEDED, json={"name": "a second"}
        )
        assert refused["details"]["limit"] == 1
        add_assignment(prof, cid)
        prof.error(
            "POST",
            f"/courses/{cid}/assignments",
            403,
            ErrorCode.QUOTA_EXCEEDED,
            json={
                "name": "two",
                "profile": "endgame",
                "due_at": iso(datetime.now(UTC)),
                "suite": suite_of(1, 0),
            },
        )
        # The instructor and two students fill the course; a third is refused, nothing added.
        students(prof, running.url, cid, "s1", "s2")
        prof.error(
            "POST",
            f"/courses/{cid}/members",
            403,
            ErrorCode.QUOTA_EXCEEDED,
            content=roster_csv(("s3", "Cy", "")),
            headers={"Content-Type": "text/csv"},
        )
        # Updating who is on the roster takes no new place.
        assert import_roster(prof, cid, roster_csv(("s2", "Bo", "")))["updated"][0]["name"] == "Bo"
        assert len(prof.call("GET", f"/courses/{cid}/members", 200)["members"]) == 3
        big = roster_csv(*((f"s{i}", "x" * 90, "") for i in range(20)))
        prof.error(
            "POST",
            f"/courses/{cid}/members",
            413,
            ErrorCode.MESSAGE_TOO_LARGE,
            content=big,
            headers={"Content-Type": "text/csv"},
        )
    finally:
        running.stop()


@sandboxed
def test_before_due_score_shows_the_total_and_hides_the_private_tests(
    course_server: RunningServer,
) -> None:
    url = course_server.url
    prof, cid = new_course(url)
    aid = add_assignment(prof, cid, suite=suite_of(1, 1), before_due="score")["assignment_id"]
    ada = students(prof, url, cid, "s1")["s1"]
    done = ada.wait(cid, ada.submit(cid, aid, REFERENCE.read_bytes())["submission_id"])
    assert done.filtered and done.hidden_tests == 1
    results = ada.call("GET", f"/courses/{cid}/submissions/{done.submission_id}/results", 200)
    names = [test["name"] for test in results["tests"]]
    assert names[0].startswith("puzzle 1 ") and names[1] == "private test 1"
    assert "Details after the due date" in results["tests"][1]["output"]
    full = prof.call("GET", f"/courses/{cid}/submissions/{done.submission_id}", 200)
    assert done.score == full["score"] and done.max_score == full["max_score"]
    assert [
        a["score"] for a in ada.call("GET", f"/courses/{cid}/assignments", 200)["assignments"]
    ] == [full["score"]]
