"""One solve's limits: its deadline, node budget and progress reports, counted as it searches.

A solve (bots.solvers.solve) makes one `Budget`; the engine's exact searches
(bots.solvers.search) search through it, which counts their nodes and raises `Stopped` once the
deadline passes or the nodes run out, and the Connect Four solver is given its limits.
"""

from __future__ import annotations

from typing import Any

from bots.common import SearchTimeout
from bots.engine.search import AlphaBetaEngine
from bots.result import Clock
from bots.solvers.solution import Limit, Progress, SolveProgress
from games import State


class Stopped(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Raised inside a solve when one of its limits is reached."""

    def __init__(self, limit: Limit) -> None:
        super().__init__(limit)
        self.limit: Limit = limit


class Budget:
    """The limits, node count and progress reports of one solve."""

    def __init__(
        self,
        clock: Clock,
        deadline: float | None,
        max_nodes: int | None,
        progress: Progress | None,
    ) -> None:
        self.clock = clock
        self.deadline = deadline
        self.max_nodes = max_nodes
        self.progress = progress
        self.start = clock()
        self.nodes = 0

    def search(self, engine: AlphaBetaEngine, state: State[Any], depth: int) -> float:
        """Return the engine's score of `state` at `depth`, counting its nodes.

        Raises Stopped when the deadline passes or the node budget runs out first.
        """
        left = None if self.max_nodes is None else self.max_nodes - self.nodes
        if left is not None and left <= 0:
            raise Stopped("nodes")
        try:
            result = engine.search(state, depth, deadline=self.deadline, max_nodes=left)
        except SearchTimeout as timeout:
            searched = timeout.args[0].nodes
            self.nodes += searched
            raise Stopped("nodes" if left is not None and searched >= left else "time") from None
        self.nodes += result.stats.nodes
        return result.score

    def report(self, lower: int, upper: int, depth: int | None = None) -> None:
        """Tell the progress callback, if any, what is known now."""
        if self.progress is not None:
            seconds = self.clock() - self.start
            self.progress(SolveProgress(lower, upper, depth, self.nodes, seconds))
