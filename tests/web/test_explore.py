"""The explorer page (/explore) in a real Chromium: step through a search node by node.

Alpha-beta on a tic-tac-toe position, traced by the page through `POST /explore/trace`: at
each step the window on entry and the value returned the page shows must be the trace's own
node (bots.trace.tree run here on the same position, formatted as bots.trace.labels writes them);
Back restores the previous node; Run reaches the last node; the children a cut-off never
searched are drawn greyed and barred; keys step too; the page fits a phone's width.
Screenshots of each go to the screenshots folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from bots.evaluation.knowledge import knowledge_for
from bots.trace.labels import format_value, node_value
from bots.trace.model import Trace
from bots.trace.tree import trace
from games.registry import get_game
from tests.web.conftest import DESKTOP, PHONE, Problems, settle
from tests.web.test_every_page import (
    HEADER,
    check_document,
    in_order,
    screenshots_at_both_widths,
    visit,
    walk,
)

pytestmark = pytest.mark.web

POSITION = "X...O...."
"""Tic-tac-toe after X in a corner and O in the centre: X to move, a tree with cut-offs."""
MOVES = ["8"]
"""Played on the page's board: X takes the opposite corner; O to move."""
DEPTH = 2


def expected_trace() -> Trace:
    state = get_game("tictactoe").parse_position(POSITION)
    for move in MOVES:
        state = state.apply(state.parse_move(move))
    return trace(state, "alphabeta", DEPTH)


def window(alpha: float, beta: float) -> str:
    return f"⟨{format_value(alpha)}, {format_value(beta)}⟩"


def set_up(page: Page) -> None:
    """Type the position, play MOVES on the board, choose alpha-beta at DEPTH, trace."""
    page.goto("/explore")
    settle(page)
    page.fill("#explore-position", POSITION)
    page.click("#explore-load")
    expect(page.locator("#explore-turn")).to_contain_text(POSITION)
    for move in MOVES:
        page.locator(f'#explore-board rect.hit[data-cell="{move}"]').click()
    expect(page.locator("#explore-moves")).to_have_text(" ".join(MOVES))
    page.select_option("#explore-search", "alphabeta")
    page.fill("#explore-depth", str(DEPTH))
    page.click("#explore-run")
    expect(page.locator("#trace")).to_be_visible()


def test_stepping_through_alphabeta_shows_each_node_of_the_trace(
    page: Page, screenshots: Path
) -> None:
    traced = expected_trace()
    nodes = traced.nodes
    assert any(node.cutoff for node in nodes), "the position must show a cut-off"
    set_up(page)
    section = page.locator("#trace")
    for index, node in enumerate(nodes):
        expect(section).to_have_attribute("data-step", str(index))
        expect(page.locator("#node-window")).to_have_text(window(node.alpha, node.beta))
        expect(page.locator("#node-value")).to_have_text(node_value(traced, node))
        expect(page.locator("#node-move")).to_have_text(node.move or "(the root)")
        expect(page.locator("#node-visit")).to_contain_text(f"#{index} (node {index + 1} of")
        current = page.locator("#tree .tree-node.current")
        expect(current).to_have_count(1)
        expect(current).to_have_attribute("data-i", str(index))
        if index == 3:
            page.screenshot(path=str(screenshots / "explore-step-desktop.png"), full_page=True)
        if index < len(nodes) - 1:
            page.click("#step-next")
    # At the last node: every node drawn, nothing ahead, the counts by depth complete.
    expect(page.locator("#tree .tree-node.future")).to_have_count(0)
    counts = page.locator("#trace-counts tbody td:nth-child(3)").all_inner_texts()
    assert [int(text) for text in counts] == traced.counts_by_depth
    # Back restores the node before, and the one before that.
    for index in (len(nodes) - 2, len(nodes) - 3):
        page.click("#step-back")
        expect(section).to_have_attribute("data-step", str(index))
        expect(page.locator("#node-window")).to_have_text(
            window(nodes[index].alpha, nodes[index].beta)
        )
        expect(page.locator("#node-value")).to_have_text(node_value(traced, nodes[index]))
        expect(page.locator(f'#tree .tree-node[data-i="{index + 1}"]')).to_have_class(
            "tree-node future"
        )


def test_cut_offs_are_greyed_and_run_reaches_the_end(page: Page, screenshots: Path) -> None:
    traced = expected_trace()
    set_up(page)
    page.select_option("#step-speed", "60")
    page.click("#step-run")
    expect(page.locator("#step-run")).to_have_attribute("aria-pressed", "true")
    last = len(traced.nodes) - 1
    expect(page.locator("#trace")).to_have_attribute("data-step", str(last), timeout=30_000)
    expect(page.locator("#step-run")).to_have_attribute("aria-pressed", "false")
    expect(page.locator("#step-run")).to_have_text("Run")
    cut = [node for node in traced.nodes if node.cutoff]
    for node in cut:
        stubs = page.locator(f'#tree .stub-node[data-of="{node.i}"]')
        expect(stubs).to_have_count(min(len(node.pruned), 3))
        expect(stubs.first).to_be_visible()
        assert stubs.first.locator("rect.stub").count() == 1
        expect(page.locator(f'#tree .tree-node[data-i="{node.i}"] .node')).to_have_class(
            f"node {node.kind} {node.side} cutoff"
        )
    # The principal variation is drawn in blue at the end.
    assert page.locator("#tree .edge.pv").count() == len(traced.pv)
    page.screenshot(path=str(screenshots / "explore-end-desktop.png"), full_page=True)
    # Run from the end starts again at the root; Pause stops it.
    page.click("#step-run")
    page.click("#step-run")
    expect(page.locator("#step-run")).to_have_attribute("aria-pressed", "false")


def test_keys_step_and_the_page_fits_a_phone(page: Page, screenshots: Path) -> None:
    traced = expected_trace()
    set_up(page)
    section = page.locator("#trace")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(section).to_have_attribute("data-step", "2")
    page.keyboard.press("ArrowLeft")
    expect(section).to_have_attribute("data-step", "1")
    page.keyboard.press("End")
    expect(section).to_have_attribute("data-step", str(len(traced.nodes) - 1))
    page.keyboard.press("Home")
    expect(section).to_have_attribute("data-step", "0")
    page.keyboard.press("n")
    expect(page.locator("#node-window")).to_have_text(
        window(traced.nodes[1].alpha, traced.nodes[1].beta)
    )
    page.set_viewport_size(PHONE)
    page.keyboard.press("ArrowRight")
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page is {width} px wide at a phone's width"
    page.screenshot(path=str(screenshots / "explore-phone.png"), full_page=True)
    page.set_viewport_size(DESKTOP)


def test_a_refused_trace_is_shown_beside_the_form(
    page: Page, problems: Problems, screenshots: Path
) -> None:
    problems.expect_refusal("/explore/trace", 422)
    page.goto("/explore")
    settle(page)
    page.select_option("#explore-game", "checkers")
    expect(page.locator("#explore-turn")).to_contain_text("to move")
    page.select_option("#explore-search", "minimax")
    page.fill("#explore-depth", "9")
    page.click("#explore-run")
    error = page.locator("#explore-error")
    expect(error).to_contain_text("TRACE_TOO_LARGE")
    expect(page.locator("#trace")).to_be_hidden()
    page.screenshot(path=str(screenshots / "explore-refused-desktop.png"), full_page=True)


def test_the_page_by_keyboard_alone(page: Page, screenshots: Path) -> None:
    """Tab reaches every control in reading order with a visible focus; a position typed,
    a move played, a search traced and stepped through, with keys only, within the CSP."""
    visit(page, "/explore")
    check_document(page)
    form = [
        {"id": "explore-game"},
        {"id": "explore-position"},
        {"id": "explore-load"},
        {"text": "0"},
        {"text": "8"},
        {"id": "explore-search"},
        {"id": "explore-depth"},
        {"id": "explore-eval"},
        {"id": "explore-scoring"},
        {"id": "explore-alpha"},
        {"id": "explore-beta"},
        {"id": "explore-run"},
    ]
    # The header's link to the page, between the grader's and the API's.
    header = [*HEADER[:-1], {"href": "/explore"}, HEADER[-1]]
    in_order(walk(page), [*header, *form])

    page.locator("#explore-position").focus()
    page.keyboard.type(POSITION)
    page.keyboard.press("Enter")
    expect(page.locator("#explore-turn")).to_contain_text(POSITION)
    page.locator("#explore-legal button", has_text=MOVES[0]).focus()
    page.keyboard.press("Enter")
    expect(page.locator("#explore-moves")).to_have_text(MOVES[0])
    page.locator("#explore-depth").focus()
    page.keyboard.press("Control+a")
    page.keyboard.type(str(DEPTH))
    page.keyboard.press("Enter")  # Enter in a field submits the form: the trace
    section = page.locator("#trace")
    expect(section).to_have_attribute("data-step", "0")
    expect(page.locator("#step-next")).to_be_focused()
    page.keyboard.press("Enter")
    page.keyboard.press("Space")  # on a focused button, Space presses it
    expect(section).to_have_attribute("data-step", "2")
    traced = expected_trace()
    node = traced.nodes[2]
    expect(page.locator("#node-window")).to_have_text(window(node.alpha, node.beta))
    check_document(page)  # the drawn tree holds no inline style either
    page.locator("#explore-run").focus()  # Tab on from the form into the trace's controls
    in_order(
        walk(page),
        [
            {"id": "step-first"},
            {"id": "step-back"},
            {"id": "step-next"},
            {"id": "step-run"},
            {"id": "step-last"},
            {"id": "step-speed"},
            {"id": "tree-fit"},
            {"id": "tree-box"},
        ],
    )
    screenshots_at_both_widths(page, screenshots, "explore")


def test_a_large_tree_shows_the_path_to_the_current_node_and_folds_the_rest(
    page: Page, screenshots: Path
) -> None:
    traced = trace(get_game("tictactoe").initial_state(), "alphabeta", 4)
    nodes = traced.nodes
    assert len(nodes) > 250  # the page's FULL_TREE: beyond it, subtrees fold
    page.goto("/explore")
    settle(page)
    page.fill("#explore-depth", "4")
    page.click("#explore-run")
    section = page.locator("#trace")
    expect(section).to_have_attribute("data-step", "0")
    page.keyboard.press("End")
    last = len(nodes) - 1
    expect(section).to_have_attribute("data-step", str(last))
    expect(page.locator("#node-value")).to_have_text(node_value(traced, nodes[last]))
    # Drawn: the path to the last node and the children of each node on it, nothing more.
    path = []
    index: int | None = last
    while index is not None:
        path.append(index)
        index = nodes[index].parent
    shown = {child for i in path for child in nodes[i].children} | {0}
    drawn = page.locator("#tree .tree-node")
    expect(drawn).to_have_count(len(shown))
    assert {int(str(i)) for i in drawn.evaluate_all("g => g.map(e => e.dataset.i)")} == shown
    folded = [i for i in shown if i not in path and nodes[i].children]
    expect(page.locator("#tree .fold")).to_have_count(len(folded))
    page.screenshot(path=str(screenshots / "explore-large-desktop.png"), full_page=True)


def test_the_engine_with_a_chosen_evaluation_and_its_switches(page: Page) -> None:
    """Checkers: the engine without its table, on the material evaluation, is the trace of
    bots.trace.tree with the same settings (its evaluations offered for checkers only)."""
    state = get_game("checkers").initial_state()
    traced = trace(state, "engine", 2, evaluation="material", tt=False, ordering=True)
    page.goto("/explore")
    settle(page)
    offered = page.locator("#explore-eval option:not([disabled])")
    expect(offered).to_have_count(2)  # the game's own, and tic-tac-toe's lines
    page.select_option("#explore-game", "checkers")
    expect(page.locator("#explore-turn")).to_contain_text("black to move")
    values = offered.evaluate_all("o => o.map(e => e.value)")
    # The game default first (""), then every evaluation Arena has for checkers.
    assert values == ["", *sorted(knowledge_for("checkers").evaluations)]
    assert "material" in values
    page.select_option("#explore-search", "engine")
    expect(page.locator("#explore-alpha")).to_be_disabled()
    page.select_option("#explore-eval", "material")
    page.uncheck("#explore-tt")
    page.fill("#explore-depth", "2")
    page.click("#explore-run")
    expect(page.locator("#trace-summary")).to_contain_text(
        f"{traced.stats.nodes} nodes, {traced.stats.cutoffs} cut-offs, 0 table hits"
    )
    for index in (1, len(traced.nodes) - 1):
        page.keyboard.press("End" if index > 1 else "ArrowRight")
        node = traced.nodes[index]
        expect(page.locator("#trace")).to_have_attribute("data-step", str(index))
        expect(page.locator("#node-value")).to_have_text(node_value(traced, node))
        expect(page.locator("#node-window")).to_have_text(window(node.alpha, node.beta))


def test_trace_uses_the_position_typed_even_unset(page: Page, screenshots: Path) -> None:
    """A position typed and traced at once, without "Set position": the trace is of it (the
    page used to trace the board it still showed, the start)."""
    page.goto("/explore")
    settle(page)
    expect(page.locator("#explore-turn")).to_contain_text("X to move")
    page.fill("#explore-position", POSITION)
    page.select_option("#explore-search", "alphabeta")
    page.fill("#explore-depth", str(DEPTH))
    page.click("#explore-run")
    expect(page.locator("#trace")).to_be_visible()
    expect(page.locator("#trace-summary")).to_contain_text(f"on tictactoe {POSITION}, depth 2")
    # The board shows it too: what is traced is what is shown.
    expect(page.locator("#explore-turn")).to_contain_text(f"Position {POSITION}")
    settle(page)
    page.screenshot(path=str(screenshots / "explore-typed-desktop.png"), full_page=True)


def test_a_refused_position_is_never_traced_from_the_old_board(
    page: Page, problems: Problems, screenshots: Path
) -> None:
    """After "Set position" refused a position, Trace refuses it again, visibly, and traces
    nothing (it used to trace the board left from before, silently)."""
    problems.expect_refusal("/explore/position", 422)
    page.goto("/explore")
    settle(page)
    page.fill("#explore-position", POSITION)
    page.click("#explore-load")
    expect(page.locator("#explore-turn")).to_contain_text(POSITION)
    page.fill("#explore-position", "XXXXXXXXX")
    page.click("#explore-load")
    error = page.locator("#explore-error")
    expect(error).to_contain_text("The position typed cannot be used")
    expect(page.locator("#explore-position")).to_have_attribute("aria-invalid", "true")
    page.click("#explore-run")
    expect(error).to_contain_text("nothing was traced")
    expect(error).to_contain_text("XXXXXXXXX")
    expect(page.locator("#trace")).to_be_hidden()
    page.set_viewport_size(PHONE)
    page.screenshot(path=str(screenshots / "explore-bad-position-phone.png"), full_page=True)
    page.set_viewport_size(DESKTOP)
    page.screenshot(path=str(screenshots / "explore-bad-position-desktop.png"), full_page=True)
