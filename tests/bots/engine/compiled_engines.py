"""What the compiled engines' differential tests share: the core, the pair of engines, what
they must agree on, and a stop that counts its questions."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from bots.engine.compiled import CompiledEngine, compiled_engine
from bots.engine.search import AlphaBetaEngine
from bots.evaluation import Knowledge
from bots.result import SearchResult


def load_core(name: str) -> ModuleType:
    """The compiled module `bots.core.NAME`, loaded (compiled once per machine)."""
    from bots.core import load

    load(name)
    return importlib.import_module(f"bots.core.{name}")


def summary(result: SearchResult) -> tuple[Any, ...]:
    """What both engines must return alike: score, move, principal variation (moves and
    text), depth and every count."""
    stats = result.stats
    return (
        result.score,
        str(result.move),
        [str(m) for m in result.pv],
        stats.pv,
        stats.depth,
        stats.nodes,
        stats.evaluations,
        stats.tt_hits,
        stats.cutoffs,
    )


def pair(
    knowledge: Knowledge, evaluation: str, tt: bool, ordering: bool
) -> tuple[AlphaBetaEngine, CompiledEngine]:
    """The Python engine and the compiled one for the same arguments."""
    function = knowledge.evaluation(evaluation).function
    python = AlphaBetaEngine(knowledge, function, tt=tt, ordering=ordering)
    compiled = compiled_engine(knowledge, function, tt=tt, ordering=ordering)
    assert compiled is not None
    return python, compiled


class Countdown:
    """A stop that answers True from its `after`-th question on, counting the questions."""

    def __init__(self, after: int) -> None:
        self.after = after
        self.asked = 0

    def __call__(self) -> bool:
        self.asked += 1
        return self.asked >= self.after
