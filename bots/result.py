"""What every search returns: the move, its score, the principal variation and statistics."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

Clock = Callable[[], float]
"""A monotonic clock in seconds (time.perf_counter in production, a fake one in tests)."""


Stop = Callable[[], bool]
"""Asked by a search every so often (with the clock); True: end the search as soon as possible."""


class SearchStopped(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Raised by a search that its `stop` ended before it had any move to return."""


def no_clock() -> float:
    """A clock that never moves: searches run without one report 0 seconds."""
    return 0.0


@dataclass(slots=True)
class SearchStats:
    """Counters of one search. `seconds` is measured with the clock the caller passed in."""

    nodes: int = 0
    evaluations: int = 0
    depth: int = 0
    seconds: float = 0.0
    tt_hits: int = 0
    cutoffs: int = 0
    simulations: int = 0
    pv: list[str] = field(default_factory=list)

    @property
    def nps(self) -> float:
        """Nodes per second (0 when no time was measured)."""
        return self.nodes / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        """Return the statistics as plain JSON-ready values."""
        return {
            "nodes": self.nodes,
            "evaluations": self.evaluations,
            "depth": self.depth,
            "seconds": round(self.seconds, 6),
            "nps": round(self.nps, 1),
            "tt_hits": self.tt_hits,
            "cutoffs": self.cutoffs,
            "simulations": self.simulations,
            "pv": list(self.pv),
        }


@dataclass(slots=True)
class SearchResult:
    """The outcome of a search from the root's side to move.

    `score` is from the point of view of the side to move at the root (positive is good for
    it). `move` is None only when the root is terminal. `pv` holds the principal variation as
    moves (the first is `move`); `stats.pv` holds it as text.
    """

    move: Hashable | None
    score: float
    pv: list[Hashable] = field(default_factory=list)
    stats: SearchStats = field(default_factory=SearchStats)
    best_moves: list[Hashable] = field(default_factory=list)
