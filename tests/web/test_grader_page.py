"""The grader's pages in Chromium: upload from the form, follow the job in the queue, read the
report; a job shown to its uploader's browser only."""

from __future__ import annotations

import io
import json
import re
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, Response, expect

from server.settings import Settings
from tests.server.conftest import RunningServer, start_server
from tests.web.conftest import DESKTOP, PHONE, Problems, settle
from tests.web.test_lobby import register

pytestmark = pytest.mark.web

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "autograder" / "reference" / "endgame_solver.py"
PUBLIC_SUITE = ROOT / "autograder" / "examples" / "endgame-puzzles.json"
GUIDE_EXAMPLE = [
    "........", "........", "...b....", "......R.", "...R....", "........", ".....b..", "........"
]  # fmt: skip
STUDENTS = ROOT / "tests" / "autograder" / "students"
GRADED_WAIT_MS = 90_000
"""Long enough for two gradings of the five public puzzles on a busy machine."""

# Fails each puzzle after a second: keeps the one worker busy while the next job waits.
SLOW = b"import sys, time\ntime.sleep(1)\nsys.exit(1)\n"
BLOCKER = b"import sys, time\ntime.sleep(4)\nsys.exit(1)\n"
"""A blocking job: about 4 s a puzzle, so it outlasts the page's steps on a loaded machine."""


def slowed_reference() -> bytes:
    """Return the reference solver, 0.5 s slower to start each puzzle (5 puzzles: 2.5 s).

    The page asks for the job's status every second; a grading shorter than that can pass
    from queued to graded between two questions, never showing "being graded".
    """
    source = REFERENCE.read_bytes()
    head = b"from __future__ import annotations\n"
    assert head in source
    return source.replace(head, head + b"import time\ntime.sleep(0.5)\n", 1)


@pytest.fixture
def web_server(database_url: str, tmp_path: Path) -> Iterator[RunningServer]:
    """The app with the grader on the public example suite (5 puzzles: a real, quick grading)."""
    running = start_server(
        Settings(
            database_url=database_url,
            grader_dir=tmp_path / "grader",
            grader_endgame_suite=PUBLIC_SUITE,
            grader_workers=1,
        )
    )
    try:
        yield running
    finally:
        running.stop()


def shoot(page: Page, screenshots: Path, name: str) -> None:
    """Screenshot the page at desktop and phone widths; it must fit the phone's width."""
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= size["width"]
        page.screenshot(path=screenshots / f"{name}-{label}.png", full_page=True)
    page.set_viewport_size(DESKTOP)


def test_the_reference_solution_waits_its_turn_then_shows_its_score(
    page: Page, api: httpx.Client, screenshots: Path
) -> None:
    # Another student's slow job holds the one worker, so ours waits in the queue.
    early = register(api, "early")
    blocker = api.post(
        "/grader/jobs",
        data={"profile": "endgame"},
        files={"files": ("checkers.py", BLOCKER)},
        headers=early,
    )
    assert blocker.status_code == 202, blocker.text
    blocker_url = blocker.headers["location"]
    deadline = time.monotonic() + 30
    while api.get(blocker_url, headers=early).json()["status"] == "queued":
        assert time.monotonic() < deadline, "the blocking job was never taken by the worker"
        time.sleep(0.05)

    page.goto("/grader")
    expect(page.locator('header nav a[aria-current="page"]')).to_have_text("Grader")
    expect(page.locator("#profiles dt")).to_have_count(2)
    expect(page.get_by_role("radio", name=re.compile("^endgame"))).to_be_checked()
    shoot(page, screenshots, "grader")
    # By keyboard: the profile's radio buttons, then the files, then the button.
    page.get_by_role("radio", name=re.compile("^endgame")).focus()
    page.keyboard.press("ArrowDown")
    expect(page.get_by_role("radio", name=re.compile("^agent"))).to_be_checked()
    page.keyboard.press("ArrowUp")
    expect(page.get_by_role("radio", name=re.compile("^endgame"))).to_be_checked()
    page.set_input_files(
        "#files",
        files=[{"name": "checkers.py", "mimeType": "text/x-python", "buffer": slowed_reference()}],
    )
    page.keyboard.press("Tab")
    expect(page.locator("#files")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Upload and grade")).to_be_focused()
    page.keyboard.press("Enter")

    page.wait_for_url(re.compile(r"/grader/jobs/[A-Za-z0-9_\-]+$"))
    status = page.locator("#job-status")
    # Its place, and why it waits, in the server's words.
    expect(status).to_have_text(
        "Queued: number 1 in the queue. Next in the queue: it starts as soon as a worker is free."
    )
    shoot(page, screenshots, "grader-job-waiting")
    # The page follows the job by itself: its turn comes, then its report.
    expect(status).to_have_text("Being graded now.", timeout=GRADED_WAIT_MS)
    expect(status).to_have_text("Graded.", timeout=GRADED_WAIT_MS)
    total = page.locator("#report .total")
    expect(total).to_have_text("Score: 5 of 5")
    expect(page.locator("#report section.full")).to_have_count(5)
    expect(page.locator("#report section.full h3").first).to_contain_text("puzzle 1")
    # The report is styled by the site's sheet (no inline style to be blocked).
    colour = page.locator("#report section.full").first.evaluate(
        "(node) => getComputedStyle(node).borderLeftColor"
    )
    assert colour == "rgb(46, 125, 50)"
    settle(page)
    shoot(page, screenshots, "grader-job-done")

    page.get_by_role("link", name="The report on a page of its own").click()
    page.wait_for_url(re.compile(r"/report\.html$"))
    expect(page.locator(".grade-report .total")).to_have_text("Score: 5 of 5")
    settle(page)
    shoot(page, screenshots, "grader-report")


def error_answers(page: Page) -> list[tuple[int, str]]:
    """Return the list the page's error answers (status, URL) will be recorded in."""
    errors: list[tuple[int, str]] = []

    def record(answer: Response) -> None:
        if answer.status >= 400:
            errors.append((answer.status, answer.url))

    page.on("response", record)
    return errors


def zipped(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_a_broken_submission_is_explained_to_its_uploader_only(
    page: Page, browser: Browser, web_server: RunningServer, screenshots: Path
) -> None:
    broken = b"def solve(:\n    pass\n"
    page.goto("/grader")
    page.set_input_files(
        "#files",
        files=[
            {
                "name": "work.zip",
                "mimeType": "application/zip",
                "buffer": zipped({"work/checkers.py": broken, "work/notes.txt": b"<b>hi</b>"}),
            }
        ],
    )
    page.get_by_role("button", name="Upload and grade").click()
    page.wait_for_url(re.compile(r"/grader/jobs/[A-Za-z0-9_\-]+$"))
    job_url = page.url
    expect(page.locator("#report .total")).to_have_text("Score: 0 of 5", timeout=GRADED_WAIT_MS)
    expect(page.locator("#report section.zero")).to_have_count(5)
    expect(page.locator("#report section.zero pre").first).to_contain_text("SyntaxError")
    expect(page.get_by_text("notes.txt", exact=True)).to_have_count(1)
    settle(page)
    shoot(page, screenshots, "grader-job-broken")

    # Another browser (another guest, or none) is refused the job and its report: the only
    # error answers it gets are these two pages' own 403s.
    context = browser.new_context(viewport=PHONE, base_url=web_server.url)
    try:
        other = context.new_page()
        errors = error_answers(other)
        refused = other.goto(job_url)
        assert refused is not None and refused.status == 403
        expect(other.get_by_role("heading", name="Not yours")).to_be_visible()
        expect(other.get_by_text("SyntaxError")).to_have_count(0)
        settle(other)
        other.screenshot(path=screenshots / "grader-refused-phone.png", full_page=True)
        report = other.goto(job_url + "/report.html")
        assert report is not None and report.status == 403
        settle(other)
        assert errors == [(403, job_url), (403, job_url + "/report.html")]
    finally:
        context.close()


def test_a_bad_upload_comes_back_with_the_reason(
    browser: Browser, web_server: RunningServer, screenshots: Path
) -> None:
    # The form's refusal is a 422 page the browser shows, which the `page` fixture would count
    # as a problem: this page records its answers itself and expects that one alone.
    context = browser.new_context(viewport=DESKTOP, base_url=web_server.url)
    try:
        page = context.new_page()
        errors = error_answers(page)
        console: list[str] = []
        page.on(
            "console",
            lambda message: console.append(message.text) if message.type == "error" else None,
        )
        page.goto("/grader?profile=agent")
        expect(page.get_by_role("radio", name=re.compile("^agent"))).to_be_checked()
        page.set_input_files(
            "#files",
            files=[{"name": "checkers.py", "mimeType": "text/x-python", "buffer": b"print(1)"}],
        )
        page.get_by_role("button", name="Upload and grade").click()
        expect(page.locator("#form-errors")).to_contain_text("runs agent.py")
        expect(page.get_by_role("radio", name=re.compile("^agent"))).to_be_checked()
        settle(page)
        shoot(page, screenshots, "grader-refused-upload")
        assert errors == [(422, f"{web_server.url}/web/grader/jobs")]
        # Chromium logs the page's own 422 as a console error; nothing else may be there.
        assert [text for text in console if "status of 422" not in text] == []
    finally:
        context.close()


HIDE = """
Object.defineProperty(document, "hidden", {
  configurable: true, get: () => window.__hidden === true,
});
window.__hidden = true;
"""
"""Makes the page's tab report itself hidden until `window.__hidden` is set false."""


def test_a_hidden_tab_asks_nothing_until_it_is_shown(page: Page) -> None:
    page.add_init_script(HIDE)
    page.goto("/grader")
    page.set_input_files(
        "#files", files=[{"name": "checkers.py", "mimeType": "text/x-python", "buffer": SLOW}]
    )
    asked: list[str] = []
    page.on(
        "request",
        lambda request: asked.append(request.url) if request.resource_type == "fetch" else None,
    )
    page.get_by_role("button", name="Upload and grade").click()
    page.wait_for_url(re.compile(r"/grader/jobs/[A-Za-z0-9_\-]+$"))
    expect(page.locator("#job-status")).to_have_attribute(
        "data-status", re.compile("queued|running")
    )
    page.wait_for_timeout(2500)  # two and a half of the script's one-second ticks
    assert asked == []
    # Shown again: it asks at once, and follows the job to its report.
    with page.expect_request(
        lambda request: request.resource_type == "fetch" and "/grader/jobs/" in request.url
    ):
        page.evaluate(
            "() => { window.__hidden = false; "
            "document.dispatchEvent(new Event('visibilitychange')); }"
        )
    expect(page.locator("#report .total")).to_have_text("Score: 0 of 5", timeout=GRADED_WAIT_MS)
    settle(page)


def test_the_grader_page_says_how_each_profile_is_scored_and_offers_its_starter(
    page: Page, screenshots: Path
) -> None:
    page.goto("/grader")
    profiles = page.locator("#profiles")
    # Said in place, in plain words: no Markdown backticks, no file of the repository to open.
    expect(profiles).to_contain_text("a line that does not end in a red win earns nothing")
    expect(profiles).to_contain_text("10 for answering in time")
    assert "`" not in profiles.inner_text()
    assert "GRADER.md" not in page.content()
    for profile, name in (("endgame", "checkers.py"), ("agent", "agent.py")):
        link = page.locator(f"#starter-{profile}")
        expect(link).to_have_text(f"Download the starter {name}")
        with page.expect_download() as download:
            link.click()
        assert download.value.suggested_filename == name
        saved = Path(download.value.path())
        assert saved.read_text() == (ROOT / "autograder" / "starters" / profile / name).read_text()
    settle(page)
    shoot(page, screenshots, "grader-profiles")


@pytest.fixture
def mixed_server(database_url: str, tmp_path: Path) -> Iterator[RunningServer]:
    """The app on the public examples, the first one the guide's example, the rest private."""
    suite = json.loads(PUBLIC_SUITE.read_text())
    for number, puzzle in enumerate(suite["puzzles"]):
        puzzle["public"] = number == 0
    # The public one is docs/GRADER.md's 3-ply example, whose greedy misplay the test names.
    suite["puzzles"][0].update(board=GUIDE_EXAMPLE, plies=3)
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(suite))
    running = start_server(
        Settings(
            database_url=database_url,
            grader_dir=tmp_path / "grader",
            grader_endgame_suite=path,
            grader_workers=1,
        )
    )
    try:
        yield running
    finally:
        running.stop()


def test_a_report_names_its_tests_kinds_in_words_and_each_move_both_ways(
    browser: Browser, mixed_server: RunningServer, problems: Problems, screenshots: Path
) -> None:
    context = browser.new_context(viewport=DESKTOP, base_url=mixed_server.url)
    page = context.new_page()
    page.on("console", problems.console)
    page.on("pageerror", problems.page_error)
    try:
        page.goto("/grader")
        page.set_input_files(
            "#files",
            files=[
                {"name": name, "mimeType": "text/x-python", "buffer": source.read_bytes()}
                for name, source in (
                    ("checkers.py", STUDENTS / "greedy.py"),
                    ("rules.py", STUDENTS / "rules.py"),
                )
            ],
        )
        page.get_by_role("button", name="Upload and grade").click()
        page.wait_for_url(re.compile(r"/grader/jobs/[A-Za-z0-9_\-]+$"))
        expect(page.locator("#job-status")).to_have_text("Graded.", timeout=GRADED_WAIT_MS)
        rows = page.locator("#report table tbody tr")
        expect(rows).to_have_count(5)
        expect(rows.nth(0).locator("td").nth(2)).to_have_text("public")
        for number in range(1, 5):
            expect(rows.nth(number).locator("td").nth(2)).to_have_text("private")
        assert "after_published" not in page.content()
        assert "`" not in page.locator("#report").inner_text()
        # The public puzzle's explanation names red's first misplay, its position, both ways.
        first = page.locator("#report section").first
        expect(first).to_contain_text("ply 1: red's move (3,6)-(2,5) [16-11] gives up the win")
        expect(first).to_contain_text("played from state 1 of your output")
        expect(first).to_contain_text("PDN W:WK16,K18:B10,27 (red, PDN's White, to move)")
        expect(first).to_contain_text("[brackets] is the same move in PDN squares 1-32")
        # A private test says nothing of its puzzle.
        expect(page.locator("#report section").nth(1)).not_to_contain_text("PDN")
        settle(page)
        shoot(page, screenshots, "grader-job-explained")
    finally:
        context.close()
    assert problems.seen == [], "\n".join(problems.seen)
