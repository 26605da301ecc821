"""Traced searches visit exactly the nodes the bots' own searches visit, and draw the lectures.

bots.trace.tree runs each search module with a recorder; these tests tie a trace to the bot's own
search (same node count, evaluations, cut-offs, table hits, value, best move and principal
variation on random positions of every game), check the recorded tree against the rules of
minimax, and reproduce the worked examples of the lectures in ../shared/lectures.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bots.spec import create_bot
from bots.trace.model import Trace
from bots.trace.tree import (
    DEFAULT_MAX_NODES,
    MAX_MAX_NODES,
    SEARCHES,
    TraceError,
    TraceLimitError,
    TraceStopped,
    trace,
    trace_spec,
)
from games import Game, State, get_game

TICTACTOE = get_game("tictactoe")

SPECS = (
    "minimax:depth=3",
    "minimax:depth=3,prune=on",
    "alphabeta_lecture:depth=3",
    "alphabeta_lecture:depth=3,soft=on",
    "negamax:depth=3",
    "alphabeta:depth=4",
    "alphabeta:depth=4,tt=off",
    "alphabeta:depth=4,ordering=off",
    "alphabeta:depth=4,tt=off,ordering=off",
)
GAMES = ("tictactoe", "connect4", "nim", "checkers")


def random_position(game: Game, seed: int) -> State[Any]:
    """A position a random number of random plies from the start, with no history."""
    rng = random.Random(seed)
    state = game.initial_state()
    for _ in range(rng.randint(0, 14)):
        if state.is_terminal():
            break
        state = state.apply_unchecked(rng.choice(list(state.legal_moves())))
    return game.parse_position(game.format_position(state))


# -- the traces are the bots' searches ------------------------------------------------------


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("spec", SPECS)
def test_a_trace_visits_exactly_the_nodes_the_bot_counts(name: str, spec: str) -> None:
    game = get_game(name)
    positions = [random_position(game, seed) for seed in range(12)]
    playable = [state for state in positions if not state.is_terminal()][:3]
    assert len(playable) == 3
    for state in playable:
        result = create_bot(spec, game).choose(state)
        traced = trace_spec(state, spec, max_nodes=MAX_MAX_NODES)
        ours, theirs = traced.stats, result.stats
        assert len(traced.nodes) == ours.nodes == theirs.nodes
        assert ours.evaluations == theirs.evaluations
        assert ours.cutoffs == theirs.cutoffs
        assert ours.tt_hits == theirs.tt_hits
        assert traced.value == result.score
        assert traced.best_move == state.format_move(result.move)
        assert traced.pv == theirs.pv
        # The recorded tree agrees with the counters.
        assert sum(node.cutoff for node in traced.nodes) == theirs.cutoffs
        assert sum(node.tt_hit for node in traced.nodes) == theirs.tt_hits
        assert sum(node.kind == "leaf" for node in traced.nodes) == theirs.evaluations


@settings(max_examples=30, deadline=None)
@given(
    name=st.sampled_from(GAMES),
    seed=st.integers(0, 2**32 - 1),
    spec=st.sampled_from(SPECS),
    depth=st.integers(1, 3),
)
def test_traces_match_the_bots_on_any_position(name: str, seed: int, spec: str, depth: int) -> None:
    game = get_game(name)
    state = random_position(game, seed)
    if state.is_terminal():
        return
    text = spec.replace("depth=3", f"depth={depth}").replace("depth=4", f"depth={depth + 1}")
    result = create_bot(text, game).choose(state)
    traced = trace_spec(state, text, max_nodes=MAX_MAX_NODES)
    assert (traced.stats.nodes, traced.stats.cutoffs, traced.stats.tt_hits) == (
        result.stats.nodes,
        result.stats.cutoffs,
        result.stats.tt_hits,
    )
    assert (traced.value, traced.pv) == (result.score, result.stats.pv)


# -- an abstract game tree, as the slides draw them ------------------------------------------

Tree = float | tuple["Tree", ...]
"""A slide's tree: a leaf value (MAX's utility) or the tuple of its children, left to right."""


class TreeGame(Game):
    """A test-only game whose positions are the nodes of a fixed tree; MAX moves first."""

    name = "tree"
    __slots__ = ("tree",)

    def __init__(self, tree: Tree) -> None:
        super().__init__()
        self.tree = tree

    def initial_state(self) -> TreeState:
        return TreeState(self, ())

    def parse_position(self, text: str) -> TreeState:
        return TreeState(self, tuple(int(part) for part in text.split(".") if part))

    def format_position(self, state: State[Any]) -> str:
        assert isinstance(state, TreeState)
        return ".".join(map(str, state.path))


class TreeState(State[int]):
    __slots__ = ("_game", "path", "subtree")

    def __init__(self, game: TreeGame, path: tuple[int, ...]) -> None:
        self._game = game
        self.path = path
        subtree = game.tree
        for index in path:
            assert isinstance(subtree, tuple)
            subtree = subtree[index]
        self.subtree = subtree

    @property
    def game(self) -> TreeGame:
        return self._game

    @property
    def to_move(self) -> int:
        return len(self.path) % 2

    def legal_moves(self) -> tuple[int, ...]:
        return tuple(range(len(self.subtree))) if isinstance(self.subtree, tuple) else ()

    def apply_unchecked(self, move: int) -> TreeState:
        return TreeState(self._game, (*self.path, move))

    def outcome(self) -> None:
        return None  # the leaves lie at the depth limit: they are evaluated, not scored

    def key(self) -> tuple[int, ...]:
        return self.path

    def parse_move(self, text: str) -> int:
        return int(text)

    def format_move(self, move: int) -> str:
        return str(move)

    def render(self) -> str:
        return repr(self.subtree)


def leaf_value(state: State[Any]) -> float:
    """The leaf's utility for MAX, turned to the side to move as evaluations score."""
    assert isinstance(state, TreeState) and not isinstance(state.subtree, tuple)
    return state.subtree if state.to_move == 0 else -state.subtree


def trace_tree(tree: Tree, search: str, depth: int) -> Trace:
    return trace(TreeGame(tree).initial_state(), search, depth, evaluate=leaf_value)


def by_path(traced: Trace) -> dict[str, Any]:
    return {node.position: node for node in traced.nodes}


INF = float("inf")

# CSC 384 slides (002), "Revised Example 2a": MAX, MIN, MAX levels over leaves 3 2 9 5 1 0 7 5.
EXAMPLE_2A: Tree = (((3, 2), (9, 5)), ((1, 0), (7, 5)))


def test_slides_002_revised_example_2a_node_for_node() -> None:
    # The slides' MAX-VALUE / MIN-VALUE start v at -inf / +inf and return v: fail-soft.
    traced = trace_tree(EXAMPLE_2A, "alphabeta_soft", 3)
    nodes = by_path(traced)
    # Visit order: a4 (leaf 5) and n4 (with its leaves 7 and 5) are struck out in the slide.
    assert [n.position for n in traced.nodes] == [
        "", "0", "0.0", "0.0.0", "0.0.1", "0.1", "0.1.0", "1", "1.0", "1.0.0", "1.0.1",
    ]  # fmt: skip
    assert [nodes[p].value for p in ("", "0", "0.0", "0.1", "1", "1.0")] == [3, 3, 3, 9, 1, 1]
    assert [n.value for n in traced.nodes if n.kind == "leaf"] == [3, 2, 9, 1, 0]
    assert [n.side for n in traced.nodes[:3]] == ["max", "min", "max"]
    # The slide writes each node's (alpha, beta) as it stands when the node returns; a node
    # that prunes returns before updating it, so there it is the window on entry.
    assert (nodes[""].alpha_out, nodes[""].beta_out) == (3, INF)
    assert (nodes["0"].alpha_out, nodes["0"].beta_out) == (-INF, 3)
    assert (nodes["0.0"].alpha_out, nodes["0.0"].beta_out) == (3, INF)
    assert (nodes["0.1"].alpha, nodes["0.1"].beta) == (-INF, 3)
    assert (nodes["1"].alpha, nodes["1"].beta) == (3, INF)
    assert (nodes["1.0"].alpha_out, nodes["1.0"].beta_out) == (3, INF)
    # The cuts: a4 under n2 (v = 9 >= beta = 3), n4 under the second MIN node (v = 1 <= 3).
    assert [(n.position, n.pruned) for n in traced.nodes if n.cutoff] == [
        ("0.1", ["1"]),
        ("1", ["1"]),
    ]
    assert traced.value == 3 and traced.pv == ["0", "0", "0"]


# CS 61B lecture #22 (003): My move, opponent's move, my move over -30 -5 5 15 -20 -30 9 10.
LECTURE_22: Tree = (((-30, -5), (5, 15)), ((-20, -30), (9, 10)))


def test_lecture_003_minimax_values_and_alphabeta_bounds() -> None:
    full = by_path(trace_tree(LECTURE_22, "minimax", 3))
    # "Starred nodes would be chosen": -5; -5 -20; -5 15 -20 10.
    assert [full[p].value for p in ("", "0", "1", "0.0", "0.1", "1.0", "1.1")] == [
        -5, -5, -20, -5, 15, -20, 10,
    ]  # fmt: skip
    soft = trace_tree(LECTURE_22, "alphabeta_soft", 3)
    nodes = by_path(soft)
    # The pruned tree: -5; -5 <=-20; -5 >=5 -20; leaves -30 -5 5 -20 -30.
    assert [nodes[p].value for p in ("", "0", "1", "0.0", "0.1", "1.0")] == [
        -5,
        -5,
        -20,
        -5,
        5,
        -20,
    ]
    assert [n.value for n in soft.nodes if n.kind == "leaf"] == [-30, -5, 5, -20, -30]
    assert nodes["0.1"].cutoff and nodes["0.1"].pruned == ["1"]  # ">= 5": 15 never seen
    assert nodes["1"].cutoff and nodes["1"].pruned == ["1"]  # "<= -20": 9, 10 never seen
    # Fail-hard returns the bound where fail-soft returned "<= -20": the alpha, -5.
    hard = by_path(trace_tree(LECTURE_22, "alphabeta", 3))
    assert (hard["1"].value, hard["1.0"].value) == (-5, -5)
    assert hard[""].value == soft.value == -5


# -- fail-soft and fail-hard differ exactly where theory says -------------------------------


def random_tree(rng: random.Random, depth: int) -> Tree:
    if depth == 0:
        return rng.randint(-9, 9)
    return tuple(random_tree(rng, depth - 1) for _ in range(rng.randint(1, 3)))


def assert_soft_and_hard_agree_as_theory_says(soft: Trace, hard: Trace) -> int:
    """Check the two trees node by node; return how many values differ.

    Both searches pass children the same windows and cut at the same places (a child's
    fail-hard value and fail-soft value compare the same with the window), so the trees have
    one shape. Where the fail-soft value v lies inside the window on entry, both agree. Where
    no child improved a node's starting bound (v <= alpha at a max node, v >= beta at a min
    node) fail-hard returns that bound and fail-soft the better information v. Where a node
    cut off (v >= beta at max, v <= alpha at min), fail-hard returns a value between the bound
    and v (its cutting child's own fail-hard value).
    """
    assert len(soft.nodes) == len(hard.nodes)
    differ = 0
    for s, h in zip(soft.nodes, hard.nodes, strict=True):
        assert (s.parent, s.move, s.kind, s.cutoff, s.pruned, s.alpha, s.beta) == (
            h.parent,
            h.move,
            h.kind,
            h.cutoff,
            h.pruned,
            h.alpha,
            h.beta,
        )
        v, w, alpha, beta = s.value, h.value, s.alpha, s.beta
        if s.kind != "inner" or alpha < v < beta:
            assert w == v
        elif s.side == "max" and v <= alpha:
            assert w == alpha
        elif s.side == "min" and v >= beta:
            assert w == beta
        elif s.side == "max":
            assert beta <= w <= v and s.cutoff
        else:
            assert v <= w <= alpha and s.cutoff
        differ += w != v
    assert soft.value == hard.value
    return differ


def test_fail_soft_and_fail_hard_trees_differ_exactly_where_theory_says() -> None:
    differ = 0
    for seed in range(200):
        rng = random.Random(seed)
        depth = rng.randint(1, 5)
        tree = random_tree(rng, depth)
        differ += assert_soft_and_hard_agree_as_theory_says(
            trace_tree(tree, "alphabeta_soft", depth), trace_tree(tree, "alphabeta", depth)
        )
    for name in GAMES:
        game = get_game(name)
        for seed in range(4):
            state = random_position(game, seed)
            if not state.is_terminal():
                differ += assert_soft_and_hard_agree_as_theory_says(
                    trace(state, "alphabeta_soft", 3), trace(state, "alphabeta", 3)
                )
    assert differ > 100  # the rule was exercised where the two do differ


# -- the recorded tree is a search tree -----------------------------------------------------


@pytest.mark.parametrize("search", sorted(SEARCHES))
def test_every_trace_is_a_preorder_tree_whose_values_follow_its_rule(search: str) -> None:
    state = random_position(get_game("connect4"), 5)
    traced = trace(state, search, 3)
    nodes = traced.nodes
    assert nodes[0].parent is None and nodes[0].ply == 0 and nodes[0].move is None
    assert sum(traced.counts_by_depth) == len(nodes) == traced.stats.nodes
    for node in nodes:
        assert node.i == nodes.index(node)
        if node.parent is not None:
            parent = nodes[node.parent]
            assert parent.i < node.i and node.ply == parent.ply + 1 and node.i in parent.children
        position = get_game("connect4").parse_position(node.position)
        legal = [position.format_move(m) for m in position.legal_moves()]
        searched = [nodes[c].move for c in node.children]
        if node.kind in ("leaf", "terminal", "table"):
            assert not node.children and not node.pruned
            continue
        # Searched then never searched: every legal move once (the engine reorders them).
        assert sorted(searched + node.pruned) == sorted(legal)
        assert bool(node.pruned) <= node.cutoff
        if search in ("minimax", "alphabeta", "alphabeta_soft", "minimax_prune"):
            values = [nodes[c].value for c in node.children]
            if search != "alphabeta":
                best = max(values) if node.side == "max" else min(values)
                assert node.value == best
        else:
            assert node.value == max(-nodes[c].value for c in node.children)
    assert traced.pv[0] == traced.best_move


def test_the_engine_trace_records_table_hits_and_cuts() -> None:
    state = get_game("checkers").initial_state()
    traced = trace(state, "engine", 5)
    assert traced.stats.tt_hits > 0 and any(n.kind == "table" for n in traced.nodes)
    assert all(n.tt_hit for n in traced.nodes if n.kind == "table")
    plain = trace(state, "engine", 5, tt=False, ordering=False)
    assert plain.stats.tt_hits == 0 and traced.stats.nodes < plain.stats.nodes
    assert traced.value == plain.value  # the table and the order change the work, not the value
    assert traced.options == {"tt": True, "ordering": True}
    assert plain.options == {"tt": False, "ordering": False}


# -- the lectures' worked examples ----------------------------------------------------------


def test_oracle_fail_soft_node_counts_on_the_empty_board() -> None:
    start = TICTACTOE.initial_state()
    full = trace(start, "alphabeta_soft", None, scoring="lecture")
    assert len(full.nodes) == full.stats.nodes == 18_297 and full.value == 0
    narrow = trace(start, "alphabeta_soft", None, scoring="lecture", window=(-1, 1))
    assert len(narrow.nodes) == 16_811 and narrow.value == 0
    assert narrow.root.alpha == -1 and narrow.root.beta == 1


def test_lecture_004_tictactoe_node_counts_by_depth() -> None:
    # "9 nodes, 9*8 = 72 nodes, 9*8*7 = 504, 9*8*7*6 = 3024, 9*8*7*6*5 = 15120".
    traced = trace(TICTACTOE.initial_state(), "minimax", 5)
    assert traced.counts_by_depth == [1, 9, 72, 504, 3024, 15120]


def test_lecture_000_alphabeta_windows_when_chooseMove_ends() -> None:  # noqa: N802
    # The figure itself is not in the text; this grid (X to move, three empty squares) fits
    # every number the text gives: A scores 0, B's first reply X scores 0, B and C each lose
    # one child, and the windows when chooseMove ends are "<-1,0> <0,0> <0,0>".
    state = TICTACTOE.parse_position("XXOO.X.O.")
    traced = trace(state, "alphabeta", None, scoring="lecture", window=(-1, 1))
    root = traced.root
    a, b, c = (traced.nodes[i] for i in root.children)
    assert [(n.alpha_out, n.beta_out) for n in (a, b, c)] == [(-1, 0), (0, 0), (0, 0)]
    assert (a.alpha, a.beta) == (-1, 1)
    assert (b.alpha, b.beta) == (c.alpha, c.beta) == (0, 1)  # "[0, 1] to begin investigating B"
    assert a.value == 0 and traced.nodes[b.children[0]].value == 0
    assert b.cutoff and len(b.children) == 1 and len(b.pruned) == 1
    assert c.cutoff and len(c.children) == 1 and len(c.pruned) == 1  # "prunes C's second child"
    assert traced.value == 0 and traced.best_move == a.move


def test_lecture_000_simple_pruning_stops_at_the_sure_win() -> None:
    # "the computer is guaranteed a win, which is obtained by choosing the second of the
    # three possible moves"; with simple pruning the third is never searched.
    state = TICTACTOE.parse_position("X..O.XXOO")
    plain = trace(state, "minimax", None, scoring="lecture")
    assert [plain.nodes[i].value for i in plain.root.children] == [0, 1, 0]
    pruned = trace(state, "minimax_prune", None, scoring="lecture")
    assert pruned.value == 1 and pruned.best_move == plain.nodes[plain.root.children[1]].move
    assert pruned.root.cutoff and pruned.root.pruned == [plain.nodes[plain.root.children[2]].move]
    assert len(pruned.nodes) < len(plain.nodes)


def misere_first_player_wins(heaps: tuple[int, ...], to_move: int) -> bool:
    """The oracle's rule for misère Nim, turned to player A (the first player)."""
    if all(h <= 1 for h in heaps):
        mover_wins = sum(heaps) % 2 == 0
    else:
        xor = 0
        for h in heaps:
            xor ^= h
        mover_wins = xor != 0
    return mover_wins == (to_move == 0)


def test_lecture_004_nim_tree_values_and_the_simple_cutoff() -> None:
    # Nim with m = 3 and n = 2, the player taking the last stick loses; values seen from A.
    nim = get_game("nim", {"heaps": "3,2"})
    traced = trace(nim.initial_state(), "minimax", None, scoring="lecture")
    for node in traced.nodes:
        state = nim.parse_position(node.position)
        heaps = tuple(int(h) for h in node.position.split("/")[0].split(","))
        assert node.value == (1 if misere_first_player_wins(heaps, state.to_move) else -1)
    # A wins from S, only by moving to (2, 2): U, the winning node.
    assert traced.value == 1 and traced.best_move == "1:1"
    assert [traced.nodes[i].value for i in traced.root.children].count(1) == 1
    # "A has then found a winning node U (marked +1), and the value of V and W then does not
    # matter": simple pruning stops at U.
    pruned = trace(nim.initial_state(), "minimax_prune", None, scoring="lecture")
    assert pruned.root.cutoff and pruned.nodes[pruned.root.children[-1]].position == "2,2/2"
    assert len(pruned.root.children) + len(pruned.root.pruned) == len(traced.root.children)


@pytest.mark.parametrize("name", GAMES)
def test_lecture_004_abnodevalue_is_traced_call_for_call(name: str) -> None:
    from bots.evaluation.knowledge import knowledge_for
    from bots.lectures.negamax import ab_node_value
    from bots.result import SearchStats
    from bots.scoring import ENGINE

    game = get_game(name)
    evaluate = knowledge_for(game).evaluation(None).function
    for seed in range(3):
        state = random_position(game, seed)
        if state.is_terminal():
            continue
        stats = SearchStats()
        value = ab_node_value(state, 3, evaluate=evaluate, scoring=ENGINE, stats=stats)
        traced = trace(state, "abnodevalue", 3)
        assert traced.value == value
        assert (traced.stats.nodes, traced.stats.cutoffs) == (stats.nodes, stats.cutoffs)
        assert traced.stats.evaluations == stats.evaluations
        # "Start: ABNodeValue(rootnode, 10, -inf)": the root's bound; a child's is -LB.
        assert traced.root.beta == INF


# -- the JSON shape and the limits ------------------------------------------------------------


def test_as_dict_is_the_shared_json_shape() -> None:
    traced = trace(TICTACTOE.parse_position("XX.OO...."), "alphabeta", 2)
    data = json.loads(json.dumps(traced.as_dict()))
    assert data["game"] == "tictactoe" and data["position"] == "XX.OO...."
    assert data["search"] == "alphabeta" and data["depth"] == 2
    assert data["evaluation"] == "lines" and data["perspective"] == "root"
    assert data["best_move"] == "2" and data["pv"] == ["2"]
    assert data["stats"]["nodes"] == len(data["nodes"]) == sum(data["counts_by_depth"])
    root = data["nodes"][0]
    assert root["parent"] is None and root["alpha"] == "-inf" and root["beta"] == "inf"
    assert root["side"] == "max" and root["move"] is None
    assert {"i", "ply", "value", "kind", "cutoff", "pruned", "children", "tt_hit"} <= set(root)
    assert trace(TICTACTOE.initial_state(), "engine", 2).as_dict()["perspective"] == "negamax"


def test_a_tree_over_the_limit_is_refused_with_the_limit_named() -> None:
    with pytest.raises(TraceLimitError, match="more than 1,000 nodes"):
        trace(TICTACTOE.initial_state(), "minimax", 4, max_nodes=1000)
    assert DEFAULT_MAX_NODES == 20_000
    with pytest.raises(TraceError, match="max_nodes must be"):
        trace(TICTACTOE.initial_state(), "minimax", 2, max_nodes=MAX_MAX_NODES + 1)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: trace(s, "bogus", 2), "unknown search 'bogus'"),
        (lambda s: trace(s, "minimax", 0), "depth must be 1 to 128"),
        (lambda s: trace(s, "minimax", 2, evaluation="nope"), "nope"),
        (lambda s: trace(s, "minimax", 2, scoring="odd"), "unknown scoring"),
        (lambda s: trace(s, "alphabeta", 2, window=(1, 1)), "alpha < beta"),
        (lambda s: trace_spec(s, "mcts"), "cannot be traced"),
        (lambda s: trace_spec(s, "alphabeta:depth=x"), "must be a whole number"),
    ],
)
def test_bad_requests_say_what_is_wrong(call: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call(TICTACTOE.initial_state())


def test_a_trace_can_be_stopped_from_outside() -> None:
    asked = []

    def stop() -> bool:
        asked.append(1)
        return len(asked) >= 3

    with pytest.raises(TraceStopped, match="stopped after 128 nodes"):
        trace(TICTACTOE.initial_state(), "minimax", 6, stop=stop)
    assert len(asked) == 3  # asked at nodes 0, 64 and 128


def test_a_finished_game_has_nothing_to_trace() -> None:
    with pytest.raises(TraceError, match="game is over"):
        trace(TICTACTOE.parse_position("XXXOO...."), "minimax", 2)


def test_trace_spec_follows_the_spec_and_its_depth_override() -> None:
    state = random_position(get_game("checkers"), 1)
    traced = trace_spec(state, "alphabeta:depth=2,tt=off,eval=material", depth=3)
    assert traced.search == "engine" and traced.depth == 3 and traced.evaluation == "material"
    assert traced.options == {"tt": False, "ordering": True}
    assert trace_spec(state, "minimax:prune=on,depth=2").search == "minimax_prune"
    assert trace_spec(state, "alphabeta_lecture:soft=on,depth=2").search == "alphabeta_soft"
