"""Transposition table: bounded, with EXACT / LOWER / UPPER entries and a replacement rule.

Lecture: "caching states" (the game-search slides): a position reached by
different move orders is searched once. Each entry keeps the position's key, the depth it was
searched to, the kind of bound its score is, the score and the best move found.

The table is a fixed array of slots indexed by the key's hash. A new entry replaces the one in
its slot when the slot is empty, holds an entry from an earlier search (an older generation),
or holds an entry searched no deeper than the new one (depth-preferred replacement).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Final

EXACT: Final = 0
LOWER: Final = 1  # the score is a lower bound (the search failed high: score >= beta)
UPPER: Final = 2  # the score is an upper bound (the search failed low: score <= alpha)

Entry = tuple[Hashable, int, int, float, Any, int]
"""(key, depth, flag, score, best move, generation)."""


class TranspositionTable:
    """A bounded table of search results keyed by position keys."""

    __slots__ = ("_mask", "_slots", "generation", "hits", "probes", "stores")

    def __init__(self, size: int = 1 << 20) -> None:
        if size < 1:
            raise ValueError(f"table size must be at least 1, not {size}")
        slots = 1 << max(0, (size - 1).bit_length())  # a power of two >= size
        self._mask = slots - 1
        self._slots: list[Entry | None] = [None] * slots
        self.generation = 0
        self.probes = 0
        self.hits = 0
        self.stores = 0

    @property
    def capacity(self) -> int:
        """The number of slots."""
        return self._mask + 1

    def new_search(self) -> None:
        """Start a new search: entries of earlier searches become replaceable."""
        self.generation += 1

    def clear(self) -> None:
        """Forget every entry."""
        self._slots = [None] * (self._mask + 1)

    def probe(self, key: Hashable) -> Entry | None:
        """Return the entry stored for `key`, or None."""
        self.probes += 1
        entry = self._slots[hash(key) & self._mask]
        if entry is not None and entry[0] == key:
            self.hits += 1
            return entry
        return None

    def store(self, key: Hashable, depth: int, flag: int, score: float, move: Any) -> None:
        """Store a result, subject to the replacement rule."""
        slot = hash(key) & self._mask
        old = self._slots[slot]
        if old is None or old[5] != self.generation or depth >= old[1]:
            self._slots[slot] = (key, depth, flag, score, move, self.generation)
            self.stores += 1

    def __len__(self) -> int:
        return sum(1 for entry in self._slots if entry is not None)
