"""Draw a traced search the way the lectures draw trees: as text or SVG (bots.trace.page: a page).

Pure text in, text out: no I/O, no third-party packages. The drawings show max and min
levels (triangles pointing up and down, rows labelled MAX and MIN), each node's value, its
visit number (#i, the order the search entered it) and the window it was entered with; the
principal variation in bold blue; children a cut-off never searched as grey dashed stubs with
the cut marked; table hits, leaves and finished games as boxes.

A tree larger than the drawing's budget of nodes is folded: the principal variation and, in
visit order, as many nodes near the root as fit are shown; every other subtree hangs folded
under its node, with the count of nodes it holds ("+123").
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Final

from bots.scoring import ENGINE
from bots.trace.tree import Node, Trace

DEFAULT_BUDGET: Final = 60
"""Nodes an SVG or text drawing shows before folding subtrees away."""
MAX_BUDGET: Final = 2_000
"""The most nodes a drawing may show: beyond that a picture is no longer readable."""
MAX_STUBS: Final = 3
"""Pruned moves drawn one by one under a cut-off node; more share one stub ("+k")."""

X_STEP: Final = 58
Y_STEP: Final = 96
MARGIN_X: Final = 70
MARGIN_TOP: Final = 92
SIZE: Final = 17


def format_value(value: float, scoring: str = "engine") -> str:
    """Return a node value as the drawings write it.

    Infinities are "∞" and "-∞"; with the engine's scoring a forced result is "W3" (a win 3
    plies from the root, for the side the value is for) or "L3"; other numbers as short as
    they go ("0.25", "-30").
    """
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    if scoring == "engine" and (ENGINE.is_win(value) or ENGINE.is_loss(value)):
        plies = round(ENGINE.win - abs(value))
        return f"W{plies}" if value > 0 else f"L{plies}"
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"


def node_value(trace: Trace, node: Node) -> str:
    """Return a node's value as drawn: a cut-off node's is a bound, written as the lectures do.

    A node that cut off stopped once its mover was sure of at least its value: "≥5" for the
    maximiser (every node in negamax form), "≤-20" for a minimising node in the root's view.
    """
    text = format_value(node.value, trace.scoring)
    if not node.cutoff:
        return text
    at_least = trace.perspective == "negamax" or node.side == "max"
    return ("≥" if at_least else "≤") + text


def has_window(trace: Trace) -> bool:
    """True when the search passes a window (minimax records none)."""
    return trace.search not in ("minimax", "minimax_prune")


def subtree_sizes(nodes: Sequence[Node]) -> list[int]:
    """Return the number of nodes in each node's subtree (itself included)."""
    sizes = [1] * len(nodes)
    # Children are visited after their parent, so a reverse pass sees them first.
    for node in reversed(nodes):
        if node.parent is not None:
            sizes[node.parent] += sizes[node.i]
    return sizes


def principal_path(trace: Trace) -> list[int]:
    """Return the nodes of the principal variation, from the root down, as indices."""
    nodes = trace.nodes
    path = [0]
    for move in trace.pv:
        current = nodes[path[-1]]
        child = next((c for c in current.children if nodes[c].move == move), None)
        if child is None:
            break
        path.append(child)
    return path


def unfolded(trace: Trace, budget: int) -> set[int]:
    """Return the nodes whose children a drawing of at most about `budget` nodes shows.

    Every node of the principal variation is unfolded; then nodes in breadth-first (visit)
    order while their children still fit in the budget.
    """
    if not 1 <= budget <= MAX_BUDGET:
        raise ValueError(f"a drawing shows 1 to {MAX_BUDGET:,} nodes, not {budget}")
    nodes = trace.nodes
    opened: set[int] = set()
    shown = 1
    for index in principal_path(trace):
        if nodes[index].children:
            opened.add(index)
            shown += len(nodes[index].children)
    queue = deque([0])
    while queue:
        index = queue.popleft()
        children = nodes[index].children
        if not children:
            continue
        if index not in opened:
            if shown + len(children) > budget:
                continue
            opened.add(index)
            shown += len(children)
        queue.extend(children)
    return opened


# -- layout -----------------------------------------------------------------------------------


@dataclass(slots=True)
class Placed:
    """A drawn item: a node (`node` set) or a stub for moves a cut-off never searched."""

    x: float
    y: float
    parent: int | None
    node: Node | None = None
    stub: str = ""
    folded: int = 0


def x_step(trace: Trace) -> float:
    """Return the width of one leaf's column: wide enough for the longest move text."""
    longest = max((len(node.move or "") for node in trace.nodes), default=0)
    return max(X_STEP, 8.0 * longest + 22)


def layout(trace: Trace, opened: set[int]) -> list[Placed]:
    """Place the shown nodes and stubs: leaves left to right, parents over their children."""
    nodes = trace.nodes
    sizes = subtree_sizes(nodes)
    step = x_step(trace)
    placed: list[Placed] = []
    next_x = [0.0]

    def place(index: int, parent: int | None) -> float:
        node = nodes[index]
        item = Placed(0.0, MARGIN_TOP + node.ply * Y_STEP, parent, node=node)
        placed.append(item)
        me = len(placed) - 1
        xs: list[float] = []
        if index in opened:
            xs = [place(child, me) for child in node.children]
        elif node.children:
            item.folded = sizes[index] - 1
        if node.pruned and (index in opened or not node.children):
            moves = node.pruned
            labels = moves if len(moves) <= MAX_STUBS else [*moves[: MAX_STUBS - 1], "…"]
            for label in labels:
                more = len(moves) - (MAX_STUBS - 1) if label == "…" else 0
                text = f"+{more}" if more else label
                stub = Placed(MARGIN_X + next_x[0] * step, item.y + Y_STEP * 0.72, me, stub=text)
                placed.append(stub)
                xs.append(stub.x)
                next_x[0] += 0.8
        if xs:
            item.x = (xs[0] + xs[-1]) / 2
        else:
            item.x = MARGIN_X + next_x[0] * step
            next_x[0] += 1
        return item.x

    place(0, None)
    return placed


# -- SVG ----------------------------------------------------------------------------------------

STYLE: Final = """
.edge{stroke:#555;stroke-width:1.2;fill:none}
.edge.pv{stroke:#1f5fbf;stroke-width:3}
.edge.pruned{stroke:#aaa;stroke-dasharray:4 3}
.cut{stroke:#c0392b;stroke-width:2.2}
.node{fill:#fff;stroke:#222;stroke-width:1.4}
.node.pv{stroke:#1f5fbf;stroke-width:2.6}
.node.table{fill:#fff4d6}
.node.terminal{fill:#e8f3e8}
.node.folded{fill:#eef2f8}
.stub{fill:#f2f2f2;stroke:#bbb;stroke-dasharray:3 2}
.value{font:bold 12px sans-serif;text-anchor:middle;dominant-baseline:central}
.order{font:10px sans-serif;fill:#888;text-anchor:end}
.window{font:10px sans-serif;fill:#555;text-anchor:middle}
.window,.order,.fold{paint-order:stroke;stroke:#fff;stroke-width:3;stroke-linejoin:round}
.move{font:11px monospace;fill:#333;text-anchor:middle;
paint-order:stroke;stroke:#fff;stroke-width:3}
.move.pruned{fill:#999}
.fold{font:bold 10px sans-serif;fill:#1f5fbf;text-anchor:middle}
.level{font:bold 12px sans-serif;fill:#777}
.title{font:bold 14px sans-serif}
.caption{font:12px sans-serif;fill:#444}
"""


def _shape(node: Node, x: float, y: float, classes: str) -> str:
    s = SIZE
    if node.kind in ("leaf", "terminal", "table"):
        return (
            f'<rect class="{classes}" x="{x - s + 3:.1f}" y="{y - s + 5:.1f}" '
            f'width="{2 * s - 6}" height="{2 * s - 10}" rx="2"/>'
        )
    if node.side == "max":
        points = [(x, y - s), (x + s * 1.15, y + s * 0.75), (x - s * 1.15, y + s * 0.75)]
    else:
        points = [(x, y + s), (x + s * 1.15, y - s * 0.75), (x - s * 1.15, y - s * 0.75)]
    text = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
    return f'<polygon class="{classes}" points="{text}"/>'


def headings(trace: Trace) -> tuple[str, str]:
    """Return the title and caption line a drawing of `trace` is headed with."""
    what = f"{trace.search} on {trace.game} {trace.position or '(start)'}"
    depth = "to the end" if trace.depth is None else f"depth {trace.depth}"
    if trace.search == "engine":
        depth += f", table {'on' if trace.options['tt'] else 'off'}"
        depth += f", ordering {'on' if trace.options['ordering'] else 'off'}"
    view = (
        "values for the root player (MAX)"
        if trace.perspective == "root"
        else "values for the side to move at each node (negamax)"
    )
    stats = trace.stats
    line = (
        f"{depth}; value {format_value(trace.value, trace.scoring)}, best move "
        f"{trace.best_move}; {stats.nodes:,} nodes, {stats.cutoffs:,} cut-offs"
        + (f", {stats.tt_hits:,} table hits" if trace.search == "engine" else "")
        + f"; {view}"
    )
    return what, line


def render_svg(trace: Trace, *, budget: int = DEFAULT_BUDGET) -> str:
    """Return the tree of `trace` as a standalone SVG document (see the module docstring)."""
    opened = unfolded(trace, budget)
    placed = layout(trace, opened)
    pv = set(principal_path(trace))
    window = has_window(trace)
    width = max(item.x for item in placed) + MARGIN_X
    depth = max(item.y for item in placed) + Y_STEP * 0.6
    title, caption = headings(trace)
    width = max(width, 8.0 * len(caption) + 20)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{depth:.0f}" '
        f'viewBox="0 0 {width:.0f} {depth:.0f}" font-family="sans-serif">',
        f"<style>{STYLE}</style>",
        '<rect width="100%" height="100%" fill="#fff"/>',
        f'<text class="title" x="10" y="20">{escape(title)}</text>',
        f'<text class="caption" x="10" y="38">{escape(caption)}</text>',
    ]
    levels: dict[int, str] = {}
    for item in placed:
        if item.node is not None:
            levels.setdefault(item.node.ply, item.node.side)
    for ply, side in sorted(levels.items()):
        y = MARGIN_TOP + ply * Y_STEP
        parts.append(f'<text class="level" x="6" y="{y + 4:.0f}">{side.upper()}</text>')
    parts.extend(_edges(placed, pv))
    for item in placed:
        if item.node is None:
            parts.append(
                f'<g class="stub-node"><title>never searched: {escape(item.stub)}</title>'
                f'<rect class="stub" x="{item.x - 14:.1f}" y="{item.y - 9:.1f}" '
                f'width="28" height="18" rx="3"/><text class="move pruned" x="{item.x:.1f}" '
                f'y="{item.y + 4:.1f}">{escape(item.stub)}</text></g>'
            )
            continue
        parts.append(_node_svg(trace, item, item.node.i in pv, window))
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _edges(placed: Sequence[Placed], pv: set[int]) -> list[str]:
    out = []
    for item in placed:
        if item.parent is None:
            continue
        up = placed[item.parent]
        x1, y1, x2, y2 = up.x, up.y + SIZE * 0.8, item.x, item.y - SIZE * 0.8
        # The move's label sits near the child, where sibling edges have spread apart.
        mx, my = x1 + (x2 - x1) * 0.7, y1 + (y2 - y1) * 0.7
        if item.node is None:
            out.append(f'<path class="edge pruned" d="M{x1:.1f},{y1:.1f} L{x2:.1f},{y2 + 8:.1f}"/>')
            # The cut: a red bar across the unsearched edge.
            dx, dy = x2 - x1, y2 - y1
            norm = math.hypot(dx, dy) or 1.0
            nx, ny = -dy / norm * 7, dx / norm * 7
            cx, cy = x1 + dx * 0.35, y1 + dy * 0.35
            out.append(
                f'<line class="cut" x1="{cx - nx:.1f}" y1="{cy - ny:.1f}" '
                f'x2="{cx + nx:.1f}" y2="{cy + ny:.1f}"/>'
            )
            continue
        node = item.node
        classes = "edge pv" if node.i in pv and up.node is not None and up.node.i in pv else "edge"
        out.append(f'<path class="{classes}" d="M{x1:.1f},{y1:.1f} L{x2:.1f},{y2:.1f}"/>')
        out.append(
            f'<text class="move" x="{mx:.1f}" y="{my + 4:.1f}">{escape(node.move or "")}</text>'
        )
    return out


def _node_svg(trace: Trace, item: Placed, on_pv: bool, window: bool) -> str:
    node = item.node
    assert node is not None
    classes = " ".join(
        ["node", node.kind] + (["pv"] if on_pv else []) + (["folded"] if item.folded else [])
    )
    x, y = item.x, item.y
    dy = 3 if node.side == "max" and node.kind == "inner" else -3 if node.kind == "inner" else 0
    tip = _tooltip(trace, node)
    parts = [
        f'<g class="tree-node" data-i="{node.i}"><title>{escape(tip)}</title>',
        _shape(node, x, y, classes),
        f'<text class="value" x="{x:.1f}" y="{y + dy:.1f}">'
        f"{escape(node_value(trace, node))}</text>",
        f'<text class="order" x="{x - SIZE - 2:.1f}" y="{y - SIZE + 4:.1f}">#{node.i}</text>',
    ]
    below = y + SIZE + 11
    if window and node.kind != "terminal":
        text = f"⟨{format_value(node.alpha)},{format_value(node.beta)}⟩"
        parts.append(f'<text class="window" x="{x:.1f}" y="{below:.1f}">{escape(text)}</text>')
        below += 12
    if node.kind == "table":
        parts.append(f'<text class="window" x="{x:.1f}" y="{below:.1f}">table</text>')
    if item.folded:
        parts.append(f'<text class="fold" x="{x:.1f}" y="{below:.1f}">+{item.folded:,}</text>')
    parts.append("</g>")
    return "".join(parts)


def _tooltip(trace: Trace, node: Node) -> str:
    lines = [
        f"#{node.i} {node.side.upper()} {node.kind}, ply {node.ply}",
        f"move {node.move}" if node.move is not None else "root",
        f"position {node.position}",
        f"value {node_value(trace, node)}",
    ]
    if has_window(trace):
        lines.append(
            f"window on entry <{format_value(node.alpha)}, {format_value(node.beta)}>, "
            f"on return [{format_value(node.alpha_out)}, {format_value(node.beta_out)}]"
        )
    if node.cutoff:
        lines.append("cut-off; never searched: " + (" ".join(node.pruned) or "-"))
    if node.tt_hit:
        lines.append("table hit")
    return "\n".join(lines)


# -- text -------------------------------------------------------------------------------------


def render_text(trace: Trace, *, budget: int = DEFAULT_BUDGET) -> str:
    """Return the tree as indented lines, one node a line, folded like the drawings."""
    opened = unfolded(trace, budget)
    sizes = subtree_sizes(trace.nodes)
    pv = set(principal_path(trace))
    window = has_window(trace)
    title, caption = headings(trace)
    lines = [title, caption]
    stack = [0]
    while stack:
        index = stack.pop()
        node = trace.nodes[index]
        head = "  " * node.ply + ("* " if index in pv else "- ")
        words = [
            f"#{node.i}",
            node.move if node.move is not None else "root",
            node.side.upper(),
        ]
        if window:
            words.append(f"<{format_value(node.alpha)},{format_value(node.beta)}>")
        words.append(f"= {node_value(trace, node)}")
        if node.kind != "inner":
            words.append(f"({node.kind})")
        if node.tt_hit and node.kind != "table":
            words.append("(table hit)")
        if node.cutoff:
            words.append(
                "cut" + (f", never searched: {' '.join(node.pruned)}" if node.pruned else "")
            )
        if node.children and index not in opened:
            words.append(f"[+{sizes[index] - 1:,} nodes folded]")
        lines.append(head + " ".join(words))
        if index in opened:
            stack.extend(reversed(node.children))
    counts = ", ".join(f"{count:,}" for count in trace.counts_by_depth)
    lines.append(f"nodes by depth: {counts}")
    return "\n".join(lines) + "\n"
