"""Drawings of traced searches: text, SVG and the self-contained HTML page (in Chromium)."""

from __future__ import annotations

import itertools
import json
import os
import re
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from bots.trace.draw import DEFAULT_BUDGET, render_svg, render_text
from bots.trace.labels import format_value
from bots.trace.layout import MAX_BUDGET, principal_path, subtree_sizes, unfolded
from bots.trace.model import Trace
from bots.trace.page import compact_nodes, render_html
from bots.trace.tree import trace
from games import get_game
from tests.bots.trace.test_trace import EXAMPLE_2A, LECTURE_22, trace_tree

SVG = "{http://www.w3.org/2000/svg}"


def test_values_are_written_as_the_lectures_write_them() -> None:
    assert [format_value(v) for v in (float("inf"), float("-inf"), 3.0, -30, 0.25)] == [
        "∞",
        "-∞",
        "3",
        "-30",
        "0.25",
    ]
    assert format_value(999_997) == "W3" and format_value(-999_996) == "L4"
    assert format_value(1, "lecture") == "1"  # the lecture's win is 1, not a distance


def test_subtree_sizes_and_the_principal_path() -> None:
    traced = trace(get_game("connect4").initial_state(), "alphabeta", 3)
    sizes = subtree_sizes(traced.nodes)
    assert sizes[0] == len(traced.nodes)
    for node in traced.nodes:
        assert sizes[node.i] == 1 + sum(sizes[c] for c in node.children)
    path = principal_path(traced)
    assert [traced.nodes[i].move for i in path[1:]] == traced.pv
    assert all(traced.nodes[b].parent == a for a, b in itertools.pairwise(path))


def test_a_small_tree_is_drawn_whole() -> None:
    traced = trace_tree(EXAMPLE_2A, "alphabeta_soft", 3)
    assert unfolded(traced, DEFAULT_BUDGET) == {n.i for n in traced.nodes if n.children}


def test_a_large_tree_folds_to_the_principal_variation_and_counts() -> None:
    traced = trace(get_game("tictactoe").initial_state(), "alphabeta_soft", None, scoring="lecture")
    opened = unfolded(traced, 30)
    path = principal_path(traced)
    assert set(path[:-1]) <= opened  # the whole principal variation is unfolded
    shown = 1 + sum(len(traced.nodes[i].children) for i in opened)
    pv_children = sum(len(traced.nodes[i].children) for i in path)
    assert shown <= max(30, pv_children + 1)
    svg = render_svg(traced, budget=30)
    root = ET.fromstring(svg)
    groups = root.iter(f"{SVG}g")
    drawn = [g for g in groups if g.get("class") == "tree-node"]
    assert len(drawn) == shown
    # Folded counts: every shown node whose children are hidden says how many nodes it holds.
    sizes = subtree_sizes(traced.nodes)
    folded = {
        int(g.get("data-i", "-1")): t.text
        for g in drawn
        for t in g.iter(f"{SVG}text")
        if t.get("class") == "fold"
    }
    assert folded and all(text == f"+{sizes[i] - 1:,}" for i, text in folded.items())
    assert all(i not in opened and traced.nodes[i].children for i in folded)
    with pytest.raises(ValueError, match="1 to 2,000"):
        unfolded(traced, MAX_BUDGET + 1)


def svg_texts(svg: str, css: str) -> list[str]:
    root = ET.fromstring(svg)
    return [t.text or "" for t in root.iter(f"{SVG}text") if t.get("class") == css]


def test_the_svg_of_slides_example_2a_shows_values_order_windows_and_cuts() -> None:
    traced = trace_tree(EXAMPLE_2A, "alphabeta_soft", 3)
    svg = render_svg(traced)
    assert svg_texts(svg, "value") == ["3", "3", "3", "3", "2", "≥9", "9", "≤1", "1", "1", "0"]
    assert svg_texts(svg, "order") == [f"#{i}" for i in range(11)]
    assert svg_texts(svg, "level") == ["MAX", "MIN", "MAX", "MIN"]
    windows = svg_texts(svg, "window")
    assert windows[0] == "⟨-∞,∞⟩" and windows[5] == "⟨-∞,3⟩" and windows[7] == "⟨3,∞⟩"
    # The two cuts: a4 under n2, n4 under the second MIN node, each greyed with a red bar.
    assert svg_texts(svg, "move pruned") == ["1", "1"]
    assert svg.count('class="cut"') == 2 and svg.count('class="edge pruned"') == 2
    # The principal variation (0, 0, 0) is drawn in the PV style: three edges, four nodes.
    assert svg.count('class="edge pv"') == 3
    assert len(re.findall(r'class="node [a-z]+ pv', svg)) == 4


def test_the_text_tree_of_lecture_22() -> None:
    # The lecture writes the pruned nodes' values as bounds: "≥ 5" and "≤ -20".
    text = render_text(trace_tree(LECTURE_22, "alphabeta_soft", 3))
    assert text.splitlines()[2:] == [
        "* #0 root MAX <-∞,∞> = -5",
        "  * #1 0 MIN <-∞,∞> = -5",
        "    * #2 0 MAX <-∞,∞> = -5",
        "      - #3 0 MIN <-∞,∞> = -30 (leaf)",
        "      * #4 1 MIN <-30,∞> = -5 (leaf)",
        "    - #5 1 MAX <-∞,-5> = ≥5 cut, never searched: 1",
        "      - #6 0 MIN <-∞,-5> = 5 (leaf)",
        "  - #7 1 MIN <-5,∞> = ≤-20 cut, never searched: 1",
        "    - #8 0 MAX <-5,∞> = -20",
        "      - #9 0 MIN <-5,∞> = -20 (leaf)",
        "      - #10 1 MIN <-5,∞> = -30 (leaf)",
        "nodes by depth: 1, 2, 3, 5",
    ]


def test_the_text_tree_folds_and_marks_table_hits() -> None:
    traced = trace(get_game("checkers").initial_state(), "engine", 4)
    text = render_text(traced, budget=20)
    assert "[+127 nodes folded]" in text
    assert text.count("\n") < 30
    # Captures are searched beyond the depth: the counts go on past ply 4.
    assert text.splitlines()[-1] == "nodes by depth: 1, 7, 28, 110, 194, 138, 86, 48, 25, 3"
    whole = render_text(traced, budget=MAX_BUDGET)
    assert whole.count("(table)") == sum(n.kind == "table" for n in traced.nodes) > 0
    assert whole.count("\n") == len(traced.nodes) + 3


def html_data(page: str) -> dict[str, Any]:
    match = re.search(r'<script type="application/json" id="trace-data">(.*?)</script>', page)
    assert match is not None
    data: dict[str, Any] = json.loads(match.group(1))
    return data


def test_the_html_page_is_self_contained_and_carries_every_node() -> None:
    state = get_game("tictactoe").parse_position("X...O....")
    traced = trace(state, "engine", 4)
    page = render_html(traced)
    # Nothing is fetched: no src or href, no URL but the SVG namespace.
    assert not re.search(r"\b(src|href)=", page)
    assert set(re.findall(r"https?://[^\s\"']+", page)) == {"http://www.w3.org/2000/svg"}
    data = html_data(page)
    assert data["nodes"] == json.loads(json.dumps(compact_nodes(traced)))
    assert len(data["nodes"]) == traced.stats.nodes
    assert data["pv"] == principal_path(traced)
    assert set(data["opened"]) == unfolded(traced, 40)


def test_the_html_data_cannot_end_its_script_early() -> None:
    traced = trace_tree(EXAMPLE_2A, "alphabeta_soft", 3)
    traced.nodes[3].position = "</script><script>alert(1)</script>"
    page = render_html(traced)
    assert page.count("</script>") == 2
    assert html_data(page)["nodes"][3][11] == "</script><script>alert(1)</script>"


# -- the page in a browser ----------------------------------------------------------------------


def chromium() -> str:
    from tests.web.conftest import find_chromium

    path = find_chromium()
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("no Chromium to run the browser test (set ARENA_CHROMIUM)")
        pytest.skip("no Chromium found (set ARENA_CHROMIUM)")
    return path


def count_drawn(page: Any) -> int:
    return int(page.locator("#tree g.tree-node").count())


@pytest.fixture(scope="module")
def browser() -> Any:
    from playwright.sync_api import sync_playwright

    path = chromium()
    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=path, args=["--no-sandbox"])
        yield launched
        launched.close()


def open_page(browser: Any, traced: Trace, tmp_path: Any, width: int = 1280) -> Any:
    target = tmp_path / "trace.html"
    target.write_text(render_html(traced), encoding="utf-8")
    page = browser.new_page(viewport={"width": width, "height": 800})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: None if r.url.startswith("file:") else errors.append(r.url))
    page.goto(target.as_uri())
    page.errors = errors
    return page


def test_the_page_unfolds_and_folds_a_subtree_on_click(browser: Any, tmp_path: Any) -> None:
    traced = trace(get_game("checkers").initial_state(), "engine", 4)
    page = open_page(browser, traced, tmp_path)
    opened = unfolded(traced, 40)
    assert count_drawn(page) == 1 + sum(len(traced.nodes[i].children) for i in opened)
    before = count_drawn(page)
    folded = next(i for i, n in enumerate(traced.nodes) if i not in opened and n.children)
    node = page.locator(f'#tree g.tree-node[data-i="{folded}"]')
    count = subtree_sizes(traced.nodes)[folded] - 1
    assert node.locator("text.fold").text_content() == f"+{count}"
    node.click()
    assert count_drawn(page) == before + len(traced.nodes[folded].children)
    info = page.locator("#info").inner_text()
    n = traced.nodes[folded]
    assert f"#{folded}" in info and f"⟨{format_value(n.alpha)}, {format_value(n.beta)}⟩" in info
    page.locator(f'#tree g.tree-node[data-i="{folded}"]').click()
    assert count_drawn(page) == before
    page.locator("#unfold-more").click()
    assert count_drawn(page) > before
    page.locator("#fold-all").click()
    assert count_drawn(page) == before
    assert page.errors == []
    page.close()


def test_the_page_fits_a_phone_without_sideways_scrolling(browser: Any, tmp_path: Any) -> None:
    traced = trace(get_game("checkers").initial_state(), "engine", 3)
    page = open_page(browser, traced, tmp_path, width=390)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390
    assert page.errors == []
    page.close()


@pytest.mark.parametrize("search", ["minimax", "alphabeta", "negamax", "abnodevalue", "engine"])
@pytest.mark.parametrize("game", ["checkers", "connect4", "nim"])
def test_every_search_draws_well_formed_with_every_shown_node(search: str, game: str) -> None:
    from bots.trace.tree import SEARCHES

    assert search in SEARCHES
    rules = get_game(game)
    state = rules.initial_state()
    for _ in range(2):  # two plies in, away from the start
        state = state.apply_unchecked(state.legal_moves()[-1])
    traced = trace(state, search, 3)
    opened = unfolded(traced, DEFAULT_BUDGET)
    shown = 1 + sum(len(traced.nodes[i].children) for i in opened)
    root = ET.fromstring(render_svg(traced))
    drawn = [g for g in root.iter(f"{SVG}g") if g.get("class") == "tree-node"]
    assert sorted(int(g.get("data-i", "-1")) for g in drawn) == sorted(
        {0} | {c for i in opened for c in traced.nodes[i].children}
    )
    assert len(drawn) == shown
    assert render_text(traced).count("\n") == shown + 3
    assert len(html_data(render_html(traced))["nodes"]) == len(traced.nodes)
