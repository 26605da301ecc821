"""The compiled searches the engine drives (bots.engine.compiled), as it sees them: loading
each once per process, what it must know of each game's (`CoreGame`), and the engine mode's
options (`SearchFeatures`).

numba is imported when a search is loaded (`load_core`), never at import.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

import numpy as np

from games import State

Buffer = np.ndarray[Any, np.dtype[np.int64]]

CORE = "bots.core.checkers_search"
"""The compiled checkers search's module."""

CONNECT4_CORE = "bots.core.connect4_search"
"""The compiled Connect Four search's module."""

log = logging.getLogger("bots.core")

_LOADING = threading.Lock()
_LOADED: dict[str, ModuleType] = {}
_FAILED: set[str] = set()
"""The compiled searches this process has loaded completely, and those whose last load
raised."""


@dataclass(frozen=True, slots=True)
class SearchFeatures:
    """The engine mode's techniques, each off in the node-for-node mode (PLAIN).

    `pvs`: principal variation search (null windows after the first move) and, under
    iterative deepening, aspiration windows (bots.engine.compiled.ASPIRATION) around the last
    iteration's score; `lmr`: late move reductions (with `pvs`); `partial`: an iteration cut
    short by the time still gives its best root move when a searched move beat the first one;
    `tm`: under a deadline, time management (bots.engine.timing.start_iteration: a soft limit before
    each iteration, shorter when the best move holds, the whole time when the score falls; the
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
        """Whether this is the node-for-node search of bots.engine.search."""
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


class CoreGame(Protocol):
    """What the driver needs to know of a game's compiled search (its module `module`)."""

    module: str
    features: SearchFeatures
    """The engine mode's options (PLAIN for a game that has none)."""

    def new_buffer(self, core: ModuleType, slots: int) -> Buffer:
        """A new buffer of `slots` table slots (0: none), its evaluation and options set."""
        ...

    def root(self, state: State[Any]) -> Any:
        """`state`, checked to be this game's."""
        ...

    def max_depth(self, core: ModuleType) -> int:
        """The deepest search the core runs."""
        ...

    def searcher(
        self, core: ModuleType, buf: Buffer, state: Any, depth: int, window: tuple[int, int] | None
    ) -> Callable[[], int]:
        """The call that searches `state` to `depth` (in `window` when given) on `buf`."""
        ...

    def moves(self, state: Any, stored: list[int]) -> list[Hashable]:
        """A variation from `state`, given as the core stores its moves."""
        ...

    def root_order(self, core: ModuleType, buf: Buffer, state: Any) -> list[Hashable]:
        """The root's moves in the order of bots.engine.search._ordered at ply 0, no table move."""
        ...


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
