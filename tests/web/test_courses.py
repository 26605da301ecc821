"""The course pages in Chromium: staff set a course up in the browser, a student signs in with
the invite link and submits from the page, follows the submission to its report; the daily
limit, a late submission, a regrade of everything and the gradebook's export; and what a
student may not open.

The course and its assignments are made over REST (as `arena course` does); everything a
person does is done in the browser, by the browser's cookie (the invite link's token).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from server.settings import Settings
from tests.server.conftest import RunningServer, start_server
from tests.server.web.test_web_courses import wait_for_suite
from tests.web.conftest import DESKTOP, PHONE, Problems, settle
from tests.web.test_grader_page import HIDE
from tests.web.test_lobby import register

pytestmark = pytest.mark.web

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "autograder" / "reference" / "endgame_solver.py"
GRADED_WAIT_MS = 120_000
"""Long enough for a few gradings of four puzzles on a busy machine."""
BROKEN = b"def solve(:\n    pass\n"

HOSTILE = "<img src=x onerror=alert(1)>"
"""A roster name reading as markup (a roster's names are free text)."""
ROSTER = (
    "student_id,name,email,role\n"
    "s001,Ada Lovelace,ada@example.edu,student\n"
    f"s002,{HOSTILE},grace@example.edu,student\n"
    "t001,constructor,ta@example.edu,ta\n"
)
"""The roster the instructor imports: two students (one named like markup) and a TA named like
a property every JavaScript object has."""
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


@pytest.fixture
def web_server(database_url: str, tmp_path: Path) -> Iterator[RunningServer]:
    """The app with one grading worker (so that a regrade has something to wait for)."""
    running = start_server(
        Settings(database_url=database_url, grader_dir=tmp_path / "grader", grader_workers=1)
    )
    try:
        yield running
    finally:
        running.stop()


def iso(moment: datetime) -> str:
    return moment.isoformat()


@dataclass
class CourseSetUp:
    """A course made over REST by its instructor: the ids, the instructor's token and link."""

    course_id: int
    owner: dict[str, str]
    instructor_link: str


def create_course(api: httpx.Client, name: str, owner_name: str = "prof") -> CourseSetUp:
    owner = register(api, owner_name)
    created = api.post("/courses", json={"name": name}, headers=owner)
    assert created.status_code == 201, created.text
    body = created.json()
    return CourseSetUp(body["course"]["course_id"], owner, body["invite_url"])


def add_assignment(api: httpx.Client, course: CourseSetUp, name: str, **policy: Any) -> int:
    """Add an endgame assignment of two public and two private puzzles; return its id."""
    now = datetime.now(UTC)
    body: dict[str, Any] = {
        "name": name,
        "profile": "endgame",
        "release_at": iso(now - timedelta(hours=1)),
        "due_at": iso(now + timedelta(days=7)),
        "public_count": 2,
        "private_count": 2,
        **policy,
    }
    created = api.post(f"/courses/{course.course_id}/assignments", json=body, headers=course.owner)
    assert created.status_code == 201, created.text
    assignment_id = int(created.json()["assignment_id"])
    wait_for_suite(api, course.owner, f"/courses/{course.course_id}/assignments/{assignment_id}")
    return assignment_id


def import_roster(api: httpx.Client, course: CourseSetUp, roster: str) -> dict[str, str]:
    """Import a roster over REST; return each new member's invite link by student id."""
    imported = api.post(
        f"/courses/{course.course_id}/members",
        content=roster.encode(),
        headers={**course.owner, "Content-Type": "text/csv"},
    )
    assert imported.status_code in (200, 201), imported.text
    return {
        invite["member"]["student_id"]: invite["invite_url"]
        for invite in imported.json()["created"]
    }


def sign_in(page: Page, link: str, name: str) -> None:
    """Open an invite link and press its button: the browser is signed in as `name`."""
    response = page.goto(link)
    assert response is not None and response.ok
    assert response.headers.get("referrer-policy") == "no-referrer"
    expect(page.locator("#join-name")).to_have_text(name)
    page.get_by_role("button", name=f"Sign in as {name}").click()
    page.wait_for_url(re.compile(r"/courses/\d+$"))
    settle(page)


def submit(page: Page, course_id: int, assignment_id: int, data: bytes) -> None:
    """Submit `data` as checkers.py from the assignment's page."""
    page.goto(f"/courses/{course_id}/assignments/{assignment_id}")
    settle(page)
    page.set_input_files(
        "#files", files=[{"name": "checkers.py", "mimeType": "text/x-python", "buffer": data}]
    )
    page.get_by_role("button", name="Submit and grade").click()


def shoot(page: Page, screenshots: Path, name: str) -> None:
    """Screenshot the page at desktop and phone widths; it must fit the phone's width."""
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        width = page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= size["width"], f"{name} at {label}: {width} px wide"
        page.screenshot(path=screenshots / f"course-{name}-{label}.png", full_page=True)
    page.set_viewport_size(DESKTOP)


def new_page(
    browser: Browser, server: RunningServer, problems: Problems
) -> tuple[BrowserContext, Page]:
    """Another browser (its own cookies), whose problems fail the test like the `page`'s."""
    context = browser.new_context(viewport=DESKTOP, base_url=server.url)
    other = context.new_page()
    other.on("console", problems.console)
    other.on("pageerror", problems.page_error)
    other.on("dialog", problems.dialog)
    other.on("response", problems.response)
    return context, other


def test_staff_set_up_a_course_and_a_student_submits_and_reads_the_report(
    page: Page,
    browser: Browser,
    api: httpx.Client,
    web_server: RunningServer,
    problems: Problems,
    screenshots: Path,
) -> None:
    course = create_course(api, "CS 101: Search")
    assignment = add_assignment(api, course, "Endgame solver")

    # The instructor signs in with the link `POST /courses` gave, and imports the roster.
    sign_in(page, course.instructor_link, "prof")
    expect(page.locator("h1")).to_have_text("CS 101: Search")
    shoot(page, screenshots, "course-staff")
    page.locator("#roster-link").click()
    page.wait_for_url(re.compile(r"/roster$"))
    page.locator("#roster-text").fill(ROSTER)
    page.get_by_role("button", name="Import").click()
    links = page.locator("#invites .invite-link")
    expect(links).to_have_count(3)
    expect(page.locator("#invites")).to_contain_text(HOSTILE)
    invite = {
        item.locator(".invite-student").inner_text(): item.locator(".invite-link").inner_text()
        for item in page.locator("#invites li").all()
    }
    assert set(invite) == {"s001", "s002", "t001"}
    assert all(link.startswith(f"{web_server.url}/join/") for link in invite.values())
    expect(page.locator("#roster tbody tr")).to_have_count(4)  # the instructor and three
    settle(page)
    shoot(page, screenshots, "roster-imported")
    # Shown once: the roster seen again has no link.
    page.goto(f"/courses/{course.course_id}/roster")
    expect(page.locator("#invites")).to_have_count(0)
    expect(page.get_by_text(invite["s001"])).to_have_count(0)
    settle(page)

    # The student opens their link in their own browser, signs in, and submits.
    context, student = new_page(browser, web_server, problems)
    try:
        sign_in(student, invite["s001"], "Ada Lovelace")
        expect(student.locator("#assignments th a")).to_have_text("Endgame solver")
        student.locator("#assignments th a").click()
        expect(student.locator("#history")).to_have_text("No submission yet.")
        shoot(student, screenshots, "assignment-student")
        submit(student, course.course_id, assignment, REFERENCE.read_bytes())
        student.wait_for_url(re.compile(rf"/courses/{course.course_id}/submissions/[\w-]+$"))
        status = student.locator("#job-status")
        expect(status).to_have_text(re.compile(r"^(Queued|Being graded now|Graded)"))
        expect(status).to_have_text("Graded.", timeout=GRADED_WAIT_MS)
        # Before the due date the student sees the public puzzles, and is told of the others.
        expect(student.locator("#report .total")).to_have_text("Score: 2 of 2")
        expect(student.locator("#report section.full h3", has_text="example")).to_have_count(2)
        expect(student.locator("#report .summary")).to_contain_text(
            "2 private tests: results after the due date"
        )
        # Each test's kind in words, not Gradescope's label.
        expect(student.locator("#report tbody td:nth-child(3)")).to_have_text(["public"] * 2)
        settle(student)
        shoot(student, screenshots, "submission-graded")
        # Back on the assignment: the history lists it, graded.
        student.get_by_role("link", name="Back to Endgame solver").click()
        expect(student.locator("#history tbody tr")).to_have_count(1)
        expect(student.locator("#history .job-status")).to_have_text("Graded.")
        settle(student)
    finally:
        context.close()

    # The instructor's gradebook: Ada's score counts every test (staff see everything).
    page.goto(f"/courses/{course.course_id}/assignments/{assignment}")
    row = page.locator("#gradebook tbody tr", has_text="s001")
    expect(row.locator("td.num").first).to_have_text("4 / 4")
    expect(row).to_contain_text("on time")
    expect(page.locator("#gradebook")).to_contain_text(HOSTILE)
    settle(page)
    shoot(page, screenshots, "gradebook")


def test_an_assignment_says_how_it_is_graded_in_place_and_offers_the_starter(
    page: Page, api: httpx.Client, web_server: RunningServer, screenshots: Path
) -> None:
    course = create_course(api, "CS 101: Search")
    assignment = add_assignment(api, course, "Endgame solver")
    invites = import_roster(api, course, ROSTER)
    sign_in(page, invites["s001"], "Ada Lovelace")
    page.goto(f"/courses/{course.course_id}/assignments/{assignment}")
    scoring = page.locator("#scoring")
    # In plain words on the page: no Markdown, no file of the repository to look up.
    page.get_by_text("How it is run and scored").click()
    expect(scoring).to_contain_text("the grader runs python3 checkers.py --inputfile input.txt")
    expect(scoring).to_contain_text("a line that does not end in a red win earns nothing")
    assert "`" not in scoring.inner_text()
    assert "GRADER.md" not in page.content()
    link = page.locator("#starter")
    expect(link).to_have_text("Download the starter checkers.py")
    with page.expect_download() as download:
        link.click()
    assert download.value.suggested_filename == "checkers.py"
    starter = ROOT / "autograder" / "starters" / "endgame" / "checkers.py"
    assert Path(download.value.path()).read_text() == starter.read_text()
    settle(page)
    shoot(page, screenshots, "assignment-starter")


def test_over_the_daily_limit_the_page_says_when_the_next_is_allowed(
    page: Page, api: httpx.Client, problems: Problems, screenshots: Path
) -> None:
    course = create_course(api, "Limits")
    assignment = add_assignment(api, course, "Once a day", daily_limit=1)
    links = import_roster(api, course, "student_id,name,email\ns1,Ben,ben@example.edu\n")
    sign_in(page, links["s1"], "Ben")
    submit(page, course.course_id, assignment, BROKEN)
    page.wait_for_url(re.compile(r"/submissions/[\w-]+$"))
    settle(page)

    path = f"/web/courses/{course.course_id}/assignments/{assignment}/submissions"
    problems.expect_refusal(path, 429)
    submit(page, course.course_id, assignment, BROKEN)
    refusal = page.locator("#form-errors")
    expect(refusal).to_contain_text("1 of 1 submissions in the last 24 hours")
    expect(refusal).to_contain_text("the next is allowed at")
    expect(page.locator("#history tbody tr")).to_have_count(1)
    settle(page)
    shoot(page, screenshots, "over-the-limit")


def test_a_late_submission_is_marked_late_in_the_gradebook(
    page: Page, browser: Browser, api: httpx.Client, web_server: RunningServer, problems: Problems
) -> None:
    course = create_course(api, "Late work")
    now = datetime.now(UTC)
    assignment = add_assignment(
        api,
        course,
        "Overdue",
        release_at=iso(now - timedelta(days=3)),
        due_at=iso(now - timedelta(hours=30)),
        late_policy="penalty",
        late_penalty_per_day=10,
        late_days_max=5,
    )
    links = import_roster(api, course, "student_id,name,email\nlate1,Cy,cy@example.edu\n")
    context, student = new_page(browser, web_server, problems)
    try:
        sign_in(student, links["late1"], "Cy")
        submit(student, course.course_id, assignment, REFERENCE.read_bytes())
        student.wait_for_url(re.compile(r"/submissions/[\w-]+$"))
        expect(student.locator("#job-status")).to_have_text("Graded.", timeout=GRADED_WAIT_MS)
        # Submitted 30 hours after the due date: two started days late, 20% off.
        expect(student.locator(".facts")).to_contain_text("late (2 days)")
        expect(student.locator("#final-score")).to_have_text("3.2 of 4 (4 before the late penalty)")
        settle(student)
    finally:
        context.close()
    sign_in(page, course.instructor_link, "prof")
    page.goto(f"/courses/{course.course_id}/assignments/{assignment}")
    row = page.locator("#gradebook tbody tr", has_text="late1")
    expect(row.locator(".late")).to_have_text("late (2 days)")
    expect(row.locator("td.num").first).to_have_text("3.2 / 4")
    settle(page)


def test_regrade_all_shows_its_progress_to_the_end_and_the_gradebook_exports(
    page: Page,
    browser: Browser,
    api: httpx.Client,
    web_server: RunningServer,
    problems: Problems,
    screenshots: Path,
) -> None:
    course = create_course(api, "Regrades")
    assignment = add_assignment(api, course, "Solver")
    links = import_roster(
        api,
        course,
        "student_id,name,email\nr1,Dee,dee@example.edu\nr2,Eve,eve@example.edu\n",
    )
    for student_id, name, program in (("r1", "Dee", REFERENCE.read_bytes()), ("r2", "Eve", BROKEN)):
        context, student = new_page(browser, web_server, problems)
        try:
            sign_in(student, links[student_id], name)
            submit(student, course.course_id, assignment, program)
            student.wait_for_url(re.compile(r"/submissions/[\w-]+$"))
            expect(student.locator("#job-status")).to_have_text("Graded.", timeout=GRADED_WAIT_MS)
            settle(student)
        finally:
            context.close()

    sign_in(page, course.instructor_link, "prof")
    page.goto(f"/courses/{course.course_id}/assignments/{assignment}")
    settle(page)
    page.get_by_role("button", name="Regrade all submissions").click()
    page.wait_for_url(re.compile(r"\?regrade=\d+"))
    status = page.locator("#regrade-status")
    expect(status).to_have_text(re.compile(r"^Regrad"))
    expect(status).to_have_text(
        "Regrade finished: 2 of 2 submissions graded again.", timeout=GRADED_WAIT_MS
    )
    progress = page.locator("#regrade-progress")
    expect(progress).to_have_attribute("value", "2")
    expect(progress).to_have_attribute("max", "2")
    rows = page.locator("#gradebook tbody tr")
    expect(rows.filter(has_text="r1").locator("td.num").first).to_have_text("4 / 4")
    expect(rows.filter(has_text="r2").locator("td.num").first).to_have_text("0 / 4")
    settle(page)
    shoot(page, screenshots, "regrade-finished")

    # The export: a CSV download in the columns an LMS gradebook imports.
    with page.expect_download() as downloading:
        page.locator("#export").click()
    download = downloading.value
    assert download.suggested_filename.endswith(".csv")
    text = Path(download.path()).read_text(encoding="utf-8")
    table = list(csv.DictReader(io.StringIO(text)))
    assert list(table[0]) == GRADEBOOK_COLUMNS
    by_id = {row["student_id"]: row for row in table}
    assert set(by_id) == {"r1", "r2"}
    assert float(by_id["r1"]["score"]) == 4 and float(by_id["r1"]["max_score"]) == 4
    assert float(by_id["r2"]["score"]) == 0 and by_id["r2"]["attempts"] == "1"

    # One student's history: their submission's report, files and its own regrade.
    page.get_by_role("link", name="r2", exact=True).click()
    page.wait_for_url(re.compile(rf"/courses/{course.course_id}/students/\d+$"))
    expect(page.locator("h1")).to_have_text("Eve")
    expect(page.locator("table.history tbody tr")).to_have_count(1)
    settle(page)
    page.get_by_role("button", name=re.compile("^Regrade the submission of")).click()
    page.wait_for_url(re.compile(r"\?regraded=1$"))
    expect(page.locator("#notice")).to_contain_text("queued to be graded again")
    expect(page.locator("table.history .job-status")).to_have_text(
        "Graded.", timeout=GRADED_WAIT_MS
    )
    settle(page)
    shoot(page, screenshots, "student-history")


def refused(page: Page, path: str, status: int, problems: Problems) -> None:
    """Open `path`, which must answer the page refusing it with `status`."""
    problems.expect_refusal(path, status)
    response = page.goto(path)
    assert response is not None and response.status == status, path
    expect(page.locator("#refusal")).to_be_visible()
    settle(page)


def test_a_student_opens_neither_another_students_submission_nor_staff_pages(
    page: Page,
    browser: Browser,
    api: httpx.Client,
    web_server: RunningServer,
    problems: Problems,
    screenshots: Path,
) -> None:
    course = create_course(api, "Privacy")
    assignment = add_assignment(api, course, "Mine alone")
    links = import_roster(
        api, course, "student_id,name,email\np1,Fay,fay@example.edu\np2,Gus,gus@example.edu\n"
    )
    context, first = new_page(browser, web_server, problems)
    try:
        sign_in(first, links["p1"], "Fay")
        submit(first, course.course_id, assignment, BROKEN)
        first.wait_for_url(re.compile(r"/submissions/[\w-]+$"))
        theirs = first.url.removeprefix(web_server.url)
        settle(first)
    finally:
        context.close()

    sign_in(page, links["p2"], "Gus")
    cid = course.course_id
    refused(page, theirs, 404, problems)
    expect(page.locator("h1")).to_have_text("No such submission")
    shoot(page, screenshots, "refused-submission")
    submission_id = theirs.rsplit("/", 1)[1]
    for path, status in (
        (f"/courses/{cid}/roster", 403),
        (f"/courses/{cid}/students/1", 403),
        (f"/courses/{cid}/submissions/{submission_id}/files", 404),
        (f"/courses/{cid + 1000}", 404),
    ):
        problems.expect_refusal(path, status)
        # A download is asked for as the page's link does, not opened as a page.
        response = page.goto(path) if not path.endswith("/files") else None
        if response is None:
            answer = page.request.get(path)
            assert answer.status == status, (path, answer.status)
        else:
            assert response.status == status, (path, response.status)
            expect(page.locator("#refusal")).to_be_visible()
            settle(page)
    expect(page.locator("h1")).to_have_text("Not a course of yours")
    settle(page)
    # Nor the gradebook's export.
    csv_path = f"/courses/{cid}/assignments/{assignment}/gradebook.csv"
    assert page.request.get(csv_path).status == 403


def test_a_hidden_tab_asks_nothing_until_it_is_shown(page: Page, api: httpx.Client) -> None:
    course = create_course(api, "Quiet tabs")
    assignment = add_assignment(api, course, "Hidden", public_count=1, private_count=1)
    sign_in(page, course.instructor_link, "prof")
    page.add_init_script(HIDE)
    asked: list[str] = []
    # What the page's script asks (its fetches), not the pages the browser opens.
    page.on(
        "request",
        lambda request: asked.append(request.url) if request.resource_type == "fetch" else None,
    )
    submit(page, course.course_id, assignment, BROKEN)
    page.wait_for_url(re.compile(r"/submissions/[\w-]+$"))
    expect(page.locator("#job-status")).to_have_attribute(
        "data-status", re.compile("queued|running")
    )
    page.wait_for_timeout(2500)  # two and a half of the script's one-second ticks
    assert [url for url in asked if "/submissions/" in url and "/assignments/" not in url] == []
    with page.expect_request(
        lambda request: (
            request.resource_type == "fetch"
            and re.search(r"/courses/\d+/submissions/", request.url) is not None
        )
    ):
        page.evaluate(
            "() => { window.__hidden = false; "
            "document.dispatchEvent(new Event('visibilitychange')); }"
        )
    expect(page.locator("#job-status")).to_have_text("Graded.", timeout=GRADED_WAIT_MS)
    settle(page)
