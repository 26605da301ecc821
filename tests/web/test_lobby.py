"""The lobby at `/`, as a person sees it in Chromium: live matches, safety, keyboard, widths."""

from __future__ import annotations

import re
import time
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from server.web.pages import CONTENT_SECURITY_POLICY
from tests.server.conftest import RunningServer
from tests.server.web.test_web import start_tournament
from tests.web.conftest import DESKTOP, PHONE, settle

pytestmark = pytest.mark.web

LIVE = "#live-matches li"
REFRESH_WAIT_MS = 15_000
"""Long enough for the lobby's refresh (every 3 s) on a busy machine."""


def register(api: httpx.Client, name: str) -> dict[str, str]:
    response = api.post("/players", json={"name": name})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


def start_match(
    api: httpx.Client, owner: str, invitee: str, tokens: dict[str, dict[str, str]]
) -> str:
    """A tic-tac-toe match `owner` challenges `invitee` to, accepted: active; return its id."""
    body = {"game": "tictactoe", "seats": [owner, invitee]}
    created = api.post("/matches", json=body, headers=tokens[owner])
    assert created.status_code == 201, created.text
    match_id = str(created.json()["match_id"])
    accepted = api.post(f"/matches/{match_id}/accept", headers=tokens[invitee])
    assert accepted.status_code == 200, accepted.text
    return match_id


def test_the_lobby_shows_live_matches_and_updates_as_they_start(
    page: Page, api: httpx.Client
) -> None:
    tokens = {name: register(api, name) for name in ("ann", "bob", "cy")}
    first = start_match(api, "ann", "bob", tokens)
    response = page.goto("/")
    assert response is not None and response.ok
    expect(page.locator(LIVE)).to_have_count(1)
    expect(page.locator(f'{LIVE} a[href="/matches/{first}"]')).to_have_text("ann vs bob")
    expect(page.locator("#live-empty")).to_be_hidden()

    second = start_match(api, "cy", "ann", tokens)
    expect(page.locator(LIVE)).to_have_count(2, timeout=REFRESH_WAIT_MS)
    expect(page.locator(f'{LIVE} a[href="/matches/{second}"]')).to_have_text("cy vs ann")

    # Ended matches leave the live list and show in the results on the next visit.
    for match_id, who in ((first, "bob"), (second, "ann")):
        assert api.post(f"/matches/{match_id}/resign", headers=tokens[who]).status_code == 200
    expect(page.locator(LIVE)).to_have_count(0, timeout=REFRESH_WAIT_MS)
    expect(page.locator("#live-empty")).to_be_visible()
    page.reload()
    results = page.locator("section[aria-labelledby=results-heading] li")
    expect(results).to_have_count(2)
    expect(results.first).to_contain_text("cy won")


def test_the_lobby_has_its_policy_and_no_inline_script(page: Page, api: httpx.Client) -> None:
    response = page.goto("/")
    assert response is not None
    assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert response.headers["x-content-type-options"] == "nosniff"
    inline = page.evaluate(
        """() => ({
            scripts: [...document.scripts].filter((s) => !s.src).length,
            styles: document.querySelectorAll("style, [style]").length,
            handlers: [...document.querySelectorAll("*")].filter((e) =>
                [...e.attributes].some((a) => a.name.startsWith("on"))).length,
        })"""
    )
    assert inline == {"scripts": 0, "styles": 0, "handlers": 0}


def test_the_policy_refuses_an_injected_inline_script(
    browser: Browser, web_server: RunningServer
) -> None:
    """The browser enforces the header: a script that got into the page would not run.

    (A fresh page: the violation is logged on its console, which the page fixture forbids.)
    """
    context = browser.new_context(base_url=web_server.url)
    try:
        page = context.new_page()
        page.goto("/")
        blocked = page.evaluate(
            """() => new Promise((resolve) => {
                document.addEventListener("securitypolicyviolation",
                    (event) => resolve(event.effectiveDirective), { once: true });
                const script = document.createElement("script");
                script.textContent = "window.ran = true";
                document.body.append(script);
            })"""
        )
        assert blocked == "script-src-elem"
        assert page.evaluate("() => window.ran === undefined")
    finally:
        context.close()


MARKUP = "<script>alert(1)</script>"
IMAGE = "<img src=x onerror=alert(2)>"


def test_a_name_with_markup_stays_text(page: Page, api: httpx.Client) -> None:
    """The protocol refuses such a name; were one listed anyway, the page draws it as text."""
    refused = api.post("/players", json={"name": MARKUP})
    assert refused.status_code == 422
    tokens = {name: register(api, name) for name in ("ann", "bob")}
    match_id = start_match(api, "ann", "bob", tokens)
    page.goto("/")
    link = page.locator(f'{LIVE} a[href="/matches/{match_id}"]')
    expect(link).to_have_text("ann vs bob")

    # The live list as a listing with markup in both names would give it (the page fixture
    # fails the test on any dialog an executed alert would open).
    listing = api.get("/matches", params={"status": "active"}).json()
    listing["matches"][0]["seats"][0]["player"] = MARKUP
    listing["matches"][0]["seats"][1]["player"] = IMAGE
    page.route("**/matches?status=active*", lambda route: route.fulfill(json=listing))
    expect(link).to_have_text(f"{MARKUP} vs {IMAGE}", timeout=REFRESH_WAIT_MS)
    assert page.locator("#live-matches script, #live-matches img").count() == 0


def test_the_lobby_is_usable_by_keyboard(page: Page, api: httpx.Client) -> None:
    tokens = {name: register(api, name) for name in ("ann", "bob")}
    match_id = start_match(api, "ann", "bob", tokens)
    page.goto("/")
    reached = []
    for _ in range(15):
        page.keyboard.press("Tab")
        reached.append(page.evaluate("() => document.activeElement.getAttribute('href')"))
    assert reached[0] == "#main", "the first Tab reaches the skip link"
    assert reached[1:8] == ["/", "/", "/tournaments", "/pools", "/grader", "/explore", "/courses"]
    assert f"/matches/{match_id}" in reached
    # The focused link is visibly outlined, and Enter follows it.
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")
    focused = page.locator(":focus")
    assert focused.evaluate("(e) => getComputedStyle(e).outlineStyle") == "solid"
    # Enter on the skip link moves to the content.
    page.goto("/")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"#main$"))
    assert page.evaluate("() => document.activeElement.id") == "main"


def test_screenshots_at_desktop_and_phone_width(
    page: Page, api: httpx.Client, screenshots: Path
) -> None:
    tokens = {name: register(api, name) for name in ("ann", "bob", "cy")}
    start_match(api, "ann", "bob", tokens)
    done = start_match(api, "cy", "ann", tokens)
    api.post(f"/matches/{done}/resign", headers=tokens["ann"])
    tournament = start_tournament(api, tokens["ann"])
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.goto("/")
        settle(page)  # the next navigation must not cut its icon request short
        expect(page.locator(f'a[href="/tournaments/{tournament}"]')).to_be_visible()
        # Nothing is wider than the screen: no sideways scrolling at phone width.
        assert page.evaluate("() => document.documentElement.scrollWidth") <= size["width"]
        path = screenshots / f"lobby-{label}.png"
        page.screenshot(path=str(path), full_page=True)
        assert path.stat().st_size > 0
    print(f"lobby screenshots in {screenshots}")


RATED_WAIT_S = 30.0
LEADERBOARD_BOTS = ("mcts:simulations=500", "alphabeta:depth=6")
"""House bots with the longest specs the play form offers: each a row of a leaderboard."""

CLIPPED = """
(table) => {
  // What of the table lies beyond its box's visible width: the columns a reader cannot see.
  const box = table.parentElement.getBoundingClientRect();
  const hidden = [];
  for (const cell of table.querySelectorAll("th, td")) {
    const rect = cell.getBoundingClientRect();
    const outside = rect.right > box.right + 1 || rect.left < box.left - 1;
    if (outside) hidden.push(cell.textContent.trim());
  }
  return { hidden, scrolls: table.parentElement.scrollWidth > table.parentElement.clientWidth + 1 };
}
"""


def test_every_leaderboard_shows_its_ratings_and_games_at_both_widths(
    page: Page, api: httpx.Client, screenshots: Path
) -> None:
    tokens = {name: register(api, name) for name in ("script.alert-1", "constructor")}
    games = ("checkers", "connect4", "nim", "tictactoe")
    for game in games:
        for bot in LEADERBOARD_BOTS:
            body = {"game": game, "seats": ["script.alert-1", {"bot": bot}]}
            created = api.post("/matches", json=body, headers=tokens["script.alert-1"])
            assert created.status_code == 201, created.text
            match_id = created.json()["match_id"]
            resigned = api.post(f"/matches/{match_id}/resign", headers=tokens["script.alert-1"])
            assert resigned.status_code == 200, resigned.text
    until = time.monotonic() + RATED_WAIT_S
    for game in games:
        # Each match is rated just after it ends: its game's board then has three rows.
        while len(api.get("/leaderboard", params={"game": game}).json()["ratings"]) < 3:
            assert time.monotonic() < until, f"{game} was not rated"
            time.sleep(0.1)
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.goto("/")
        tables = page.locator("table.leaderboard")
        expect(tables).to_have_count(len(games))
        expect(tables.first.locator("thead th")).to_have_text(["#", "Player", "Rating", "Games"])
        for table in tables.all():
            seen = table.evaluate(CLIPPED)
            assert seen == {"hidden": [], "scrolls": False}, f"{label}: {seen}"
            # Scrolled down to, the first rating is wholly on the screen.
            table.evaluate("(t) => t.scrollIntoView({ block: 'center' })")
            rating = table.locator("tbody tr").first.locator("td").nth(1)
            expect(rating).to_be_in_viewport(ratio=1)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= size["width"]
        path = screenshots / f"lobby-leaderboards-{label}.png"
        page.locator("#leaderboard").screenshot(path=str(path))
        settle(page)
