"""Minimax, as in the lecture's `chooseMove` returning a `Best` (move, score).

Source: CS 61B Lecture 17, "Game tree search" (the tic-tac-toe game-tree lecture):
the side to move at the root is the maximising player (the lecture's COMPUTER); the opponent
minimises. Scores are from the root player's point of view. With `prune`, the lecture's
"simple pruning": stop searching a node as soon as a guaranteed win for its mover is found.

A depth limit evaluates the positions at the limit with an evaluation function (which scores
for the side to move there; minimax turns it to the root player's view).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from bots.common import STOP_EVERY, finish, require_evaluation, timed
from bots.evaluation import StateFunction
from bots.recorder import NO_RECORDER, SearchRecorder
from bots.result import Clock, SearchResult, SearchStats, SearchStopped, Stop, no_clock
from bots.scoring import LECTURE, Scoring
from games import State

INFINITY = float("inf")


def minimax(
    state: State[Any],
    *,
    depth: int | None = None,
    evaluate: StateFunction | None = None,
    scoring: Scoring = LECTURE,
    prune: bool = False,
    clock: Clock = no_clock,
    stop: Stop | None = None,
    recorder: SearchRecorder = NO_RECORDER,
) -> SearchResult:
    """Return the minimax move and score of `state` for its side to move.

    `depth` None searches to the end of the game. Every call counts as a node (root and leaves
    included), so the full tic-tac-toe tree is 549,946 nodes. `stop` is asked every
    STOP_EVERY nodes: once it returns True the search raises SearchStopped. `recorder` is told
    of every node (bots.recorder), with values from the root player's point of view and no
    window: (-inf, inf).
    """
    evaluation = require_evaluation(evaluate, depth)
    root_player = state.to_move
    stats = SearchStats()
    elapsed = timed(clock)
    recording = recorder is not NO_RECORDER

    def choose(
        node: State[Any], left: int | None, ply: int, via: Hashable | None = None
    ) -> tuple[float, list[Hashable]]:
        if recording:
            recorder.enter(node, via, ply, -INFINITY, INFINITY)
        stats.nodes += 1
        if stop is not None and stats.nodes % STOP_EVERY == 0 and stop():
            raise SearchStopped(stats)
        outcome = node.outcome()
        if outcome is not None:
            score = scoring.terminal(outcome, root_player, ply)
            if recording:
                recorder.leave(score, "terminal", -INFINITY, INFINITY)
            return score, []
        if left == 0:
            stats.evaluations += 1
            value = evaluation(node)
            score = value if node.to_move == root_player else -value
            if recording:
                recorder.leave(score, "leaf", -INFINITY, INFINITY)
            return score, []
        maximising = node.to_move == root_player
        moves = node.legal_moves()
        best_score = -scoring.win - 1 if maximising else scoring.win + 1
        best_pv: list[Hashable] = [moves[0]]
        child_left = None if left is None else left - 1
        for move in moves:
            score, pv = choose(node.apply_unchecked(move), child_left, ply + 1, move)
            if (maximising and score > best_score) or (not maximising and score < best_score):
                best_score, best_pv = score, [move, *pv]
                # Nothing beats a win in the next ply (with distance scoring) or any win (the
                # lecture's scoring), so the rest of the node cannot change its value.
                best_possible = scoring.win - (ply + 1) if scoring.by_distance else scoring.win
                if prune and (
                    (maximising and score >= best_possible)
                    or (not maximising and score <= -best_possible)
                ):
                    stats.cutoffs += 1
                    if recording:
                        recorder.cutoff(node, moves[moves.index(move) + 1 :])
                    break
        if recording:
            recorder.leave(best_score, "inner", -INFINITY, INFINITY)
        return best_score, best_pv

    score, pv = choose(state, depth, 0)
    return finish(state, score, pv, stats, depth, elapsed())
