"""Playing in the browser, in Chromium: a newcomer plays a house bot from the lobby's form to
the end by clicking, types a move, resigns, answers a challenge; play mode on phone and desktop.

The checkers game is deterministic: the house bot is `random` (its seed is 0, so it plays the
same moves in the same positions) and the test chooses its own moves with Arena's own search
(`alphabeta:depth=3`), preferring a multi-jump, then a crowning move, among the legal moves
the page offers.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import httpx
import pytest
from PIL import Image
from playwright.sync_api import Browser, Locator, Page, expect

from bots.spec import create_bot
from games.registry import get_game
from tests.server.conftest import RunningServer
from tests.web.conftest import DESKTOP, PHONE, Problems, settle

pytestmark = pytest.mark.web

TURN_WAIT_MS = 15_000
"""Long enough for the house bot's reply over the WebSocket on a busy machine."""

PANEL = "#play"


def start_from_lobby(
    page: Page, game: str, bot: str, colour: str = "first", time_control: str = "untimed"
) -> str:
    """Open the lobby, start a match against a house bot with its form; return the match id."""
    response = page.goto("/")
    assert response is not None and response.ok
    form = page.locator("form.play-form")
    form.get_by_label("Game").select_option(game)
    form.get_by_label("House bot").select_option(bot)
    form.get_by_label("Time control").select_option(time_control)
    form.locator(f'input[name="colour"][value="{colour}"]').check()
    form.get_by_role("button", name="Play").click()
    page.wait_for_url(re.compile(r"/matches/m_[0-9a-f]+$"))
    expect(page.locator(PANEL)).to_be_visible()
    return page.url.rsplit("/", 1)[-1]


def wait_for_turn(page: Page, after_seq: int) -> str:
    """Wait until it is the guest's turn in an event after `after_seq`, or the match is over;
    return the panel's turn ("you" or "over")."""
    page.wait_for_function(
        """(after) => {
            const panel = document.getElementById("play");
            const turn = panel.dataset.turn;
            return turn === "over" || (turn === "you" && Number(panel.dataset.seq) > after);
        }""",
        arg=after_seq,
        timeout=TURN_WAIT_MS,
    )
    return str(page.locator(PANEL).get_attribute("data-turn"))


def seq(page: Page) -> int:
    return int(page.locator(PANEL).get_attribute("data-seq") or "-1")


def kings(position: str, colour: str) -> int:
    """Count `colour`'s (B or W) kings in a checkers position (PDN FEN)."""
    field = next(f for f in position.split(":")[1:] if f.startswith(colour))
    return field.count("K")


def square(page: Page, number: int) -> Locator:
    return page.locator(f'#board rect.hit[data-square="{number}"]')


def test_a_newcomer_plays_checkers_against_a_house_bot_to_the_end(
    page: Page, api: httpx.Client, screenshots: Path
) -> None:
    match_id = start_from_lobby(page, "checkers", "random")
    # A guest was made for this browser and sits in the first seat (black).
    guest = page.locator("#clock-0 .name").inner_text()
    assert re.fullmatch(r"guest-[0-9a-f]{10}", guest)
    expect(page.locator("#title-1")).to_have_text("random (house bot)")

    game = get_game("checkers")
    search = create_bot("alphabeta:depth=3", game)
    multi_jumps: list[str] = []
    crownings: list[str] = []
    last = -1
    while wait_for_turn(page, last) == "you":
        last = seq(page)
        position = page.locator("#position-text").inner_text()
        offered = sorted(
            str(option.get_attribute("value"))
            for option in page.locator("#legal-moves option").all()
        )
        state = game.parse_position(position)
        legal = sorted(state.format_move(move) for move in state.legal_moves())
        assert offered == legal, "the page offers the server's legal moves"
        multi = [text for text in legal if text.count("x") >= 2]
        crowning = [
            text
            for text in legal
            if kings(game.format_position(state.play(text)), "B") > kings(position, "B")
        ]
        if multi:
            move = multi[0]
            multi_jumps.append(move)
        elif crowning:
            move = crowning[0]
            crownings.append(move)
        else:
            move = state.format_move(search.choose(state).move)
        squares = [int(part) for part in re.split(r"[-x]", move)]
        # Only the pieces that can move are marked; the others take no click.
        expect(square(page, squares[0])).to_have_class(re.compile(r"\btarget\b"))
        for index, number in enumerate(squares):
            square(page, number).click()
            if index < len(squares) - 1:
                # Each square chosen so far is shown, and the next ones are marked.
                chosen = ("x" if "x" in move else "-").join(map(str, squares[: index + 1]))
                expect(page.locator("#play-selection")).to_contain_text(f"Chosen: {chosen};")
                expect(square(page, squares[index + 1])).to_have_class(re.compile(r"\btarget\b"))
        expect(page.locator(PANEL)).not_to_have_attribute(
            "data-seq", str(last), timeout=TURN_WAIT_MS
        )
        if move in crownings:
            expect(page.locator("#position-text")).not_to_have_text(position)
            assert kings(page.locator("#position-text").inner_text(), "B") > kings(position, "B")

    assert multi_jumps, "the game had a multi-jump, entered square by square"
    assert crownings, "the game had a crowning"
    played = [item.inner_text() for item in page.locator("#moves li .move").all()]
    assert set(multi_jumps) | set(crownings) <= set(played)
    expect(page.locator("#result-outcome")).to_have_text(re.compile(r"^You won\b"))
    expect(page.locator("#status")).to_contain_text(f"{guest} beat random (house bot)")
    expect(page.locator("#board text.king-black").first).to_be_visible()
    page.screenshot(path=screenshots / "play-checkers-won-desktop.png", full_page=True)
    pdn = page.get_by_role("link", name="PDN")
    expect(pdn).to_be_visible()
    href = pdn.get_attribute("href")
    assert href == f"/matches/{match_id}/pdn"
    text = api.get(href).text
    assert f'[Black "{guest}"]' in text and multi_jumps[0] in text
    settle(page)


def test_an_illegal_typed_move_is_explained_inline(
    page: Page, problems: Problems, screenshots: Path
) -> None:
    match_id = start_from_lobby(page, "tictactoe", "greedy")
    wait_for_turn(page, -1)
    # The page posts what is typed; the server's refusal (422) is the page's to show.
    problems.expect_refusal(f"/matches/{match_id}/moves", 422)
    box = page.get_by_label("Type a move")
    box.fill("9")
    box.press("Enter")
    error = page.locator("#play-error")
    expect(error).to_be_visible()
    expect(error).to_contain_text("cannot read tic-tac-toe move '9'")
    expect(error).to_contain_text("(INVALID_MOVE)")
    expect(page.locator("#moves li")).to_have_count(0)
    # A legal move typed goes through and clears the explanation.
    box.fill("4")
    box.press("Enter")
    expect(page.locator("#moves li .move").first).to_have_text("4")
    expect(error).to_be_hidden()
    wait_for_turn(page, 1)
    # A taken cell is refused by the rules, with the server's reason.
    box.fill("4")
    box.press("Enter")
    expect(error).to_contain_text("cell 4 is taken by X")
    expect(error).to_contain_text("(ILLEGAL_MOVE)")
    page.screenshot(path=screenshots / "play-illegal-move-desktop.png", full_page=True)
    settle(page)


def test_resign_ends_the_match_with_its_reason(page: Page) -> None:
    start_from_lobby(page, "connect4", "alphabeta:depth=2", colour="second")
    # The bot opened: abort is gone (a match is aborted only before its first move).
    wait_for_turn(page, -1)
    expect(page.locator("#moves li")).to_have_count(1)
    expect(page.locator("#play-abort")).to_be_hidden()
    # A column is one click.
    page.locator('#board rect.hit[data-column="4"]').click()
    expect(page.locator("#moves li")).to_have_count(3, timeout=TURN_WAIT_MS)
    page.get_by_role("button", name="Resign").click()
    page.get_by_role("button", name="No").click()
    expect(page.locator("#resign-confirm")).to_be_hidden()
    page.get_by_role("button", name="Resign").click()
    page.get_by_role("button", name="Yes, resign").click()
    # The referee names the side that resigned (Connect Four's: first and second).
    expect(page.locator("#result-outcome")).to_have_text("You lost by resignation")
    expect(page.locator("#status")).to_contain_text("alphabeta:depth=2 (house bot) beat guest-")
    expect(page.locator("#status")).to_contain_text(": Second resigned")
    expect(page.locator("#status")).to_contain_text("(resign)")
    expect(page.locator(PANEL)).to_have_attribute("data-turn", "over")
    expect(page.locator("#play-controls")).to_be_hidden()
    expect(page.get_by_role("button", name="Resign")).to_be_hidden()
    settle(page)


def test_an_untouched_match_can_be_aborted(page: Page) -> None:
    start_from_lobby(page, "nim", "random", time_control="5+3")
    wait_for_turn(page, -1)
    # Nim: a heap, then how many to take.
    page.locator('#board rect.hit[data-heap="2"]').click()
    expect(page.locator("#nim-take")).to_be_visible()
    expect(page.locator("#nim-heap")).to_have_text("2")
    page.get_by_role("button", name="Abort").click()
    expect(page.locator("#status")).to_contain_text("aborted by")
    expect(page.locator(PANEL)).to_have_attribute("data-turn", "over")
    settle(page)


def test_nim_is_played_by_heap_and_count(page: Page) -> None:
    start_from_lobby(page, "nim", "random")
    wait_for_turn(page, -1)
    expect(page.locator("#nim-take")).to_be_hidden()
    page.locator('#board rect.hit[data-heap="3"]').click()
    expect(page.locator("#nim-heap")).to_have_text("3")
    expect(page.locator("#board rect.hit.selected")).to_have_count(1)
    count = page.get_by_role("spinbutton", name=re.compile("^Take"))
    expect(count).to_be_focused()
    count.fill("2")
    page.locator("#nim-take").get_by_role("button", name="Take").click()
    expect(page.locator("#moves li .move").first).to_have_text("3:2")
    expect(page.locator("#nim-take")).to_be_hidden()
    settle(page)


def test_a_guest_accepts_a_challenge_from_the_lobby(
    page: Page, api: httpx.Client, screenshots: Path
) -> None:
    # A guest for this browser (POST /web/guest, as a form of the site would), named on the
    # lobby's form.
    made = page.request.post("/web/guest", max_redirects=0)
    assert made.status == 303, made.text()
    page.goto("/")
    guest = page.locator("form.play-form .hint a").inner_text()
    expect(page.locator("#challenges")).to_have_count(0)

    made = api.post("/players", json={"name": "carol"})
    carol = {"Authorization": f"Bearer {made.json()['token']}"}
    declined = api.post(
        "/matches", json={"game": "tictactoe", "seats": [guest, "carol"]}, headers=carol
    )
    assert declined.status_code == 201, declined.text
    wanted = api.post(
        "/matches",
        json={"game": "tictactoe", "seats": ["carol", guest], "time_control": {"base_ms": 60_000}},
        headers=carol,
    )
    assert wanted.status_code == 201, wanted.text
    settle(page)
    page.reload()
    challenges = page.locator("#challenges li")
    expect(challenges).to_have_count(2)
    page.screenshot(path=screenshots / "play-challenges-desktop.png", full_page=True)
    first = challenges.filter(has=page.locator(f'[id="challenge-{declined.json()["match_id"]}"]'))
    expect(first).to_contain_text("carol invites you to tictactoe: you would play X, untimed")
    first.get_by_role("button", name="Decline").click()
    page.wait_for_url(re.compile(r"/$"))
    expect(challenges).to_have_count(1)
    settle(page)
    assert api.get(f"/matches/{declined.json()['match_id']}").json()["status"] == "aborted"

    challenges.get_by_role("button", name="Accept").click()
    page.wait_for_url(f"**/matches/{wanted.json()['match_id']}")
    expect(page.locator("#title-1")).to_have_text(guest)
    # carol moves first over REST; the guest's turn then comes over the WebSocket.
    expect(page.locator(PANEL)).to_have_attribute("data-turn", "opponent")
    played = api.post(
        f"/matches/{wanted.json()['match_id']}/moves", json={"move": "0"}, headers=carol
    )
    assert played.status_code == 200, played.text
    wait_for_turn(page, 0)
    page.locator('#board rect.hit[data-cell="4"]').click()
    expect(page.locator("#moves li .move")).to_have_text(["0", "4"])
    expect(page.locator("#status")).to_contain_text("carol to move")

    # Draw offers: carol's reach the page live; the guest declines one and accepts the next.
    match_id = wanted.json()["match_id"]
    offers = page.locator("#draw-offered")
    expect(offers).to_be_hidden()
    for answer in ("Decline", "Accept the draw"):
        offered = api.post(f"/matches/{match_id}/offer-draw", headers=carol)
        assert offered.status_code == 200, offered.text
        expect(offers).to_contain_text("Your opponent offers a draw")
        expect(page.get_by_role("button", name="Offer a draw")).to_be_hidden()
        offers.get_by_role("button", name=answer).click()
        expect(offers).to_be_hidden()
        if answer == "Decline":
            expect(page.get_by_role("button", name="Offer a draw")).to_be_visible()
            assert api.get(f"/matches/{match_id}").json()["draw_offer"] is None
    expect(page.locator("#result-outcome")).to_have_text("You drew by agreement")
    expect(page.locator(PANEL)).to_have_attribute("data-turn", "over")
    settle(page)


def test_a_newcomer_takes_an_open_seat(page: Page, api: httpx.Client) -> None:
    made = api.post("/players", json={"name": "dora"})
    dora = {"Authorization": f"Bearer {made.json()['token']}"}
    opened = api.post(
        "/matches", json={"game": "connect4", "seats": ["dora", "open"]}, headers=dora
    )
    assert opened.status_code == 201, opened.text
    match_id = opened.json()["match_id"]
    page.goto(f"/matches/{match_id}")
    expect(page.locator(PANEL)).to_have_count(0)
    page.get_by_role("button", name="Take the open seat (second)").click()
    page.wait_for_url(f"**/matches/{match_id}")
    expect(page.locator(PANEL)).to_have_attribute("data-turn", "opponent")
    guest = page.locator("#title-1").inner_text()
    assert guest.startswith("guest-")
    played = api.post(f"/matches/{match_id}/moves", json={"move": "4"}, headers=dora)
    assert played.status_code == 200, played.text
    wait_for_turn(page, 0)
    expect(page.locator("#board svg")).to_have_attribute("role", "group")
    expect(page.locator("#board rect.hit.target")).to_have_count(7)
    page.get_by_role("button", name="drop in column 3").click()
    expect(page.locator("#moves li .move")).to_have_text(["4", "3"])
    expect(page.locator("#board svg")).to_have_attribute("role", "img")
    settle(page)


def test_another_browser_watches_a_guests_match_without_play_controls(
    page: Page, browser: Browser, web_server: RunningServer
) -> None:
    match_id = start_from_lobby(page, "checkers", "greedy")
    other = browser.new_context(viewport=DESKTOP, base_url=web_server.url)
    try:
        watcher = other.new_page()
        watcher.goto(f"/matches/{match_id}")
        expect(watcher.locator("#board svg")).to_be_visible()
        expect(watcher.locator(PANEL)).to_have_count(0)
        expect(watcher.locator("#board rect.hit.target")).to_have_count(0)
        # The match's routes by the other browser's cookie: no guest there, so no playing here.
        refused = other.request.post(
            f"/matches/{match_id}/moves", data={"move": "11-15"}, fail_on_status_code=False
        )
        assert refused.status == 401 and refused.json()["code"] == "UNAUTHORIZED"
        # With a guest of its own, it is still not its seat; and no other site may post.
        assert other.request.post("/web/guest", max_redirects=0).status == 303
        refused = other.request.post(
            f"/matches/{match_id}/moves", data={"move": "11-15"}, fail_on_status_code=False
        )
        assert refused.status == 403 and refused.json()["code"] == "NOT_A_PLAYER"
        foreign = other.request.post(
            f"/matches/{match_id}/resign",
            headers={"Origin": "https://evil.example"},
            fail_on_status_code=False,
        )
        assert foreign.status == 403 and foreign.json()["code"] == "FORBIDDEN"
        watcher.reload()
        expect(watcher.locator(PANEL)).to_have_count(0)
        watcher.wait_for_load_state("networkidle")
    finally:
        other.close()
    settle(page)


@pytest.mark.parametrize(("viewport", "name"), [(DESKTOP, "desktop"), (PHONE, "phone")])
def test_play_mode_fits_phone_and_desktop(
    page: Page, screenshots: Path, viewport: dict[str, int], name: str
) -> None:
    page.set_viewport_size(viewport)
    start_from_lobby(page, "checkers", "alphabeta:depth=2", time_control="5+3")
    wait_for_turn(page, -1)
    # The guest plays Black: the board is seen from Black, its pieces (1-12) at the bottom.
    black, white = square(page, 11).bounding_box(), square(page, 22).bounding_box()
    assert black is not None and white is not None and black["y"] > white["y"]
    square(page, 11).click()
    expect(page.locator("#play-selection")).to_contain_text("Chosen: 11;")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= viewport["width"], f"play mode scrolls sideways at {viewport['width']} px"
    # The targets are reached by keyboard too: Tab to a marked square, Enter to choose it.
    expect(page.locator("#board rect.hit.target")).to_have_count(2)
    page.locator('#board rect.hit[data-square="15"]').focus()
    page.screenshot(path=screenshots / f"play-checkers-{name}.png", full_page=True)
    page.keyboard.press("Enter")
    expect(page.locator("#moves li .move").first).to_have_text("11-15")
    settle(page)
    page.goto("/")
    expect(page.locator("#your-matches li")).to_have_count(1)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= viewport["width"], f"the lobby scrolls sideways at {viewport['width']} px"
    page.screenshot(path=screenshots / f"play-lobby-{name}.png", full_page=True)
    settle(page)


def test_the_end_tells_the_player_and_offers_a_rematch_with_colours_swapped(
    page: Page, browser: Browser, web_server: RunningServer, screenshots: Path
) -> None:
    match_id = start_from_lobby(page, "checkers", "random", time_control="1+1")
    wait_for_turn(page, -1)
    guest = page.locator("#title-0").inner_text()
    # The referee runs the first mover's clock from the start: the page says so.
    expect(page.locator("#play-turn")).to_contain_text("your clock runs from the start")
    page.get_by_role("button", name="Resign").click()
    page.get_by_role("button", name="Yes, resign").click()
    expect(page.locator("#result-outcome")).to_have_text("You lost by resignation")
    expect(page.locator("#play-turn")).to_have_text("You lost by resignation.")
    expect(page.locator("#connection")).to_have_text("")
    page.screenshot(path=screenshots / "play-ended-desktop.png", full_page=True)
    # A spectator reads the winner's side instead.
    other = browser.new_context(viewport=DESKTOP, base_url=web_server.url)
    try:
        watcher = other.new_page()
        watcher.goto(f"/matches/{match_id}")
        expect(watcher.locator("#result-outcome")).to_have_text("White won by resignation")
        expect(watcher.get_by_role("button", name="Rematch")).to_have_count(0)
        watcher.wait_for_load_state("networkidle")
    finally:
        other.close()

    rematch = page.get_by_role("button", name="Rematch")
    expect(rematch).to_be_visible()
    expect(page.locator("#rematch-hint")).to_contain_text("you play White")
    rematch.click()
    page.wait_for_url(re.compile(r"/matches/m_[0-9a-f]+$"))
    assert not page.url.endswith(match_id)
    # The same match with the colours swapped: the bot opens, the guest plays White.
    expect(page.locator("#title-0")).to_have_text("random (house bot)")
    expect(page.locator("#title-1")).to_have_text(guest)
    expect(page.locator("#match p.meta").first).to_contain_text(
        re.compile(r"checkers, 60 s \+ 1(\.0)? s a move")
    )
    expect(page.locator(PANEL)).to_be_visible()
    wait_for_turn(page, -1)
    settle(page)


def test_a_rematch_against_a_player_challenges_them(page: Page, api: httpx.Client) -> None:
    # A guest for this browser (POST /web/guest, as a form of the site would).
    made = page.request.post("/web/guest", max_redirects=0)
    assert made.status == 303, made.text()
    page.goto("/")
    guest = page.locator("form.play-form .hint a").inner_text()
    made = api.post("/players", json={"name": "carol"})
    carol = {"Authorization": f"Bearer {made.json()['token']}"}
    body = {"game": "tictactoe", "seats": ["carol", guest], "time_control": {"base_ms": 90_000}}
    created = api.post("/matches", json=body, headers=carol)
    assert created.status_code == 201, created.text
    match_id = created.json()["match_id"]
    settle(page)
    page.reload()
    page.locator("#challenges").get_by_role("button", name="Accept").click()
    page.wait_for_url(f"**/matches/{match_id}")
    assert api.post(f"/matches/{match_id}/resign", headers=carol).status_code == 200
    expect(page.locator("#result-outcome")).to_have_text(
        "You won by resignation", timeout=TURN_WAIT_MS
    )
    page.get_by_role("button", name="Rematch").click()
    page.wait_for_url(re.compile(r"/matches/m_[0-9a-f]+$"))
    # A challenge to carol, the seats swapped: the guest opens as X, carol is invited to O.
    expect(page.locator("#title-0")).to_have_text(guest)
    expect(page.locator("#title-1")).to_have_text("carol (invited)")
    new_id = page.url.rsplit("/", 1)[-1]
    challenges = api.get("/challenges", headers=carol).json()
    assert [(c["match_id"], c["your_seat"], c["challenger"]) for c in challenges] == [
        (new_id, 1, guest)
    ]
    assert challenges[0]["time_control"]["base_ms"] == 90_000
    settle(page)


HUE = """
(colour) => {
  // The hue (0-360) of a computed CSS colour, and whether it is seen at all.
  const parts = colour.match(/[\\d.]+/g);
  if (!parts) return null;
  const [r, g, b, a = 1] = parts.map(Number);
  const max = Math.max(r, g, b), min = Math.min(r, g, b);
  if (a === 0 || colour === "none") return null;
  if (max === min) return { hue: 0, grey: true };
  const d = max - min;
  let hue = max === r ? ((g - b) / d) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
  return { hue: (hue * 60 + 360) % 360, grey: false };
}
"""


def marker_colour(locator: Locator) -> dict[str, object]:
    """The colour a marker shows: its fill when it has one, else its stroke."""
    style = locator.evaluate(
        """(e) => {
            const s = getComputedStyle(e);
            return { fill: s.fill, stroke: s.stroke, strokeWidth: parseFloat(s.strokeWidth) };
        }"""
    )
    fill = locator.page.evaluate(HUE, style["fill"]) if style["fill"] != "none" else None
    stroke = locator.page.evaluate(HUE, style["stroke"]) if style["stroke"] != "none" else None
    return {"fill": fill, "stroke": stroke if style["strokeWidth"] > 0 else None}


def test_the_last_move_and_the_movable_pieces_are_marked_apart(
    page: Page, screenshots: Path
) -> None:
    start_from_lobby(page, "checkers", "random", colour="second")
    wait_for_turn(page, -1)
    page.mouse.move(0, 0)
    last = page.locator("#board .last-move")
    expect(last).to_have_count(2)
    targets = page.locator("#board rect.hit.target")
    assert targets.count() > 0
    shown_last = marker_colour(last.first)
    shown_target = marker_colour(targets.first)
    hues = [
        float(part["hue"])  # type: ignore[index]
        for part in (shown_last["fill"] or shown_last["stroke"], shown_target["stroke"])
        if part
    ]
    assert len(hues) == 2, (shown_last, shown_target)
    apart = min(abs(hues[0] - hues[1]), 360 - abs(hues[0] - hues[1]))
    assert apart >= 90, f"the markers' colours are {apart:.0f} degrees apart: {hues}"
    # One is a tint of the square, the other an outline: they differ in kind too.
    assert shown_last["fill"] is not None and shown_last["stroke"] is None
    assert shown_target["stroke"] is not None
    # A legend says which is which; the board's name says the last move.
    legend = page.locator("#board-legend")
    expect(legend).to_contain_text("last move")
    expect(legend).to_contain_text("can move")
    move = page.locator("#moves li .move").first.inner_text()
    board = page.locator("#board svg")
    expect(board).to_have_attribute("aria-label", re.compile(f"last move {move}"))
    page.screenshot(path=screenshots / "play-markers-desktop.png")
    settle(page)


def test_connect_four_columns_to_play_keep_their_holes_empty(page: Page, screenshots: Path) -> None:
    """An empty hole of a column the player may choose still looks empty, not like a disc."""
    start_from_lobby(page, "connect4", "random")
    wait_for_turn(page, -1)
    page.mouse.move(0, 0)
    expect(page.locator("#board rect.hit.target")).to_have_count(7)
    # Where a disc would land is shown: the bottom hole of each column, ringed.
    landing = page.locator("#board circle.hole.landing")
    expect(landing).to_have_count(7)
    assert landing.first.evaluate("(hole) => getComputedStyle(hole).stroke") != "none"
    paper = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    paper_rgb = [int(part) for part in re.findall(r"\d+", paper)[:3]]
    shot = Image.open(io.BytesIO(page.screenshot()))
    for hole in page.locator("#board circle.hole").all():
        box = hole.bounding_box()
        assert box is not None
        middle = (int(box["x"] + box["width"] / 2), int(box["y"] + box["height"] / 2))
        centre = shot.getpixel(middle)
        assert isinstance(centre, tuple)
        distance = max(abs(a - b) for a, b in zip(centre[:3], paper_rgb, strict=True))
        assert distance <= 16, f"an empty hole shows {centre[:3]}, the page is {paper_rgb}"
    page.screenshot(path=screenshots / "play-connect4-targets-desktop.png")
    settle(page)
