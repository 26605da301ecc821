"""Traced searches: every node a search visits, with its window, value and what it pruned.

The lectures teach search by drawing the tree: each node with its value, the window
(alpha, beta), and the branches alpha-beta never looked at. `trace` runs one of the searches
of bots/ on a position and records that tree as a `Trace`: nodes in visit order (pre-order
entry), each with the move leading to it, the window on entry and on return, the value it
returned, whether it was a cut-off and which moves it never searched, and table hits.

Each traced search here is a re-implementation of one search module that records as it goes
(the searches themselves stay free of any observer, so they lose no speed). The tests in
tests/bots/test_trace.py tie each one to its original: the same nodes, values, best move and
statistics (`SearchStats.nodes`, `cutoffs`, `tt_hits`) on random positions of every game.

Values and windows are in one of two perspectives (`Trace.perspective`): "root", the root
player's (minimax and the lecture's alpha-beta: max nodes maximise, min nodes minimise), or
"negamax", the side to move at each node (negamax, ABNodeValue and the engine).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal

from bots.common import STOP_EVERY
from bots.engine import MAX_PLY, TO_THE_END, AlphaBetaEngine
from bots.evaluation import StateFunction
from bots.knowledge import knowledge_for
from bots.result import SearchStats, Stop
from bots.scoring import ENGINE, LECTURE, Scoring
from bots.spec import parse_bot_spec
from bots.table import EXACT, LOWER, UPPER
from games import State

INFINITY = float("inf")

SEARCHES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "minimax": "plain minimax, as the lecture's chooseMove (bot minimax)",
        "minimax_prune": "minimax with the lecture's simple pruning: stop at a sure win "
        "(bot minimax:prune=on)",
        "alphabeta": "the lecture's fail-hard alpha-beta: values clamped to the window "
        "(bot alphabeta_lecture)",
        "alphabeta_soft": "fail-soft alpha-beta: a cut-off returns its bound, which may lie "
        "outside the window (bot alphabeta_lecture:soft=on)",
        "negamax": "negamax alpha-beta, the lecture's ABNodeValue with a full window (bot negamax)",
        "abnodevalue": "the lecture's ABNodeValue exactly: one bound passed down, -LB of the "
        "parent (bots.negamax.ab_node_value)",
        "engine": "the engine: negamax alpha-beta with transposition table and move ordering "
        "(switchable), quiescence where the game needs it (bot alphabeta)",
    }
)
"""Every search `trace` runs, by name, with a one-line description."""

ROOT_PERSPECTIVE: Final = frozenset({"minimax", "minimax_prune", "alphabeta", "alphabeta_soft"})
"""Searches whose values are from the root player's point of view (the others: negamax)."""

DEFAULT_MAX_NODES: Final = 20_000
MAX_MAX_NODES: Final = 1_000_000
"""The largest `max_nodes` a trace accepts: a trace keeps every node in memory."""

SCORINGS: Final[Mapping[str, Scoring]] = MappingProxyType({"engine": ENGINE, "lecture": LECTURE})
"""Terminal scores by name: the bots' (a win is 1,000,000 less its distance in plies) and the
lectures' (COMPUTER_WIN = 1, DRAW = 0, HUMAN_WIN = -1)."""

Kind = Literal["inner", "leaf", "terminal", "table"]


class TraceError(ValueError):
    """A trace that cannot be made: unknown search, bad depth, evaluation or limit."""


class TraceLimitError(TraceError):
    """The search tree has more nodes than the trace's `max_nodes`."""


class TraceStopped(TraceError):  # noqa: N818 - named like bots.result.SearchStopped
    """The trace's `stop` returned True: it ended before the search did."""


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


# -- recording ------------------------------------------------------------------------------


class _Recorder:
    """Appends nodes in visit order and enforces the node limit."""

    __slots__ = ("format_position", "max_nodes", "nodes", "root_player", "stop")

    def __init__(self, state: State[Any], max_nodes: int, stop: Stop | None = None) -> None:
        self.nodes: list[Node] = []
        self.max_nodes = max_nodes
        self.stop = stop
        self.root_player = state.to_move
        self.format_position: Callable[[State[Any]], str] = state.game.format_position

    def enter(
        self,
        node: State[Any],
        parent: Node | None,
        move: str | None,
        ply: int,
        alpha: float,
        beta: float,
    ) -> Node:
        index = len(self.nodes)
        if index >= self.max_nodes:
            raise TraceLimitError(
                f"the search tree has more than {self.max_nodes:,} nodes (the limit); "
                "try a smaller depth, or raise the limit (at most "
                f"{MAX_MAX_NODES:,})"
            )
        if self.stop is not None and index % STOP_EVERY == 0 and self.stop():
            raise TraceStopped(f"the trace was stopped after {index:,} nodes")
        record = Node(
            i=index,
            parent=None if parent is None else parent.i,
            ply=ply,
            move=move,
            position=self.format_position(node),
            side="max" if node.to_move == self.root_player else "min",
            alpha=alpha,
            beta=beta,
            alpha_out=alpha,
            beta_out=beta,
        )
        self.nodes.append(record)
        if parent is not None:
            parent.children.append(index)
        return record


def _texts(state: State[Any], moves: Sequence[Hashable]) -> list[str]:
    return [state.format_move(move) for move in moves]


def _pv_texts(state: State[Any], pv: Sequence[Hashable]) -> list[str]:
    texts = []
    for move in pv:
        texts.append(state.format_move(move))
        state = state.apply_unchecked(move)
    return texts


# -- the traced searches --------------------------------------------------------------------
# Each mirrors one module of bots/ statement for statement (see the module docstring): when
# one of those changes, its twin here must change with it; tests/bots/test_trace.py fails
# otherwise.


def _trace_minimax(
    state: State[Any],
    depth: int | None,
    evaluation: StateFunction,
    scoring: Scoring,
    prune: bool,
    rec: _Recorder,
) -> tuple[float, list[Hashable], SearchStats]:
    """bots.minimax.minimax, recorded."""
    root_player = state.to_move
    stats = SearchStats()

    def choose(
        node: State[Any], left: int | None, ply: int, parent: Node | None, move: str | None
    ) -> tuple[float, list[Hashable]]:
        record = rec.enter(node, parent, move, ply, -INFINITY, INFINITY)
        stats.nodes += 1
        outcome = node.outcome()
        if outcome is not None:
            record.kind = "terminal"
            record.value = scoring.terminal(outcome, root_player, ply)
            return record.value, []
        if left == 0:
            stats.evaluations += 1
            value = evaluation(node)
            record.kind = "leaf"
            record.value = value if node.to_move == root_player else -value
            return record.value, []
        maximising = node.to_move == root_player
        moves = node.legal_moves()
        best_score = -scoring.win - 1 if maximising else scoring.win + 1
        best_pv: list[Hashable] = [moves[0]]
        child_left = None if left is None else left - 1
        for index, move_ in enumerate(moves):
            score, pv = choose(
                node.apply_unchecked(move_), child_left, ply + 1, record, node.format_move(move_)
            )
            if (maximising and score > best_score) or (not maximising and score < best_score):
                best_score, best_pv = score, [move_, *pv]
                best_possible = scoring.win - (ply + 1) if scoring.by_distance else scoring.win
                if prune and (
                    (maximising and score >= best_possible)
                    or (not maximising and score <= -best_possible)
                ):
                    stats.cutoffs += 1
                    record.cutoff = True
                    record.pruned = _texts(node, moves[index + 1 :])
                    break
        record.value = best_score
        return best_score, best_pv

    score, pv = choose(state, depth, 0, None, None)
    return score, pv, stats


def _trace_alphabeta(
    state: State[Any],
    depth: int | None,
    evaluation: StateFunction,
    scoring: Scoring,
    fail_soft: bool,
    window: tuple[float, float],
    rec: _Recorder,
) -> tuple[float, list[Hashable], SearchStats]:
    """bots.alphabeta.alphabeta (fail-hard, or fail-soft), recorded."""
    root_player = state.to_move
    stats = SearchStats()

    def choose(
        node: State[Any],
        left: int | None,
        ply: int,
        alpha: float,
        beta: float,
        parent: Node | None,
        move: str | None,
    ) -> tuple[float, list[Hashable]]:
        record = rec.enter(node, parent, move, ply, alpha, beta)
        stats.nodes += 1
        outcome = node.outcome()
        if outcome is not None:
            record.kind = "terminal"
            record.value = scoring.terminal(outcome, root_player, ply)
            return record.value, []
        if left == 0:
            stats.evaluations += 1
            value = evaluation(node)
            record.kind = "leaf"
            record.value = value if node.to_move == root_player else -value
            return record.value, []
        computer = node.to_move == root_player
        if fail_soft:
            best_score = -INFINITY if computer else INFINITY
        else:
            best_score = alpha if computer else beta
        moves = node.legal_moves()
        best_pv: list[Hashable] = [moves[0]]
        child_left = None if left is None else left - 1
        for index, move_ in enumerate(moves):
            score, pv = choose(
                node.apply_unchecked(move_),
                child_left,
                ply + 1,
                alpha,
                beta,
                record,
                node.format_move(move_),
            )
            if computer and score > best_score:
                best_score, best_pv = score, [move_, *pv]
                alpha = max(alpha, score)
            elif not computer and score < best_score:
                best_score, best_pv = score, [move_, *pv]
                beta = min(beta, score)
            if alpha >= beta:
                stats.cutoffs += 1
                record.cutoff = True
                record.pruned = _texts(node, moves[index + 1 :])
                break
        record.value, record.alpha_out, record.beta_out = best_score, alpha, beta
        return best_score, best_pv

    score, pv = choose(state, depth, 0, window[0], window[1], None, None)
    return score, pv, stats


def _trace_negamax(
    state: State[Any],
    depth: int | None,
    evaluation: StateFunction,
    scoring: Scoring,
    window: tuple[float, float],
    rec: _Recorder,
) -> tuple[float, list[Hashable], SearchStats]:
    """bots.negamax.negamax (fail-soft, any window), recorded."""
    stats = SearchStats()

    def search(
        node: State[Any],
        left: int | None,
        ply: int,
        alpha: float,
        beta: float,
        parent: Node | None,
        move: str | None,
    ) -> tuple[float, list[Hashable]]:
        record = rec.enter(node, parent, move, ply, alpha, beta)
        stats.nodes += 1
        outcome = node.outcome()
        if outcome is not None:
            record.kind = "terminal"
            record.value = scoring.terminal(outcome, node.to_move, ply)
            return record.value, []
        if left == 0:
            stats.evaluations += 1
            record.kind = "leaf"
            record.value = evaluation(node)
            return record.value, []
        moves = node.legal_moves()
        best, best_pv = -INFINITY, [moves[0]]
        child_left = None if left is None else left - 1
        for index, move_ in enumerate(moves):
            score, pv = search(
                node.apply_unchecked(move_),
                child_left,
                ply + 1,
                -beta,
                -alpha,
                record,
                node.format_move(move_),
            )
            score = -score
            if score > best:
                best, best_pv = score, [move_, *pv]
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        stats.cutoffs += 1
                        record.cutoff = True
                        record.pruned = _texts(node, moves[index + 1 :])
                        break
        record.value, record.alpha_out, record.beta_out = best, alpha, beta
        return best, best_pv

    score, pv = search(state, depth, 0, window[0], window[1], None, None)
    return score, pv, stats


def _trace_ab_node_value(
    state: State[Any],
    depth: int | None,
    evaluation: StateFunction,
    scoring: Scoring,
    parent_value: float,
    rec: _Recorder,
) -> tuple[float, list[Hashable], SearchStats]:
    """bots.negamax.ab_node_value (the lecture's ABNodeValue), recorded.

    A node's window is (-inf, parentVal): it stops once its lower bound LB reaches the bound
    its parent passed. The best move is the first child that set the root's final LB.
    """
    stats = SearchStats()

    def value(
        node: State[Any],
        left: int | None,
        parent_bound: float,
        ply: int,
        parent: Node | None,
        move: str | None,
    ) -> tuple[float, list[Hashable]]:
        record = rec.enter(node, parent, move, ply, -INFINITY, parent_bound)
        stats.nodes += 1
        outcome = node.outcome()
        if outcome is not None:
            record.kind = "terminal"
            record.value = scoring.terminal(outcome, node.to_move, ply)
            return record.value, []
        if left == 0:
            stats.evaluations += 1
            record.kind = "leaf"
            record.value = evaluation(node)
            return record.value, []
        moves = node.legal_moves()
        child_left = None if left is None else left - 1
        first, first_pv = value(
            node.apply_unchecked(moves[0]),
            child_left,
            INFINITY,
            ply + 1,
            record,
            node.format_move(moves[0]),
        )
        lower, best_pv = -first, [moves[0], *first_pv]
        for index in range(1, len(moves)):
            if lower >= parent_bound:
                stats.cutoffs += 1
                record.cutoff = True
                record.pruned = _texts(node, moves[index:])
                record.value, record.alpha_out = lower, lower
                return lower, best_pv
            move_ = moves[index]
            score, pv = value(
                node.apply_unchecked(move_),
                child_left,
                -lower,
                ply + 1,
                record,
                node.format_move(move_),
            )
            if -score > lower:
                lower, best_pv = -score, [move_, *pv]
        record.value, record.alpha_out = lower, lower
        return lower, best_pv

    score, pv = value(state, depth, parent_value, 0, None, None)
    return score, pv, stats


def _trace_engine(
    state: State[Any],
    depth: int,
    evaluation: StateFunction,
    scoring: Scoring,
    tt: bool,
    ordering: bool,
    rec: _Recorder,
) -> tuple[float, list[Hashable], SearchStats]:
    """bots.engine.AlphaBetaEngine.search on a new engine (empty table and history), recorded.

    The engine object supplies the table, killers, history and its own move ordering, so the
    order searched is the engine's by construction; the node function mirrors `_run`.
    """
    knowledge = knowledge_for(state.game)
    engine = AlphaBetaEngine(knowledge, evaluation, tt=tt, ordering=ordering, scoring=scoring)
    table = engine.table
    if table is not None:
        table.new_search()
    terminal = scoring.terminal
    by_distance = scoring.by_distance
    mate_zone = scoring.win - 10_000
    key_of: Callable[[State[Any]], Hashable] = (
        knowledge.canonical_key
        if knowledge.canonical_key is not None
        else (lambda node: node.key())
    )
    is_quiet = knowledge.is_quiet
    is_capture = knowledge.is_capture
    killers = engine._killers
    history = engine._history
    pv_table: list[list[Hashable]] = [[] for _ in range(MAX_PLY + 2)]
    stats = SearchStats(depth=depth)

    def negamax(
        node: State[Any],
        left: int,
        alpha: float,
        beta: float,
        ply: int,
        parent: Node | None,
        move: str | None,
    ) -> float:
        record = rec.enter(node, parent, move, ply, alpha, beta)
        stats.nodes += 1
        pv_table[ply] = []
        outcome = node.outcome()
        if outcome is not None:
            record.kind = "terminal"
            record.value = terminal(outcome, node.to_move, ply)
            return record.value
        if left <= 0:
            if is_quiet is None or ply >= MAX_PLY or is_quiet(node):
                stats.evaluations += 1
                record.kind = "leaf"
                record.value = evaluation(node)
                return record.value
            left = 0
        alpha_start = alpha
        key = key_of(node)
        tt_move = None
        if table is not None:
            entry = table.probe(key)
            if entry is not None:
                stats.tt_hits += 1
                record.tt_hit = True
                tt_move = entry[4]
                if ply > 0 and (
                    entry[1] == left or (left >= TO_THE_END and entry[1] >= TO_THE_END)
                ):
                    score = entry[3]
                    if by_distance:
                        if score > mate_zone:
                            score -= ply
                        elif score < -mate_zone:
                            score += ply
                    flag = entry[2]
                    if (
                        flag == EXACT
                        or (flag == LOWER and score >= beta)
                        or (flag == UPPER and score <= alpha)
                    ):
                        record.kind = "table"
                        record.value = score
                        return score
        moves = node.legal_moves()
        if ordering and len(moves) > 1:
            moves = engine._ordered(node, moves, tt_move, ply)
        elif tt_move is not None and len(moves) > 1 and tt_move in moves:
            moves = [tt_move, *(m for m in moves if m != tt_move)]
        child_left = left - 1 if left > 0 else 0
        best = -INFINITY
        best_move = moves[0]
        for index, move_ in enumerate(moves):
            score = -negamax(
                node.apply_unchecked(move_),
                child_left,
                -beta,
                -alpha,
                ply + 1,
                record,
                node.format_move(move_),
            )
            if score > best:
                best = score
                best_move = move_
                if score > alpha:
                    alpha = score
                    pv_table[ply] = [move_, *pv_table[ply + 1]]
                    if alpha >= beta:
                        stats.cutoffs += 1
                        record.cutoff = True
                        record.pruned = _texts(node, moves[index + 1 :])
                        if ordering and not (is_capture is not None and is_capture(node, move_)):
                            slot = killers[ply]
                            if slot[0] != move_:
                                slot[1] = slot[0]
                                slot[0] = move_
                            hkey = (node.to_move, move_)
                            history[hkey] = history.get(hkey, 0) + left * left
                        break
        if table is not None:
            flag = UPPER if best <= alpha_start else LOWER if best >= beta else EXACT
            stored = best
            if by_distance:
                if stored > mate_zone:
                    stored += ply
                elif stored < -mate_zone:
                    stored -= ply
            table.store(key, left, flag, stored, best_move)
        record.value, record.alpha_out, record.beta_out = best, alpha, beta
        return best

    score = negamax(state, depth, -INFINITY, INFINITY, 0, None, None)
    pv = pv_table[0]
    if not pv:
        moves = state.legal_moves()
        pv = [moves[0]] if moves else []
    return score, list(pv), stats


# -- entry points ---------------------------------------------------------------------------


def trace(
    state: State[Any],
    search: str,
    depth: int | None,
    *,
    evaluation: str | None = None,
    tt: bool = True,
    ordering: bool = True,
    max_nodes: int = DEFAULT_MAX_NODES,
    scoring: str = "engine",
    window: tuple[float, float] = (-INFINITY, INFINITY),
    evaluate: StateFunction | None = None,
    stop: Stop | None = None,
) -> Trace:
    """Run `search` (a name in SEARCHES) on `state` to `depth` plies and record every node.

    `depth` None searches to the end of the game (no evaluation needed). `evaluation` names
    one of the game's evaluations (default: the game's); `evaluate` passes a function instead
    (tests use it for abstract trees). `tt` and `ordering` apply to "engine" only. `scoring`:
    "engine" (the bots' scores, the default) or "lecture" (win 1, draw 0, loss -1). `window`
    is the root's (alpha, beta) for "alphabeta", "alphabeta_soft" and "negamax" (for
    "abnodevalue" its beta is the root's parentVal). Raises TraceLimitError once the tree
    passes `max_nodes`, TraceStopped once `stop()` (asked every STOP_EVERY nodes) returns
    True, TraceError for anything else the caller got wrong.
    """
    if search not in SEARCHES:
        raise TraceError(f"unknown search {search!r} (searches: {', '.join(SEARCHES)})")
    if isinstance(max_nodes, bool) or not 1 <= max_nodes <= MAX_MAX_NODES:
        raise TraceError(f"max_nodes must be 1 to {MAX_MAX_NODES:,}, not {max_nodes}")
    if depth is not None and not 1 <= depth <= MAX_PLY:
        raise TraceError(f"depth must be 1 to {MAX_PLY} (or none: to the end), not {depth}")
    if scoring not in SCORINGS:
        raise TraceError(f"unknown scoring {scoring!r} (scorings: {', '.join(SCORINGS)})")
    if state.is_terminal():
        raise TraceError("the game is over in this position: there is nothing to search")
    alpha, beta = window
    if not alpha < beta:
        raise TraceError(f"the window must have alpha < beta, not ({alpha}, {beta})")
    rules = SCORINGS[scoring]
    name: str | None = None
    if evaluate is None:
        knowledge = knowledge_for(state.game)
        try:
            chosen = knowledge.evaluation(evaluation)
        except ValueError as exc:
            raise TraceError(str(exc)) from None
        evaluate, name = chosen.function, chosen.name
    elif evaluation is not None:
        raise TraceError("give an evaluation by name or as a function, not both")
    rec = _Recorder(state, max_nodes, stop)
    if search in ("minimax", "minimax_prune"):
        score, pv, stats = _trace_minimax(
            state, depth, evaluate, rules, search == "minimax_prune", rec
        )
    elif search in ("alphabeta", "alphabeta_soft"):
        score, pv, stats = _trace_alphabeta(
            state, depth, evaluate, rules, search == "alphabeta_soft", window, rec
        )
    elif search == "negamax":
        score, pv, stats = _trace_negamax(state, depth, evaluate, rules, window, rec)
    elif search == "abnodevalue":
        score, pv, stats = _trace_ab_node_value(state, depth, evaluate, rules, beta, rec)
    else:
        engine_depth = TO_THE_END if depth is None else depth
        score, pv, stats = _trace_engine(state, engine_depth, evaluate, rules, tt, ordering, rec)
    pv_texts = _pv_texts(state, pv)
    stats.pv = pv_texts
    stats.depth = depth if depth is not None else len(pv)
    engine = search == "engine"
    return Trace(
        game=state.game.name,
        position=state.game.format_position(state),
        search=search,
        depth=depth,
        evaluation=name,
        options={"tt": tt if engine else False, "ordering": ordering if engine else False},
        scoring=scoring,
        window=(alpha, beta),
        value=score,
        best_move=pv_texts[0] if pv_texts else None,
        pv=pv_texts,
        stats=stats,
        nodes=rec.nodes,
    )


TRACEABLE_BOTS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "minimax": "minimax (prune=on: minimax_prune)",
        "alphabeta_lecture": "alphabeta (soft=on: alphabeta_soft)",
        "negamax": "negamax",
        "alphabeta": "engine (tt, ordering)",
    }
)
"""Bots whose search `trace_spec` can trace, and the search each one runs."""


def trace_spec(
    state: State[Any],
    spec: str,
    depth: int | None = None,
    max_nodes: int = DEFAULT_MAX_NODES,
    *,
    to_end: bool = False,
    scoring: str = "engine",
    window: tuple[float, float] = (-INFINITY, INFINITY),
) -> Trace:
    """Trace the search the bot `spec` runs on `state`, as `create_bot(spec).choose` would.

    `depth` overrides the spec's depth, `to_end` drops the depth limit; `scoring` and `window`
    are as for `trace` (the defaults are the bot's own). Raises TraceError (a BotSpecError for
    a bad spec) naming what is wrong.
    """
    parsed = parse_bot_spec(spec)
    if parsed.name not in TRACEABLE_BOTS:
        raise TraceError(
            f"bot {parsed.name} cannot be traced (bots that can: {', '.join(TRACEABLE_BOTS)}; "
            "for id, trace alphabeta:depth=N at the depth it reaches)"
        )
    options = parsed.options
    if parsed.name == "minimax":
        search = "minimax_prune" if options["prune"] else "minimax"
    elif parsed.name == "alphabeta_lecture":
        search = "alphabeta_soft" if options["soft"] else "alphabeta"
    elif parsed.name == "negamax":
        search = "negamax"
    else:
        search = "engine"
    return trace(
        state,
        search,
        None if to_end else options["depth"] if depth is None else depth,
        evaluation=options["eval"],
        tt=options.get("tt", True),
        ordering=options.get("ordering", True),
        max_nodes=max_nodes,
        scoring=scoring,
        window=window,
    )
