"""Pieces shared by the search modules: leaf scoring and the principal variation as text."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

from bots.evaluation import StateFunction
from bots.result import SearchResult, SearchStats
from games import State

STOP_EVERY = 64
"""Nodes between two calls of a search's `stop` in the lecture searches."""


class SearchTimeout(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Raised inside a search when its deadline passes; the caller keeps its last result."""


def require_evaluation(evaluate: StateFunction | None, depth: int | None) -> StateFunction:
    """Return `evaluate`, or fail clearly when a depth limit needs one and none was given."""
    if evaluate is None:
        if depth is not None:
            raise ValueError("a depth-limited search needs an evaluation function")

        def unreachable(state: State[Any]) -> float:
            raise AssertionError("an unlimited search never evaluates")

        return unreachable
    return evaluate


def pv_texts(state: State[Any], pv: Sequence[Hashable]) -> list[str]:
    """Return the moves of `pv`, played from `state`, as text."""
    texts = []
    for move in pv:
        texts.append(state.format_move(move))
        state = state.apply_unchecked(move)
    return texts


def finish(
    state: State[Any],
    score: float,
    pv: list[Hashable],
    stats: SearchStats,
    depth: int | None,
    seconds: float,
) -> SearchResult:
    """Return the SearchResult of a finished search: its move is the first of `pv`.

    `depth` None (a search to the end) reports the length of the principal variation.
    """
    stats.seconds = seconds
    stats.depth = depth if depth is not None else len(pv)
    stats.pv = pv_texts(state, pv)
    return SearchResult(move=pv[0] if pv else None, score=score, pv=pv, stats=stats)


def timed(clock: Callable[[], float]) -> Callable[[], float]:
    """Return a function giving the seconds elapsed on `clock` since this call."""
    start = clock()
    return lambda: clock() - start
