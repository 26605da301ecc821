"""Traced searches: run a search with a recorder and keep every node it visits.

The lectures teach search by drawing the tree: each node with its value, the window
(alpha, beta), and the branches alpha-beta never looked at. `trace` runs one of the searches
of bots/ on a position and records that tree as a `Trace` (bots.trace.model), node by node in
visit order; `trace_spec` traces the search a bot spec runs.

The searches are the bots' own (bots.lectures.minimax, bots.lectures.alphabeta,
bots.lectures.negamax and the engine), run with a recorder (bots.recorder) that builds the tree as
they go; the bots play with the no-op recorder. The tests in tests/bots/trace/test_trace.py check
that a trace agrees with the bot: the same nodes, values, best move and statistics
(`SearchStats.nodes`, `cutoffs`, `tt_hits`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final

from bots.common import STOP_EVERY, pv_texts
from bots.engine.search import MAX_PLY, TO_THE_END, AlphaBetaEngine
from bots.evaluation import StateFunction
from bots.evaluation.knowledge import knowledge_for
from bots.lectures.alphabeta import alphabeta
from bots.lectures.minimax import minimax
from bots.lectures.negamax import ab_node_value, negamax
from bots.recorder import Kind
from bots.result import SearchStats, Stop
from bots.scoring import ENGINE, LECTURE, Scoring
from bots.spec import parse_bot_spec
from bots.trace.model import INFINITY, Node, Trace
from games import State

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
        "parent (bots.lectures.negamax.ab_node_value)",
        "engine": "the engine: negamax alpha-beta with transposition table and move ordering "
        "(switchable), quiescence where the game needs it (bot alphabeta)",
    }
)
"""Every search `trace` runs, by name, with a one-line description."""

DEFAULT_MAX_NODES: Final = 20_000
MAX_MAX_NODES: Final = 1_000_000
"""The largest `max_nodes` a trace accepts: a trace keeps every node in memory."""

SCORINGS: Final[Mapping[str, Scoring]] = MappingProxyType({"engine": ENGINE, "lecture": LECTURE})
"""Terminal scores by name: the bots' (a win is 1,000,000 less its distance in plies) and the
lectures' (COMPUTER_WIN = 1, DRAW = 0, HUMAN_WIN = -1)."""


class TraceError(ValueError):
    """A trace that cannot be made: unknown search, bad depth, evaluation or limit."""


class TraceLimitError(TraceError):
    """The search tree has more nodes than the trace's `max_nodes`."""


class TraceStopped(TraceError):  # noqa: N818 - named like bots.result.SearchStopped
    """The trace's `stop` returned True: it ended before the search did."""


# -- recording ------------------------------------------------------------------------------


class _TreeRecorder:
    """A bots.recorder.SearchRecorder that appends nodes in visit order, up to a node limit."""

    __slots__ = ("format_position", "max_nodes", "nodes", "path", "root_player", "stop")

    def __init__(self, state: State[Any], max_nodes: int, stop: Stop | None = None) -> None:
        self.nodes: list[Node] = []
        self.path: list[tuple[Node, State[Any]]] = []  # the nodes entered and not yet left
        self.max_nodes = max_nodes
        self.stop = stop
        self.root_player = state.to_move
        self.format_position: Callable[[State[Any]], str] = state.game.format_position

    def enter(
        self, node: State[Any], move: Hashable | None, ply: int, alpha: float, beta: float
    ) -> None:
        index = len(self.nodes)
        if index >= self.max_nodes:
            raise TraceLimitError(
                f"the search tree has more than {self.max_nodes:,} nodes (the limit); "
                "try a smaller depth, or raise the limit (at most "
                f"{MAX_MAX_NODES:,})"
            )
        if self.stop is not None and index % STOP_EVERY == 0 and self.stop():
            raise TraceStopped(f"the trace was stopped after {index:,} nodes")
        parent = self.path[-1] if self.path else None
        record = Node(
            i=index,
            parent=None if parent is None else parent[0].i,
            ply=ply,
            move=None if parent is None else parent[1].format_move(move),
            position=self.format_position(node),
            side="max" if node.to_move == self.root_player else "min",
            alpha=alpha,
            beta=beta,
            alpha_out=alpha,
            beta_out=beta,
        )
        self.nodes.append(record)
        if parent is not None:
            parent[0].children.append(index)
        self.path.append((record, node))

    def table_hit(self) -> None:
        self.path[-1][0].tt_hit = True

    def cutoff(self, node: State[Any], pruned: Sequence[Hashable]) -> None:
        record = self.path[-1][0]
        record.cutoff = True
        record.pruned = [node.format_move(move) for move in pruned]

    def leave(self, value: float, kind: Kind, alpha: float, beta: float) -> None:
        record = self.path.pop()[0]
        record.value, record.kind, record.alpha_out, record.beta_out = value, kind, alpha, beta


def _first_best_line(nodes: Sequence[Node]) -> list[str]:
    """The line ABNodeValue chose: at each node, the first child that set its final LB."""
    texts: list[str] = []
    node = nodes[0]
    while node.kind == "inner":
        node = next(nodes[i] for i in node.children if -nodes[i].value == node.value)
        assert node.move is not None
        texts.append(node.move)
    return texts


def _run(
    state: State[Any],
    search: str,
    depth: int | None,
    evaluate: StateFunction,
    rules: Scoring,
    window: tuple[float, float],
    tt: bool,
    ordering: bool,
    rec: _TreeRecorder,
) -> tuple[float, list[str], SearchStats]:
    """Run the bots' own `search` with `rec` recording; return its value, PV texts and stats."""
    alpha, beta = window
    if search == "abnodevalue":
        stats = SearchStats()
        score = ab_node_value(
            state, depth, beta, evaluate=evaluate, scoring=rules, stats=stats, recorder=rec
        )
        return score, _first_best_line(rec.nodes), stats
    if search in ("minimax", "minimax_prune"):
        result = minimax(
            state,
            depth=depth,
            evaluate=evaluate,
            scoring=rules,
            prune=search == "minimax_prune",
            recorder=rec,
        )
    elif search in ("alphabeta", "alphabeta_soft"):
        result = alphabeta(
            state,
            depth=depth,
            evaluate=evaluate,
            scoring=rules,
            alpha=alpha,
            beta=beta,
            fail_soft=search == "alphabeta_soft",
            recorder=rec,
        )
    elif search == "negamax":
        result = negamax(
            state,
            depth=depth,
            evaluate=evaluate,
            scoring=rules,
            alpha=alpha,
            beta=beta,
            recorder=rec,
        )
    else:
        engine = AlphaBetaEngine(
            knowledge_for(state.game), evaluate, tt=tt, ordering=ordering, scoring=rules
        )
        result = engine.search(state, TO_THE_END if depth is None else depth, recorder=rec)
    return result.score, pv_texts(state, result.pv), result.stats


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
    rec = _TreeRecorder(state, max_nodes, stop)
    score, pv, stats = _run(state, search, depth, evaluate, rules, window, tt, ordering, rec)
    stats.pv = pv
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
        best_move=pv[0] if pv else None,
        pv=pv,
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
