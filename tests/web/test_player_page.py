"""The player page and the lobby's leaderboard in Chromium, after a few rated matches."""

from __future__ import annotations

import re
import time
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.web.conftest import DESKTOP, PHONE, settle
from tests.web.test_lobby import register, start_match

pytestmark = pytest.mark.web

RATED_WAIT_S = 30.0


def play_rated(api: httpx.Client, tokens: dict[str, dict[str, str]], losers: list[str]) -> None:
    """Finish one ann-bob match per name in `losers`, that player resigning; wait until every
    one is rated (ratings are written just after a match ends)."""
    for loser in losers:
        match_id = start_match(api, "ann", "bob", tokens)
        resigned = api.post(f"/matches/{match_id}/resign", headers=tokens[loser])
        assert resigned.status_code == 200, resigned.text
    deadline = time.monotonic() + RATED_WAIT_S
    while time.monotonic() < deadline:
        ratings = api.get("/players/ann").json()["ratings"]
        if ratings and ratings[0]["games"] == len(losers):
            return
        time.sleep(0.1)
    raise AssertionError(f"the matches were not rated: {api.get('/players/ann').text}")


def test_the_player_page_shows_ratings_history_and_matches(
    page: Page, api: httpx.Client, screenshots: Path
) -> None:
    tokens = {name: register(api, name) for name in ("ann", "bob")}
    play_rated(api, tokens, ["bob", "bob", "ann", "bob"])
    profile = api.get("/players/ann").json()
    rating = profile["ratings"][0]

    response = page.goto("/players/ann")
    assert response is not None and response.ok
    expect(page.locator("h1")).to_have_text("ann")
    row = page.locator('table.player-ratings tr[data-game="tictactoe"]')
    expect(row.locator("td").nth(0)).to_have_text(f"{rating['rating']:.0f}")
    expect(row.locator("td").nth(2)).to_have_text("4")
    # The history: the start and one point per rated match.
    points = page.locator("#history-tictactoe polyline.rating").get_attribute("points")
    assert points is not None and len(points.split()) == 5
    matches = page.locator("#recent-matches li")
    expect(matches).to_have_count(4)
    listed = api.get("/matches", params={"player": "ann"}).json()["matches"]
    for match in listed:
        expect(
            page.locator(f'#recent-matches a[href="/matches/{match["match_id"]}"]')
        ).to_be_visible()
    expect(matches.first).to_contain_text("ann won")

    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        settle(page)
        page.goto("/players/ann")
        assert page.evaluate("() => document.documentElement.scrollWidth") <= size["width"]
        page.screenshot(path=str(screenshots / f"player-{label}.png"), full_page=True)


def test_a_player_without_rated_matches_says_so(page: Page, api: httpx.Client) -> None:
    register(api, "cy")
    page.goto("/players/cy")
    expect(page.locator("section[aria-labelledby=ratings-heading] .empty")).to_have_text(
        "No rated match yet."
    )
    expect(page.locator("section[aria-labelledby=recent-heading] .empty")).to_have_text(
        "No match yet."
    )


def test_the_lobby_shows_the_leaderboard_linking_players(
    page: Page, api: httpx.Client, screenshots: Path
) -> None:
    page.goto("/")
    expect(page.locator("#leaderboard .empty")).to_have_text("No rated match has been played yet.")
    tokens = {name: register(api, name) for name in ("ann", "bob")}
    play_rated(api, tokens, ["bob", "bob"])
    board = api.get("/leaderboard", params={"game": "tictactoe"}).json()["ratings"]
    settle(page)
    page.goto("/")
    table = page.locator('#leaderboard table[data-game="tictactoe"]')
    expect(table.locator("caption")).to_have_text("tictactoe")
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(len(board))
    expect(rows.first.locator("th a")).to_have_text(board[0]["player"])
    expect(rows.first.locator("th a")).to_have_attribute("href", "/players/ann")
    expect(rows.nth(1).locator("th a")).to_have_attribute("href", "/players/bob")
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        settle(page)
        page.goto("/")
        assert page.evaluate("() => document.documentElement.scrollWidth") <= size["width"]
        page.screenshot(path=str(screenshots / f"lobby-leaderboard-{label}.png"), full_page=True)
    # Last: a page left at once for another may abort its icon's request, which the page
    # fixture would count as a failure.
    settle(page)
    rows.first.locator("th a").click()
    expect(page).to_have_url(re.compile(r"/players/ann$"))
    expect(page.locator("h1")).to_have_text("ann")
