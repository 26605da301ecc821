"""The tournament pages in Chromium: the list, a tournament's page updated live to its end."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, WebSocket, WebSocketRoute, expect

from tests.web.conftest import DESKTOP, PHONE, Problems, settle
from tests.web.test_lobby import register

pytestmark = pytest.mark.web

FINISH_WAIT_MS = 60_000
"""Long enough for six tic-tac-toe games between house bots on a busy machine."""

BOTS = ["alphabeta:depth=2", "greedy", "player:ann"]
LIVE_WAIT_MS = 15_000
"""Long enough for a WebSocket message and the page's reading of itself on a busy machine."""


def create_tournament(api: httpx.Client, owner: dict[str, str], bots: list[str]) -> str:
    body = {"game": "tictactoe", "bots": bots, "seed": 3}
    created = api.post("/tournaments", json=body, headers=owner)
    assert created.status_code == 201, created.text
    return str(created.json()["tournament_id"])


def test_a_tournament_page_follows_the_games_live_to_the_end(
    page: Page, api: httpx.Client, screenshots: Path
) -> None:
    ann = register(api, "ann")
    tournament_id = create_tournament(api, ann, ["alphabeta:depth=2", "greedy", "random"])
    frames: list[str] = []

    def record(socket: WebSocket) -> None:
        socket.on("framereceived", lambda payload: frames.append(str(payload)))

    page.on("websocket", record)
    response = page.goto(f"/tournaments/{tournament_id}")
    assert response is not None and response.ok
    expect(page.locator("#status")).to_have_text("created")
    expect(page.locator("#games-done")).to_have_text("0")
    expect(page.locator("#games-total")).to_have_text("6")
    expect(page.locator("#points tr")).to_have_count(3)
    expect(page.locator("#games-empty")).to_be_visible()
    # The page's script watches before the games are played.
    expect(page.locator("#tournament[data-watching=true]")).to_have_count(1)
    started = api.post(f"/tournaments/{tournament_id}/start", headers=ann)
    assert started.status_code == 200, started.text

    expect(page.locator("#status")).to_have_text("finished", timeout=FINISH_WAIT_MS)
    expect(page.locator("#games-done")).to_have_text("6")
    types = [json.loads(frame)["type"] for frame in frames]
    assert types[:2] == ["welcome", "tournament_state"], types
    assert types.count("tournament_game_finished") == 6, types
    assert "tournament_finished" in types

    final = api.get(f"/tournaments/{tournament_id}").json()
    leader = final["standings"]["points"][0]
    expect(page.locator("#points tr").first.locator("th")).to_have_text(leader["bot"])
    expect(page.locator("#points tr").first.locator("td").nth(1)).to_have_text(
        f"{leader['points']:g}"
    )
    # Every game is linked to its match, with its result.
    games = page.locator("#games li")
    expect(games).to_have_count(6)
    for game in final["games"]:
        link = page.locator(f'#games a[href="/matches/{game["match_id"]}"]')
        expect(link).to_have_count(1)
    expect(page.locator("table.crosstable tbody tr")).to_have_count(3)
    expect(page.locator("svg.elo-plot circle.elo")).to_have_count(3)
    expect(page.locator("table.ratings tbody tr")).to_have_count(3)

    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= size["width"]
        path = screenshots / f"tournament-{label}.png"
        page.screenshot(path=str(path), full_page=True)
        assert path.stat().st_size > 0


def test_the_tournaments_page_lists_them_with_players_linked(
    page: Page, api: httpx.Client, screenshots: Path
) -> None:
    ann = register(api, "ann")
    first = create_tournament(api, ann, BOTS)
    second = create_tournament(api, ann, ["greedy", "random"])
    response = page.goto("/tournaments")
    assert response is not None and response.ok
    items = page.locator("#tournament-list li")
    expect(items).to_have_count(2)
    expect(items.first.locator("a")).to_have_attribute("href", f"/tournaments/{second}")
    expect(page.locator(f'a[href="/tournaments/{first}"]')).to_have_text(
        "tictactoe: alphabeta:depth=2, greedy, ann"
    )
    settle(page)
    page.goto(f"/tournaments/{first}")
    expect(page.locator('#points a[href="/players/ann"]')).to_have_text("ann")
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        settle(page)
        page.goto("/tournaments")
        assert page.evaluate("() => document.documentElement.scrollWidth") <= size["width"]
        page.screenshot(path=str(screenshots / f"tournaments-{label}.png"), full_page=True)


def test_a_guest_creates_a_tournament_from_the_form(page: Page, screenshots: Path) -> None:
    """The form is there at once; creating the tournament makes the browser's guest, who owns
    it (there used to be a "Play as a guest" button to press first)."""
    page.goto("/tournaments")
    expect(page.get_by_role("button", name="Play as a guest")).to_have_count(0)
    expect(page.locator("#guest-note")).to_contain_text("made for this browser when you create")
    page.locator("select[name=game]").select_option("tictactoe")
    page.get_by_label("Players, one a line").fill("greedy\nrandom")
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= size["width"]
        page.screenshot(path=str(screenshots / f"tournaments-form-{label}.png"), full_page=True)
    page.set_viewport_size(DESKTOP)
    settle(page)
    page.get_by_role("button", name="Create the tournament").click()
    expect(page).to_have_url(re.compile(r"/tournaments/t_[0-9a-f]+$"))
    # The guest's token is in an HttpOnly cookie: no script of the page can read it.
    assert page.evaluate("() => document.cookie") == ""
    cookies = page.context.cookies()
    assert [(c["name"], c["httpOnly"], c["sameSite"]) for c in cookies] == [
        ("arena_guest", True, "Strict")
    ]
    expect(page.locator("#status")).to_have_text("finished", timeout=FINISH_WAIT_MS)
    expect(page.locator("#games li")).to_have_count(2)
    guest = page.locator(".lede a").inner_text()
    assert guest.startswith("guest-")
    settle(page)
    page.goto("/tournaments")
    expect(page.locator("#create p a").first).to_have_text(guest)


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (
            {"bots": "random"},
            "Players: needs at least 2 players (house bots or player:NAME), not 1",
        ),
        (
            {"game": "checkers", "openings": "11-15 23-19\n11-15 99-1"},
            "Openings: opening 2 of 2 ('11-15 99-1'): move 2 '99-1' is rejected: cannot read "
            "checkers move '99-1': square 99 is off the board (1-32)",
        ),
    ],
    ids=["one player", "bad opening"],
)
def test_a_refused_form_says_what_is_wrong_in_the_players_words(
    page: Page, problems: Problems, screenshots: Path, change: dict[str, str], said: str
) -> None:
    """A tournament of one player, or with an opening that cannot be played: the form comes
    back saying which field, which entry and what is allowed (it used to say "Tuple should have
    at least 2 items" and "entry 0"), with what was typed kept."""
    problems.expect_refusal("/web/tournaments", 422)
    page.goto("/tournaments")
    if "game" in change:
        page.locator("select[name=game]").select_option(change["game"])
    page.get_by_label("Players, one a line").fill(change.get("bots", "greedy\nrandom"))
    if "openings" in change:
        page.get_by_label("Or openings, one a line").fill(change["openings"])
    settle(page)
    page.get_by_role("button", name="Create the tournament").click()
    errors = page.locator("#form-errors")
    expect(errors).to_have_text(said)
    expect(errors).not_to_contain_text("Tuple")
    expect(errors).not_to_contain_text("entry 0")
    expect(page.get_by_label("Players, one a line")).to_have_value(
        change.get("bots", "greedy\nrandom")
    )
    name = "one-player" if "bots" in change else "bad-opening"
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= size["width"]
        errors.scroll_into_view_if_needed()
        page.screenshot(path=str(screenshots / f"tournaments-{name}-{label}.png"))
    settle(page)


MARKUP = "<script>alert(1)</script>"
IMAGE = "<img src=x onerror=alert(2)>"


def test_names_with_markup_from_the_socket_stay_text(page: Page, api: httpx.Client) -> None:
    """The protocol refuses such names; were the socket to bring them, the page shows text (the
    page fixture fails the test on any dialog an executed alert would open)."""
    ann = register(api, "ann")
    tournament_id = create_tournament(api, ann, ["greedy", "random"])
    state = api.get(f"/tournaments/{tournament_id}").json()
    names = {"greedy": f"player:{MARKUP}", "random": IMAGE}
    for row in state["standings"]["points"]:
        row["bot"] = names[row["bot"]]
    finished = {
        "type": "tournament_game_finished",
        "tournament_id": tournament_id,
        "game": {
            "index": 0,
            "pair": 0,
            "first": names["greedy"],
            "second": names["random"],
            "opening": "",
            "match_id": "m_0",
            "result": 1.0,
            "reason": MARKUP,
        },
        "games_done": 1,
        "games_total": 2,
        "points": state["standings"]["points"],
    }

    def fake_server(socket: WebSocketRoute) -> None:
        def answer(message: str | bytes) -> None:
            if json.loads(message)["type"] == "hello":
                socket.send(json.dumps({"type": "welcome", "protocol_version": "1.1"}))
                socket.send(json.dumps(state))
                socket.send(json.dumps(finished))

        socket.on_message(answer)

    page.route_web_socket(re.compile(r".*/ws/tournaments/.*"), fake_server)
    page.goto(f"/tournaments/{tournament_id}")
    expect(page.locator("#games li a")).to_have_text(f"{MARKUP} vs {IMAGE}")
    expect(page.locator("#games li .meta")).to_have_text(f"1\u20130, {MARKUP}")
    expect(page.locator("#points th").nth(0)).to_have_text(MARKUP)
    expect(page.locator("#points th a")).to_have_attribute(
        "href", "/players/%3Cscript%3Ealert(1)%3C%2Fscript%3E"
    )
    expect(page.locator("#games-done")).to_have_text("1")
    assert page.locator("#tournament script, #tournament img").count() == 0


STEADY_WAIT_S = 60.0


def steady(api: httpx.Client, tournament_id: str, ann: dict[str, str]) -> dict[str, Any]:
    """Wait until nothing moves without ann: the tournament finished, or its one game being
    played is hers and waits for her move. Return the tournament then, with `ann_match` (the
    match state of ann's game, as she sees it) when there is one."""
    until = time.monotonic() + STEADY_WAIT_S
    while time.monotonic() < until:
        state: dict[str, Any] = api.get(f"/tournaments/{tournament_id}").json()
        if state["status"] == "finished":
            return state
        playing = [game for game in state["games"] if game["result"] is None]
        if len(playing) == 1:
            match = api.get(f"/matches/{playing[0]['match_id']}", headers=ann).json()
            seat = match.get("your_seat")
            if match["status"] == "active" and seat is not None and match["to_move"] == seat:
                return {**state, "ann_match": match}
        time.sleep(0.05)
    raise AssertionError(f"the tournament never waited for ann: {state}")


def rendered_now(page: Page, tournament_id: str, selector: str) -> str:
    """The text of `selector` in the tournament's page as the server renders it now."""
    fresh = page.context.new_page()
    try:
        fresh.goto(f"/tournaments/{tournament_id}")
        text = fresh.locator(selector).inner_text()
        settle(fresh)
    finally:
        fresh.close()
    return text


def test_a_live_tournament_page_keeps_its_elo_and_crosstable_up_to_date(
    page: Page, api: httpx.Client, screenshots: Path
) -> None:
    """Each game's end brings the Elo table and plot and the crosstable up to date, as the
    server would render them, without a reload (compared whenever the tournament stands still,
    waiting for ann's move)."""
    ann = register(api, "ann")
    body = {"game": "tictactoe", "bots": ["player:ann", "random", "greedy"], "concurrency": 1}
    created = api.post("/tournaments", json=body, headers=ann)
    assert created.status_code == 201, created.text
    tournament_id = created.json()["tournament_id"]
    page.goto(f"/tournaments/{tournament_id}")
    expect(page.locator("#tournament[data-watching=true]")).to_have_count(1)
    assert api.post(f"/tournaments/{tournament_id}/start", headers=ann).status_code == 200
    compared: list[int] = []
    while True:
        state = steady(api, tournament_id, ann)
        done, total = state["games_done"], state["games_total"]
        if 0 < done < total and done not in compared:
            expect(page.locator("#games-done")).to_have_text(str(done), timeout=LIVE_WAIT_MS)
            for part in ("#elo-section", "#crosstable-section"):
                now = rendered_now(page, tournament_id, part)
                expect(page.locator(part)).to_have_text(now, use_inner_text=True)
            expect(page.locator("#elo-section")).not_to_contain_text("no game is finished")
            expect(page.locator("table.crosstable tbody tr")).to_have_count(3)
            page.screenshot(path=str(screenshots / f"tournament-live-{done}-desktop.png"))
            compared.append(done)
        if state["status"] == "finished":
            break
        match = state["ann_match"]
        move = match["legal_moves"][0]
        played = api.post(
            f"/matches/{match['match_id']}/moves",
            json={"move": move, "expected_seq": match["seq"]},
            headers=ann,
        )
        assert played.status_code == 200, played.text
    assert len(compared) >= 2, f"compared only after games {compared}"
    expect(page.locator("#status")).to_have_text("finished", timeout=LIVE_WAIT_MS)


SPRT_BODY = {
    "game": "tictactoe",
    "bots": ["alphabeta:depth=4", "random"],
    "seed": 1,
    "ply_cap": 9,
    "concurrency": 2,
    "sprt": {"elo0": 0, "elo1": 50, "max_pairs": 200},
}


def test_an_sprt_tournament_page_shows_the_llr_live_to_the_verdict(
    page: Page, api: httpx.Client, screenshots: Path
) -> None:
    ann = register(api, "ann")
    created = api.post("/tournaments", json=SPRT_BODY, headers=ann)
    assert created.status_code == 201, created.text
    tournament_id = created.json()["tournament_id"]
    frames: list[dict[str, Any]] = []

    def record(socket: WebSocket) -> None:
        socket.on("framereceived", lambda payload: frames.append(json.loads(payload)))

    page.on("websocket", record)
    response = page.goto(f"/tournaments/{tournament_id}")
    assert response is not None and response.ok
    section = page.locator("#sprt-section")
    expect(section.locator("#sprt-verdict")).to_have_text("No verdict yet.")
    expect(section.locator("#sprt-llr")).to_have_text("0.00")
    expect(section.locator("#sprt-lower")).to_have_text("-2.94")
    expect(section.locator("#sprt-upper")).to_have_text("2.94")
    expect(section.locator("#sprt-pairs")).to_have_text("0")
    expect(section.locator("#sprt-max-pairs")).to_have_text("200")
    expect(section.locator("#sprt-elo")).to_have_text("after the first pair")
    # At LLR 0 the marker is half way between the bounds.
    expect(section.locator("#sprt-marker")).to_have_attribute("cx", "250.0")
    expect(page.locator("#tournament[data-watching=true]")).to_have_count(1)
    started = api.post(f"/tournaments/{tournament_id}/start", headers=ann)
    assert started.status_code == 200, started.text

    # While the games are played the page moves with each pair counted.
    expect(section).to_have_attribute("data-pairs", re.compile(r"^[1-9]"), timeout=FINISH_WAIT_MS)
    section.screenshot(path=str(screenshots / "tournament-sprt-live-desktop.png"))
    expect(page.locator("#status")).to_have_text("finished", timeout=FINISH_WAIT_MS)
    # The socket spoke 1.3: its messages carried the test.
    finished = [f for f in frames if f["type"] == "tournament_game_finished"]
    assert finished and all("sprt" in f for f in finished)

    final = api.get(
        f"/tournaments/{tournament_id}", headers={"Arena-Protocol-Version": "1.3"}
    ).json()
    sprt = final["sprt"]
    assert sprt["verdict"] == "H1"
    section = page.locator("#sprt-section")
    expect(section.locator("#sprt-verdict")).to_have_text(
        "H1 accepted: the first bot is stronger by 50 Elo rather than 0."
    )
    expect(section.locator("#sprt-verdict")).to_have_class("verdict verdict-H1")
    expect(section.locator("#sprt-llr")).to_have_text(f"{sprt['llr']:.2f}")
    expect(section.locator("#sprt-pairs")).to_have_text(str(sprt["pairs"]))
    expect(section.locator("#sprt-pentanomial")).to_have_text(
        ", ".join(str(n) for n in sprt["pentanomial"])
    )
    expect(section.locator("#sprt-games")).to_have_text(
        f"+{sprt['wins']} ={sprt['draws']} \u2212{sprt['losses']}"
    )
    # At or past the upper bound, the marker sits at the bar's right end.
    expect(section.locator("#sprt-marker")).to_have_attribute("cx", "480.0")
    # Decided early: the progress says so, with a full bar, not a tenth of the cap.
    decided = f"decided after {final['games_done']} games (at most 400)"
    expect(page.locator("#progress-text")).to_have_text(decided)
    expect(page.locator("#progress")).to_have_attribute("max", str(final["games_done"]))
    # The list of tournaments says where each SPRT stands.
    listed = api.get("/tournaments", headers={"Arena-Protocol-Version": "1.3"}).json()
    assert listed["tournaments"][0]["sprt"] == sprt
    settle(page)
    page.goto("/tournaments")
    expect(page.locator("#tournament-list li .meta").first).to_have_text(
        f"finished, {decided}; SPRT H1, LLR {sprt['llr']:.2f} "
        f"(-2.94 to 2.94), {sprt['pairs']} pairs"
    )
    page.goto(f"/tournaments/{tournament_id}")
    expect(page.locator("#progress-text")).to_have_text(decided)
    # The last live frame said what the page the server renders now says.
    assert frames[-1]["type"] == "tournament_finished"
    assert frames[-1]["sprt"]["llr"] == pytest.approx(sprt["llr"])

    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= size["width"]
        path = screenshots / f"tournament-sprt-{label}.png"
        page.screenshot(path=str(path), full_page=True)
        assert path.stat().st_size > 0
