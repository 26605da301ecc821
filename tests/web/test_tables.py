"""Tables wider than a phone: each scrolls in its own box and shows that it does (a shadow on
the side where columns are hidden, a hint above it, a keyboard stop), at 390 pixels; at 1280
the same tables fit and say nothing."""

from __future__ import annotations

import io
import time
from pathlib import Path

import httpx
import pytest
from PIL import Image
from playwright.sync_api import Locator, Page, expect

from tests.web.conftest import DESKTOP, PHONE, settle
from tests.web.test_courses import create_course, import_roster, sign_in
from tests.web.test_lobby import register

pytestmark = pytest.mark.web

FINISH_WAIT_S = 90.0
BOTS = ["random", "random:seed=1", "greedy", "alphabeta:depth=1", "alphabeta:depth=2"]
"""Five house bots: a crosstable of five columns, wider than a phone."""

OVERFLOWS = "(box) => box.scrollWidth > box.clientWidth + 1"


def finished_tournament(api: httpx.Client) -> str:
    owner = register(api, "ann")
    body = {"game": "tictactoe", "bots": BOTS, "seed": 5}
    created = api.post("/tournaments", json=body, headers=owner)
    assert created.status_code == 201, created.text
    tournament_id = str(created.json()["tournament_id"])
    assert api.post(f"/tournaments/{tournament_id}/start", headers=owner).status_code == 200
    until = time.monotonic() + FINISH_WAIT_S
    while api.get(f"/tournaments/{tournament_id}").json()["status"] != "finished":
        assert time.monotonic() < until, "the tournament did not finish"
        time.sleep(0.2)
    return tournament_id


def edge_shade(page: Page, box: Locator) -> tuple[int, int]:
    """How much darker than the page the box's left and right edges are, just inside it, in
    the top padding of the table's first row (where no text is): a shadow shows there."""
    area = box.bounding_box()
    table = box.locator("table").bounding_box()
    assert area is not None and table is not None
    shot = Image.open(io.BytesIO(page.screenshot())).convert("RGB")
    y = int(table["y"]) + 2
    paper = shot.getpixel((2, y))
    assert isinstance(paper, tuple)

    def shade(x: int) -> int:
        pixel = shot.getpixel((x, y))
        assert isinstance(pixel, tuple)
        return sum(paper) - sum(pixel)

    return shade(int(area["x"]) + 1), shade(int(area["x"] + area["width"]) - 2)


def check_scrolling_tables(page: Page, where: str) -> int:
    """Check every table box of the page at phone width; return how many scroll."""
    scrolling = 0
    for box in page.locator(".scroll").all():
        box.scroll_into_view_if_needed()
        if not box.evaluate(OVERFLOWS):
            continue
        scrolling += 1
        # A hint says so, above the table, and the box is a named keyboard stop.
        hint = box.locator(":scope > .scroll-hint")
        expect(hint).to_be_visible()
        expect(hint).to_contain_text("scroll sideways")
        expect(box).to_have_attribute("tabindex", "0")
        expect(box).to_have_attribute("role", "region")
        assert box.get_attribute("aria-label"), f"{where}: a scrolling table without a name"
        # A shadow on the right, where the hidden columns are; none on the left.
        left, right = edge_shade(page, box)
        assert right >= 24 and left <= 6, f"{where}: edges {left}, {right} at the start"
        # The keys scroll it; at its end the shadow is on the left.
        box.focus()
        assert box.evaluate("(e) => getComputedStyle(e).outlineStyle") == "solid"
        page.keyboard.press("ArrowRight")
        page.wait_for_function("(box) => box.scrollLeft > 0", arg=box.element_handle())
        box.evaluate("(e) => { e.scrollLeft = e.scrollWidth; }")
        box.evaluate("(e) => e.blur()")
        left, right = edge_shade(page, box)
        assert left >= 24 and right <= 6, f"{where}: edges {left}, {right} at the end"
        box.evaluate("(e) => { e.scrollLeft = 0; }")
    return scrolling


def no_scrolling_tables(page: Page, where: str) -> None:
    for box in page.locator(".scroll").all():
        assert not box.evaluate(OVERFLOWS), f"{where}: a table scrolls at desktop width"
    expect(page.locator(".scroll-hint:visible")).to_have_count(0)


def test_a_tournaments_tables_show_that_they_scroll_on_a_phone(
    page: Page, api: httpx.Client, screenshots: Path
) -> None:
    tournament_id = finished_tournament(api)
    page.goto(f"/tournaments/{tournament_id}")
    expect(page.locator("table.crosstable tbody tr")).to_have_count(len(BOTS))
    no_scrolling_tables(page, "the tournament at 1280")
    page.set_viewport_size(PHONE)
    expect(page.locator(".scroll-hint:visible").first).to_be_visible()
    page.screenshot(path=str(screenshots / "tables-tournament-phone.png"), full_page=True)
    # The standings, the Elo table and the crosstable are too wide for 390 pixels.
    assert check_scrolling_tables(page, "the tournament at 390") >= 2
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
    # Back at a desktop's width the hints go.
    page.set_viewport_size(DESKTOP)
    no_scrolling_tables(page, "the tournament at 1280 again")
    settle(page)


def test_the_roster_shows_that_it_scrolls_on_a_phone(
    page: Page, api: httpx.Client, screenshots: Path
) -> None:
    course = create_course(api, "CSC 384: Introduction to Artificial Intelligence")
    roster = (
        "student_id,name,email,role\n"
        "s001,Ada Augusta King Countess of Lovelace,ada.lovelace@analytical-engine.example.edu,"
        "student\n"
        "s002,Grace Brewster Murray Hopper,grace.hopper@computing.example.edu,student\n"
    )
    import_roster(api, course, roster)
    page.set_viewport_size(PHONE)
    sign_in(page, course.instructor_link, "prof")
    page.goto(f"/courses/{course.course_id}/roster")
    expect(page.locator("#roster tbody tr")).to_have_count(3)
    page.screenshot(path=str(screenshots / "tables-roster-phone.png"), full_page=True)
    assert check_scrolling_tables(page, "the roster at 390") >= 1
    settle(page)
