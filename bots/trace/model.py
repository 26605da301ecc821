"""A traced search as values: its settings, result and every node, and their JSON form.

A `Trace` is what bots.trace.tree records and what the drawings (bots.trace.draw, the page) and
the web explorer read: nodes in visit order (pre-order entry), each with the move leading to it,
the window on entry and on return, the value it returned, whether it was a cut-off and which
moves it never searched, and table hits. `as_dict` gives the shape docs/BOTS.md documents.

Values and windows are in one of two perspectives (`Trace.perspective`): "root", the root
player's (minimax and the lecture's alpha-beta: max nodes maximise, min nodes minimise), or
"negamax", the side to move at each node (negamax, ABNodeValue and the engine).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from bots.recorder import Kind
from bots.result import SearchStats

INFINITY = float("inf")

ROOT_PERSPECTIVE: Final = frozenset({"minimax", "minimax_prune", "alphabeta", "alphabeta_soft"})
"""Searches whose values are from the root player's point of view (the others: negamax)."""


@dataclass(slots=True)
class Node:
    """One node of a traced search, in visit order.

    `alpha`/`beta` are the window on entry, `alpha_out`/`beta_out` the window when the node
    returned (the lecture's "<alpha, beta> when chooseMove is called" and "[alpha, beta] when
    chooseMove ends"); minimax has no window and records (-inf, inf). `value` is what the node
    returned, in the trace's perspective. `kind`: "terminal" (the game is over), "leaf"
    (evaluated at the depth limit), "table" (ended by a transposition-table entry), "inner".
    `pruned` lists the moves a cut-off left unsearched, in search order.
    """

    i: int
    parent: int | None
    ply: int
    move: str | None
    position: str
    side: Literal["max", "min"]
    alpha: float
    beta: float
    value: float = 0.0
    kind: Kind = "inner"
    cutoff: bool = False
    pruned: list[str] = field(default_factory=list)
    children: list[int] = field(default_factory=list)
    tt_hit: bool = False
    alpha_out: float = -INFINITY
    beta_out: float = INFINITY

    def as_dict(self) -> dict[str, Any]:
        """Return the node as JSON-ready values (infinities as "inf" and "-inf")."""
        return {
            "i": self.i,
            "parent": self.parent,
            "ply": self.ply,
            "move": self.move,
            "position": self.position,
            "side": self.side,
            "alpha": json_number(self.alpha),
            "beta": json_number(self.beta),
            "value": json_number(self.value),
            "kind": self.kind,
            "cutoff": self.cutoff,
            "pruned": list(self.pruned),
            "children": list(self.children),
            "tt_hit": self.tt_hit,
            "alpha_out": json_number(self.alpha_out),
            "beta_out": json_number(self.beta_out),
        }


@dataclass(slots=True)
class Trace:
    """A traced search: its settings, result, statistics and every node in visit order.

    `value` is the root's value for the side to move at the root (both perspectives agree
    there); `pv` the principal variation as move texts; `stats` the search's own counters.
    """

    game: str
    position: str
    search: str
    depth: int | None
    evaluation: str | None
    options: dict[str, bool]
    scoring: str
    window: tuple[float, float]
    value: float
    best_move: str | None
    pv: list[str]
    stats: SearchStats
    nodes: list[Node]

    @property
    def perspective(self) -> Literal["root", "negamax"]:
        """Whose view node values are in: the root player's, or each node's side to move."""
        return "root" if self.search in ROOT_PERSPECTIVE else "negamax"

    @property
    def counts_by_depth(self) -> list[int]:
        """The number of nodes visited at each ply below the root (the root is ply 0)."""
        counts: list[int] = []
        for node in self.nodes:
            while len(counts) <= node.ply:
                counts.append(0)
            counts[node.ply] += 1
        return counts

    @property
    def root(self) -> Node:
        """The root node."""
        return self.nodes[0]

    def as_dict(self) -> dict[str, Any]:
        """Return the trace as JSON-ready values (the shape docs/BOTS.md documents)."""
        return {
            "game": self.game,
            "position": self.position,
            "search": self.search,
            "depth": self.depth,
            "evaluation": self.evaluation,
            "options": dict(self.options),
            "scoring": self.scoring,
            "window": [json_number(self.window[0]), json_number(self.window[1])],
            "perspective": self.perspective,
            "value": json_number(self.value),
            "best_move": self.best_move,
            "pv": list(self.pv),
            "stats": self.stats.as_dict(),
            "counts_by_depth": self.counts_by_depth,
            "nodes": [node.as_dict() for node in self.nodes],
        }


def json_number(value: float) -> float | int | str:
    """Return `value` for JSON: infinities as "inf"/"-inf", whole numbers as ints."""
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if math.isnan(value):
        raise ValueError("a search value is not a number")
    if float(value).is_integer():
        return int(value)
    return value
