"""A class tournament in Chromium: the instructor starts it from the agent assignment's page,
follows it to the end and exports it; a student reads it with themself as `you` and only their
own games.

The course, its roster and the students' submissions are made over REST (as `arena course` and
`arena grader submit` do); the tournament is started and read in the browser.
"""

from __future__ import annotations

import csv
import io
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from server.settings import Settings
from tests.server.conftest import RunningServer, start_server
from tests.server.courses.test_courses_agent import small_private_suite
from tests.server.grading.test_grading import sandboxed
from tests.web.conftest import Problems, settle
from tests.web.test_courses import create_course, import_roster, new_page, shoot, sign_in

pytestmark = [pytest.mark.web, sandboxed]

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = (ROOT / "autograder" / "reference" / "agent_solution.py").read_bytes()
CRASH = (ROOT / "tests" / "autograder" / "agents" / "crash.py").read_bytes()
ROSTER = (
    "student_id,name,email,role\n"
    "s1,Ada Lovelace,ada@example.edu,student\n"
    "s2,Alan Turing,alan@example.edu,student\n"
)
FINISH_S = 600
"""A liveness bound on grading and on the tournament: it keeps a stuck one from hanging the run."""


@pytest.fixture
def web_server(database_url: str, tmp_path: Path) -> Iterator[RunningServer]:
    running = start_server(
        Settings(
            database_url=database_url,
            grader_dir=tmp_path / "grader",
            grader_workers=2,
            hosted_dir=tmp_path / "hosted",
            hosted_move_seconds=0.2,
        )
    )
    try:
        yield running
    finally:
        running.stop()


def graded_submission(api: httpx.Client, token: str, cid: int, aid: int, program: bytes) -> None:
    """Submit `program` as a student over REST and wait until it is graded."""
    auth = {"Authorization": f"Bearer {token}"}
    sent = api.post(
        f"/courses/{cid}/assignments/{aid}/submissions",
        files=[("files", ("agent.py", program, "text/x-python"))],
        headers=auth,
    )
    assert sent.status_code == 202, sent.text
    deadline = time.monotonic() + FINISH_S
    while api.get(
        f"/courses/{cid}/submissions/{sent.json()['submission_id']}", headers=auth
    ).json()["status"] not in ("done", "error"):
        assert time.monotonic() < deadline
        time.sleep(0.2)


def test_staff_start_a_class_tournament_in_the_browser_and_a_student_reads_it(
    page: Page,
    browser: Browser,
    api: httpx.Client,
    web_server: RunningServer,
    problems: Problems,
    screenshots: Path,
    tmp_path: Path,
) -> None:
    course = create_course(api, "CS 384: Game search")
    due = (datetime.now(UTC) + timedelta(days=7)).isoformat()
    made = api.post(
        f"/courses/{course.course_id}/assignments",
        json={
            "name": "Checkers agent",
            "profile": "agent",
            "due_at": due,
            "suite": small_private_suite(tmp_path),
        },
        headers=course.owner,
    )
    assert made.status_code == 201, made.text
    aid = made.json()["assignment_id"]
    links = import_roster(api, course, ROSTER)
    tokens = {sid: link.rsplit("/", 1)[1] for sid, link in links.items()}
    graded_submission(api, tokens["s1"], course.course_id, aid, REFERENCE)
    graded_submission(api, tokens["s2"], course.course_id, aid, CRASH)

    # The instructor starts it from the assignment's page: the best submissions, two
    # references, a tenth of the grade.
    sign_in(page, course.instructor_link, "prof")
    page.goto(f"/courses/{course.course_id}/assignments/{aid}")
    expect(page.locator("#class-list")).to_have_text("No class tournament yet.")
    page.locator("#pick").select_option("best")
    page.locator("input[name=house_bots][value=greedy]").check()
    page.locator("#grade-share").fill("10")
    settle(page)
    shoot(page, screenshots, "class-form")
    page.get_by_role("button", name="Start the tournament").click()
    page.wait_for_url(re.compile(rf"/courses/{course.course_id}/tournaments/\d+$"))
    class_url = page.url
    expect(page.locator("h1")).to_have_text(re.compile(r"^Class tournament \d+$"))
    # Four entrants, a round robin of two games a pairing: twelve games.
    expect(page.locator("#status")).to_contain_text("of 12 games played")
    deadline = time.monotonic() + FINISH_S
    while "finished" not in page.locator("#status").inner_text():
        assert time.monotonic() < deadline, page.locator("#status").inner_text()
        page.wait_for_timeout(1000)
        page.reload()
    expect(page.locator("#standings tbody tr")).to_have_count(4)
    expect(page.locator("#standings")).to_contain_text("Ada Lovelace (s1)")
    expect(page.locator("#games tbody tr")).to_have_count(12)
    # The crashing agent lost all six of its games: last, with 0 of 10 grade points.
    last = page.locator("#standings tbody tr").last
    expect(last).to_contain_text("Alan Turing (s2)")
    expect(last).to_contain_text("0 / 10")
    settle(page)
    shoot(page, screenshots, "class-staff")
    exported = page.request.get(page.locator("#export").get_attribute("href") or "")
    assert exported.ok and exported.headers["content-type"].startswith("text/csv")
    rows = {row["student_id"]: row for row in csv.DictReader(io.StringIO(exported.text()))}
    assert set(rows) == {"s1", "s2"}
    assert (rows["s2"]["games"], rows["s2"]["score"], rows["s2"]["grade_points"]) == (
        "6",
        "0",
        "0.00",
    )
    page.locator("#full").click()
    page.wait_for_url(re.compile(r"/tournaments/t_\w+$"))
    settle(page)
    shoot(page, screenshots, "class-tournament-page")

    # Ada reads it in her own browser: herself as `you`, Alan as a number, her games only.
    context, student = new_page(browser, web_server, problems)
    try:
        sign_in(student, links["s1"], "Ada Lovelace")
        student.goto(f"/courses/{course.course_id}/assignments/{aid}")
        expect(student.locator("#class-list li")).to_have_count(1)
        expect(student.locator("#class-form")).to_have_count(0)
        student.goto(class_url)
        expect(student.locator("#standings tr.you")).to_contain_text("you")
        expect(student.locator("#standings")).to_contain_text("student 2")
        expect(student.locator("#standings")).not_to_contain_text("Alan")
        expect(student.locator("#export")).to_have_count(0)
        expect(student.locator("#games tbody tr")).to_have_count(6)
        settle(student)
        shoot(student, screenshots, "class-student")
    finally:
        context.close()
