"""Traced searches visit exactly the nodes the bots' own searches visit, and draw the lectures.

Each traced search in bots.trace re-implements one search module; these tests tie the two
together (same node count, evaluations, cut-offs, table hits, value, best move and principal
variation on random positions of every game), check the recorded tree against the rules of
minimax, and reproduce the worked examples of the lectures in ../shared/lectures.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from bots.spec import create_bot
from bots.trace import (
    MAX_MAX_NODES,
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
