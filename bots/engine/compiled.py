"""The house engine on the compiled core: bots.engine.search's search, for checkers and Connect
Four, at machine speed.

`compiled_engine(...)` returns a compiled engine when a compiled search can run exactly what
`bots.engine.search.AlphaBetaEngine` would with the same arguments, and None otherwise: the caller
then builds the Python engine, which stays the reference. For checkers that is a
`CompiledEngine` (bots.core.checkers_search: checkers' standard knowledge, an evaluation the
core implements, the engine's scoring, no endgame database); for Connect Four a
`CompiledConnectFourEngine` (bots.core.connect4_search: Connect Four's standard knowledge,
`threats` or `lines`, the engine's scoring). Both are this module's one driver, told by a
small description of their game (`CoreGame`: bots.engine.checkers, bots.engine.connect4)
how to hand the core a position and read its moves back. They have the same `search` and
`iterative_deepening` as the Python engine, and for the same calls return the same moves,
scores, principal variations and counts (tests/bots/engine/test_compiled_engine.py and
test_compiled_connect4_engine.py hold them to it).

Time and stop: the compiled search cannot read a Python clock. It runs without the GIL on a
worker thread while the calling thread reads the engine's clock and asks `stop()` (when a
deadline or a stop is given) every POLL_SECONDS, and sets the core's stop flag once either says
so, or when the calling thread is interrupted (Ctrl-C); the core looks at the flag every
CHECK_EVERY nodes, as the Python engine looks at the clock. Node limits are counted inside the
core, so they are exact and reproducible.

numba is imported when the first engine is built (`load_core`), never at import: the first
compilation on a machine is announced on the logger `bots.core` (a command line prints it on
stderr, a server writes it to its log; a server loads the core at start-up, off its event
loop).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from bots.common import SearchTimeout, pv_texts
from bots.engine.checkers import checkers_core, core_evaluation
from bots.engine.connect4 import connect4_core
from bots.engine.cores import (
    CONNECT4_CORE,
    CORE,
    PLAIN,
    Buffer,
    CoreGame,
    SearchFeatures,
    core_state,
    load_core,
    load_cores,
)
from bots.engine.search import _add
from bots.engine.timing import start_iteration
from bots.evaluation import Knowledge, StateFunction
from bots.result import Clock, SearchResult, SearchStats, Stop, no_clock
from bots.scoring import ENGINE, Scoring
from games import State

__all__ = [
    "CONNECT4_CORE",
    "CORE",
    "PLAIN",
    "CompiledConnectFourEngine",
    "CompiledEngine",
    "CoreGame",
    "SearchFeatures",
    "compiled_engine",
    "core_evaluation",
    "core_state",
    "load_core",
    "load_cores",
]

POLL_SECONDS = 0.001
"""How often the calling thread reads the clock and asks `stop` while the core searches."""

COMPILED_SEARCH_THREAD = "compiled-search"
"""The name of the worker threads a watched compiled search runs on."""


ASPIRATION = 40
"""Half the aspiration window (a man is 100)."""


def compiled_engine(
    knowledge: Knowledge,
    evaluate: StateFunction,
    *,
    tt: bool = True,
    ordering: bool = True,
    table_size: int = 1 << 20,
    scoring: Scoring = ENGINE,
    clock: Clock = no_clock,
    exact: Callable[[State[Any]], float | None] | None = None,
    features: SearchFeatures | None = None,
) -> CompiledEngine | None:
    """Return the compiled engine for these AlphaBetaEngine arguments, or None when the core
    cannot search exactly as the Python engine would (another game or knowledge, a
    user-defined evaluation, another scoring, an endgame database).

    Connect Four has no engine mode: as the Python engine, its compiled search ignores
    `features`.
    """
    if scoring != ENGINE or exact is not None:
        return None
    connect4 = connect4_core(knowledge, evaluate)
    game: CoreGame | None = connect4 or checkers_core(knowledge, evaluate, features or PLAIN)
    if game is None:
        return None
    engine = CompiledEngine if connect4 is None else CompiledConnectFourEngine
    return engine(game, tt=tt, ordering=ordering, table_size=table_size, clock=clock)


class CompiledEngine:
    """bots.engine.search.AlphaBetaEngine on a game's compiled core; same calls, same results.

    Keeps its table, killers and history (one int64 buffer) between moves, as the Python
    engine does. The buffer is allocated at the first search. The engine mode (`features`)
    is the game's: checkers' search has one.
    """

    def __init__(
        self,
        game: CoreGame,
        *,
        tt: bool = True,
        ordering: bool = True,
        table_size: int = 1 << 20,
        clock: Clock = no_clock,
    ) -> None:
        if table_size < 1:
            raise ValueError(f"table size must be at least 1, not {table_size}")
        self._core = load_core(game.module)
        self._game = game
        self.clock = clock
        self.ordering = ordering
        self.tt = tt
        self.features = game.features
        self._slots = 1 << max(0, (table_size - 1).bit_length()) if tt else 0
        self._buffer: Buffer | None = None

    @property
    def buffer(self) -> Buffer:
        """The core's buffer: counters, killers, history and table (and checkers' positions)."""
        if self._buffer is None:
            core = self._core
            buf = self._game.new_buffer(core, self._slots)
            buf[core.USE_TT] = int(self.tt)
            buf[core.ORDERING] = int(self.ordering)
            self._buffer = buf
        return self._buffer

    @property
    def table_start(self) -> int:
        """Where the transposition table begins in the buffer (it runs to the end)."""
        return int(self._core.TABLE)

    # -- public, as AlphaBetaEngine ----------------------------------------------------------

    def search(
        self,
        state: State[Any],
        depth: int,
        *,
        deadline: float | None = None,
        max_nodes: int | None = None,
        stop: Stop | None = None,
    ) -> SearchResult:
        """Search `state` to `depth` plies (and through forced captures beyond): as
        AlphaBetaEngine.search, SearchTimeout included."""
        if depth < 1:
            raise ValueError(f"search depth must be at least 1, not {depth}")
        self._new_search()
        start = self.clock()
        result = self._run(self._game.root(state), depth, deadline, max_nodes, stop)
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
        """Search depth 1, 2, ... until `deadline`, `max_depth` or `max_nodes`: as
        AlphaBetaEngine.iterative_deepening."""
        root = self._game.root(state)
        self._new_search()
        start = self.clock()
        totals = SearchStats()
        best: SearchResult | None = None
        stable = 0
        for depth in range(1, max_depth + 1):
            left = None if max_nodes is None else max_nodes - totals.nodes
            if left is not None and left <= 0:
                break
            try:
                if self.features.pvs and best is not None and depth > 2:
                    result = self._aspirated(root, depth, int(best.score), deadline, left, stop)
                else:
                    result = self._run(root, depth, deadline, left, stop)
            except SearchTimeout as timeout:
                _add(totals, timeout.args[0] if timeout.args else None)
                if self.features.partial and best is not None:
                    best = self._partial(root, best)
                break
            _add(totals, result.stats)
            previous = best
            best = result
            totals.depth = depth
            if ENGINE.is_win(abs(result.score)) or result.move is None:
                break
            if self.buffer[self._core.STOP]:
                break  # the stop or the deadline said so as the iteration completed
            if deadline is not None and self.clock() >= deadline:
                break
            if stop is not None and stop():
                break
            if self.features.tm and deadline is not None:
                held = previous is not None and previous.move == result.move
                stable = stable + 1 if held else 0
                drop = 0.0 if previous is None else float(previous.score) - float(result.score)
                if not start_iteration(
                    self.clock() - start,
                    deadline - start,
                    stable_iterations=stable,
                    score_drop=drop,
                ):
                    break
        if best is None:
            ordered = self._game.root_order(self._core, self.buffer, root)
            best = SearchResult(
                move=ordered[0] if ordered else None, score=0.0, pv=list(ordered[:1])
            )
        totals.pv = pv_texts(root, best.pv)
        totals.seconds = self.clock() - start
        best.stats = totals
        return best

    # -- the search --------------------------------------------------------------------------

    def _aspirated(
        self,
        state: Any,
        depth: int,
        guess: int,
        deadline: float | None,
        max_nodes: int | None,
        stop: Stop | None,
    ) -> SearchResult:
        """Search in a window of ASPIRATION around `guess`, opening the side it fails on."""
        core = self._core
        if abs(guess) > core.MATE_ZONE:
            return self._run(state, depth, deadline, max_nodes, stop)
        alpha = guess - ASPIRATION
        beta = guess + ASPIRATION
        spent = SearchStats()
        while True:
            left = None if max_nodes is None else max_nodes - spent.nodes
            if left is not None and left <= 0:
                raise SearchTimeout(spent)
            try:
                result = self._run(state, depth, deadline, left, stop, (alpha, beta))
            except SearchTimeout as timeout:
                _add(spent, timeout.args[0] if timeout.args else None)
                raise SearchTimeout(spent) from None
            if alpha < result.score < beta or (alpha == -core.INF and beta == core.INF):
                _add(spent, result.stats)
                result.stats.nodes = spent.nodes
                result.stats.evaluations = spent.evaluations
                result.stats.tt_hits = spent.tt_hits
                result.stats.cutoffs = spent.cutoffs
                return result
            _add(spent, result.stats)
            if result.score <= alpha:
                alpha = -core.INF
            else:
                beta = core.INF

    def _partial(self, state: Any, previous: SearchResult) -> SearchResult:
        """The best root move of an iteration the time cut short, when a move searched in it
        beat the previous iteration's first one; else `previous`."""
        core = self._core
        buf = self.buffer
        if int(buf[core.ROOT_MOVE]) < 0:
            return previous
        pv = self._game.moves(state, core.principal_variation(buf))
        if not pv or pv[0] == previous.move:
            return previous
        return SearchResult(move=pv[0], score=int(buf[core.ROOT_SCORE]), pv=pv)

    def _new_search(self) -> None:
        buf = self.buffer
        buf[self._core.GENERATION] += 1
        buf[self._core.STOP] = 0

    def _run(
        self,
        state: Any,
        depth: int,
        deadline: float | None,
        max_nodes: int | None,
        stop: Stop | None,
        window: tuple[int, int] | None = None,
    ) -> SearchResult:
        core = self._core
        buf = self.buffer
        game = self._game
        most = game.max_depth(core)
        if depth > most:
            raise ValueError(f"the compiled search goes to depth {most}, not {depth}")
        call = game.searcher(core, buf, state, depth, window)
        buf[core.NODE_LIMIT] = max_nodes if max_nodes is not None else -1
        score = _watched(buf, core.STOP, self.clock, call, deadline, stop)
        stats = SearchStats(
            depth=depth,
            nodes=int(buf[core.NODES]),
            evaluations=int(buf[core.EVALUATIONS]),
            tt_hits=int(buf[core.TT_HITS]),
            cutoffs=int(buf[core.CUTOFFS]),
        )
        if buf[core.ABORTED]:
            stats.depth = 0
            raise SearchTimeout(stats)
        pv = game.moves(state, core.principal_variation(buf))
        stats.pv = pv_texts(state, pv)
        legal = state.legal_moves()
        move = pv[0] if pv else (legal[0] if legal else None)
        return SearchResult(
            move=move, score=score, pv=list(pv) or ([move] if move else []), stats=stats
        )


class CompiledConnectFourEngine(CompiledEngine):
    """The compiled engine on Connect Four's core (bots.engine.connect4), a type of its own
    for callers that tell the games' engines apart."""


def _watched(
    buf: Buffer,
    flag: int,
    clock: Clock,
    call: Callable[[], int],
    deadline: float | None,
    stop: Stop | None,
) -> int:
    """Run `call` (a compiled search on `buf`) on a worker thread while this one reads `clock`
    and asks `stop` (when given), setting the core's stop flag (`buf[flag]`) when either says
    so, or when this thread is interrupted (Ctrl-C): the search then ends within CHECK_EVERY
    nodes."""

    def due() -> bool:
        return (deadline is not None and clock() >= deadline) or (stop is not None and stop())

    if buf[flag] == 0 and due():
        buf[flag] = 1  # the core stops at its first node, as the Python engine does
    if buf[flag]:
        return call()
    outcome: list[int] = []
    failure: list[BaseException] = []

    def work() -> None:
        try:
            outcome.append(call())
        except BaseException as error:  # noqa: BLE001 - re-raised in the calling thread
            failure.append(error)

    worker = threading.Thread(target=work, name=COMPILED_SEARCH_THREAD, daemon=True)
    try:
        # Started inside the try: an interrupt while the thread starts (which waits for
        # it) must still set the flag, or the search would go on with nobody to stop it.
        worker.start()
        while True:
            worker.join(POLL_SECONDS)
            if not worker.is_alive():
                break
            if not buf[flag] and due():
                buf[flag] = 1
    finally:
        if worker.is_alive():
            buf[flag] = 1
            while worker.is_alive():
                worker.join(POLL_SECONDS)
    if failure:
        raise failure[0]
    return outcome[0]
