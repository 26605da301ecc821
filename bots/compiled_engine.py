"""The house engine on the compiled core: bots.engine's search, for checkers and Connect Four,
at machine speed.

`compiled_engine(...)` returns a compiled engine when a compiled search can run exactly what
`bots.engine.AlphaBetaEngine` would with the same arguments, and None otherwise: the caller
then builds the Python engine, which stays the reference. For checkers that is a
`CompiledEngine` (bots.core.checkers_search: checkers' standard knowledge, an evaluation the
core implements, the engine's scoring, no endgame database); for Connect Four a
`CompiledConnectFourEngine` (bots.core.connect4_search: Connect Four's standard knowledge,
`threats` or `lines`, the engine's scoring). Both have the same `search` and
`iterative_deepening` as the Python engine, and for the same calls return the same moves,
scores, principal variations and counts (tests/bots/test_compiled_engine.py and
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

import importlib
import logging
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from bots.common import SearchTimeout, pv_texts
from bots.evaluation import Knowledge, StateFunction, checkers_endings
from bots.evaluation import checkers as checkers_evaluation
from bots.evaluation import connect4 as connect4_evaluation
from bots.result import Clock, SearchResult, SearchStats, Stop, no_clock
from bots.scoring import ENGINE, Scoring
from bots.timing import start_iteration
from games import State
from games.checkers import CheckersState
from games.connect4 import ConnectFourState

POLL_SECONDS = 0.001
"""How often the calling thread reads the clock and asks `stop` while the core searches."""

log = logging.getLogger("bots.core")

CORE = "bots.core.checkers_search"
"""The compiled search's module."""

CONNECT4_CORE = "bots.core.connect4_search"
"""The compiled Connect Four search's module."""

_LOADING = threading.Lock()
_LOADED: dict[str, ModuleType] = {}
_FAILED: set[str] = set()
"""The compiled searches this process has loaded completely, and those whose last load
raised."""

COMPILED_SEARCH_THREAD = "compiled-search"
"""The name of the worker threads a watched compiled search runs on."""

_EVALUATIONS: dict[StateFunction, tuple[int, dict[str, int]]] = {
    checkers_evaluation.MATERIAL.function: (0, dict(checkers_evaluation.WEIGHTS_V1)),
    checkers_evaluation.POSITIONAL.function: (1, dict(checkers_evaluation.WEIGHTS_V1)),
    checkers_evaluation.POSITIONAL_V1.function: (1, dict(checkers_evaluation.WEIGHTS_V1)),
    checkers_evaluation.POSITIONAL_TUNED.function: (
        1,
        dict(checkers_evaluation.WEIGHTS_TUNED),
    ),
    checkers_endings.ENDINGS.function: (2, dict(checkers_evaluation.WEIGHTS_V1)),
}
"""The evaluations the core computes, by their function: (kind, weights). `material` uses the
weights' man and king (100 and 200); `endings` wraps `positional`. `engine` and its variants
under other weights (checkers_endings.engine_evaluation) are kind 3, which adds the features
of bots.evaluation.checkers_engine."""


@dataclass(frozen=True, slots=True)
class SearchFeatures:
    """The engine mode's techniques, each off in the node-for-node mode (PLAIN).

    `pvs`: principal variation search (null windows after the first move) and, under
    iterative deepening, aspiration windows of ASPIRATION around the last iteration's score;
    `lmr`: late move reductions (with `pvs`); `partial`: an iteration cut short by the time
    still gives its best root move when a searched move beat the first one; `tm`: under a
    deadline, time management (bots.timing.start_iteration: a soft limit before each
    iteration, shorter when the best move holds, the whole time when the score falls; the
    deadline stays the hard limit); `extend`: a quiet position at the horizon where the side
    not to move could capture is searched one ply more (up to twice the iteration's depth);
    `truncate`: a quiet node whose material lies far outside the window is searched one ply
    shallower; `single`: a node with one legal move searches it without spending a ply;
    `qextend`: `extend` only where the material lies near the window (as Cake extends);
    `deeper`: a table entry searched deeper than a node needs ends the node too.
    """

    pvs: bool = False
    lmr: bool = False
    partial: bool = False
    tm: bool = False
    extend: bool = False
    truncate: bool = False
    single: bool = False
    qextend: bool = False
    deeper: bool = False

    @property
    def plain(self) -> bool:
        """Whether this is the node-for-node search of bots.engine."""
        return not (
            self.pvs
            or self.lmr
            or self.partial
            or self.tm
            or self.extend
            or self.truncate
            or self.single
            or self.qextend
            or self.deeper
        )


PLAIN = SearchFeatures()
ASPIRATION = 40
"""Half the aspiration window (a man is 100)."""


def core_evaluation(evaluate: StateFunction) -> tuple[int, dict[str, int]] | None:
    """Return the core's (kind, weights) of `evaluate`, or None when the core lacks it."""
    known = _EVALUATIONS.get(evaluate)
    if known is not None:
        return known
    weights = checkers_endings.engine_weights(evaluate)
    return None if weights is None else (3, weights)


_CONNECT4_EVALUATIONS: dict[StateFunction, int] = {
    connect4_evaluation.THREATS.function: 0,
    connect4_evaluation.LINES.function: 1,
}
"""The Connect Four evaluations the core computes, by their function: the core's kind
(bots.core.connect4_search.THREATS, LINES)."""


def _connect4_knowledge(knowledge: Knowledge) -> bool:
    """Whether `knowledge` is Connect Four's standard knowledge, its evaluations aside."""
    standard = connect4_evaluation.KNOWLEDGE
    return knowledge is standard or (
        knowledge.game == standard.game
        and knowledge.move_order is standard.move_order
        and knowledge.is_quiet is None
        and knowledge.canonical_key is standard.canonical_key
        and knowledge.is_capture is None
    )


def _standard_knowledge(knowledge: Knowledge) -> bool:
    """Whether `knowledge` is checkers' standard knowledge, its evaluations aside (a caller may
    add evaluations, e.g. variants of `engine` under other weights, to name in specs)."""
    standard = checkers_endings.KNOWLEDGE
    return knowledge is standard or (
        knowledge.game == standard.game
        and knowledge.move_order is standard.move_order
        and knowledge.is_quiet is standard.is_quiet
        and knowledge.canonical_key is standard.canonical_key
        and knowledge.is_capture is standard.is_capture
    )


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
) -> CompiledEngine | CompiledConnectFourEngine | None:
    """Return the compiled engine for these AlphaBetaEngine arguments, or None when the core
    cannot search exactly as the Python engine would (another game or knowledge, a
    user-defined evaluation, another scoring, an endgame database).

    Connect Four has no engine mode: as the Python engine, its compiled search ignores
    `features`.
    """
    if scoring != ENGINE or exact is not None:
        return None
    if _connect4_knowledge(knowledge):
        kind = _CONNECT4_EVALUATIONS.get(evaluate)
        if kind is None:
            return None
        return CompiledConnectFourEngine(
            kind, tt=tt, ordering=ordering, table_size=table_size, clock=clock
        )
    evaluation = core_evaluation(evaluate)
    if not _standard_knowledge(knowledge) or evaluation is None:
        return None
    return CompiledEngine(
        evaluation,
        tt=tt,
        ordering=ordering,
        table_size=table_size,
        clock=clock,
        features=features or PLAIN,
    )


def load_core(module: str = CORE) -> ModuleType:
    """Return the compiled search `module` (CORE: checkers', CONNECT4_CORE: Connect Four's),
    loading it (compiling it once per machine, announced on the logger `bots.core`) if this
    process has not yet.

    Building the first engine bot of a game calls it; a server calls `load_cores` on a thread
    of its own at start-up, so that building a house bot on its event loop never waits for it.
    """
    # Under the lock, and never from sys.modules alone: a module another thread is still
    # importing is in sys.modules before its functions are (a server loads the core on a
    # thread of its own while a bot may be built on another).
    with _LOADING:
        if module in _LOADED:
            return _LOADED[module]
        from bots.core import load  # noqa: PLC0415 - the compiler only when an engine is built

        try:
            load(module.rpartition(".")[2], announce=log.warning)
            _LOADED[module] = importlib.import_module(module)
        except BaseException:
            _FAILED.add(module)
            raise
        _FAILED.discard(module)
        return _LOADED[module]


def load_cores() -> None:
    """Load every compiled search, checkers' first (a server's start-up, on a thread)."""
    for module in (CORE, CONNECT4_CORE):
        load_core(module)


def core_state() -> str:
    """Whether this process has loaded the compiled checkers search: "ready", "loading" until
    then, or "failed" if its last load raised (a server loads it at start-up and says so in
    `/health`)."""
    if CORE in _LOADED:
        return "ready"
    return "failed" if CORE in _FAILED else "loading"


class CompiledEngine:
    """bots.engine.AlphaBetaEngine for checkers on the compiled core; same calls, same results.

    Keeps its table, killers and history (one int64 buffer) between moves, as the Python
    engine does. The buffer is allocated at the first search.
    """

    def __init__(
        self,
        evaluation: tuple[int, dict[str, int]],
        *,
        tt: bool = True,
        ordering: bool = True,
        table_size: int = 1 << 20,
        clock: Clock = no_clock,
        features: SearchFeatures = PLAIN,
    ) -> None:
        if table_size < 1:
            raise ValueError(f"table size must be at least 1, not {table_size}")
        self._core = load_core()
        self.clock = clock
        self.ordering = ordering
        self.tt = tt
        self.features = features
        self._evaluation = evaluation
        self._slots = 1 << max(0, (table_size - 1).bit_length()) if tt else 0
        self._buffer: np.ndarray[Any, np.dtype[np.int64]] | None = None

    @property
    def buffer(self) -> np.ndarray[Any, np.dtype[np.int64]]:
        """The core's buffer: positions, counters, killers, history and table."""
        if self._buffer is None:
            core = self._core
            buf = core.new_buffer(self._slots)
            buf[core.USE_TT] = int(self.tt)
            buf[core.ORDERING] = int(self.ordering)
            buf[core.PVS] = int(self.features.pvs or self.features.lmr)
            buf[core.LMR] = int(self.features.lmr)
            buf[core.EXTEND] = 2 if self.features.qextend else int(self.features.extend)
            buf[core.TRUNCATE] = int(self.features.truncate)
            buf[core.SINGLE] = int(self.features.single)
            buf[core.DEEPER] = int(self.features.deeper)
            kind, weights = self._evaluation
            core.set_weights(buf, kind, weights)
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
        result = self._run(_checkers(state), depth, deadline, max_nodes, stop)
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
        root = _checkers(state)
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
            moves = root.legal_moves()
            order = self._core.root_order(self.buffer, root) if moves else []
            ordered = [moves[i] for i in order]
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
        state: CheckersState,
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
                result = self._run(state, depth, deadline, left, stop, alpha, beta)
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

    def _partial(self, state: CheckersState, previous: SearchResult) -> SearchResult:
        """The best root move of an iteration the time cut short, when a move searched in it
        beat the previous iteration's first one; else `previous`."""
        core = self._core
        buf = self.buffer
        index = int(buf[core.ROOT_MOVE])
        if index < 0:
            return previous
        pv: list[Hashable] = []
        node = state
        for step in core.principal_variation(buf):
            move = node.legal_moves()[step]
            pv.append(move)
            node = node.apply_unchecked(move)
        if not pv or pv[0] == previous.move:
            return previous
        return SearchResult(move=pv[0], score=int(buf[core.ROOT_SCORE]), pv=pv)

    def _new_search(self) -> None:
        buf = self.buffer
        buf[self._core.GENERATION] += 1
        buf[self._core.STOP] = 0

    def _run(
        self,
        state: CheckersState,
        depth: int,
        deadline: float | None,
        max_nodes: int | None,
        stop: Stop | None,
        alpha: int | None = None,
        beta: int | None = None,
    ) -> SearchResult:
        core = self._core
        buf = self.buffer
        if depth > core.MAX_PLY:
            raise ValueError(f"the compiled search goes to depth {core.MAX_PLY}, not {depth}")
        top = core.set_root(buf, state)
        buf[core.NODE_LIMIT] = max_nodes if max_nodes is not None else -1
        args = (state.black, state.white, state.kings, state.turn, state.quiet, top, depth)
        if alpha is None or beta is None:
            score = self._watched(lambda: int(core.search(buf, *args)), deadline, stop)
        else:
            window = (alpha, beta)
            score = self._watched(
                lambda: int(core.search_window(buf, *args, *window)), deadline, stop
            )
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
        pv: list[Hashable] = []
        node = state
        for index in core.principal_variation(buf):
            move = node.legal_moves()[index]
            pv.append(move)
            node = node.apply_unchecked(move)
        stats.pv = pv_texts(state, pv)
        legal = state.legal_moves()
        move = pv[0] if pv else (legal[0] if legal else None)
        return SearchResult(
            move=move, score=score, pv=list(pv) or ([move] if move else []), stats=stats
        )

    def _watched(self, call: Callable[[], int], deadline: float | None, stop: Stop | None) -> int:
        return _watched(self.buffer, self._core.STOP, self.clock, call, deadline, stop)


class CompiledConnectFourEngine:
    """bots.engine.AlphaBetaEngine for Connect Four on the compiled core (bots.core
    .connect4_search); same calls, same results.

    Keeps its table, killers and history (one int64 buffer) between moves, as the Python
    engine does. The buffer is allocated at the first search.
    """

    def __init__(
        self,
        kind: int,
        *,
        tt: bool = True,
        ordering: bool = True,
        table_size: int = 1 << 20,
        clock: Clock = no_clock,
    ) -> None:
        if table_size < 1:
            raise ValueError(f"table size must be at least 1, not {table_size}")
        self._core = load_core(CONNECT4_CORE)
        self.clock = clock
        self.ordering = ordering
        self.tt = tt
        self._kind = kind
        self._slots = 1 << max(0, (table_size - 1).bit_length()) if tt else 0
        self._buffer: np.ndarray[Any, np.dtype[np.int64]] | None = None

    @property
    def buffer(self) -> np.ndarray[Any, np.dtype[np.int64]]:
        """The core's buffer: counters, killers, history and table."""
        if self._buffer is None:
            core = self._core
            buf = core.new_buffer(self._slots, self._kind)
            buf[core.USE_TT] = int(self.tt)
            buf[core.ORDERING] = int(self.ordering)
            self._buffer = buf
        return self._buffer

    @property
    def table_start(self) -> int:
        """Where the transposition table begins in the buffer (it runs to the end)."""
        return int(self._core.TABLE)

    def search(
        self,
        state: State[Any],
        depth: int,
        *,
        deadline: float | None = None,
        max_nodes: int | None = None,
        stop: Stop | None = None,
    ) -> SearchResult:
        """Search `state` to `depth` plies: as AlphaBetaEngine.search, SearchTimeout included."""
        if depth < 1:
            raise ValueError(f"search depth must be at least 1, not {depth}")
        self._new_search()
        start = self.clock()
        result = self._run(_connect4(state), depth, deadline, max_nodes, stop)
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
        root = _connect4(state)
        self._new_search()
        start = self.clock()
        totals = SearchStats()
        best: SearchResult | None = None
        for depth in range(1, max_depth + 1):
            left = None if max_nodes is None else max_nodes - totals.nodes
            if left is not None and left <= 0:
                break
            try:
                result = self._run(root, depth, deadline, left, stop)
            except SearchTimeout as timeout:
                _add(totals, timeout.args[0] if timeout.args else None)
                break
            _add(totals, result.stats)
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
        if best is None:
            order = self._core.root_order(self.buffer, root) if root.legal_moves() else []
            best = SearchResult(move=order[0] if order else None, score=0.0, pv=list(order[:1]))
        totals.pv = pv_texts(root, best.pv)
        totals.seconds = self.clock() - start
        best.stats = totals
        return best

    def _new_search(self) -> None:
        buf = self.buffer
        buf[self._core.GENERATION] += 1
        buf[self._core.STOP] = 0

    def _run(
        self,
        state: ConnectFourState,
        depth: int,
        deadline: float | None,
        max_nodes: int | None,
        stop: Stop | None,
    ) -> SearchResult:
        core = self._core
        buf = self.buffer
        if depth > core.MAX_DEPTH:
            raise ValueError(f"the compiled search goes to depth {core.MAX_DEPTH}, not {depth}")
        buf[core.NODE_LIMIT] = max_nodes if max_nodes is not None else -1
        args = (state.current, state.mask, state.ply, depth)
        score = _watched(
            buf, core.STOP, self.clock, lambda: int(core.search(buf, *args)), deadline, stop
        )
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
        pv: list[Hashable] = list(core.principal_variation(buf))
        stats.pv = pv_texts(state, pv)
        legal = state.legal_moves()
        move = pv[0] if pv else (legal[0] if legal else None)
        return SearchResult(
            move=move, score=score, pv=list(pv) or ([move] if move else []), stats=stats
        )


def _watched(
    buf: np.ndarray[Any, np.dtype[np.int64]],
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


def _checkers(state: State[Any]) -> CheckersState:
    if not isinstance(state, CheckersState):
        raise TypeError(f"the compiled engine searches checkers, not {state!r}")
    return state


def _connect4(state: State[Any]) -> ConnectFourState:
    if not isinstance(state, ConnectFourState):
        raise TypeError(f"the compiled engine searches Connect Four, not {state!r}")
    return state


def _add(totals: SearchStats, stats: SearchStats | None) -> None:
    if stats is None:
        return
    totals.nodes += stats.nodes
    totals.evaluations += stats.evaluations
    totals.tt_hits += stats.tt_hits
    totals.cutoffs += stats.cutoffs
