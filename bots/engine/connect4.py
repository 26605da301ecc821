"""Connect Four for the compiled engine: what bots.core.connect4_search computes, and how
bots.engine.compiled's driver hands it a position and reads its moves back.

The core searches with Connect Four's standard knowledge and `threats` or `lines`; a position
goes in as the Pons bitboard (the side to move's stones, all stones, the stones played), and
moves come back as columns, which are Connect Four's moves. It has no engine mode.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from types import ModuleType
from typing import Any

from bots.engine.cores import CONNECT4_CORE, PLAIN, Buffer
from bots.evaluation import Knowledge, StateFunction
from bots.evaluation import connect4 as connect4_evaluation
from games import State
from games.connect4 import ConnectFourState

_EVALUATIONS: dict[StateFunction, int] = {
    connect4_evaluation.THREATS.function: 0,
    connect4_evaluation.LINES.function: 1,
}
"""The evaluations the core computes, by their function: the core's kind
(bots.core.connect4_search.THREATS, LINES)."""


def is_connect4_knowledge(knowledge: Knowledge) -> bool:
    """Whether `knowledge` is Connect Four's standard knowledge, its evaluations aside."""
    standard = connect4_evaluation.KNOWLEDGE
    return knowledge is standard or (
        knowledge.game == standard.game
        and knowledge.move_order is standard.move_order
        and knowledge.is_quiet is None
        and knowledge.canonical_key is standard.canonical_key
        and knowledge.is_capture is None
    )


def connect4_core(knowledge: Knowledge, evaluate: StateFunction) -> ConnectFourCore | None:
    """Return Connect Four's description for the driver when the core searches exactly as the
    Python engine would with `knowledge` and `evaluate`, else None."""
    kind = _EVALUATIONS.get(evaluate)
    if not is_connect4_knowledge(knowledge) or kind is None:
        return None
    return ConnectFourCore(kind)


class ConnectFourCore:
    """Connect Four on bots.core.connect4_search, for bots.engine.compiled's driver."""

    module = CONNECT4_CORE
    features = PLAIN

    def __init__(self, kind: int) -> None:
        self.kind = kind

    def new_buffer(self, core: ModuleType, slots: int) -> Buffer:
        """A new buffer of `slots` table slots (0: no table), with the evaluation set."""
        buf: Buffer = core.new_buffer(slots, self.kind)
        return buf

    def root(self, state: State[Any]) -> ConnectFourState:
        """`state`, which must be a Connect Four position."""
        if not isinstance(state, ConnectFourState):
            raise TypeError(f"the compiled engine searches Connect Four, not {state!r}")
        return state

    def max_depth(self, core: ModuleType) -> int:
        """The deepest search the core runs (its table's depth field)."""
        return int(core.MAX_DEPTH)

    def searcher(
        self,
        core: ModuleType,
        buf: Buffer,
        state: ConnectFourState,
        depth: int,
        window: tuple[int, int] | None,
    ) -> Callable[[], int]:
        """Return the call that searches `state` to `depth` and returns its score (the full
        window: without an engine mode there are no aspiration windows)."""
        if window is not None:
            raise ValueError("the Connect Four search has no aspiration windows")
        args = (state.current, state.mask, state.ply, depth)
        return lambda: int(core.search(buf, *args))

    def moves(self, state: ConnectFourState, stored: list[int]) -> list[Hashable]:
        """The moves of a variation as the core stores them: columns."""
        return list(stored)

    def root_order(self, core: ModuleType, buf: Buffer, state: ConnectFourState) -> list[Hashable]:
        """The root's columns in the order of bots.engine.search._ordered at ply 0."""
        return list(core.root_order(buf, state)) if state.legal_moves() else []
