"""Alpha-beta in negamax form: the value of a node is the negated value of its best child.

Source: the lecture "Game trees and strategies" (Nim, symmetries, negamax alpha-beta),
`ABNodeValue(X, numLev, parentVal)`: every node's value is taken from the point of view of its
side to move, so one maximising rule serves both players; `parentVal` is the bound passed from
the parent (minus the parent's current lower bound), and a node stops as soon as its lower
bound LB reaches it. This is the same as fail-soft alpha-beta with a window (-inf, -parent LB).

`negamax` here takes a full (alpha, beta) window, of which the lecture's form is the special
case alpha = -inf; evaluations already score for the side to move, as negamax needs.
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


def ab_node_value(
    state: State[Any],
    levels: int | None,
    parent_value: float = INFINITY,
    *,
    evaluate: StateFunction | None = None,
    scoring: Scoring = LECTURE,
    stats: SearchStats | None = None,
    ply: int = 0,
    recorder: SearchRecorder = NO_RECORDER,
) -> float:
    """Return the lecture's `ABNodeValue` of `state` for its side to move.

    `levels` None searches to the end. Start with `ab_node_value(root, 10)` as in the lecture.
    `recorder` is told of every node (bots.recorder); a node's window is (-inf, parentVal), and
    (LB, parentVal) when it returns.
    """
    evaluation = require_evaluation(evaluate, levels)
    counters = stats if stats is not None else SearchStats()
    recording = recorder is not NO_RECORDER

    def value(
        node: State[Any], left: int | None, parent: float, depth: int, via: Hashable | None
    ) -> float:
        if recording:
            recorder.enter(node, via, depth, -INFINITY, parent)
        counters.nodes += 1
        outcome = node.outcome()
        if outcome is not None:
            score = scoring.terminal(outcome, node.to_move, depth)
            if recording:
                recorder.leave(score, "terminal", -INFINITY, parent)
            return score
        if left == 0:
            counters.evaluations += 1
            score = evaluation(node)
            if recording:
                recorder.leave(score, "leaf", -INFINITY, parent)
            return score
        moves = node.legal_moves()
        child_left = None if left is None else left - 1
        lower = -value(node.apply_unchecked(moves[0]), child_left, INFINITY, depth + 1, moves[0])
        for index in range(1, len(moves)):
            if lower >= parent:
                counters.cutoffs += 1
                if recording:
                    recorder.cutoff(node, moves[index:])
                    recorder.leave(lower, "inner", lower, parent)
                return lower
            move = moves[index]
            lower = max(
                lower, -value(node.apply_unchecked(move), child_left, -lower, depth + 1, move)
            )
        if recording:
            recorder.leave(lower, "inner", lower, parent)
        return lower

    return value(state, levels, parent_value, ply, None)


def negamax(
    state: State[Any],
    *,
    depth: int | None = None,
    evaluate: StateFunction | None = None,
    scoring: Scoring = LECTURE,
    alpha: float = -INFINITY,
    beta: float = INFINITY,
    clock: Clock = no_clock,
    stop: Stop | None = None,
    recorder: SearchRecorder = NO_RECORDER,
) -> SearchResult:
    """Return the negamax alpha-beta (fail-soft) move and score for the side to move.

    `stop` is asked every STOP_EVERY nodes: once it returns True the search raises
    SearchStopped. `recorder` is told of every node (bots.recorder).
    """
    evaluation = require_evaluation(evaluate, depth)
    stats = SearchStats()
    elapsed = timed(clock)
    recording = recorder is not NO_RECORDER

    def search(
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
            score = scoring.terminal(outcome, node.to_move, ply)
            if recording:
                recorder.leave(score, "terminal", alpha, beta)
            return score, []
        if left == 0:
            stats.evaluations += 1
            score = evaluation(node)
            if recording:
                recorder.leave(score, "leaf", alpha, beta)
            return score, []
        moves = node.legal_moves()
        best, best_pv = -INFINITY, [moves[0]]
        child_left = None if left is None else left - 1
        for move in moves:
            score, pv = search(node.apply_unchecked(move), child_left, ply + 1, -beta, -alpha, move)
            score = -score
            if score > best:
                best, best_pv = score, [move, *pv]
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        stats.cutoffs += 1
                        if recording:
                            recorder.cutoff(node, moves[moves.index(move) + 1 :])
                        break
        if recording:
            recorder.leave(best, "inner", alpha, beta)
        return best, best_pv

    score, pv = search(state, depth, 0, alpha, beta)
    return finish(state, score, pv, stats, depth, elapsed())
