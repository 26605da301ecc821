"""Every page, visited as a person would: by keyboard alone, at desktop and phone width.

Each page of a server holding a live and a finished match of every game, a finished
tournament and two players with names chosen to trip a careless page (a JavaScript object's
own property, and a name reading like markup as far as the name rules allow) must:

- load with no console error, failed request or error answer (the `page` fixture; the 404
  page, whose own answer is the expected 404, is checked the same way by hand);
- carry a Content-Security-Policy allowing no inline script or style;
- be usable by keyboard alone: Tab goes from the skip link through the header to the page's
  own controls in reading order, each with a visible focus outline;
- give the board a text alternative (the position as text, the SVG's title, the move list);
- show every name as text, where the server draws it and where a script does;
- fit a phone's width (no sideways scrolling); screenshots of both widths are written.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, Response, WebSocketRoute, expect

from tests.server.conftest import RunningServer
from tests.web.conftest import DESKTOP, PHONE, Problems, settle
from tests.web.test_courses import add_assignment, create_course, import_roster
from tests.web.test_match_page import OPENINGS

pytestmark = pytest.mark.web

NAMES = ("constructor", "script.alert-1")
"""The players: a name every JavaScript object already has as a property, and one that
reads like the start of an injection (the name rules forbid `<`, `>`, quotes and spaces)."""
GAMES = ("checkers", "connect4", "nim", "tictactoe")
CLOCK = {"base_ms": 300_000, "increment_ms": 2_000}
TAB_LIMIT = 80
"""Most Tab presses to walk a page (more means the walk never ends: a focus trap)."""
RATED_WAIT_S = 30.0
TOURNAMENT_WAIT_S = 60.0

FOCUSED = """
() => {
  const e = document.activeElement;
  const style = getComputedStyle(e);
  const box = e.getBoundingClientRect();
  return {
    tag: e.tagName.toLowerCase(),
    id: e.id,
    href: e.getAttribute("href"),
    name: e.getAttribute("name"),
    text: (e.textContent || "").trim().replace(/\\s+/g, " ").slice(0, 80),
    outline: style.outlineStyle !== "none" && parseFloat(style.outlineWidth) >= 2,
    onScreen: box.width > 0 && box.height > 0 && box.bottom > 0 && box.top < innerHeight,
  };
}
"""

SAFE_DOCUMENT = """
() => {
  // What an injected name would leave behind: a script not from /static, an inline handler.
  const scripts = [...document.scripts].map((s) => s.getAttribute("src") || "(inline)");
  const handlers = [...document.querySelectorAll("*")].flatMap((e) =>
    [...e.attributes].filter((a) => a.name.startsWith("on")).map((a) => `${e.tagName} ${a.name}`));
  const styled = [...document.querySelectorAll("[style]")].map((e) => e.tagName);
  const inlineStyles = document.querySelectorAll("style").length;
  return { scripts, handlers, styled, inlineStyles };
}
"""


@dataclass
class World:
    """What the server holds: its matches by game, a tournament, the players' tokens."""

    tokens: dict[str, dict[str, str]]
    live: dict[str, str] = field(default_factory=dict)
    finished: dict[str, str] = field(default_factory=dict)
    tournament: str = ""


def build_world(api: httpx.Client) -> World:
    tokens = {}
    for name in NAMES:
        registered = api.post("/players", json={"name": name})
        assert registered.status_code == 201, registered.text
        tokens[name] = {"Authorization": f"Bearer {registered.json()['token']}"}
    world = World(tokens)
    for game in GAMES:
        for kind in ("finished", "live"):
            body = {"game": game, "seats": list(NAMES), "time_control": CLOCK}
            created = api.post("/matches", json=body, headers=tokens[NAMES[0]])
            assert created.status_code == 201, created.text
            match_id = created.json()["match_id"]
            accepted = api.post(f"/matches/{match_id}/accept", headers=tokens[NAMES[1]])
            assert accepted.status_code == 200, accepted.text
            for ply, move in enumerate(OPENINGS[game]):
                played = api.post(
                    f"/matches/{match_id}/moves",
                    json={"move": move},
                    headers=tokens[NAMES[ply % 2]],
                )
                assert played.status_code == 200, played.text
            if kind == "finished":
                resigned = api.post(f"/matches/{match_id}/resign", headers=tokens[NAMES[1]])
                assert resigned.status_code == 200, resigned.text
                world.finished[game] = match_id
            else:
                world.live[game] = match_id
    created = api.post(
        "/tournaments",
        json={"game": "tictactoe", "bots": ["random", "greedy"], "games_per_pairing": 2},
        headers=tokens[NAMES[0]],
    )
    assert created.status_code == 201, created.text
    world.tournament = created.json()["tournament_id"]
    started = api.post(f"/tournaments/{world.tournament}/start", headers=tokens[NAMES[0]])
    assert started.status_code == 200, started.text
    return world


@pytest.fixture
def world(api: httpx.Client) -> World:
    return build_world(api)


def check_policy(headers: dict[str, str]) -> None:
    policy = headers.get("content-security-policy", "")
    assert "script-src 'self'" in policy and "style-src 'self'" in policy, policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy, policy
    assert headers.get("x-content-type-options") == "nosniff"


def check_document(page: Page) -> None:
    """No script but the server's modules, no inline handler or style (a name stayed text)."""
    found = page.evaluate(SAFE_DOCUMENT)
    assert all(src.startswith("/static/") for src in found["scripts"]), found
    assert found["handlers"] == [] and found["styled"] == [] and found["inlineStyles"] == 0, found


def walk(page: Page) -> list[dict[str, Any]]:
    """Press Tab from the top of a page just loaded until the focus leaves it; return each
    stop, having checked that each has a visible outline and is scrolled into view."""
    stops: list[dict[str, Any]] = []
    for _ in range(TAB_LIMIT):
        page.keyboard.press("Tab")
        focused = page.evaluate(FOCUSED)
        if focused["tag"] == "body" or (stops and focused == stops[0]):
            return stops
        assert focused["outline"], f"no visible focus on {focused}"
        assert focused["onScreen"], f"focused but not scrolled into view: {focused}"
        stops.append(focused)
    raise AssertionError(f"Tab never left the page: {stops[-5:]}")


def in_order(stops: list[dict[str, Any]], wanted: list[dict[str, str]]) -> None:
    """Assert that Tab reached each of `wanted` (matching keys), in that order."""
    position = 0
    for want in wanted:
        while position < len(stops) and any(stops[position].get(k) != v for k, v in want.items()):
            position += 1
        assert position < len(stops), f"Tab did not reach {want} in order: {stops}"
        position += 1


HEADER = [
    {"href": "#main"},
    {"href": "/"},
    {"href": "/"},
    {"href": "/tournaments"},
    {"href": "/pools"},
    {"href": "/grader"},
    {"href": "/docs"},
]
"""The skip link, the brand and the main navigation: the first stops of every page."""


def screenshots_at_both_widths(page: Page, folder: Path, label: str) -> None:
    for width, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        overflow = page.evaluate("() => document.documentElement.scrollWidth")
        assert overflow <= size["width"], f"{label} at {width}: {overflow} px wide"
        page.screenshot(path=str(folder / f"every-{label}-{width}.png"), full_page=True)
    page.set_viewport_size(DESKTOP)


def visit(page: Page, url: str) -> None:
    response = page.goto(url)
    assert response is not None and response.ok, url
    check_policy(response.headers)
    settle(page)


def names_shown(page: Page, scope: str) -> None:
    """Both names are shown in `scope` as the exact text of an element of it."""
    for name in NAMES:
        found = page.locator(scope).get_by_text(name, exact=True)
        assert found.count() >= 1, f"{name!r} is not shown as text in {scope}"


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("kind", ["live", "finished"])
def test_a_match_page(
    page: Page, api: httpx.Client, world: World, screenshots: Path, game: str, kind: str
) -> None:
    match_id = (world.live if kind == "live" else world.finished)[game]
    state = api.get(f"/matches/{match_id}").json()
    record = api.get(f"/matches/{match_id}/record").json()
    visit(page, f"/matches/{match_id}")
    if kind == "live":
        expect(page.locator("#connection")).to_have_text("Live.")
    check_document(page)

    # The board's text alternative: the position as text, the SVG named, every move listed.
    expect(page.locator("#position-text")).to_have_text(state["position"])
    svg = page.locator("#board svg")
    expect(svg).to_have_attribute("role", "img")
    label = svg.get_attribute("aria-label") or ""
    assert label and svg.locator("title").text_content() == label
    expect(page.locator("#moves li .move")).to_have_text([m["move"] for m in record["moves"]])
    # Both clocks shown; the status says who moves or the result.
    for seat in (0, 1):
        expect(page.locator(f"#clock-time-{seat}")).to_have_text(re.compile(r"^\d+:\d\d\.\d$"))
    if kind == "live":
        expect(page.locator("#status")).to_have_text(f"{NAMES[state['to_move']]} to move")
    else:
        expect(page.locator("#status")).to_contain_text(f"{NAMES[0]} beat {NAMES[1]}")
    names_shown(page, "#match h1")
    names_shown(page, ".clocks")

    # By keyboard: the header, then the page's own controls in reading order. At the last
    # move, Forward and Last are disabled (not stops); First and Back are.
    stops = walk(page)
    own = [{"id": "replay-first"}, {"id": "replay-back"}]
    if game == "checkers":
        own.insert(0, {"id": "show-numbers"})
    own.append({"href": f"/matches/{match_id}/record"})
    if game == "checkers":
        own.append({"href": f"/matches/{match_id}/pdn"})
    in_order(stops, HEADER + own)
    # The replay answers the keys: Home the start, End the last position.
    start = page.locator("#moves").get_attribute("data-start-position")
    page.keyboard.press("Home")
    expect(page.locator("#position-text")).to_have_text(start or "")
    expect(page.locator("#ply-text")).to_have_text("Start position")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#moves li").first).to_have_attribute("aria-current", "step")
    page.keyboard.press("End")
    expect(page.locator("#position-text")).to_have_text(state["position"])
    # A focused button answers Enter (the keyboard's click).
    page.locator("#replay-first").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#ply-text")).to_have_text("Start position")
    page.keyboard.press("End")
    screenshots_at_both_widths(page, screenshots, f"match-{kind}-{game}")


def test_the_lobby(page: Page, api: httpx.Client, world: World, screenshots: Path) -> None:
    expect_rated(api)
    visit(page, "/")
    check_document(page)
    names_shown(page, "#leaderboard")
    first_live = page.locator("#live-matches li a").first.get_attribute("href")
    stops = walk(page)
    hrefs = [stop["href"] for stop in stops]
    every = [*world.live.values(), *world.finished.values()]
    for href in [f"/matches/{match_id}" for match_id in every]:
        assert href in hrefs, f"Tab does not reach {href}"
    in_order(stops, [*HEADER, {"href": first_live}, {"href": f"/players/{NAMES[0]}"}])
    # The live list is redrawn by the lobby's script from the REST listing: names stay text.
    expect(page.locator("#live-matches li a").first).to_have_text(f"{NAMES[0]} vs {NAMES[1]}")
    page.wait_for_timeout(3_500)  # one refresh of the live list
    expect(page.locator("#live-matches li a").first).to_have_text(f"{NAMES[0]} vs {NAMES[1]}")
    check_document(page)
    screenshots_at_both_widths(page, screenshots, "lobby")


def expect_rated(api: httpx.Client) -> None:
    """Wait until the finished matches are rated (ratings are written just after a match)."""
    until = time.monotonic() + RATED_WAIT_S
    while time.monotonic() < until:
        ratings = api.get(f"/players/{NAMES[0]}").json()["ratings"]
        if len(ratings) == len(GAMES):
            return
        time.sleep(0.1)
    raise AssertionError(api.get(f"/players/{NAMES[0]}").text)


def test_the_player_page(page: Page, api: httpx.Client, world: World, screenshots: Path) -> None:
    expect_rated(api)
    visit(page, f"/players/{NAMES[0]}")
    check_document(page)
    expect(page.locator("h1")).to_have_text(NAMES[0])
    # Each rating plot is named for a screen reader; each rating is in a table too.
    plots = page.locator("svg.history-plot")
    expect(plots).to_have_count(len(GAMES))
    for plot in plots.all():
        assert (plot.get_attribute("aria-label") or "").endswith(tuple("0123456789"))
    expect(page.locator("#recent-matches li a").first).to_have_text(f"{NAMES[0]} vs {NAMES[1]}")
    stops = walk(page)
    finished = [f"/matches/{world.finished[game]}" for game in GAMES]
    hrefs = [stop["href"] for stop in stops]
    assert all(href in hrefs for href in finished), hrefs
    in_order(stops, HEADER)
    screenshots_at_both_widths(page, screenshots, "player")


def wait_tournament_finished(api: httpx.Client, tournament_id: str) -> dict[str, Any]:
    until = time.monotonic() + TOURNAMENT_WAIT_S
    while time.monotonic() < until:
        state: dict[str, Any] = api.get(f"/tournaments/{tournament_id}").json()
        if state["status"] == "finished":
            return state
        time.sleep(0.2)
    raise AssertionError(f"the tournament did not finish: {state}")


def test_a_tournament_page(page: Page, api: httpx.Client, world: World, screenshots: Path) -> None:
    state = wait_tournament_finished(api, world.tournament)
    visit(page, f"/tournaments/{world.tournament}")
    check_document(page)
    expect(page.locator("#status")).to_have_text("finished")
    # The Elo plot is named by its heading, and its numbers are in a table too.
    plot = page.locator("svg.elo-plot")
    if plot.count():
        expect(plot).to_have_attribute("role", "img")
    stops = walk(page)
    games = [f"/matches/{game['match_id']}" for game in state["games"]]
    hrefs = [stop["href"] for stop in stops]
    assert games and all(href in hrefs for href in games), hrefs
    in_order(stops, [*HEADER, {"href": games[0]}])
    screenshots_at_both_widths(page, screenshots, "tournament")


def test_the_tournaments_page_with_a_guest_by_keyboard(
    page: Page, world: World, screenshots: Path
) -> None:
    """Fill the form, create a tournament (which makes the browser's guest) and forget the
    guest: keys only."""
    visit(page, "/tournaments")
    check_document(page)
    form = [
        {"name": "game"},
        {"name": "bots"},
        {"name": "format"},
        {"name": "games_per_pairing"},
        {"name": "base_s"},
        {"name": "increment_s"},
        {"name": "move_cap_s"},
        {"name": "deck"},
        {"name": "openings"},
        {"name": "seed"},
        {"name": "ply_cap"},
        {"name": "concurrency"},
        {"name": "start"},
        {"text": "Create the tournament"},
    ]
    # The form comes at once, before the list: no guest to get first.
    stops = walk(page)
    in_order(stops, [*HEADER, *form, {"href": f"/tournaments/{world.tournament}"}])
    assert not [stop for stop in stops if stop.get("id") == "get-guest"]
    screenshots_at_both_widths(page, screenshots, "tournaments")

    # Fill the form from the keyboard: a gauntlet of three house bots, timed.
    page.locator("textarea[name=bots]").focus()
    page.keyboard.press("Control+a")
    page.keyboard.type("greedy\nrandom\nrandom:seed=3")
    page.keyboard.press("Tab")  # the format's radio group: the arrows choose in it
    page.keyboard.press("ArrowDown")
    expect(page.locator("input[value=gauntlet]")).to_be_checked()
    page.locator("input[name=base_s]").focus()
    page.keyboard.type("30")
    page.locator("input[name=ply_cap]").focus()
    page.keyboard.press("Control+a")
    page.keyboard.type("40")
    page.keyboard.press("Enter")  # Enter in a text field submits its form
    expect(page).to_have_url(re.compile(r"/tournaments/t_[0-9a-f]+$"))
    settle(page)
    expect(page.locator("#tournament")).to_contain_text("greedy")

    # The browser has its guest now: the page says so, and offers to forget it.
    visit(page, "/tournaments")
    stops = walk(page)
    in_order(stops, [*HEADER, {"id": "forget-guest"}, *form])
    screenshots_at_both_widths(page, screenshots, "tournaments-guest")
    page.locator("#forget-guest").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#guest-note")).to_be_visible()
    assert not [c for c in page.context.cookies() if c["name"] == "arena_guest"]
    settle(page)


def test_the_not_found_page(browser: Browser, web_server: RunningServer, screenshots: Path) -> None:
    """The 404 page: its own answer is the expected 404; nothing else may fail."""
    context = browser.new_context(viewport=DESKTOP, base_url=web_server.url)
    page = context.new_page()
    problems = Problems()
    missing = f"{web_server.url}/matches/m_nothing"

    def console(message: ConsoleMessage) -> None:
        # Chromium logs the page's own 404 as a console error: that one is expected.
        if not (message.location.get("url") == missing and "404" in message.text):
            problems.console(message)

    page.on("console", console)
    page.on("pageerror", problems.page_error)
    page.on("requestfailed", problems.request_failed)

    def answered(response: Response) -> None:
        if not (response.url == missing and response.status == 404):
            problems.response(response)

    page.on("response", answered)
    try:
        response = page.goto(missing)
        assert response is not None and response.status == 404
        assert response.headers["content-type"].startswith("text/html")
        check_policy(response.headers)
        check_document(page)
        expect(page.locator("h1")).to_have_text("Not found")
        stops = walk(page)
        in_order(stops, [*HEADER, {"href": "/", "text": "Back to the lobby"}])
        settle(page)
        screenshots_at_both_widths(page, screenshots, "not-found")
        page.remove_listener("requestfailed", problems.request_failed)
    finally:
        context.close()
    assert problems.seen == [], "\n".join(problems.seen)


MARKUP = "<script>alert(1)</script>"
IMAGE = "<img src=x onerror=alert(2)>"


def test_names_with_markup_from_the_match_socket_stay_text(
    page: Page, api: httpx.Client, world: World
) -> None:
    """The protocol refuses such names; were the spectator socket to bring them (in the
    `match_state` that names who sits where), the match page writes them as text (the page
    fixture fails the test on the dialog an executed alert would open)."""
    match_id = world.live["tictactoe"]
    state = api.get(f"/matches/{match_id}").json()
    state["seats"][0]["player"] = MARKUP
    state["seats"][1]["player"] = IMAGE

    def fake_server(socket: WebSocketRoute) -> None:
        def answer(message: str | bytes) -> None:
            if json.loads(message)["type"] == "hello":
                socket.send(json.dumps({"type": "welcome", "protocol_version": "1.1"}))
                socket.send(json.dumps(state))

        socket.on_message(answer)

    page.route_web_socket(re.compile(r".*/ws/matches/.*"), fake_server)
    page.goto(f"/matches/{match_id}")
    expect(page.locator("#title-0")).to_have_text(MARKUP)
    expect(page.locator("#title-1")).to_have_text(IMAGE)
    expect(page.locator("#clock-1 .name")).to_have_text(IMAGE)
    expect(page.locator("#status")).to_have_text(f"{MARKUP} to move")
    assert page.locator("#match script, #match img").count() == 0
    check_document(page)


COURSE_NAME = "Search <b>& games</b>"
"""A course named like markup (a course's name is free text)."""
COURSE_ROSTER = (
    f"student_id,name,email\ns1,{NAMES[0]},one@example.edu\ns2,{IMAGE},two@example.edu\n"
)


def test_the_course_pages(
    page: Page, api: httpx.Client, web_server: RunningServer, screenshots: Path
) -> None:
    """Every course page, as the instructor and as a student: names with markup stay text,
    the keyboard reaches each control in order, and a phone's width holds each."""
    course = create_course(api, COURSE_NAME, owner_name=NAMES[1])
    assignment = add_assignment(api, course, MARKUP, public_count=1, private_count=1)
    links = import_roster(api, course, COURSE_ROSTER)
    cid = course.course_id

    # The student: the invite page, the course, the assignment, a submission and its report.
    visit(page, links["s2"].removeprefix(web_server.url))
    check_document(page)
    expect(page.locator("#join-name")).to_have_text(IMAGE)
    in_order(walk(page), [*HEADER, {"id": "join"}])
    screenshots_at_both_widths(page, screenshots, "course-join")
    page.locator("#join").focus()
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(rf"/courses/{cid}$"))
    settle(page)
    for path, label, controls in (
        ("/courses", "courses", [{"href": f"/courses/{cid}"}]),
        (
            f"/courses/{cid}",
            "course-student",
            [{"href": f"/courses/{cid}/assignments/{assignment}"}],
        ),
    ):
        visit(page, path)
        check_document(page)
        expect(page.get_by_text(COURSE_NAME, exact=True).first).to_be_visible()
        in_order(
            walk(page),
            [*HEADER, {"href": "/courses"}, *controls]
            if path != "/courses"
            else [*HEADER, *controls],
        )
        screenshots_at_both_widths(page, screenshots, label)
    visit(page, f"/courses/{cid}/assignments/{assignment}")
    check_document(page)
    expect(page.locator("h1")).to_have_text(MARKUP)
    in_order(
        walk(page),
        [
            *HEADER,
            {"href": "/courses"},
            {"href": f"/courses/{cid}"},
            {"id": "files"},
            {"text": "Submit and grade"},
        ],
    )
    page.set_input_files(
        "#files",
        files=[
            {
                "name": "checkers.py",
                "mimeType": "text/x-python",
                "buffer": b"import sys\nsys.exit(3)\n",
            }
        ],
    )
    page.locator("#files").focus()
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/submissions/[\w-]+$"))
    expect(page.locator("#job-status")).to_have_text("Graded.", timeout=120_000)
    settle(page)
    check_document(page)
    in_order(walk(page), [*HEADER, {"id": "download"}])
    screenshots_at_both_widths(page, screenshots, "course-submission")
    visit(page, f"/courses/{cid}/assignments/{assignment}")
    screenshots_at_both_widths(page, screenshots, "course-assignment-student")

    # The instructor: the course, the gradebook, the roster and a student's history.
    visit(page, course.instructor_link.removeprefix(web_server.url))
    page.locator("#join").click()
    page.wait_for_url(re.compile(rf"/courses/{cid}$"))
    settle(page)
    visit(page, f"/courses/{cid}/assignments/{assignment}")
    check_document(page)
    for name in (NAMES[0], IMAGE):
        expect(page.locator("#gradebook").get_by_text(name, exact=True)).to_have_count(1)
    in_order(
        walk(page),
        [
            *HEADER,
            {"id": "export"},
            {"id": "regrade-all"},
            {"text": "s1"},
            {"text": "s2"},
            {"id": "files"},
        ],
    )
    screenshots_at_both_widths(page, screenshots, "course-gradebook")
    visit(page, f"/courses/{cid}/roster")
    check_document(page)
    for name in NAMES[0], NAMES[1], IMAGE:  # the students and the instructor
        expect(page.locator("#roster").get_by_text(name, exact=True).first).to_be_visible()
    stops = walk(page)
    in_order(
        stops,
        [
            *HEADER,
            {"text": "s1"},
            {"text": "New link"},
            {"text": "Drop"},
            {"id": "roster-file"},
            {"id": "roster-text"},
            {"id": "import-button"},
        ],
    )
    screenshots_at_both_widths(page, screenshots, "course-roster")
    page.get_by_role("link", name="s2").click()
    page.wait_for_url(re.compile(rf"/courses/{cid}/students/\d+$"))
    settle(page)
    check_document(page)
    expect(page.locator("h1")).to_have_text(IMAGE)
    in_order(walk(page), [*HEADER, {"text": "report"}, {"text": "zip"}, {"text": "Regrade"}])
    screenshots_at_both_widths(page, screenshots, "course-student")
