"""A newcomer's first hosted bot, in Chromium: sign in as a guest, create a bot, upload a
plug-in, see it ready, enter it into a rated pool and watch it play its first rated game, all
in the browser, with the server running the bot in the real sandbox."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from sandbox import can_isolate, sandbox_support
from server.settings import Settings
from tests.server.conftest import RunningServer, start_server
from tests.server.hosted.test_hosted_bots import CRASHER, SECRET
from tests.web.conftest import PHONE, Problems, settle
from tests.web.test_every_page import (
    HEADER,
    check_document,
    in_order,
    screenshots_at_both_widths,
    visit,
    walk,
)

pytestmark = [
    pytest.mark.web,
    pytest.mark.skipif(not can_isolate(), reason=f"no sandbox here: {sandbox_support().reason}"),
]

ROOT = Path(__file__).resolve().parents[2]
FIRST_WIN = ROOT / "examples" / "plugins" / "first_win.py"
RANDOM_ENGINE = (ROOT / "examples" / "engines" / "random_engine.py").read_bytes()
POOL = {"name": "ttt", "game": "tictactoe", "base_ms": 60_000, "increment_ms": 0}
WAIT_S = 90.0
"""How long a step may take on a loaded machine: a sandboxed try, a pairing, a game."""


@pytest.fixture
def web_server(database_url: str, tmp_path: Path) -> Iterator[RunningServer]:
    """The app with a tic-tac-toe pool paired every half second, its hosted bots in the
    sandbox (paused at their first failure), and an opponent waiting in the pool: another
    player's hosted engine."""
    running = start_server(
        Settings(
            database_url=database_url,
            grader_dir=tmp_path / "grader",
            hosted_dir=tmp_path / "hosted",
            hosted_failures_to_pause=1,
            pool_pools=[POOL],
            pool_pair_every_s=0.5,
        )
    )
    try:
        with httpx.Client(base_url=running.url, timeout=WAIT_S) as http:
            token = http.post("/players", json={"name": "sparring"}).json()["token"]
            auth = {"Authorization": f"Bearer {token}"}
            made = http.post(
                "/hosted-bots", json={"name": "rnd", "game": "tictactoe"}, headers=auth
            )
            assert made.status_code == 201, made.text
            version = http.post(
                "/hosted-bots/sparring/rnd/versions",
                data={"kind": "engine"},
                files={"files": ("bot.py", RANDOM_ENGINE)},
                headers=auth,
            )
            assert version.json()["status"] == "ready", version.text
            joined = http.post("/pools/ttt/members", json={"bot": "sparring/rnd"}, headers=auth)
            assert joined.status_code == 201, joined.text
        yield running
    finally:
        running.stop()


def reload_until(page: Page, holds: Callable[[], bool]) -> None:
    """Reload the page until `holds()` (the pool page has no script: a person reloads it)."""
    deadline = time.monotonic() + WAIT_S
    while not holds():
        assert time.monotonic() < deadline, f"{page.url} never showed what was awaited"
        settle(page)
        page.reload()


def test_a_newcomer_enters_a_bot_and_watches_it_play_a_rated_game(
    page: Page, screenshots: Path, problems: Problems, tmp_path: Path
) -> None:
    # The pools, from the menu: one pool, the sparring bot in it, the way to take part.
    page.goto("/")
    page.get_by_role("link", name="Pools", exact=True).click()
    expect(page.locator("h1")).to_have_text("Rated pools")
    expect(page.locator("#pools tr[data-pool='ttt']")).to_contain_text("sparring/rnd")
    page.screenshot(path=screenshots / "hosted-1-pools.png", full_page=True)
    page.get_by_role("link", name="create a hosted bot").click()

    # Signing in as a guest, then creating the bot.
    page.get_by_role("button", name="Sign in as a guest").click()
    expect(page).to_have_url(re.compile(r"/hosted-bots$"))
    signed_in = page.locator("#signed-in a").inner_text()
    assert signed_in.startswith("guest-")
    expect(page.locator("#no-bots")).to_be_visible()
    page.get_by_label("Name").fill("firstwin")
    page.get_by_label("Game").select_option("tictactoe")
    page.screenshot(path=screenshots / "hosted-2-create.png", full_page=True)
    page.get_by_role("button", name="Create the bot").click()
    expect(page).to_have_url(re.compile(rf"/hosted-bots/{signed_in}/firstwin$"))
    expect(page.locator("h1")).to_have_text(f"{signed_in}/firstwin")
    expect(page.locator("#no-versions")).to_be_visible()

    # Uploading the plug-in: tried once in the sandbox, ready, and the version that plays.
    page.get_by_label("Python plug-in").check()
    page.locator("#files").set_input_files(FIRST_WIN)
    page.get_by_role("button", name="Upload and try it").click()
    expect(page).to_have_url(re.compile(r"#version-1$"), timeout=WAIT_S * 1000)
    version = page.locator("#version-1")
    expect(version.locator(".state.ready")).to_have_text("ready")
    expect(version.locator(".state.active-version")).to_have_text("plays now")
    expect(version).to_contain_text("FirstWin")
    expect(page.locator("#no-failures")).to_be_visible()
    page.screenshot(path=screenshots / "hosted-3-bot.png", full_page=True)

    # A program that does not compile is refused with where it is wrong, and nothing is kept;
    # one that never answers is kept as refused, with what it did, and version 1 still plays.
    broken, silent = tmp_path / "broken" / "bot.py", tmp_path / "silent" / "bot.py"
    for path, source in ((broken, b"def move(:\n"), (silent, b"import sys\nsys.exit(4)\n")):
        path.parent.mkdir()
        path.write_bytes(source)
    problems.expect_refusal(f"/web/hosted-bots/{signed_in}/firstwin/versions", 422)
    page.get_by_label("Engine").check()
    page.locator("#files").set_input_files(broken)
    page.get_by_role("button", name="Upload and try it").click()
    expect(page.locator("#form-errors")).to_contain_text("bot.py, line 1")
    expect(page.locator("#version-2")).to_have_count(0)
    page.screenshot(path=screenshots / "hosted-3b-broken-upload.png", full_page=True)
    page.get_by_label("Engine").check()
    page.locator("#files").set_input_files(silent)
    page.get_by_role("button", name="Upload and try it").click()
    expect(page).to_have_url(re.compile(r"#version-2$"), timeout=WAIT_S * 1000)
    refused = page.locator("#version-2")
    expect(refused.locator(".state.refused")).to_have_text("refused")
    expect(refused.locator("pre.words")).to_contain_text("exited with code 4")
    expect(page.locator("#version-1 .state.active-version")).to_have_text("plays now")
    page.locator("#version-2").scroll_into_view_if_needed()
    page.screenshot(path=screenshots / "hosted-3c-refused-version.png", full_page=True)

    # Into the pool: its page shows the bot's history there, then its first rated game.
    page.locator("#join-ttt").click()
    expect(page).to_have_url(re.compile(rf"/pools/ttt\?bot={signed_in}/firstwin$"))
    expect(page.locator("#history-heading")).to_have_text(f"{signed_in}/firstwin in this pool")
    mine = page.locator(f"#ladder tr[data-bot='{signed_in}/firstwin']")
    expect(mine).to_be_visible()
    reload_until(page, lambda: page.locator("#history-games li").count() > 0)
    page.screenshot(path=screenshots / "hosted-4-pool-game.png", full_page=True)

    # The game's page, as a spectator.
    page.locator("#history-games li a", has_text=re.compile("watch|the game")).first.click()
    expect(page).to_have_url(re.compile(r"/matches/[^/]+$"))
    expect(page.locator("body")).to_contain_text(f"hosted:{signed_in}/firstwin@1")
    expect(page.locator("body")).to_contain_text("hosted:sparring/rnd@1")
    expect(page.locator("h1")).to_contain_text("(hosted bot)")
    settle(page)
    page.screenshot(path=screenshots / "hosted-5-match.png", full_page=True)

    # Rated: back on the pool's page the bot has played a rated game and its rating moved.
    page.goto(f"/pools/ttt?bot={signed_in}/firstwin")
    reload_until(page, lambda: "after 0 rated games" not in page.locator("#history").inner_text())
    summary = page.locator("#history-summary").inner_text()
    games = int(re.search(r"after (\d+) rated games?\b", summary).group(1))  # type: ignore[union-attr]
    assert games >= 1, summary
    rating = int(mine.locator("td.num").nth(1).inner_text())
    assert rating != 1500, summary
    expect(page.locator("#recent li").first).to_contain_text(re.compile("won|draw"))
    page.screenshot(path=screenshots / "hosted-6-rated.png", full_page=True)

    # At a phone's width the bot's page fits, its forms and pools within the screen.
    page.set_viewport_size(PHONE)
    page.goto(f"/hosted-bots/{signed_in}/firstwin")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], width
    page.screenshot(path=screenshots / "hosted-7-bot-phone.png", full_page=True)
    settle(page)


def test_the_pages_by_keyboard_and_at_a_phones_width(page: Page, screenshots: Path) -> None:
    """Each page of hosted bots and pools: the pages' policy, no inline script or style, Tab
    through the header to the page's own controls in reading order with a visible focus, and
    no sideways scrolling at a phone's width."""
    page.goto("/hosted-bots")
    page.get_by_role("button", name="Sign in as a guest").click()
    me = page.locator("#signed-in a").inner_text()
    page.locator("#bot-game").select_option("tictactoe")
    page.locator("#bot-name").fill("keys")
    page.keyboard.press("Enter")  # submits the create form
    expect(page).to_have_url(re.compile(rf"/hosted-bots/{me}/keys$"))

    visits = [
        ("pools", "/pools", [{"href": "/hosted-bots"}, {"href": "/pools/ttt"}]),
        (
            "pool",
            "/pools/ttt?bot=sparring/rnd",
            [{"href": "/pools"}, {"id": "refresh"}, {"href": "/hosted-bots/sparring/rnd"}],
        ),
        (
            "hosted-bots",
            "/hosted-bots",
            [{"href": f"/hosted-bots/{me}/keys"}, {"id": "bot-name"}, {"id": "create-bot"}],
        ),
        (
            "hosted-bot-owner",
            f"/hosted-bots/{me}/keys",
            [{"name": "kind"}, {"id": "files"}, {"id": "upload-version"}, {"id": "join-ttt"}],
        ),
        (
            "hosted-bot-other",
            "/hosted-bots/sparring/rnd",
            [{"href": "/pools/ttt?bot=sparring/rnd#history"}],
        ),
    ]
    for label, url, own in visits:
        visit(page, url)
        check_document(page)
        in_order(walk(page), [*HEADER, *own])
        screenshots_at_both_widths(page, screenshots, label)
    # Another owner's bot shows no form at all.
    page.goto("/hosted-bots/sparring/rnd")
    expect(page.locator("form[action^='/web/hosted-bots/sparring']")).to_have_count(0)
    expect(page.locator("#owner-only")).to_be_visible()


def test_the_owner_reads_why_the_bot_failed_and_resumes_it(
    page: Page, web_server: RunningServer, screenshots: Path, tmp_path: Path
) -> None:
    page.goto("/hosted-bots")
    page.get_by_role("button", name="Sign in as a guest").click()
    me = page.locator("#signed-in a").inner_text()
    page.locator("#bot-game").select_option("tictactoe")
    page.locator("#bot-name").fill("crash")
    page.get_by_role("button", name="Create the bot").click()
    crasher = tmp_path / "bot.py"
    crasher.write_bytes(CRASHER)
    page.get_by_label("Engine").check()
    page.locator("#files").set_input_files(crasher)
    page.get_by_role("button", name="Upload and try it").click()
    expect(page.locator("#version-1 .state.ready")).to_be_visible(timeout=WAIT_S * 1000)

    # Another player's program seats the bot; it crashes at its first move and is paused.
    with httpx.Client(base_url=web_server.url, timeout=WAIT_S) as http:
        token = http.post("/players", json={"name": "host"}).json()["token"]
        seats = [{"bot": f"hosted:{me}/crash"}, "host"]
        made = http.post(
            "/matches",
            json={"game": "tictactoe", "seats": seats},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert made.status_code == 201, made.text
    reload_until(page, lambda: page.locator("#resume").count() > 0)
    expect(page.locator("#paused .state.paused")).to_have_text("paused")
    expect(page.locator("#paused")).to_contain_text("after 1 failure in a row")
    expect(page.locator("#paused")).not_to_contain_text(SECRET)
    failure = page.locator("#failure-list li").first
    expect(failure.locator("pre.words")).to_contain_text(SECRET)
    expect(failure.get_by_role("link", name="this match")).to_have_attribute(
        "href", f"/matches/{made.json()['match_id']}"
    )
    page.screenshot(path=screenshots / "hosted-8-failures.png", full_page=True)
    page.locator("#resume").click()
    expect(page.locator("#paused .state.ready")).to_have_text("playing when paired")
    expect(page.locator("#resume")).to_have_count(0)


def test_a_connected_bot_plays_in_the_pool_and_its_page_says_so(
    page: Page, web_server: RunningServer, screenshots: Path
) -> None:
    exe = shutil.which("arena", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the arena console script is not installed in this environment")
    with httpx.Client(base_url=web_server.url, timeout=WAIT_S) as http:
        token = http.post("/players", json={"name": "dan"}).json()["token"]
    # A player's own program: `arena bot --pool`, two games against the sparring bot.
    bot = subprocess.run(
        [
            exe,
            "bot",
            "--server",
            web_server.url,
            "--token",
            token,
            "--engine",
            "greedy",
            "--pool",
            "ttt",
            "--matches",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=3 * WAIT_S,
        check=False,
    )
    assert bot.returncode == 0, bot.stdout + bot.stderr
    page.goto("/pools/ttt")
    row = page.locator("#ladder tr[data-bot='dan']")
    expect(row).to_contain_text("connected")
    expect(row).to_contain_text("when online")
    expect(row.get_by_role("link", name="dan")).to_have_attribute("href", "/players/dan")
    # Colours balanced: one game each way round.
    expect(page.locator("#recent")).to_contain_text("dan vs sparring/rnd v1")
    expect(page.locator("#recent")).to_contain_text("sparring/rnd v1 vs dan")
    page.screenshot(path=screenshots / "pool-connected.png", full_page=True)
    row.get_by_role("link", name="its games").click()
    expect(page.locator("#history-heading")).to_have_text("dan in this pool")
    expect(page.locator("#history-summary")).to_contain_text("after 2 rated games")
    expect(page.locator("#history-summary")).to_contain_text("paired while online")
    expect(page.locator("#history-games li")).to_have_count(2)
    page.screenshot(path=screenshots / "pool-connected-history.png", full_page=True)
