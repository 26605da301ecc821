"""Where a drawing of a traced search puts each node, and which subtrees it folds.

A tree larger than the drawing's budget of nodes is folded: the principal variation and, in
visit order, as many nodes near the root as fit are shown; every other subtree hangs folded
under its node, with the count of nodes it holds ("+123"). The shown nodes are placed leaves
left to right, parents over their children, with stubs for the moves a cut-off never searched.
The SVG (bots.trace.draw) and the page's script (bots.trace.page) draw from this layout.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from bots.trace.model import Node, Trace

MAX_BUDGET: Final = 2_000
"""The most nodes a drawing may show: beyond that a picture is no longer readable."""
MAX_STUBS: Final = 3
"""Pruned moves drawn one by one under a cut-off node; more share one stub ("+k")."""

X_STEP: Final = 58
Y_STEP: Final = 96
MARGIN_X: Final = 70
MARGIN_TOP: Final = 92


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
