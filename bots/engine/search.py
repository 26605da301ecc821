"""The alpha-beta engine: negamax alpha-beta as real engines run it.

What it adds to the lectures' alpha-beta (the game-search slides: "move ordering",
"iterative deepening", "caching states"; "Game trees and strategies": negamax form):

- a depth limit with the evaluation at the cut-off, except where the game's knowledge says the
  position is not quiet (checkers with a capture pending): there the search extends through
  the forced moves until the position is quiet, and never evaluates it statically;
- win and loss scores that prefer faster wins and slower losses (`bots.scoring.ENGINE`);
- a transposition table (bots.engine.table) with exact scores and bounds, its best move searched
first;
- move ordering: the table move, then the game's static order (captures first), killer moves
  (quiet moves that caused a cut-off at the same ply), then the history heuristic;
- iterative deepening under a deadline on a clock passed in: each iteration reuses the table
  and the ordering of the previous one; the move of the last completed iteration is returned.

No null-move pruning: it is unsound in zugzwang games such as checkers and Connect Four.
The engine names no game: it uses the games interface and the game's `Knowledge` only.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

from bots.common import SearchTimeout, pv_texts
from bots.engine.table import EXACT, LOWER, UPPER, TranspositionTable
from bots.evaluation import Knowledge, StateFunction
from bots.recorder import NO_RECORDER, SearchRecorder
from bots.result import Clock, SearchResult, SearchStats, Stop, no_clock
from bots.scoring import ENGINE, Scoring
from games import State

INFINITY = float("inf")
MAX_PLY = 128
"""Deepest ply a search (extensions included) may reach."""
TO_THE_END = 1000
"""Depths from here on mean "to the end of the game" (solvers search at such depths)."""
CHECK_EVERY = 64
"""Nodes between two looks at the clock."""
TT_MOVE_BONUS = 1e12
KILLER_BONUS = 1e6


class AlphaBetaEngine:
    """A negamax alpha-beta searcher for one game; keeps its table and history between moves.

    `tt` and `ordering` switch the transposition table and move ordering; with both off this
    is plain depth-limited negamax alpha-beta (with quiescence where the game needs it).
    `exact`, when given, returns a position's exact score as at the root on this scale (an
    endgame database: `bots.egdb`), or None; below the root it ends the search of a node.
    """

    def __init__(
        self,
        knowledge: Knowledge,
        evaluate: StateFunction,
        *,
        tt: bool = True,
        ordering: bool = True,
        table_size: int = 1 << 20,
        scoring: Scoring = ENGINE,
        clock: Clock = no_clock,
        exact: Callable[[State[Any]], float | None] | None = None,
    ) -> None:
        self.knowledge = knowledge
        self.exact = exact
        self.evaluate = evaluate
        self.scoring = scoring
        self.clock = clock
        self.ordering = ordering
        self.table = TranspositionTable(table_size) if tt else None
        self._history: dict[tuple[int, Hashable], int] = {}
        self._killers: list[list[Hashable | None]] = [[None, None] for _ in range(MAX_PLY + 1)]

    # -- public ----------------------------------------------------------------------------

    def search(
        self,
        state: State[Any],
        depth: int,
        *,
        deadline: float | None = None,
        max_nodes: int | None = None,
        stop: Stop | None = None,
        recorder: SearchRecorder = NO_RECORDER,
    ) -> SearchResult:
        """Search `state` to `depth` plies (and through forced captures beyond).

        Raises SearchTimeout if `deadline` (on the engine's clock) passes first, when `stop()`
        returns True (asked as often as the clock), or when the search reaches its
        `max_nodes`-th node; the exception's argument is the SearchStats so far. `recorder` is
        told of every node (bots.recorder); a node ended by the `exact` function is a "table"
        node.
        """
        if depth < 1:
            raise ValueError(f"search depth must be at least 1, not {depth}")
        if self.table is not None:
            self.table.new_search()
        start = self.clock()
        result = self._run(state, depth, deadline, max_nodes, stop, recorder)
        result.stats.seconds = self.clock() - start
        return result

    def iterative_deepening(
        self,
        state: State[Any],
        *,
        deadline: float | None = None,
        max_depth: int = 64,
        max_nodes: int | None = None,
        stop: Stop | None = None,
    ) -> SearchResult:
        """Search depth 1, 2, ... until `deadline`, `max_depth` or `max_nodes`; return the last
        completed iteration.

        `max_nodes` counts the nodes of all iterations: an iteration that would pass it is
        abandoned, so the result depends only on the position (a reproducible limit, unlike
        time). Stops early when the score is a proven win or loss, and like a deadline when
        `stop()` returns True. If not even depth 1 completes, the first move in the game's
        static order is returned with depth 0.
        """
        if self.table is not None:
            self.table.new_search()
        start = self.clock()
        totals = SearchStats()
        best: SearchResult | None = None
        for depth in range(1, max_depth + 1):
            left = None if max_nodes is None else max_nodes - totals.nodes
            if left is not None and left <= 0:
                break
            try:
                result = self._run(state, depth, deadline, left, stop)
            except SearchTimeout as timeout:
                _add(totals, timeout.args[0] if timeout.args else None)
                break
            _add(totals, result.stats)
            best = result
            totals.depth = depth
            if self.scoring.is_win(abs(result.score)) or result.move is None:
                break
            if deadline is not None and self.clock() >= deadline:
                break
            if stop is not None and stop():
                break
        if best is None:
            moves = self._ordered(state, state.legal_moves(), None, 0)
            best = SearchResult(move=moves[0] if moves else None, score=0.0, pv=list(moves[:1]))
        totals.pv = pv_texts(state, best.pv)
        totals.seconds = self.clock() - start
        best.stats = totals
        return best

    # -- the search ------------------------------------------------------------------------

    def _run(
        self,
        state: State[Any],
        depth: int,
        deadline: float | None,
        max_nodes: int | None = None,
        stop: Stop | None = None,
        recorder: SearchRecorder = NO_RECORDER,
    ) -> SearchResult:
        stats = SearchStats(depth=depth)
        knowledge = self.knowledge
        evaluate = self.evaluate
        scoring = self.scoring
        terminal = scoring.terminal
        by_distance = scoring.by_distance
        mate_zone = scoring.win - 10_000
        table = self.table
        probe = table.probe if table is not None else None
        store = table.store if table is not None else None
        key_of: Callable[[State[Any]], Hashable] = (
            knowledge.canonical_key if knowledge.canonical_key is not None else _own_key
        )
        is_quiet = knowledge.is_quiet
        exact = self.exact
        ordering = self.ordering
        ordered = self._ordered
        is_capture = knowledge.is_capture
        killers = self._killers
        history = self._history
        clock = self.clock
        pv_table: list[list[Hashable]] = [[] for _ in range(MAX_PLY + 2)]
        counters = [0, 0, 0, 0]  # nodes, evaluations, tt hits, cut-offs

        node_limit = max_nodes if max_nodes is not None else -1
        watched = deadline is not None or stop is not None
        recording = recorder is not NO_RECORDER

        def negamax(
            node: State[Any],
            left: int,
            alpha: float,
            beta: float,
            ply: int,
            via: Hashable | None = None,
        ) -> float:
            if recording:
                recorder.enter(node, via, ply, alpha, beta)
            counters[0] += 1
            if (
                watched
                and counters[0] % CHECK_EVERY == 1
                and (
                    (deadline is not None and clock() >= deadline) or (stop is not None and stop())
                )
            ):
                raise SearchTimeout(_snapshot(counters, depth))
            if counters[0] == node_limit:
                raise SearchTimeout(_snapshot(counters, depth))
            pv_table[ply] = []
            outcome = node.outcome()
            if outcome is not None:
                score = terminal(outcome, node.to_move, ply)
                if recording:
                    recorder.leave(score, "terminal", alpha, beta)
                return score
            if exact is not None and ply > 0:
                known = exact(node)
                if known is not None:
                    if known > mate_zone:
                        known -= ply
                    elif known < -mate_zone:
                        known += ply
                    if recording:
                        recorder.leave(known, "table", alpha, beta)
                    return known
            if left <= 0:
                if is_quiet is None or ply >= MAX_PLY or is_quiet(node):
                    counters[1] += 1
                    score = evaluate(node)
                    if recording:
                        recorder.leave(score, "leaf", alpha, beta)
                    return score
                left = 0  # not quiet: search the forced moves, depth unchanged
            alpha_start = alpha
            key = key_of(node)
            tt_move = None
            if probe is not None:
                entry = probe(key)
                if entry is not None:
                    counters[2] += 1
                    if recording:
                        recorder.table_hit()
                    tt_move = entry[4]
                    # Only an entry of exactly this depth may end the node: a deeper one (a
                    # transposition met at another ply) would change the value a depth-d
                    # search reports, which must equal depth-d minimax.
                    # A search deeper than TO_THE_END is never cut by depth, so its entries
                    # are exact to the end of the game whatever depth they were stored at.
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
                            if recording:
                                recorder.leave(score, "table", alpha, beta)
                            return score
            moves = node.legal_moves()
            if ordering and len(moves) > 1:
                moves = ordered(node, moves, tt_move, ply)
            elif tt_move is not None and len(moves) > 1 and tt_move in moves:
                moves = [tt_move, *(m for m in moves if m != tt_move)]
            child_left = left - 1 if left > 0 else 0
            best = -INFINITY
            best_move = moves[0]
            for move in moves:
                score = -negamax(
                    node.apply_unchecked(move), child_left, -beta, -alpha, ply + 1, move
                )
                if score > best:
                    best = score
                    best_move = move
                    if score > alpha:
                        alpha = score
                        pv_table[ply] = [move, *pv_table[ply + 1]]
                        if alpha >= beta:
                            counters[3] += 1
                            if recording:
                                recorder.cutoff(node, moves[moves.index(move) + 1 :])
                            if ordering and not (is_capture is not None and is_capture(node, move)):
                                slot = killers[ply]
                                if slot[0] != move:
                                    slot[1] = slot[0]
                                    slot[0] = move
                                hkey = (node.to_move, move)
                                history[hkey] = history.get(hkey, 0) + left * left
                            break
            if store is not None:
                flag = UPPER if best <= alpha_start else LOWER if best >= beta else EXACT
                stored = best
                if by_distance:
                    if stored > mate_zone:
                        stored += ply
                    elif stored < -mate_zone:
                        stored -= ply
                store(key, left, flag, stored, best_move)
            if recording:
                recorder.leave(best, "inner", alpha, beta)
            return best

        score = negamax(state, depth, -INFINITY, INFINITY, 0)
        pv = pv_table[0]
        stats.nodes, stats.evaluations, stats.tt_hits, stats.cutoffs = counters
        stats.pv = pv_texts(state, pv)
        move = pv[0] if pv else (state.legal_moves()[0] if state.legal_moves() else None)
        return SearchResult(
            move=move, score=score, pv=list(pv) or ([move] if move else []), stats=stats
        )

    def _ordered(
        self, node: State[Any], moves: Sequence[Hashable], tt_move: Hashable | None, ply: int
    ) -> list[Hashable]:
        """Return `moves` best-first: table move, static order, killers, history."""
        static = self.knowledge.move_order
        killer_a, killer_b = self._killers[ply] if ply <= MAX_PLY else (None, None)
        history = self._history
        side = node.to_move
        scored = []
        for index, move in enumerate(moves):
            if tt_move is not None and move == tt_move:
                value = TT_MOVE_BONUS
            else:
                value = static(node, move) * KILLER_BONUS * 10 if static is not None else 0.0
                if move in (killer_a, killer_b):
                    value += KILLER_BONUS
                value += history.get((side, move), 0)
            scored.append((-value, index, move))
        scored.sort()
        return [move for _, _, move in scored]


def _own_key(state: State[Any]) -> Hashable:
    return state.key()


def _snapshot(counters: list[int], depth: int) -> SearchStats:
    nodes, evaluations, hits, cutoffs = counters
    return SearchStats(nodes=nodes, evaluations=evaluations, tt_hits=hits, cutoffs=cutoffs)


def _add(totals: SearchStats, stats: SearchStats | None) -> None:
    if stats is None:
        return
    totals.nodes += stats.nodes
    totals.evaluations += stats.evaluations
    totals.tt_hits += stats.tt_hits
    totals.cutoffs += stats.cutoffs
