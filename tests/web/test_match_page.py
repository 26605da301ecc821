"""The match page /matches/{id} in Chromium: live moves and clocks, replay, every game's board."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

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
    expect(page.locator("#status")).to_contain_text("ann won")
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
    expect(page.locator("#status")).to_contain_text("ann won")
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
    expect(page.locator("#status")).to_have_text(f"{MARKUP} to move")
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
