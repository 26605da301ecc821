"""Maximum-cardinality matching in a general graph (Edmonds' blossom algorithm), kept perfect
while pairs are fixed one at a time.

The Swiss pairing (competition.swiss) asks, pair after pair, "if these two play each other, can
everyone still left be paired?". `Matching` answers without starting over: it holds a maximum
matching of the vertices still in play, and fixing a pair removes both vertices and repairs the
matching with one augmenting-path search between their two former mates. Vertices are the
integers 0..n-1; the graph is given as adjacency lists. Pure: no I/O, no randomness.
"""

from __future__ import annotations

from collections.abc import Sequence

UNMATCHED = -1


class Matching:
    """A maximum matching of the graph `adjacency` restricted to the vertices still active.

    Built greedily in vertex order, then grown by augmenting paths (Edmonds' blossom search),
    so lower-numbered vertices tend to keep their first neighbours. `size` is its number of
    pairs; `is_perfect` says whether every active vertex is matched.
    """

    def __init__(self, adjacency: Sequence[Sequence[int]]) -> None:
        self._adjacency = adjacency
        self._neighbours = [frozenset(row) for row in adjacency]
        count = len(adjacency)
        self.mate = [UNMATCHED] * count
        self.active = [True] * count
        for vertex in range(count):
            if self.mate[vertex] != UNMATCHED:
                continue
            for neighbour in adjacency[vertex]:
                if self.mate[neighbour] == UNMATCHED and neighbour != vertex:
                    self.mate[vertex] = neighbour
                    self.mate[neighbour] = vertex
                    break
        for vertex in range(count):
            if self.mate[vertex] == UNMATCHED:
                self._augment_from(vertex)

    @property
    def size(self) -> int:
        """Return the number of matched pairs among the active vertices."""
        return sum(1 for v, m in enumerate(self.mate) if self.active[v] and m > v)

    @property
    def is_perfect(self) -> bool:
        """Return whether every active vertex is matched."""
        return all(m != UNMATCHED for v, m in enumerate(self.mate) if self.active[v])

    def exposed(self) -> list[int]:
        """Return the active vertices left unmatched, in order."""
        return [v for v, m in enumerate(self.mate) if self.active[v] and m == UNMATCHED]

    def remove(self, vertex: int) -> bool:
        """Take `vertex` out of play, keeping the matching maximum; return whether it stays
        as large as it was for the others (the vertex was unmatched, or its mate found another).

        On False nothing changes: the vertex stays active and matched.
        """
        mate = self.mate[vertex]
        self.active[vertex] = False
        if mate == UNMATCHED:
            return True
        self.mate[vertex] = UNMATCHED
        self.mate[mate] = UNMATCHED
        if self._augment_from(mate):
            return True
        self.active[vertex] = True
        self.mate[vertex] = mate
        self.mate[mate] = vertex
        return False

    def fix(self, first: int, second: int) -> bool:
        """Pair `first` with `second` (adjacent, both active) and take both out of play, if the
        matching of the others stays as large; return whether it did (else nothing changes).

        With a perfect matching this answers "can the rest still all be paired?".
        """
        mate_first, mate_second = self.mate[first], self.mate[second]
        if mate_first == second:
            self.active[first] = self.active[second] = False
            return True
        saved = list(self.mate)
        self.active[first] = self.active[second] = False
        self.mate[first] = self.mate[second] = UNMATCHED
        for mate in (mate_first, mate_second):
            if mate != UNMATCHED:
                self.mate[mate] = UNMATCHED
        lost = (mate_first != UNMATCHED) + (mate_second != UNMATCHED)
        # The pair used up one matched pair at most; the two freed mates must find one back
        # (with each other, or along an augmenting path) if both were matched.
        if lost < 2 or self._rejoin(mate_first, mate_second):
            self.mate[first], self.mate[second] = second, first
            return True
        self.mate = saved
        self.active[first] = self.active[second] = True
        return False

    def _rejoin(self, one: int, other: int) -> bool:
        """Grow the matching back by one pair after `one` and `other` lost their mates.

        Any augmenting path now ends at one of them (the matching was maximum before), so a
        search from each finds it if there is one.
        """
        if other in self._neighbours[one]:
            self.mate[one], self.mate[other] = other, one
            return True
        return self._augment_from(one) or self._augment_from(other)

    def _augment_from(self, root: int) -> bool:
        """Search an augmenting path from the unmatched `root` (Edmonds' blossoms) and flip it."""
        end, parent = self._find_path(root)
        if end == UNMATCHED:
            return False
        vertex = end
        while vertex != UNMATCHED:
            previous = parent[vertex]
            following = self.mate[previous]
            self.mate[vertex] = previous
            self.mate[previous] = vertex
            vertex = following
        return True

    def _find_path(self, root: int) -> tuple[int, list[int]]:
        """Return an unmatched vertex at the end of an augmenting path from `root` (or
        UNMATCHED) and the search tree's parents that lead back along it."""
        count = len(self._adjacency)
        mate, active = self.mate, self.active
        parent = [UNMATCHED] * count
        base = list(range(count))
        used = [False] * count
        used[root] = True
        queue = [root]
        head = 0
        while head < len(queue):
            vertex = queue[head]
            head += 1
            for target in self._adjacency[vertex]:
                if not active[target] or base[vertex] == base[target] or mate[vertex] == target:
                    continue
                if target == root or (
                    mate[target] != UNMATCHED and parent[mate[target]] != UNMATCHED
                ):
                    common = self._common_base(base, parent, vertex, target)
                    blossom = [False] * count
                    self._mark(base, parent, blossom, vertex, common, target)
                    self._mark(base, parent, blossom, target, common, vertex)
                    for other in range(count):
                        if active[other] and blossom[base[other]]:
                            base[other] = common
                            if not used[other]:
                                used[other] = True
                                queue.append(other)
                elif parent[target] == UNMATCHED:
                    parent[target] = vertex
                    if mate[target] == UNMATCHED:
                        return target, parent
                    used[mate[target]] = True
                    queue.append(mate[target])
        return UNMATCHED, parent

    def _common_base(self, base: list[int], parent: list[int], one: int, other: int) -> int:
        seen: set[int] = set()
        vertex = one
        while True:
            vertex = base[vertex]
            seen.add(vertex)
            if self.mate[vertex] == UNMATCHED:
                break
            vertex = parent[self.mate[vertex]]
        vertex = other
        while True:
            vertex = base[vertex]
            if vertex in seen:
                return vertex
            vertex = parent[self.mate[vertex]]

    def _mark(
        self,
        base: list[int],
        parent: list[int],
        blossom: list[bool],
        vertex: int,
        common: int,
        child: int,
    ) -> None:
        while base[vertex] != common:
            blossom[base[vertex]] = blossom[base[self.mate[vertex]]] = True
            parent[vertex] = child
            child = self.mate[vertex]
            vertex = parent[self.mate[vertex]]
