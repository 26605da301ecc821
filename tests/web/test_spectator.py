"""A spectator in Chromium watches two `arena bot` processes play a timed match to its end."""

from __future__ import annotations

import itertools
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from protocol.messages import MatchResult, SeatInfo
from server.web.results import outcome_text
from tests.server.conftest import RunningServer
from tests.web.conftest import DESKTOP, PHONE, settle

pytestmark = pytest.mark.web

BASE_MS = 60_000
"""Each side's clock (no increment: a clock only goes down)."""
BOT = "id:time=0.15"
"""Iterative deepening for 0.15 s a move: long enough for the page's clocks to count between
moves, short enough for a Connect Four game (at most 42 plies) to end in seconds."""
END_WAIT_MS = 120_000
"""Long enough for the whole game on a busy machine."""

WATCH = """
() => {
  // Each move item as it enters the list, and each clock's text as it changes, while the
  // match is being played (the page was opened before its first move).
  window.__added = [];
  window.__clocks = [[], []];
  new MutationObserver((records) => {
    for (const record of records) {
      for (const node of record.addedNodes) {
        if (node.nodeType === Node.ELEMENT_NODE) window.__added.push(Number(node.dataset.ply));
      }
    }
  }).observe(document.getElementById("moves"), { childList: true });
  for (const seat of [0, 1]) {
    const clock = document.getElementById(`clock-time-${seat}`);
    new MutationObserver(() => {
      const running = document.querySelectorAll(".clock.running").length;
      window.__clocks[seat].push([clock.textContent, running]);
    }).observe(clock, { childList: true, characterData: true, subtree: true });
  }
}
"""


def tenths(text: str) -> int:
    """Return a clock's text (`M:SS.t`) in tenths of a second."""
    minutes, seconds = text.split(":")
    return int(minutes) * 600 + round(float(seconds) * 10)


def clock_text(ms: int) -> str:
    """Return `ms` as the page shows a clock (as the template's and match.js's clockText)."""
    shown = ms // 100
    return f"{shown // 600}:{shown // 10 % 60:02d}.{shown % 10}"


@pytest.fixture
def arena_exe() -> str:
    exe = shutil.which("arena", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the arena console script is not installed in this environment")
    return exe


@pytest.fixture
def bots(arena_exe: str, web_server: RunningServer) -> Iterator[list[subprocess.Popen[str]]]:
    """The bot processes a test starts; killed at its end if still running."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait(10)


def start_bot(
    arena_exe: str, server: RunningServer, token: str, spec: str
) -> subprocess.Popen[str]:
    """Start `arena bot` for one match, as a bot author would on their own machine."""
    command = [arena_exe, "bot", "--server", server.url, "--token", token, "--bot", spec]
    return subprocess.Popen(
        [*command, "--matches", "1"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def test_a_spectator_sees_two_bot_processes_play_every_move_in_order_with_clocks(
    page: Page,
    api: httpx.Client,
    web_server: RunningServer,
    arena_exe: str,
    bots: list[subprocess.Popen[str]],
    screenshots: Path,
) -> None:
    tokens = {}
    for name in ("north", "south"):
        registered = api.post("/players", json={"name": name})
        assert registered.status_code == 201, registered.text
        tokens[name] = registered.json()["token"]
    # north challenges south to a timed Connect Four match; south's bot will accept it.
    created = api.post(
        "/matches",
        json={
            "game": "connect4",
            "seats": ["north", "south"],
            "time_control": {"base_ms": BASE_MS},
        },
        headers={"Authorization": f"Bearer {tokens['north']}"},
    )
    assert created.status_code == 201, created.text
    match_id = created.json()["match_id"]

    page.goto(f"/matches/{match_id}")
    expect(page.locator("#connection")).to_have_text("Live.", timeout=15_000)
    expect(page.locator("#status")).to_have_text("Waiting for players")
    expect(page.locator("#clock-time-0")).to_have_text("1:00.0")
    expect(page.locator("#clock-time-1")).to_have_text("1:00.0")
    page.evaluate(WATCH)

    bots.extend(start_bot(arena_exe, web_server, tokens[name], BOT) for name in tokens)
    expect(page.locator("#title-1")).to_have_text("south", timeout=END_WAIT_MS)
    # The page follows the game to its end: the result replaces whose turn it is.
    expect(page.locator("#status")).to_contain_text(":", timeout=END_WAIT_MS)
    expect(page.locator("#match")).to_have_attribute("data-status", "finished")
    for process in bots:
        output = process.communicate(timeout=60)[0]
        assert process.returncode == 0, output

    # In protocol 1.2, the record carries each move's search (REST names its version).
    record = api.get(
        f"/matches/{match_id}/record", headers={"Arena-Protocol-Version": "1.2"}
    ).json()
    state = api.get(f"/matches/{match_id}").json()
    moves = [move["move"] for move in record["moves"]]
    assert len(moves) >= 7  # the shortest Connect Four win
    # Every move, in order, by the seat that played it; each arrived live, in order.
    expect(page.locator("#moves li .move")).to_have_text(moves)
    seats = page.locator("#moves li").evaluate_all("(items) => items.map((i) => i.dataset.seat)")
    assert seats == [str(move["seat"]) for move in record["moves"]]
    assert page.evaluate("window.__added") == list(range(1, len(moves) + 1))
    expect(page.locator("#position-text")).to_have_text(state["position"])
    # Each move came with its bot's search (protocol 1.2), shown beside it as it arrived.
    searches = [move.get("search") for move in record["moves"]]
    assert all(searches), record["moves"]
    summaries = page.locator("#moves li .search-summary")
    expect(summaries).to_have_count(len(moves))
    for summary, search in zip(summaries.all(), searches, strict=True):
        expect(summary).to_contain_text(f"depth {search['depth']} ")

    # The result, as the server words it: the winner's side and the code's words, then who
    # beat whom and how.
    versioned = api.get(f"/matches/{match_id}", headers={"Arena-Protocol-Version": "1.2"})
    result = versioned.json()["result"]  # with its code (since protocol 1.1)
    names = ("north", "south")
    seats = tuple(SeatInfo.model_validate(seat) for seat in state["seats"])
    outcome = outcome_text(MatchResult.model_validate(result), (seats[0], seats[1]), False, None)
    expect(page.locator("#result-outcome")).to_have_text(outcome)
    if result["winner"] is None:
        detail = result["description"]
    else:
        detail = f"{names[result['winner']]} beat {names[1 - result['winner']]}: "
        detail += result["description"]
    expect(page.locator("#result-detail")).to_have_text(detail)
    expect(page.locator(".clock.running")).to_have_count(0)

    # Both clocks were shown counting down while the match was played, and stopped where the
    # record says: each took several values, never going up by more than the browser's
    # rounding (it counts from a message's arrival, the server from the move's), one clock
    # running at a time.
    final = record["moves"][-1]["clocks_ms"]
    for seat in (0, 1):
        seen = page.evaluate(f"window.__clocks[{seat}]")
        values = [tenths(text) for text, _ in seen]
        assert len(set(values)) >= 3, seen
        assert all(later <= earlier + 2 for earlier, later in itertools.pairwise(values)), seen
        assert all(running <= 1 for _, running in seen), seen
        assert any(running == 1 for _, running in seen), seen
        expect(page.locator(f"#clock-time-{seat}")).to_have_text(clock_text(final[seat]))
        assert final[seat] < BASE_MS

    # The same page loaded afresh (rendered by the server) says the same.
    live_status = page.locator("#status").text_content()
    page.reload()
    expect(page.locator("#moves li .move")).to_have_text(moves)
    expect(page.locator("#status")).to_have_text(live_status or "")
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.screenshot(path=str(screenshots / f"spectator-{label}.png"), full_page=True)
    settle(page)
