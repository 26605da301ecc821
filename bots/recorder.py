"""What a search tells an observer as it runs: the nodes it enters and leaves, its cut-offs.

The lecture searches (bots.lectures.minimax, bots.lectures.alphabeta, bots.lectures.negamax) and the
engine take an optional `recorder`; `bots.trace.tree` passes one that builds the search tree the
lectures draw. The default, NO_RECORDER, records nothing, and a search given it skips every call (it
tests `recorder is not NO_RECORDER` once per search), so play pays nothing for the hooks.

The calls for one node, in order: `enter`; then `table_hit` if a transposition-table entry was
found; `cutoff` if the node stopped before its last move; `leave` last, with what it returns.
Children are entered and left between the parent's `enter` and `leave`.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Final, Literal, Protocol

from games import State

Kind = Literal["inner", "leaf", "terminal", "table"]
"""How a node ended: "terminal" (the game is over), "leaf" (evaluated at the depth limit),
"table" (ended by a transposition-table entry), "inner" (its moves were searched)."""


class SearchRecorder(Protocol):
    """An observer of a search, told of every node the search visits."""

    def enter(
        self, node: State[Any], move: Hashable | None, ply: int, alpha: float, beta: float
    ) -> None:
        """The search entered `node` by `move` (None at the root) with window (alpha, beta)."""

    def table_hit(self) -> None:
        """The node being searched found an entry in the transposition table."""

    def cutoff(self, node: State[Any], pruned: Sequence[Hashable]) -> None:
        """The node being searched stopped early, leaving the moves `pruned` unsearched."""

    def leave(self, value: float, kind: Kind, alpha: float, beta: float) -> None:
        """The node being searched returned `value`; (alpha, beta) is its window at return."""


class NullRecorder:
    """A recorder that records nothing (searches skip it altogether)."""

    __slots__ = ()

    def enter(
        self, node: State[Any], move: Hashable | None, ply: int, alpha: float, beta: float
    ) -> None:
        """Record nothing."""

    def table_hit(self) -> None:
        """Record nothing."""

    def cutoff(self, node: State[Any], pruned: Sequence[Hashable]) -> None:
        """Record nothing."""

    def leave(self, value: float, kind: Kind, alpha: float, beta: float) -> None:
        """Record nothing."""


NO_RECORDER: Final[SearchRecorder] = NullRecorder()
"""The default recorder of every search: records nothing."""
