"""The hosted bots' and pools' pages and the owner's forms over HTTP: what a browser sees, what
its forms do through the same services as REST, who may use them (the owner, another player,
a browser signed in to nobody, a form from another site), and what only the owner reads."""

from __future__ import annotations

import html
import io
import re
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from server.settings import Settings
from server.web.pages import CONTENT_SECURITY_POLICY
from tests.server.conftest import RunningServer, start_server
from tests.server.hosted.test_hosted_bots import CRASHER, FIRST_WIN, RANDOM_ENGINE, SECRET, TIMEOUT

HTML = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
FOREIGN = "https://evil.example"
POOL = {"name": "ttt", "game": "tictactoe", "base_ms": 60_000, "increment_ms": 0}
SILENT = b"import sys\nsys.exit(4)\n"
"""A program that compiles but never answers the handshake: kept as refused."""


@pytest.fixture
def server(server_settings: Settings, tmp_path: Path) -> Iterator[RunningServer]:
    """A server with a tic-tac-toe pool that pairs only when a test asks (a long interval),
    running hosted bots without the sandbox where this machine cannot make one."""
    settings = Settings(
        database_url=server_settings.database_url,
        grader_dir=tmp_path / "grader",
        hosted_dir=tmp_path / "hosted",
        hosted_allow_unsandboxed=True,
        hosted_failures_to_pause=1,
        hosted_bots_per_player=3,
        pool_pools=[POOL],
        pool_pair_every_s=3600,
    )
    running = start_server(settings)
    try:
        yield running
    finally:
        running.stop()


class Browser:
    """A browser of the test server: its cookie jar, and its forms posted from the server's
    own pages (or another site's, with `origin`)."""

    def __init__(self, server: RunningServer) -> None:
        self.http = httpx.Client(base_url=server.url, timeout=TIMEOUT, headers=HTML)
        self.origin = server.url.rstrip("/")
        self.name = ""

    def sign_in(self) -> str:
        """Become a guest player (the hosted bots page's button); return its name."""
        answer = self.post("/web/guest", {"next": "/hosted-bots"})
        assert (answer.status_code, answer.headers["location"]) == (303, "/hosted-bots")
        page = self.get("/hosted-bots")
        found = re.search(r'signed in as <a href="/players/([^"]+)"', page.text)
        assert found, page.text
        self.name = found.group(1)
        return self.name

    def get(self, path: str) -> httpx.Response:
        return self.http.get(path)

    def post(
        self,
        path: str,
        data: dict[str, str] | None = None,
        files: dict[str, bytes] | None = None,
        origin: str | None = None,
    ) -> httpx.Response:
        return self.http.post(
            path,
            data=data or {},
            files=[("files", (n, d, "text/x-python")) for n, d in (files or {}).items()] or None,
            headers={"Origin": origin or self.origin},
        )

    def create(self, name: str, game: str = "tictactoe") -> httpx.Response:
        return self.post("/web/hosted-bots", {"name": name, "game": game})

    def upload(self, bot: str, kind: str, files: dict[str, bytes], owner: str = "") -> Any:
        return self.post(
            f"/web/hosted-bots/{owner or self.name}/{bot}/versions", {"kind": kind}, files
        )


@pytest.fixture
def ada(server: RunningServer) -> Iterator[Browser]:
    browser = Browser(server)
    browser.sign_in()
    yield browser
    browser.http.close()


@pytest.fixture
def bob(server: RunningServer) -> Iterator[Browser]:
    browser = Browser(server)
    browser.sign_in()
    yield browser
    browser.http.close()


def section(page: str, ident: str) -> str:
    """Return the HTML of the page's element with id `ident` up to the next section, its
    character references read (`&#39;` as `'`)."""
    start = page.index(f'id="{ident}"')
    end = page.find("<section", start)
    return html.unescape(page[start : end if end >= 0 else len(page)])


def wait(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.1)


def test_browsers_get_the_pages_and_programs_the_same_json(server: RunningServer) -> None:
    with httpx.Client(base_url=server.url, timeout=TIMEOUT) as program, Browser(server).http as web:
        for path in ("/pools", "/pools/ttt", "/hosted-bots"):
            page = web.get(path)
            assert page.status_code == 200, path
            assert page.headers["content-type"].startswith("text/html")
            assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
            assert '<a href="/pools" aria-current="page">Pools</a>' in page.text
            assert program.get(path).headers["content-type"] == "application/json"
        listed = web.get("/pools").text
        assert 'href="/pools/ttt"' in listed and "tictactoe" in listed
        assert "1 min a side" in listed and "nobody yet" in listed
        assert program.get("/pools").json()["pools"][0]["name"] == "ttt"
        # An unknown pool or bot is the page saying so (404), as the JSON is.
        for path, what in (("/pools/nope", "pool nope"), ("/hosted-bots/ada/nope", "ada/nope")):
            missing = web.get(path)
            assert missing.status_code == 404 and what in missing.text
            assert program.get(path).json()["code"] == "NOT_FOUND"


def test_the_owner_creates_uploads_chooses_and_enters_a_pool_by_the_forms(
    ada: Browser, bob: Browser
) -> None:
    created = ada.create("rnd")
    assert (created.status_code, created.headers["location"]) == (
        303,
        f"/hosted-bots/{ada.name}/rnd",
    )
    home = ada.get("/hosted-bots").text
    assert f'href="/hosted-bots/{ada.name}/rnd"' in section(home, "my-bots")

    # A version that answers is ready and plays; one that does not is refused, the owner
    # reading why (and nobody else).
    ready = ada.upload("rnd", "engine", {"bot.py": RANDOM_ENGINE})
    assert (ready.status_code, ready.headers["location"]) == (
        303,
        f"/hosted-bots/{ada.name}/rnd#version-1",
    )
    refused = ada.upload("rnd", "engine", {"bot.py": SILENT})
    assert refused.status_code == 303
    page = ada.get(f"/hosted-bots/{ada.name}/rnd").text
    first, second = section(page, "version-1"), section(page, "version-2")
    assert "ready" in first and "plays now" in first and "Random (Python) 1.0" in first
    assert "refused" in second and "exited with code 4" in second
    assert 'id="upload"' in page and 'id="failures"' in page
    seen_by_bob = bob.get(f"/hosted-bots/{ada.name}/rnd").text
    assert "exited with code 4" not in seen_by_bob and "its owner reads why" in seen_by_bob
    for owner_only in ('id="upload"', 'id="failures"', "/active", "/join"):
        assert owner_only not in seen_by_bob

    # The plug-in becomes the version that plays; a refused one cannot.
    assert ada.upload("rnd", "plugin", {"first_win.py": FIRST_WIN}).status_code == 303
    chosen = ada.post(f"/web/hosted-bots/{ada.name}/rnd/active", {"version": "3"})
    assert chosen.status_code == 303
    assert (
        ada.http.get(f"/hosted-bots/{ada.name}/rnd", headers={"Accept": "*/*"}).json()["active"]
        == 3
    )
    wrong = ada.post(f"/web/hosted-bots/{ada.name}/rnd/active", {"version": "2"})
    assert wrong.status_code == 422
    assert "was refused and cannot play" in section(wrong.text, "form-errors")

    # Into the pool, onto its ladder and into the bot's history there; then out again.
    joined = ada.post(f"/web/hosted-bots/{ada.name}/rnd/join", {"pool": "ttt"})
    assert (joined.status_code, joined.headers["location"]) == (
        303,
        f"/pools/ttt?bot={ada.name}/rnd",
    )
    pool = ada.get(joined.headers["location"]).text
    assert f'data-bot="{ada.name}/rnd"' in section(pool, "ladder")
    assert "1500" in section(pool, "ladder") and "±350" in section(pool, "ladder")
    assert "after 0 rated games" in section(pool, "history")
    assert "Leave" in section(ada.get(f"/hosted-bots/{ada.name}/rnd").text, "pools")
    leading = section(ada.get("/pools").text, "pools")
    assert f'<a href="/hosted-bots/{ada.name}/rnd">{ada.name}/rnd</a>' in leading
    left = ada.post(f"/web/hosted-bots/{ada.name}/rnd/leave", {"pool": "ttt"})
    assert (left.status_code, left.headers["location"]) == (
        303,
        f"/hosted-bots/{ada.name}/rnd#pools",
    )
    assert f"{ada.name}/rnd" not in ada.get("/pools/ttt").text
    again = ada.post(f"/web/hosted-bots/{ada.name}/rnd/leave", {"pool": "ttt"})
    assert again.status_code == 404
    assert "is not in pool ttt" in section(again.text, "form-errors")


def test_a_version_uploads_as_one_zip_by_the_form(ada: Browser) -> None:
    assert ada.create("zipped").status_code == 303
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w") as archive:
        archive.writestr("bot.py", RANDOM_ENGINE)
    sent = ada.upload("zipped", "engine", {"bot.zip": packed.getvalue()})
    assert (sent.status_code, sent.headers["location"]) == (
        303,
        f"/hosted-bots/{ada.name}/zipped#version-1",
    )
    version = section(ada.get(f"/hosted-bots/{ada.name}/zipped").text, "version-1")
    assert "ready" in version and "<code>bot.py</code>" in version


def test_the_create_form_says_what_is_wrong(ada: Browser) -> None:
    bad = ada.create("Not A Name")
    assert bad.status_code == 422
    assert "Name:" in section(bad.text, "form-errors")
    assert 'value="Not A Name"' in bad.text  # the form keeps what was typed
    assert ada.create("twin").status_code == 303
    taken = ada.create("twin")
    assert taken.status_code == 409
    assert "already has a hosted bot named 'twin'" in section(taken.text, "form-errors")
    unknown = ada.create("odd", game="chess")
    assert unknown.status_code == 422
    assert "no game is called 'chess'" in section(unknown.text, "form-errors")
    broken = ada.upload("twin", "engine", {"bot.py": b"def move(:\n"})
    assert broken.status_code == 422
    assert "bot.py, line 1" in section(broken.text, "form-errors")
    assert 'value="engine" checked' in broken.text  # the kind chosen is kept
    empty = ada.upload("twin", "engine", {})
    assert empty.status_code == 422
    assert "choose your bot's files" in section(empty.text, "form-errors")


@pytest.mark.parametrize("wanted", ["//evil.example/x", "https://evil.example/", "/a?b", ""])
def test_signing_in_goes_back_to_a_page_of_this_server_only(
    server: RunningServer, wanted: str
) -> None:
    browser = Browser(server)
    with browser.http:
        answer = browser.post("/web/guest", {"next": wanted})
        assert (answer.status_code, answer.headers["location"]) == (303, "/tournaments#create")
        assert "arena_guest" in browser.http.cookies


def test_a_browser_without_a_guest_gets_one_by_creating_a_bot(server: RunningServer) -> None:
    browser = Browser(server)
    with browser.http:
        assert "Sign in as a guest" in browser.get("/hosted-bots").text
        created = browser.create("first")
        assert created.status_code == 303
        assert "arena_guest" in browser.http.cookies
        assert 'id="upload"' in browser.get(created.headers["location"]).text


def test_only_the_owner_uses_the_forms(server: RunningServer, ada: Browser, bob: Browser) -> None:
    assert ada.create("mine").status_code == 303
    forms: list[tuple[str, dict[str, str], dict[str, bytes] | None]] = [
        ("versions", {"kind": "engine"}, {"bot.py": RANDOM_ENGINE}),
        ("active", {"version": "1"}, None),
        ("resume", {}, None),
        ("join", {"pool": "ttt"}, None),
        ("leave", {"pool": "ttt"}, None),
    ]
    anonymous = Browser(server)
    for form, data, files in forms:
        path = f"/web/hosted-bots/{ada.name}/mine/{form}"
        refused = bob.post(path, data, files)
        assert refused.status_code == 403, form
        assert f"only {ada.name} may change" in section(refused.text, "form-errors"), form
        assert anonymous.post(path, data, files).status_code == 401, form
    anonymous.http.close()
    bot = ada.http.get(f"/hosted-bots/{ada.name}/mine", headers={"Accept": "*/*"}).json()
    assert bot["versions"] == [] and bot["active"] is None
    assert ada.http.get("/pools/ttt", headers={"Accept": "*/*"}).json()["ladder"] == []


@pytest.mark.parametrize(
    "form",
    ["/web/hosted-bots", "versions", "active", "resume", "join", "leave"],
)
def test_every_form_refuses_another_sites_page(ada: Browser, form: str) -> None:
    assert ada.create("target").status_code == 303
    assert ada.upload("target", "engine", {"bot.py": RANDOM_ENGINE}).status_code == 303
    path = form if form.startswith("/") else f"/web/hosted-bots/{ada.name}/target/{form}"
    data = {
        "/web/hosted-bots": {"name": "other", "game": "nim"},
        "versions": {"kind": "engine"},
        "active": {"version": "1"},
        "join": {"pool": "ttt"},
        "leave": {"pool": "ttt"},
    }.get(form, {})
    files = {"bot.py": RANDOM_ENGINE} if form == "versions" else None
    refused = ada.post(path, data, files, origin=FOREIGN)
    assert (refused.status_code, refused.json()["code"]) == (403, "FORBIDDEN"), refused.text
    # Without a cookie too: the form's own check refuses another site's page (an upload
    # without a credential is refused before its body is read).
    ada.http.cookies.clear()
    refused = ada.post(path, data, files, origin=FOREIGN)
    assert refused.status_code == (401 if form == "versions" else 403), refused.text
    listed = httpx.get(f"{ada.origin}/hosted-bots", timeout=TIMEOUT).json()["bots"]
    assert [(b["name"], len(b["versions"])) for b in listed] == [("target", 1)]
    pool = httpx.get(f"{ada.origin}/pools/ttt", timeout=TIMEOUT).json()
    assert pool["ladder"] == []


def test_the_owner_reads_the_failures_and_resumes_a_paused_bot(
    server: RunningServer, ada: Browser, bob: Browser
) -> None:
    assert ada.create("crash").status_code == 303
    assert ada.upload("crash", "engine", {"bot.py": CRASHER}).status_code == 303
    # A match seating the bot, made by a program: the bot crashes at its first move.
    token = httpx.post(f"{ada.origin}/players", json={"name": "host"}).json()["token"]
    made = httpx.post(
        f"{ada.origin}/matches",
        json={"game": "tictactoe", "seats": [{"bot": f"hosted:{ada.name}/crash"}, "host"]},
        headers={"Authorization": f"Bearer {token}"},
        timeout=TIMEOUT,
    )
    assert made.status_code == 201, made.text
    owner_page = f"/hosted-bots/{ada.name}/crash"
    wait(lambda: "Resume it" in ada.get(owner_page).text)
    page = ada.get(owner_page).text
    failures = section(page, "failures")
    assert SECRET in failures and made.json()["match_id"] in failures
    assert "paused" in section(page, "paused")
    theirs = bob.get(owner_page).text
    assert SECRET not in theirs and 'id="failures"' not in theirs and "Resume it" not in theirs
    resumed = ada.post(f"/web/hosted-bots/{ada.name}/crash/resume")
    assert resumed.status_code == 303
    assert "Resume it" not in ada.get(owner_page).text
    assert "playing when paired" in section(ada.get(owner_page).text, "paused")


def test_an_upload_past_the_limit_is_refused_on_the_bots_page(ada: Browser) -> None:
    assert ada.create("big").status_code == 303
    huge = b"#" * (400 * 1024) + b"\n"
    refused = ada.upload("big", "engine", {"bot.py": huge})
    assert refused.status_code == 413
    assert "at most 262144 bytes" in section(refused.text, "form-errors")
    assert "No version yet" in refused.text


def test_a_rest_upload_is_held_to_the_hosted_limit_not_the_messages(
    server: RunningServer,
) -> None:
    """A version larger than a REST message (64 KiB) but within the hosted upload limit is
    taken: the upload routes read their bodies under their own limit."""
    with httpx.Client(base_url=server.url, timeout=TIMEOUT) as http:
        token = http.post("/players", json={"name": "writer"}).json()["token"]
        auth = {"Authorization": f"Bearer {token}"}
        created = http.post("/hosted-bots", json={"name": "long", "game": "nim"}, headers=auth)
        assert created.status_code == 201
        padded = RANDOM_ENGINE + b"\n# " + b"x" * (100 * 1024) + b"\n"
        sent = http.post(
            "/hosted-bots/writer/long/versions",
            data={"kind": "engine"},
            files={"files": ("bot.py", padded)},
            headers=auth,
        )
        assert sent.status_code == 201, sent.text
        assert sent.json()["status"] == "ready"
