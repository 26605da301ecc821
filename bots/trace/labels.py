"""How the drawings of a traced search write it: values, cut-off bounds and headings.

Shared by the text and SVG drawings (bots.trace.draw), the HTML page (bots.trace.page) and
`arena trace`'s summary, so a value reads the same everywhere: "∞", "W3" for a forced win,
"≥5" for a cut-off node's bound.
"""

from __future__ import annotations

import math

from bots.scoring import ENGINE
from bots.trace.model import Node, Trace


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
