"""Monte Carlo tree search: UCT with random playouts, and the MCTS-Solver.

Sources:
- UCT (Kocsis & Szepesvári 2006, "Bandit based Monte-Carlo Planning"): each simulation walks
  down the tree choosing the child that maximises UCB1, `mean + c * sqrt(ln N / n)` (Auer et
  al. 2002), expands one untried move, plays uniformly random moves to the end of the game and
  backs the result up the path. Rewards are +1 win, 0 draw, -1 loss for the player who moved
  into a node, so every mean lies in [-1, 1].
- MCTS-Solver (Winands, Björnsson & Saito 2008, "Monte-Carlo Tree Search Solver"): terminal
  nodes are proven, and proofs propagate up during back-up. A node is a proven win for its side
  to move as soon as one of its children is a proven loss for that child's side to move, and a
  proven loss once every move has been tried and every child is a proven win for the opponent.
  As a small extension, once every child is proven a node takes the best of their values, so
  draws are proven too. Selection skips children proven lost for the player choosing and stops
  at a proven child (its exact value is the result, no playout); the root stops the search as
  soon as it is proven; the final move is a proven win when there is one and never a proven
  loss when there is another choice.

No clock and no global randomness: the caller passes `clock` and a `random.Random`, so a search
with the same seed and the same budget in simulations returns the same result.
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable
from typing import Any

from bots.common import pv_texts, timed
from bots.result import Clock, SearchResult, SearchStats, Stop, no_clock
from bots.scoring import WIN
from games import State

DEFAULT_C = 1.414
"""The UCB1 exploration constant: about sqrt(2), the value for rewards in [0, 1] in UCB1's
regret bound; with rewards in [-1, 1] it explores somewhat less in relative terms."""


class _Node:
    """One tree node: its state, the statistics of the simulations through it, and its proof.

    `total` is the sum of rewards for `mover`, the player who made the move into this node
    (the parent's side to move), which is the view the parent needs to choose among children.
    `proof` is None while the value is unknown, else the exact reward for `mover`: +1, 0 or
    -1. Terminal nodes are proven from the start, with or without the solver.
    """

    __slots__ = (
        "children",
        "move",
        "mover",
        "player",
        "proof",
        "state",
        "total",
        "untried",
        "visits",
    )

    def __init__(self, state: State[Any], move: Hashable, mover: int, rng: random.Random) -> None:
        self.state = state
        self.move = move
        self.mover = mover
        self.player = state.to_move
        self.visits = 0
        self.total = 0.0
        self.children: list[_Node] = []
        moves = state.legal_moves()
        self.untried: list[Hashable] = list(moves)
        # Popping from the end of a shuffled list expands the moves in a random order.
        rng.shuffle(self.untried)
        self.proof: int | None = None
        if not moves:
            outcome = state.outcome()
            winner = None if outcome is None else outcome.winner
            self.proof = _reward(winner, mover)


def _reward(winner: int | None, player: int) -> int:
    """Return +1 if `player` won, 0 for a draw (None), -1 if the other player won."""
    if winner is None:
        return 0
    return 1 if winner == player else -1


def _winner(value: int, player: int) -> int | None:
    """Return the winner of a game worth `value` (+1, 0, -1) to `player`."""
    if value == 0:
        return None
    return player if value > 0 else 1 - player


def _select(node: _Node, c: float, solver: bool) -> _Node:
    """Return the child of a fully expanded `node` with the highest UCB1 value.

    With the solver, children proven lost for the player choosing are skipped; the caller
    guarantees that one child at least is not (else `node` would be proven).
    """
    explore = c * math.sqrt(math.log(node.visits))
    best = node.children[0]
    best_value = -math.inf
    sqrt = math.sqrt
    for child in node.children:
        if solver and child.proof == -1:
            continue
        visits = child.visits
        value = child.total / visits + explore / sqrt(visits)
        if value > best_value:
            best, best_value = child, value
    return best


def _rollout(state: State[Any], rng: random.Random, max_plies: int) -> int | None:
    """Play uniformly random moves to the end; return the winner (None: draw or ply limit)."""
    choice = rng.choice
    for _ in range(max_plies):
        moves = state.legal_moves()
        if not moves:
            break
        state = state.apply_unchecked(choice(moves))
    outcome = state.outcome()
    return None if outcome is None else outcome.winner


def _solve(node: _Node, proven_child: _Node) -> bool:
    """Prove `node` if its newly proven child settles it; return True if it did.

    A child's proof is from the view of `node.player` (the child's mover): one winning child
    proves a win; otherwise every move must be tried and every child proven, and the node is
    worth the best of them.
    """
    if proven_child.proof == 1:
        value = 1
    else:
        if node.untried:
            return False
        value = -1
        for child in node.children:
            proof = child.proof
            if proof is None:
                return False
            value = max(value, proof)
    node.proof = value if node.mover == node.player else -value
    return True


def _simulate(root: _Node, rng: random.Random, c: float, solver: bool, max_plies: int) -> int:
    """Run one simulation (select, expand, play out, back up); return the leaf's depth."""
    node = root
    path = [root]
    newly_proven = False
    while node.proof is None:
        if node.untried:
            move = node.untried.pop()
            child = _Node(node.state.apply_unchecked(move), move, node.player, rng)
            node.children.append(child)
            path.append(child)
            node = child
            newly_proven = child.proof is not None
            break
        node = _select(node, c, solver)
        path.append(node)
    if node.proof is None:
        winner = _rollout(node.state, rng, max_plies)
    else:
        # A proven leaf needs no playout: its exact value is the result.
        winner = _winner(node.proof, node.mover)
    propagate = solver and newly_proven
    for index in range(len(path) - 1, -1, -1):
        node = path[index]
        node.visits += 1
        if winner is not None:
            node.total += 1.0 if winner == node.mover else -1.0
        if propagate and index > 0:
            parent = path[index - 1]
            propagate = _solve(parent, node)
            if propagate:
                # Above a proven node, back up its exact value instead of the playout's.
                winner = _winner(_value_to_move(parent), parent.player)
    return len(path) - 1


def _value_to_move(node: _Node) -> int:
    """Return the proven value of `node` (+1, 0, -1) for its side to move."""
    proof = node.proof
    if proof is None:
        raise ValueError("the node is not proven")
    return proof if node.mover == node.player else -proof


def _most_visited(children: list[_Node]) -> _Node:
    """Return the child with the most visits (the first of equals)."""
    return max(children, key=lambda child: child.visits)


def _best_child(node: _Node) -> _Node:
    """Return the move to play from an expanded `node`, for its side to move.

    At a proven node, the most visited child that keeps the proven value (at a proven win that
    is the one child whose proof settled it: a proven node is never entered again, so no second
    winning child gets proven); otherwise the most visited child that is not a proven loss.
    """
    children = node.children
    if node.proof is not None:
        value = _value_to_move(node)
        return _most_visited([child for child in children if child.proof == value])
    not_lost = [child for child in children if child.proof != -1]
    return _most_visited(not_lost or children)


def _principal_variation(first: _Node) -> list[Hashable]:
    """Return `first`'s move followed by the best child (see `_best_child`) at each level."""
    pv = [first.move]
    node = first
    while node.children:
        node = _best_child(node)
        pv.append(node.move)
    return pv


def _tree_size(root: _Node) -> int:
    """Return the number of nodes in the tree below and including `root`."""
    count = 0
    stack = [root]
    while stack:
        node = stack.pop()
        count += 1
        stack.extend(node.children)
    return count


def mcts_search(
    state: State[Any],
    *,
    simulations: int | None = None,
    deadline: float | None = None,
    clock: Clock = no_clock,
    rng: random.Random,
    c: float = DEFAULT_C,
    solver: bool = True,
    max_rollout_plies: int = 10_000,
    stop: Stop | None = None,
) -> SearchResult:
    """Return the MCTS (UCT, with the MCTS-Solver unless `solver=False`) move for `state`.

    The search stops at the first of: `simulations` simulations run, `clock() >= deadline`
    (`deadline` is a time on `clock`, in its units, checked after every simulation), the root
    proven (solver only), `stop()` True (asked after every simulation). At least one simulation
    runs; give `simulations`, `deadline` or both.
    A playout longer than `max_rollout_plies` counts as a draw.

    The result, from the view of the side to move at the root:
    - root proven won: `score` WIN, `move` the proven winning move;
    - root proven lost: `score` -WIN, `move` the most visited move;
    - root proven drawn: `score` 0, `move` the most visited drawing move;
    - otherwise `move` is the most visited move not proven lost and `score` its mean reward in
      [-1, 1] (+1 win, 0 draw, -1 loss).
    `best_moves` is `[move]`: the search stops at its first proof, so a proven win has exactly
    one proven winning move. `pv` continues from `move` with the most visited child at each
    level, or in a proven subtree the child that keeps the proven value. `stats.nodes` counts
    the tree nodes created (root included), `stats.depth` the deepest node reached,
    `stats.simulations` the simulations run and `stats.seconds` the time on `clock`.
    """
    if simulations is None and deadline is None:
        raise ValueError("mcts_search needs a budget: simulations, a deadline, or both")
    if simulations is not None and simulations < 1:
        raise ValueError(f"simulations must be at least 1, not {simulations}")
    if c < 0:
        raise ValueError(f"the exploration constant c must be >= 0, not {c}")
    if max_rollout_plies < 0:
        raise ValueError(f"max_rollout_plies must be >= 0, not {max_rollout_plies}")
    elapsed = timed(clock)
    stats = SearchStats()
    root = _Node(state, None, 1 - state.to_move, rng)
    if root.proof is not None:
        outcome = state.outcome()
        winner = None if outcome is None else outcome.winner
        stats.nodes = 1
        stats.seconds = elapsed()
        score = float(_reward(winner, state.to_move) * WIN)
        return SearchResult(move=None, score=score, stats=stats)

    limit = math.inf if simulations is None else simulations
    done = 0
    depth = 0
    while True:
        depth = max(depth, _simulate(root, rng, c, solver, max_rollout_plies))
        done += 1
        if root.proof is not None or done >= limit:
            break
        if deadline is not None and clock() >= deadline:
            break
        if stop is not None and stop():
            break

    chosen = _best_child(root)
    if root.proof is None:
        score = chosen.total / chosen.visits
    else:
        score = float(_value_to_move(root) * WIN)

    pv = _principal_variation(chosen)
    stats.simulations = done
    stats.nodes = _tree_size(root)
    stats.depth = depth
    stats.pv = pv_texts(state, pv)
    stats.seconds = elapsed()
    return SearchResult(move=chosen.move, score=score, pv=pv, stats=stats, best_moves=[chosen.move])
