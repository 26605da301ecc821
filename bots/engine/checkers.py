"""Checkers for the compiled engine: what bots.core.checkers_search computes, and how
bots.engine.compiled's driver hands it a position and reads its moves back.

The core searches with checkers' standard knowledge and an evaluation it implements
(`material`, `positional`, `positional_v1`, `positional_tuned`, `endings`, and `engine` with
its variants under other weights); a position goes in as its bitboards and the positions since
the last capture or man move (the draw rules'), and moves come back as indexes into the
position's legal moves. The engine mode's techniques are control words of this core only.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from types import ModuleType
from typing import Any

from bots.engine.cores import CORE, Buffer, SearchFeatures
from bots.evaluation import Knowledge, StateFunction, checkers_endings
from bots.evaluation import checkers as checkers_evaluation
from games import State
from games.checkers import CheckersState

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


def core_evaluation(evaluate: StateFunction) -> tuple[int, dict[str, int]] | None:
    """Return the core's (kind, weights) of `evaluate`, or None when the core lacks it."""
    known = _EVALUATIONS.get(evaluate)
    if known is not None:
        return known
    weights = checkers_endings.engine_weights(evaluate)
    return None if weights is None else (3, weights)


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


def checkers_core(
    knowledge: Knowledge, evaluate: StateFunction, features: SearchFeatures
) -> CheckersCore | None:
    """Return checkers' description for the driver when the core searches exactly as the
    Python engine would with `knowledge` and `evaluate`, else None."""
    evaluation = core_evaluation(evaluate)
    if not _standard_knowledge(knowledge) or evaluation is None:
        return None
    return CheckersCore(evaluation, features)


class CheckersCore:
    """Checkers on bots.core.checkers_search, for bots.engine.compiled's driver."""

    module = CORE

    def __init__(self, evaluation: tuple[int, dict[str, int]], features: SearchFeatures) -> None:
        self.evaluation = evaluation
        self.features = features

    def new_buffer(self, core: ModuleType, slots: int) -> Buffer:
        """A new buffer of `slots` table slots (0: no table), with the evaluation and the
        engine mode's control words set."""
        buf: Buffer = core.new_buffer(slots)
        features = self.features
        buf[core.PVS] = int(features.pvs or features.lmr)
        buf[core.LMR] = int(features.lmr)
        buf[core.EXTEND] = 2 if features.qextend else int(features.extend)
        buf[core.TRUNCATE] = int(features.truncate)
        buf[core.SINGLE] = int(features.single)
        buf[core.DEEPER] = int(features.deeper)
        kind, weights = self.evaluation
        core.set_weights(buf, kind, weights)
        return buf

    def root(self, state: State[Any]) -> CheckersState:
        """`state`, which must be a checkers position."""
        if not isinstance(state, CheckersState):
            raise TypeError(f"the compiled engine searches checkers, not {state!r}")
        return state

    def max_depth(self, core: ModuleType) -> int:
        """The deepest search the core runs."""
        return int(core.MAX_PLY)

    def searcher(
        self,
        core: ModuleType,
        buf: Buffer,
        state: CheckersState,
        depth: int,
        window: tuple[int, int] | None,
    ) -> Callable[[], int]:
        """Write the root's history into `buf`; return the call that searches it to `depth`
        (in `window`, an aspiration window, when given) and returns its score."""
        top = core.set_root(buf, state)
        args = (state.black, state.white, state.kings, state.turn, state.quiet, top, depth)
        if window is None:
            return lambda: int(core.search(buf, *args))
        return lambda: int(core.search_window(buf, *args, *window))

    def moves(self, state: CheckersState, stored: list[int]) -> list[Hashable]:
        """The moves of a variation from `state`, given as the core stores them (each an index
        into its position's legal moves)."""
        moves: list[Hashable] = []
        node = state
        for index in stored:
            move = node.legal_moves()[index]
            moves.append(move)
            node = node.apply_unchecked(move)
        return moves

    def root_order(self, core: ModuleType, buf: Buffer, state: CheckersState) -> list[Hashable]:
        """The root's legal moves in the order of bots.engine.search._ordered at ply 0."""
        moves = state.legal_moves()
        order = core.root_order(buf, state) if moves else []
        return [moves[i] for i in order]
