"""Browser tests: a real uvicorn on a free port and a real Chromium driven by Playwright.

Playwright's own browser download cannot be fetched everywhere, so the tests launch the
system's Chromium (Debian's `chromium`) by path: `ARENA_CHROMIUM`, else `chromium` or
`chromium-browser` on PATH. Without one the tests are skipped, saying why, except in CI
(`CI=true`), where a missing browser fails them.

A test module shares one browser (see `playwright` for what that forbids in it). Each test's
page records console errors, uncaught exceptions, dialogs (an `alert` run by an
injected name), failed requests and error answers; any of them fails the test.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import (
    Browser,
    ConsoleMessage,
    Dialog,
    Page,
    Playwright,
    Response,
    sync_playwright,
)
from playwright.sync_api import Request as BrowserRequest

from server.settings import Settings
from tests.server.conftest import RunningServer, start_server

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
SCREENSHOTS = pytest.StashKey[Path]()


def find_chromium() -> str | None:
    """Return the path of the Chromium to drive: ARENA_CHROMIUM, else the first on PATH."""
    named = os.environ.get("ARENA_CHROMIUM")
    if named:
        return named if Path(named).is_file() else shutil.which(named)
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    """Playwright's driver, for one test module.

    Its sync API keeps an event loop running on the main thread while it is open, so a module
    that uses it must run no loop of its own (no `asyncio.run`, no async test); closing it at
    the module's end keeps the rest of the suite free of it.
    """
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    """One Chromium per test module (skipped without one, failed without one in CI)."""
    executable = find_chromium()
    if executable is None:
        named = os.environ.get("ARENA_CHROMIUM")
        reason = (
            f"no Chromium found: ARENA_CHROMIUM={named!r} is not a file or a command"
            if named
            else "no Chromium found: set ARENA_CHROMIUM to its path, or install Debian's "
            "chromium (apt-get install chromium) so that `chromium` is on PATH"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and {reason}")
        pytest.skip(reason)
    browser = playwright.chromium.launch(executable_path=executable)
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture(scope="session")
def screenshots(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder the screenshots go to: ARENA_SCREENSHOTS, else a temporary one (printed at
    the end of the run, so a person can look at them)."""
    named = os.environ.get("ARENA_SCREENSHOTS")
    folder = Path(named) if named else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    request.config.stash[SCREENSHOTS] = folder
    return folder


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    folder = config.stash.get(SCREENSHOTS, None)
    if folder is not None:
        terminalreporter.write_line(f"browser screenshots: {folder}")


@pytest.fixture
def database_url(tmp_path: Path) -> str:
    """The test server's fresh SQLite file."""
    return f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}"


@pytest.fixture
def web_server(database_url: str, tmp_path: Path) -> Iterator[RunningServer]:
    """The app under uvicorn on a free port, on a fresh SQLite file."""
    running = start_server(Settings(database_url=database_url, grader_dir=tmp_path / "grader"))
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def api(web_server: RunningServer) -> Iterator[httpx.Client]:
    """A REST client of the test's server."""
    with httpx.Client(base_url=web_server.url, timeout=30) as client:
        yield client


@dataclass
class Problems:
    """What went wrong in a page: each entry says what, and where.

    `refusals` are the error answers a test provokes on purpose and the page handles itself
    (an illegal move posted by the page's script, answered 422 and shown beside the board):
    each is one exact path and status, added with `expect_refusal`. Such an answer, and the
    console line Chromium writes for it ("Failed to load resource: ... status of 422"), are
    not problems; any other error answer still is.
    """

    seen: list[str] = field(default_factory=list)
    refusals: set[tuple[str, int]] = field(default_factory=set)

    def expect_refusal(self, path: str, status: int) -> None:
        """Let the page's own request to `path` be refused with `status` (on purpose)."""
        self.refusals.add((path, status))

    def _is_expected(self, url: str, status: int) -> bool:
        return (urlsplit(url).path, status) in self.refusals

    def console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            url = str(message.location.get("url", ""))
            if any(
                self._is_expected(url, status) and f"status of {status}" in message.text
                for _, status in self.refusals
            ):
                return
            self.seen.append(f"console error: {message.text} ({message.location})")

    def page_error(self, error: Exception) -> None:
        self.seen.append(f"uncaught exception: {error}")

    def dialog(self, dialog: Dialog) -> None:
        self.seen.append(f"a {dialog.type} dialog opened: {dialog.message!r}")
        dialog.dismiss()

    def request_failed(self, request: BrowserRequest) -> None:
        if request.failure == "net::ERR_ABORTED" and request.resource_type in ("fetch", "xhr"):
            return  # a script's request cancelled by the page navigating away (a click, a form)
        self.seen.append(f"request failed: {request.method} {request.url}: {request.failure}")

    def response(self, response: Response) -> None:
        if response.status >= 400 and not self._is_expected(response.url, response.status):
            self.seen.append(f"error answer: {response.status} {response.url}")


@pytest.fixture
def problems() -> Problems:
    """What goes wrong in the test's `page` (a test names the refusals it provokes here)."""
    return Problems()


@pytest.fixture
def page(browser: Browser, web_server: RunningServer, problems: Problems) -> Iterator[Page]:
    """A desktop-sized page whose console errors and failed requests fail the test."""
    context = browser.new_context(viewport=DESKTOP, base_url=web_server.url)
    page = context.new_page()
    page.on("console", problems.console)
    page.on("pageerror", problems.page_error)
    page.on("dialog", problems.dialog)
    page.on("requestfailed", problems.request_failed)
    page.on("response", problems.response)
    try:
        yield page
    finally:
        # Closing the context first: requests still in flight are cancelled by the test's end,
        # not failed by the page.
        page.remove_listener("requestfailed", problems.request_failed)
        context.close()
    assert problems.seen == [], "\n".join(problems.seen)


def settle(page: Page) -> None:
    """Wait until the page's own requests have ended (its icon, say), before leaving it: a
    request cut short by the next navigation would count as a failed one."""
    page.wait_for_load_state("networkidle")
