"""A search's statistics in the wire's form: forced results read, the wire's bounds kept."""

from __future__ import annotations

from bots.result import SearchResult, SearchStats
from bots.scoring import WIN
from bots.wire import search_info
from protocol.messages import MAX_PV_MOVES, MAX_SAFE_INTEGER


def test_search_info_reads_forced_results_and_keeps_to_the_wire_bounds() -> None:
    stats = SearchStats(nodes=10, depth=6, pv=["1-5", "x" * 200, *["2-6"] * 100])
    won = search_info(SearchResult(move=1, score=WIN - 5, stats=stats))
    assert (won.outcome, won.outcome_plies, won.score) == ("win", 5, WIN - 5)
    assert won.pv == ("1-5",)  # cut before the move too long for the wire
    long_line = SearchStats(pv=["2-6"] * 100)
    assert search_info(SearchResult(move=1, score=0, stats=long_line)).pv == ("2-6",) * MAX_PV_MOVES
    lost = search_info(SearchResult(move=1, score=-(WIN - 4), stats=SearchStats()))
    assert (lost.outcome, lost.outcome_plies) == ("loss", 4)
    proven = search_info(SearchResult(move=1, score=float(WIN), stats=SearchStats()))
    assert (proven.outcome, proven.outcome_plies) == ("win", None)  # MCTS: no distance
    plain = search_info(SearchResult(move=1, score=-35, stats=SearchStats()))
    assert (plain.outcome, plain.score) == (None, -35)
    huge = SearchStats(nodes=2**60, depth=10**6, seconds=1e-9)
    odd = search_info(SearchResult(move=1, score=float("nan"), stats=huge))
    assert odd.score is None and odd.nodes == MAX_SAFE_INTEGER and odd.depth == 10_000
