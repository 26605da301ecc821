"""The blossom matching against a brute-force maximum matching, before and after fixing pairs
and removing vertices."""

from __future__ import annotations

import random
from functools import cache

from hypothesis import given, settings
from hypothesis import strategies as st

from competition.matching import UNMATCHED, Matching

Edges = frozenset[tuple[int, int]]


def _brute_size(vertices: frozenset[int], edges: Edges) -> int:
    """Return the size of a maximum matching of the graph on `vertices` by trying every pair."""

    @cache
    def best(left: frozenset[int]) -> int:
        if not left:
            return 0
        vertex = min(left)
        rest = left - {vertex}
        return max(
            [best(rest)]
            + [
                1 + best(rest - {other})
                for other in rest
                if (min(vertex, other), max(vertex, other)) in edges
            ]
        )

    return best(vertices)


def _graph(count: int, density: float, seed: int) -> tuple[Edges, list[list[int]]]:
    generator = random.Random(seed)
    edges = frozenset(
        (a, b) for a in range(count) for b in range(a + 1, count) if generator.random() < density
    )
    adjacency = [[b for b in range(count) if (min(a, b), max(a, b)) in edges] for a in range(count)]
    return edges, adjacency


def _check_valid(matching: Matching, edges: Edges) -> None:
    for vertex, mate in enumerate(matching.mate):
        if mate == UNMATCHED:
            continue
        assert matching.mate[mate] == vertex
        assert matching.active[vertex] == matching.active[mate]
        assert (min(vertex, mate), max(vertex, mate)) in edges


graphs = st.tuples(st.integers(1, 13), st.floats(0.05, 0.9), st.integers(0, 2**32))


@settings(max_examples=300, deadline=None)
@given(graphs)
def test_the_matching_is_maximum(graph: tuple[int, float, int]) -> None:
    count, density, seed = graph
    edges, adjacency = _graph(count, density, seed)
    matching = Matching(adjacency)
    _check_valid(matching, edges)
    assert matching.size == _brute_size(frozenset(range(count)), edges)
    assert matching.is_perfect == (2 * matching.size == count)
    assert len(matching.exposed()) == count - 2 * matching.size


@settings(max_examples=300, deadline=None)
@given(graphs, st.integers(0, 2**32))
def test_fixing_a_pair_answers_whether_the_rest_can_still_be_matched(
    graph: tuple[int, float, int], pick: int
) -> None:
    count, density, seed = graph
    edges, adjacency = _graph(count, density, seed)
    matching = Matching(adjacency)
    if not edges:
        return
    first, second = sorted(edges)[pick % len(edges)]
    before = matching.size
    rest = frozenset(range(count)) - {first, second}
    expected = 1 + _brute_size(rest, edges) == before
    assert matching.fix(first, second) is expected
    _check_valid(matching, edges)
    if expected:
        assert matching.mate[first] == second
        assert not matching.active[first]
        assert not matching.active[second]
        assert matching.size == before - 1
    else:
        assert matching.active[first]
        assert matching.active[second]
        assert matching.size == before


@settings(max_examples=300, deadline=None)
@given(graphs, st.integers(0, 2**32))
def test_removing_a_vertex_answers_whether_the_others_keep_the_size(
    graph: tuple[int, float, int], pick: int
) -> None:
    count, density, seed = graph
    edges, adjacency = _graph(count, density, seed)
    matching = Matching(adjacency)
    vertex = pick % count
    before = matching.size
    expected = _brute_size(frozenset(range(count)) - {vertex}, edges) == before
    assert matching.remove(vertex) is expected
    _check_valid(matching, edges)
    assert matching.active[vertex] is not expected
    assert matching.size == before
