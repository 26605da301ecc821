"""The match page /matches/{id} in Chromium: live moves and clocks, replay, every game's board."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from games.registry import get_game
from tests.web.conftest import DESKTOP, PHONE

pytestmark = pytest.mark.web

MOVES = "#moves li"
LIVE_WAIT_MS = 15_000
"""Long enough for a WebSocket event on a busy machine."""

TIC_TAC_TOE = (
    ("4", "....X...."),
    ("0", "O...X...."),
    ("3", "O..XX...."),
    ("6", "O..XX.O.."),
    ("5", "O..XXXO.."),
)
"""Moves of a tic-tac-toe game (X, ann, wins the middle row) and the position after each."""


def register(api: httpx.Client, name: str) -> dict[str, str]:
    response = api.post("/players", json={"name": name})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


def start_match(
    api: httpx.Client,
    game: str,
    tokens: dict[str, dict[str, str]],
    time_control: dict[str, int] | None = None,
) -> str:
    """Start a match of `game` between ann (seat 0) and bob; return its id."""
    body: dict[str, object] = {"game": game, "seats": ["ann", "bob"]}
    if time_control is not None:
        body["time_control"] = time_control
    created = api.post("/matches", json=body, headers=tokens["ann"])
    assert created.status_code == 201, created.text
    match_id = str(created.json()["match_id"])
    accepted = api.post(f"/matches/{match_id}/accept", headers=tokens["bob"])
    assert accepted.status_code == 200, accepted.text
    return match_id


def play(api: httpx.Client, match_id: str, move: str, token: dict[str, str]) -> None:
    played = api.post(f"/matches/{match_id}/moves", json={"move": move}, headers=token)
    assert played.status_code == 200, played.text


def players(api: httpx.Client) -> dict[str, dict[str, str]]:
    return {name: register(api, name) for name in ("ann", "bob")}


def test_a_spectator_sees_every_move_live_in_order_with_clocks(
    page: Page, api: httpx.Client
) -> None:
    tokens = players(api)
    match_id = start_match(api, "tictactoe", tokens, {"base_ms": 600_000})
    response = page.goto(f"/matches/{match_id}")
    assert response is not None and response.ok
    expect(page.locator("h1")).to_have_text("ann vs bob")
    expect(page.locator("#connection")).to_have_text("Live.", timeout=LIVE_WAIT_MS)
    expect(page.locator("#status")).to_have_text("ann to move")
    expect(page.locator("#position-text")).to_have_text(".........")
    expect(page.locator("#board svg")).to_be_visible()
    # ann's clock runs in the browser between events; bob's waits.
    expect(page.locator("#clock-time-0")).not_to_have_text("10:00.0", timeout=LIVE_WAIT_MS)
    expect(page.locator("#clock-time-1")).to_have_text("10:00.0")
    expect(page.locator("#clock-0")).to_have_class("clock running to-move")

    for ply, (move, position) in enumerate(TIC_TAC_TOE, start=1):
        mover = "ann" if ply % 2 == 1 else "bob"
        play(api, match_id, move, tokens[mover])
        expect(page.locator(MOVES)).to_have_count(ply, timeout=LIVE_WAIT_MS)
        expect(page.locator("#position-text")).to_have_text(position)
        # The board is drawn from the new position: as many marks as moves.
        expect(page.locator("#board svg text")).to_have_count(ply)
        if ply < len(TIC_TAC_TOE):
            waiting = "bob" if mover == "ann" else "ann"
            expect(page.locator("#status")).to_have_text(f"{waiting} to move")
    expect(page.locator(f"{MOVES} .move")).to_have_text([move for move, _ in TIC_TAC_TOE])
    # Each live move shows its thinking time as the record has it (move_made's elapsed_ms).
    recorded = api.get(f"/matches/{match_id}/record", headers={"Arena-Protocol-Version": "1.2"})
    times = [f"{m['elapsed_ms'] / 1000:.1f} s" for m in recorded.json()["moves"]]
    expect(page.locator(f"{MOVES} > .meta")).to_have_text(times)
    expect(page.locator("#status")).to_contain_text("ann beat bob")
    # Both clocks stopped: neither is marked running.
    expect(page.locator(".clock.running")).to_have_count(0)


def test_a_finished_match_replays_with_the_arrow_keys(
    page: Page, api: httpx.Client, screenshots: Path
) -> None:
    tokens = players(api)
    match_id = start_match(api, "tictactoe", tokens)
    for ply, (move, _) in enumerate(TIC_TAC_TOE, start=1):
        play(api, match_id, move, tokens["ann" if ply % 2 == 1 else "bob"])
    page.goto(f"/matches/{match_id}")
    position = page.locator("#position-text")
    expect(position).to_have_text(TIC_TAC_TOE[-1][1])
    expect(page.locator("#status")).to_contain_text("ann beat bob")
    expect(page.locator("#replay-forward")).to_be_disabled()
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.screenshot(path=str(screenshots / f"match-finished-{label}.png"), full_page=True)

    page.keyboard.press("ArrowLeft")
    expect(position).to_have_text(TIC_TAC_TOE[-2][1])
    expect(page.locator("#ply-text")).to_have_text(f"After move 4, {TIC_TAC_TOE[3][0]}")
    expect(page.locator(f"{MOVES}[aria-current=step] .move")).to_have_text(TIC_TAC_TOE[3][0])
    page.keyboard.press("Home")
    expect(position).to_have_text(".........")
    expect(page.locator("#board svg text")).to_have_count(0)
    for _, after in TIC_TAC_TOE:
        page.keyboard.press("ArrowRight")
        expect(position).to_have_text(after)
    # The buttons do the same.
    page.get_by_role("button", name="First").click()
    expect(position).to_have_text(".........")
    page.get_by_role("button", name="Forward").click()
    expect(position).to_have_text(TIC_TAC_TOE[0][1])
    page.get_by_role("button", name="Last").click()
    expect(position).to_have_text(TIC_TAC_TOE[-1][1])


OPENINGS = {
    "checkers": ("11-15", "23-19", "8-11"),
    "connect4": ("4", "4", "3"),
    "nim": ("1:1", "2:2"),
    "tictactoe": ("4", "0"),
}
"""A few moves of each game, to draw a board with pieces and a last move."""


@pytest.mark.parametrize("game", sorted(OPENINGS))
def test_each_game_has_its_board(
    page: Page, api: httpx.Client, screenshots: Path, game: str
) -> None:
    tokens = players(api)
    match_id = start_match(api, game, tokens, {"base_ms": 300_000, "increment_ms": 2000})
    for ply, move in enumerate(OPENINGS[game], start=1):
        play(api, match_id, move, tokens["ann" if ply % 2 == 1 else "bob"])
    state = api.get(f"/matches/{match_id}").json()
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.goto(f"/matches/{match_id}")
        expect(page.locator("#board svg")).to_be_visible()
        expect(page.locator("#position-text")).to_have_text(state["position"])
        expect(page.locator(f"{MOVES} .move")).to_have_text(list(OPENINGS[game]))
        expect(page.locator("#connection")).to_have_text("Live.", timeout=LIVE_WAIT_MS)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= size["width"]
        page.screenshot(path=str(screenshots / f"match-{game}-{label}.png"), full_page=True)
    pdn = page.locator(f'a[href="/matches/{match_id}/pdn"]')
    expect(pdn).to_have_count(1 if game == "checkers" else 0)
    expect(page.locator(f'a[href="/matches/{match_id}/record"]')).to_have_count(1)


def test_checkers_shows_square_numbers_on_demand_and_marks_the_last_move(
    page: Page, api: httpx.Client, screenshots: Path
) -> None:
    tokens = players(api)
    match_id = start_match(api, "checkers", tokens)
    play(api, match_id, "11-15", tokens["ann"])
    page.goto(f"/matches/{match_id}")
    board = page.locator("#board svg")
    expect(board.locator("circle")).to_have_count(24)
    expect(board.locator(".last-move")).to_have_count(2)  # from 11 to 15
    expect(board.locator(".square-number")).to_have_count(0)
    page.get_by_label("Show square numbers").check()
    expect(board.locator(".square-number")).to_have_count(32)
    page.screenshot(path=str(screenshots / "match-checkers-numbers-desktop.png"), full_page=True)


MARKUP = "<img src=x onerror=alert(2)>"


def test_a_name_with_markup_stays_text(page: Page, api: httpx.Client) -> None:
    """The protocol refuses such a name (and the template escapes it: tests/server); were one
    shown anyway, the live updates write it as text: "... to move" after a move (the page
    fixture fails the test on any dialog an executed alert would open)."""
    tokens = players(api)
    match_id = start_match(api, "tictactoe", tokens)
    page.goto(f"/matches/{match_id}")
    expect(page.locator("#connection")).to_have_text("Live.", timeout=LIVE_WAIT_MS)
    page.locator("#clock-0 .name").evaluate("(name, text) => { name.textContent = text; }", MARKUP)
    play(api, match_id, "4", tokens["ann"])
    play(api, match_id, "0", tokens["bob"])
    expect(page.locator(MOVES)).to_have_count(2, timeout=LIVE_WAIT_MS)
    expect(page.locator("#status")).to_have_text(f"{MARKUP} to move", timeout=LIVE_WAIT_MS)
    assert page.locator("#match img").count() == 0


def test_a_match_that_starts_while_watched_names_who_joined(page: Page, api: httpx.Client) -> None:
    tokens = players(api)
    body = {"game": "connect4", "seats": ["ann", "open"]}
    created = api.post("/matches", json=body, headers=tokens["ann"])
    assert created.status_code == 201, created.text
    match_id = str(created.json()["match_id"])
    page.goto(f"/matches/{match_id}")
    expect(page.locator("h1")).to_have_text("ann vs open seat")
    expect(page.locator("#status")).to_have_text("Waiting for players")
    expect(page.locator("#connection")).to_have_text("Live.", timeout=LIVE_WAIT_MS)
    joined = api.post(f"/matches/{match_id}/join", headers=tokens["bob"])
    assert joined.status_code == 200, joined.text
    expect(page.locator("h1")).to_have_text("ann vs bob", timeout=LIVE_WAIT_MS)
    expect(page.locator("#clock-1 .name")).to_have_text("bob")
    expect(page.locator("#status")).to_have_text("ann to move")
    play(api, match_id, "4", tokens["ann"])
    expect(page.locator(f"{MOVES} .move")).to_have_text(["4"], timeout=LIVE_WAIT_MS)
    expect(page.locator("#board .last-disc")).to_have_count(1)


def test_a_house_bot_answers_on_the_page(page: Page, api: httpx.Client) -> None:
    tokens = players(api)
    body = {"game": "tictactoe", "seats": ["ann", {"bot": "random"}]}
    created = api.post("/matches", json=body, headers=tokens["ann"])
    assert created.status_code == 201, created.text
    match_id = str(created.json()["match_id"])
    page.goto(f"/matches/{match_id}")
    expect(page.locator("#clock-1 .name")).to_have_text("random (house bot)")
    expect(page.locator("#connection")).to_have_text("Live.", timeout=LIVE_WAIT_MS)
    play(api, match_id, "4", tokens["ann"])
    # The bot's reply arrives on the socket: two moves, in order, the board drawn after both.
    expect(page.locator(MOVES)).to_have_count(2, timeout=LIVE_WAIT_MS)
    expect(page.locator(f"{MOVES} .move").first).to_have_text("4")
    expect(page.locator(f"{MOVES}").nth(1)).to_have_attribute("data-seat", "1")
    expect(page.locator("#board svg text")).to_have_count(2)
    state = api.get(f"/matches/{match_id}").json()
    expect(page.locator("#position-text")).to_have_text(state["position"])


def test_a_long_bot_spec_wraps_at_phone_width(page: Page, api: httpx.Client) -> None:
    tokens = players(api)
    spec = "mcts:simulations=60,seed=3"
    body = {"game": "tictactoe", "seats": ["ann", {"bot": spec}]}
    created = api.post("/matches", json=body, headers=tokens["ann"])
    assert created.status_code == 201, created.text
    page.set_viewport_size(PHONE)
    page.goto(f"/matches/{created.json()['match_id']}")
    expect(page.locator("h1")).to_contain_text(spec)
    # The title's one long word wraps instead of widening the page sideways.
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]


def test_the_replay_is_usable_by_keyboard(page: Page, api: httpx.Client) -> None:
    tokens = players(api)
    match_id = start_match(api, "tictactoe", tokens)
    for ply, (move, _) in enumerate(TIC_TAC_TOE[:2], start=1):
        play(api, match_id, move, tokens["ann" if ply % 2 == 1 else "bob"])
    page.goto(f"/matches/{match_id}")
    back = page.get_by_role("button", name="Back")
    for _ in range(40):
        page.keyboard.press("Tab")
        if back.evaluate("(button) => button === document.activeElement"):
            break
    else:
        pytest.fail("Tab never reached the Back button")
    assert back.evaluate("(e) => getComputedStyle(e).outlineStyle") == "solid"
    page.keyboard.press("Enter")
    expect(page.locator("#position-text")).to_have_text(TIC_TAC_TOE[0][1])


HELD_SOCKET = """
(() => {
  // The page's WebSocket connects only when the test calls releaseSocket().
  const Real = window.WebSocket;
  let release;
  const released = new Promise((resolve) => { release = resolve; });
  window.releaseSocket = release;
  window.WebSocket = function (url) {
    const socket = new EventTarget();
    released.then(() => {
      const real = new Real(url);
      for (const type of ["open", "message", "close"]) {
        real.addEventListener(type, (event) =>
          socket.dispatchEvent(new MessageEvent(type, { data: event.data })));
      }
      socket.send = (data) => real.send(data);
    });
    return socket;
  };
})();
"""


def test_moves_played_before_the_socket_connects_replay_too(page: Page, api: httpx.Client) -> None:
    """The socket's first match_state lists moves without the positions between them: the page
    reads those from the server's page, so every one replays."""
    tokens = players(api)
    match_id = start_match(api, "tictactoe", tokens)
    page.add_init_script(HELD_SOCKET)
    page.goto(f"/matches/{match_id}")
    expect(page.locator("#position-text")).to_have_text(".........")
    for ply, (move, _) in enumerate(TIC_TAC_TOE[:3], start=1):
        play(api, match_id, move, tokens["ann" if ply % 2 == 1 else "bob"])
    page.evaluate("() => window.releaseSocket()")
    expect(page.locator(f"{MOVES} .move")).to_have_text(
        [move for move, _ in TIC_TAC_TOE[:3]], timeout=LIVE_WAIT_MS
    )
    expect(page.locator("#position-text")).to_have_text(TIC_TAC_TOE[2][1])
    page.keyboard.press("Home")
    for _, after in TIC_TAC_TOE[:3]:
        page.keyboard.press("ArrowRight")
        expect(page.locator("#position-text")).to_have_text(after)


def checkers_line(plies: int) -> list[str]:
    """A checkers game of `plies` moves with no result yet: the legal moves taken in turn."""
    game = get_game("checkers")
    state = game.initial_state()
    moves: list[str] = []
    while len(moves) < plies:
        assert state.outcome() is None
        legal = sorted(state.format_move(move) for move in state.legal_moves())
        moves.append(legal[len(moves) % len(legal)])
        state = state.play(moves[-1])
    return moves


LAST_MOVE_SHOWN = """
(list) => {
  // The last move's item lies within the list's own scrolled box (the list scrolls, not the page).
  const box = list.getBoundingClientRect();
  const item = list.lastElementChild.getBoundingClientRect();
  return item.top >= box.top - 1 && item.bottom <= box.bottom + 1;
}
"""


def test_the_move_list_follows_the_game_unless_the_viewer_scrolled_back(
    page: Page, api: httpx.Client, screenshots: Path
) -> None:
    tokens = players(api)
    match_id = start_match(api, "checkers", tokens)
    line = checkers_line(42)
    page.goto(f"/matches/{match_id}")
    expect(page.locator("#connection")).to_have_text("Live.", timeout=LIVE_WAIT_MS)
    moves = page.locator("#moves")
    for ply, move in enumerate(line[:40], start=1):
        play(api, match_id, move, tokens["ann" if ply % 2 == 1 else "bob"])
        expect(page.locator(MOVES)).to_have_count(ply, timeout=LIVE_WAIT_MS)
        assert moves.evaluate(LAST_MOVE_SHOWN), f"move {ply} is not shown in the list"
    # The list holds more than it shows: it scrolled to follow.
    assert moves.evaluate("(list) => list.scrollHeight > list.clientHeight")
    page.screenshot(path=str(screenshots / "match-moves-followed-desktop.png"), full_page=True)

    # A viewer who scrolled the list back keeps their place when the next move comes.
    moves.evaluate("(list) => { list.scrollTop = 0; }")
    play(api, match_id, line[40], tokens["ann"])
    expect(page.locator(MOVES)).to_have_count(41, timeout=LIVE_WAIT_MS)
    assert moves.evaluate("(list) => list.scrollTop") == 0
    # Back at the end, the list follows again, through the end of the match.
    moves.evaluate("(list) => { list.scrollTop = list.scrollHeight; }")
    play(api, match_id, line[41], tokens["bob"])
    expect(page.locator(MOVES)).to_have_count(42, timeout=LIVE_WAIT_MS)
    assert moves.evaluate(LAST_MOVE_SHOWN)
    resigned = api.post(f"/matches/{match_id}/resign", headers=tokens["ann"])
    assert resigned.status_code == 200, resigned.text
    expect(page.locator("#status")).to_contain_text("resign", timeout=LIVE_WAIT_MS)
    assert moves.evaluate(LAST_MOVE_SHOWN)


@pytest.mark.parametrize(("size", "label"), [(DESKTOP, "desktop"), (PHONE, "phone")])
def test_a_long_finished_match_opens_at_its_last_move(
    page: Page, api: httpx.Client, screenshots: Path, size: dict[str, int], label: str
) -> None:
    tokens = players(api)
    match_id = start_match(api, "checkers", tokens)
    for ply, move in enumerate(checkers_line(40), start=1):
        play(api, match_id, move, tokens["ann" if ply % 2 == 1 else "bob"])
    assert api.post(f"/matches/{match_id}/resign", headers=tokens["bob"]).status_code == 200
    page.set_viewport_size(size)
    page.goto(f"/matches/{match_id}")
    moves = page.locator("#moves")
    expect(page.locator(MOVES)).to_have_count(40)
    assert moves.evaluate("(list) => list.scrollHeight > list.clientHeight")
    page.wait_for_function(f"() => ({LAST_MOVE_SHOWN})(document.getElementById('moves'))")
    # Stepping back through the moves keeps the move shown in view in the list.
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    current = page.locator(f"{MOVES}[aria-current=step]")
    expect(current).to_have_attribute("data-ply", "1")
    assert moves.evaluate(
        """(list) => {
            const box = list.getBoundingClientRect();
            const item = list.querySelector("[aria-current=step]").getBoundingClientRect();
            return item.top >= box.top - 1 && item.bottom <= box.bottom + 1;
        }"""
    )
    page.screenshot(path=str(screenshots / f"match-moves-finished-{label}.png"), full_page=True)


def test_the_live_note_goes_when_the_match_ends(page: Page, api: httpx.Client) -> None:
    tokens = players(api)
    match_id = start_match(api, "tictactoe", tokens)
    page.goto(f"/matches/{match_id}")
    connection = page.locator("#connection")
    expect(connection).to_have_text("Live.", timeout=LIVE_WAIT_MS)
    play(api, match_id, "4", tokens["ann"])
    expect(page.locator(MOVES)).to_have_count(1, timeout=LIVE_WAIT_MS)
    assert api.post(f"/matches/{match_id}/resign", headers=tokens["bob"]).status_code == 200
    expect(page.locator("#status")).to_contain_text("resignation", timeout=LIVE_WAIT_MS)
    expect(connection).to_have_text("")


def test_the_end_says_who_won_and_how(page: Page, api: httpx.Client, screenshots: Path) -> None:
    """A spectator reads the winner's side and the result code's words, then the details."""
    tokens = players(api)
    line = start_match(api, "tictactoe", tokens)
    page.goto(f"/matches/{line}")
    expect(page.locator("#connection")).to_have_text("Live.", timeout=LIVE_WAIT_MS)
    for ply, (move, _) in enumerate(TIC_TAC_TOE, start=1):
        play(api, line, move, tokens["ann" if ply % 2 == 1 else "bob"])
    # Live, then as the server renders it.
    outcome = page.locator("#result-outcome")
    expect(outcome).to_have_text("X won by three in a row", timeout=LIVE_WAIT_MS)
    expect(page.locator("#status")).to_contain_text("ann beat bob")
    page.reload()
    expect(outcome).to_have_text("X won by three in a row")
    expect(page.locator("#status")).to_contain_text("(line)")
    page.screenshot(path=str(screenshots / "match-ended-spectator-desktop.png"), full_page=True)

    resigned = start_match(api, "checkers", tokens)
    play(api, resigned, "11-15", tokens["ann"])
    assert api.post(f"/matches/{resigned}/resign", headers=tokens["ann"]).status_code == 200
    page.goto(f"/matches/{resigned}")
    expect(outcome).to_have_text("White won by resignation")
    expect(page.locator("#status")).to_contain_text("bob beat ann: Black resigned")

    drawn = start_match(api, "connect4", tokens)
    assert api.post(f"/matches/{drawn}/offer-draw", headers=tokens["ann"]).status_code == 200
    page.goto(f"/matches/{drawn}")
    expect(page.locator("#connection")).to_have_text("Live.", timeout=LIVE_WAIT_MS)
    assert api.post(f"/matches/{drawn}/accept-draw", headers=tokens["bob"]).status_code == 200
    expect(outcome).to_have_text("Drawn by agreement", timeout=LIVE_WAIT_MS)


LONG_SPEC = "mcts:simulations=500,seed=3"
"""A house bot's spec as long as the pages meet: one "word" to a browser without help."""

LINE_BREAKS = """
(element) => {
  // Where the element's text wraps: the characters on either side of each line break.
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  const chars = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.data.length; i += 1) {
      const range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const rect = range.getClientRects()[0];
      if (rect) chars.push({ char: node.data[i], top: rect.top });
    }
  }
  const breaks = [];
  for (let i = 1; i < chars.length; i += 1) {
    if (chars[i].top > chars[i - 1].top + 2) breaks.push(chars[i - 1].char + chars[i].char);
  }
  return breaks;
}
"""


def test_a_long_bot_spec_wraps_at_its_punctuation(page: Page, api: httpx.Client) -> None:
    tokens = players(api)
    body = {"game": "checkers", "seats": [{"bot": LONG_SPEC}, "ann"]}
    created = api.post("/matches", json=body, headers=tokens["ann"])
    assert created.status_code == 201, created.text
    page.set_viewport_size(PHONE)
    page.goto(f"/matches/{created.json()['match_id']}")
    expect(page.locator("#title-0")).to_contain_text(LONG_SPEC)
    # The spec wraps after its ':' or ',', or at a space: never inside "simulations".
    for where in ("#match h1", "#clock-0 .name"):
        breaks = page.locator(where).evaluate(LINE_BREAKS)
        bad = [pair for pair in breaks if pair[0] not in ":, " and pair[1] != " "]
        assert bad == [], f"{where} breaks inside a word: {breaks}"
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]


@pytest.mark.parametrize(("size", "label"), [(DESKTOP, "desktop"), (PHONE, "phone")])
def test_the_board_is_on_the_first_screen(
    page: Page, api: httpx.Client, screenshots: Path, size: dict[str, int], label: str
) -> None:
    """Header, title and clocks leave room for the whole board before any scrolling."""
    tokens = players(api)
    body = {
        "game": "checkers",
        "seats": ["ann", {"bot": LONG_SPEC}],
        "time_control": {"base_ms": 300_000, "increment_ms": 3_000},
    }
    created = api.post("/matches", json=body, headers=tokens["ann"])
    assert created.status_code == 201, created.text
    page.set_viewport_size(size)
    page.goto(f"/matches/{created.json()['match_id']}")
    board = page.locator("#board svg").bounding_box()
    assert board is not None
    bottom = board["y"] + board["height"]
    assert bottom <= size["height"], f"the board ends at {bottom:.0f} px, below the screen"
    assert board["width"] >= min(size["width"] - 40, 400), "the board is not shrunk to fit"
    page.screenshot(path=str(screenshots / f"match-first-screen-{label}.png"))
