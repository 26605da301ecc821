"""Alpha-beta pruning in the lecture's minimax form: fail-hard, and a fail-soft variant.

Source: CS 61B Lecture 17, "Game tree search", `chooseMove(side,
alpha, beta)`: alpha is a score the maximising (root) player is sure of, beta one the
minimising player is sure of; a node whose window closes (alpha >= beta) is abandoned. The
lecture's version is fail-hard: a node's best score starts at alpha (or beta) so returned
scores are clamped to the window. The fail-soft variant starts from -inf/+inf, so a cut-off
node returns a bound that may lie outside the window (more information for the caller, the
same root value).

Scores are from the root player's point of view; evaluations (for the side to move at the
cut-off) are turned to that view.
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


def alphabeta(
    state: State[Any],
    *,
    depth: int | None = None,
    evaluate: StateFunction | None = None,
    scoring: Scoring = LECTURE,
    alpha: float = -INFINITY,
    beta: float = INFINITY,
    fail_soft: bool = False,
    clock: Clock = no_clock,
    stop: Stop | None = None,
    recorder: SearchRecorder = NO_RECORDER,
) -> SearchResult:
    """Return the alpha-beta move and score of `state` for its side to move.

    Fail-hard (the lecture's pseudocode) unless `fail_soft`. With the full window the score is
    the minimax value. Every call counts as a node, root and leaves included. `stop` is asked
    every STOP_EVERY nodes: once it returns True the search raises SearchStopped. `recorder` is
    told of every node (bots.recorder), with values from the root player's point of view.
    """
    evaluation = require_evaluation(evaluate, depth)
    root_player = state.to_move
    stats = SearchStats()
    elapsed = timed(clock)
    recording = recorder is not NO_RECORDER

    def choose(
        node: State[Any],
        left: int | None,
        ply: int,
        alpha: float,
        beta: float,
        via: Hashable | None = None,
    ) -> tuple[float, list[Hashable]]:
        if recording:
            recorder.enter(node, via, ply, alpha, beta)
        stats.nodes += 1
        if stop is not None and stats.nodes % STOP_EVERY == 0 and stop():
            raise SearchStopped(stats)
        outcome = node.outcome()
        if outcome is not None:
            score = scoring.terminal(outcome, root_player, ply)
            if recording:
                recorder.leave(score, "terminal", alpha, beta)
            return score, []
        if left == 0:
            stats.evaluations += 1
            value = evaluation(node)
            score = value if node.to_move == root_player else -value
            if recording:
                recorder.leave(score, "leaf", alpha, beta)
            return score, []
        computer = node.to_move == root_player
        if fail_soft:
            best_score = -INFINITY if computer else INFINITY
        else:
            best_score = alpha if computer else beta
        moves = node.legal_moves()
        best_pv: list[Hashable] = [moves[0]]  # "myBest.move = any legal move"
        child_left = None if left is None else left - 1
        for move in moves:
            score, pv = choose(node.apply_unchecked(move), child_left, ply + 1, alpha, beta, move)
            if computer and score > best_score:
                best_score, best_pv = score, [move, *pv]
                alpha = max(alpha, score)
            elif not computer and score < best_score:
                best_score, best_pv = score, [move, *pv]
                beta = min(beta, score)
            if alpha >= beta:
                stats.cutoffs += 1
                if recording:
                    recorder.cutoff(node, moves[moves.index(move) + 1 :])
                break
        if recording:
            recorder.leave(best_score, "inner", alpha, beta)
        return best_score, best_pv

    score, pv = choose(state, depth, 0, alpha, beta)
    return finish(state, score, pv, stats, depth, elapsed())
