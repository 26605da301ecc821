"""Draw a traced search the way the lectures draw trees: as text or SVG (bots.trace.page: a page).

Pure text in, text out: no I/O, no third-party packages. The drawings show max and min
levels (triangles pointing up and down, rows labelled MAX and MIN), each node's value, its
visit number (#i, the order the search entered it) and the window it was entered with; the
principal variation in bold blue; children a cut-off never searched as grey dashed stubs with
the cut marked; table hits, leaves and finished games as boxes. A tree larger than the
drawing's budget is folded as bots.trace.layout lays it out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape
from typing import Final

from bots.trace.labels import format_value, has_window, headings, node_value
from bots.trace.layout import (
    MARGIN_TOP,
    MARGIN_X,
    Y_STEP,
    Placed,
    layout,
    principal_path,
    subtree_sizes,
    unfolded,
)
from bots.trace.model import Node, Trace

DEFAULT_BUDGET: Final = 60
"""Nodes an SVG or text drawing shows before folding subtrees away."""
SIZE: Final = 17

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
