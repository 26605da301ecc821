"""The match page's search statistics in Chromium: each bot move's depth, nodes and score in the
move list, the panel of the move shown, and the score graph, drawn by the server and kept up
to date live."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.web.conftest import DESKTOP, PHONE

pytestmark = pytest.mark.web

LIVE_WAIT_MS = 15_000
V12 = {"Arena-Protocol-Version": "1.2"}
BOTS = ("alphabeta:depth=3", "mcts:simulations=60,seed=3")


def register(api: httpx.Client, name: str) -> dict[str, str]:
    response = api.post("/players", json={"name": name})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


def record(api: httpx.Client, match_id: str) -> Any:
    response = api.get(f"/matches/{match_id}/record", headers=V12)
    assert response.status_code == 200, response.text
    return response.json()


def finished_record(api: httpx.Client, match_id: str) -> Any:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = record(api, match_id)
        if found["status"] == "finished":
            return found
        time.sleep(0.05)
    pytest.fail(f"match {match_id} did not finish")


def score_part(search: dict[str, Any]) -> str:
    """The score as the page writes it, for Arena's bots."""
    if search["outcome"] is not None:
        plies = search["outcome_plies"]
        return search["outcome"] if plies is None else f"{search['outcome']} in {plies}"
    score = search["score"]
    if score == 0:
        return "0"
    return f"{int(score):+d}" if float(score).is_integer() else f"{score:+.2f}"


def points_of(text: str | None) -> list[tuple[float, float]]:
    assert text is not None
    return [(float(x), float(y)) for x, y in (pair.split(",") for pair in text.split())]


def test_a_match_between_two_house_bots_shows_each_search_and_a_score_graph(
    page: Page, api: httpx.Client, screenshots: Path
) -> None:
    body = {
        "game": "connect4",
        "seats": [{"bot": BOTS[0]}, {"bot": BOTS[1]}],
        "max_plies": 12,
    }
    created = api.post("/matches", json=body, headers=register(api, "ann"))
    assert created.status_code == 201, created.text
    match_id = created.json()["match_id"]
    moves = finished_record(api, match_id)["moves"]
    assert len(moves) >= 7

    page.goto(f"/matches/{match_id}")
    items = page.locator("#moves li")
    expect(items).to_have_count(len(moves))
    for index, move in enumerate(moves):
        search = move["search"]
        expected = f"depth {search['depth']} · {search['nodes']:,} nodes · {score_part(search)}"
        expect(items.nth(index).locator(".search-summary")).to_have_text(expected)
        if move["seat"] == 0:
            assert search["depth"] == 3  # the house bot's fixed depth
    # One point per scored move, coloured by its mover; the line joins them.
    points = page.locator("#score-points circle")
    expect(points).to_have_count(len(moves))
    expect(page.locator("#score-points circle.seat-1")).to_have_count(len(moves) // 2)
    expect(page.locator("#score-figure")).to_be_visible()
    expect(page.locator("#score-graph-empty")).to_be_hidden()
    line = points_of(page.locator("#score-line").get_attribute("points"))
    assert len(line) == len(moves)
    xs = [x for x, _ in line]
    assert xs == sorted(xs) and xs[0] == 10 and xs[-1] == 590
    assert all(10 <= y <= 230 for _, y in line)

    # The panel shows the move shown: the last, then as the replay steps.
    last = moves[-1]
    detail = page.locator("#search-move")
    expect(detail).to_have_text(f"Move {last['ply']}, {last['move']}")
    expect(page.locator(f"#score-points circle[data-ply='{last['ply']}']")).to_have_class(
        re.compile(r"\bcurrent\b")
    )
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.screenshot(path=str(screenshots / f"match-search-{label}.png"), full_page=True)
    page.set_viewport_size(DESKTOP)
    page.keyboard.press("Home")
    expect(detail).to_have_text("Start position: no move yet")
    expect(page.locator("#search-rows")).to_be_hidden()
    page.keyboard.press("ArrowRight")
    first = moves[0]
    expect(detail).to_have_text(f"Move 1, {first['move']}")
    rows = page.locator("#search-rows")
    expect(rows.locator("dt")).to_contain_text(["Depth", "Nodes", "Score", "Principal variation"])
    expect(rows.locator("dd").first).to_have_text("3")
    expect(rows.locator("dd.pv")).to_have_text(" ".join(first["search"]["pv"]))
    expect(page.locator("#score-points circle.current")).to_have_attribute("data-ply", "1")


def test_the_graph_and_the_statistics_follow_a_live_game(
    page: Page, api: httpx.Client, screenshots: Path
) -> None:
    ann = register(api, "ann")
    body = {
        "game": "connect4",
        "seats": ["ann", {"bot": BOTS[0]}],
        "time_control": {"base_ms": 600_000},
    }
    created = api.post("/matches", json=body, headers=ann)
    assert created.status_code == 201, created.text
    match_id = created.json()["match_id"]
    page.goto(f"/matches/{match_id}")
    expect(page.locator("#connection")).to_have_text("Live.", timeout=LIVE_WAIT_MS)
    expect(page.locator("#score-graph-empty")).to_be_visible()
    expect(page.locator("#score-figure")).to_be_hidden()

    # ann reports her own search with two of her moves; the house bot always reports its own.
    ann_searches = [
        {"depth": 12, "nodes": 1_234_567, "score": 0.25, "pv": ["4", "4"], "seldepth": 20},
        None,
        {"depth": 5, "nodes": 999, "score": 9_999_990, "outcome": "win", "outcome_plies": 9},
    ]
    items = page.locator("#moves li")
    for turn, (column, search) in enumerate(zip(("4", "3", "5"), ann_searches, strict=True)):
        sent: dict[str, Any] = {"move": column, "expected_seq": 1 + 2 * turn}
        if search is not None:
            sent["search"] = search
        played = api.post(f"/matches/{match_id}/moves", json=sent, headers=ann)
        assert played.status_code == 200, played.text
        expect(items).to_have_count(2 * turn + 2, timeout=LIVE_WAIT_MS)
        reply = items.nth(2 * turn + 1)
        expect(reply.locator(".search-summary")).to_have_text(
            re.compile(r"^depth 3 · [\d,]+ nodes · "), timeout=LIVE_WAIT_MS
        )
        expect(page.locator("#search-move")).to_have_text(
            re.compile(rf"^Move {2 * turn + 2}, \d$"), timeout=LIVE_WAIT_MS
        )
    summaries = items.locator(".search-summary")
    expect(items.nth(0).locator(".search-summary")).to_have_text(
        "depth 12 · 1,234,567 nodes · +0.25"
    )
    expect(items.nth(2).locator(".search-summary")).to_have_count(0)
    expect(items.nth(4).locator(".search-summary")).to_have_text("depth 5 · 999 nodes · win in 9")
    expect(page.locator("#score-points circle")).to_have_count(5)
    # A proven win is drawn at the edge: ann (seat 0) wins, so the top of the graph.
    expect(page.locator("#score-points circle[data-ply='5']")).to_have_attribute("cy", "10")
    expect(page.locator("#score-points circle.proven")).to_have_count(1)
    page.screenshot(path=str(screenshots / "match-search-live-desktop.png"), full_page=True)

    # Stepping back shows that move's statistics while the game goes on.
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#search-move")).to_have_text("Move 1, 4")
    expect(page.locator("#search-rows dd").first).to_have_text("12 (selective 20)")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#search-move")).to_have_text("Move 3, 3: no statistics reported")

    # The page as the server renders it now draws the same statistics and graph.
    live_line = points_of(page.locator("#score-line").get_attribute("points"))
    live_texts = summaries.all_text_contents()
    page.reload()
    expect(page.locator("#moves li")).to_have_count(6)
    assert summaries.all_text_contents() == live_texts
    html = api.get(f"/matches/{match_id}", headers={"Accept": "text/html"}).text
    found = re.search(r'<polyline id="score-line" class="score-line" points="([^"]*)"', html)
    assert found is not None
    served = points_of(found.group(1))
    assert len(served) == len(live_line) == 5
    for (x1, y1), (x2, y2) in zip(served, live_line, strict=True):
        assert abs(x1 - x2) <= 0.11 and abs(y1 - y2) <= 0.11
