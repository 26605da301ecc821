"""The search statistics of the match page, computed on the server (server/web/plots.py): the
score graph's geometry and the texts of a move's search."""

from __future__ import annotations

from typing import Any

import pytest

from protocol.messages import RecordedMove, SearchInfo
from server.web.plots import score_plot, score_text, search_summary


def test_the_score_graph_puts_each_bot_on_its_own_scale_from_the_first_seats_view() -> None:
    def moved(ply: int, **search: Any) -> RecordedMove:
        info = SearchInfo.model_validate({"depth": 3, "nodes": 10, **search}) if search else None
        return RecordedMove(ply=ply, seat=(ply - 1) % 2, move=str(ply), elapsed_ms=1, search=info)

    moves = [
        moved(1, score=50),  # seat 0, its largest score: the top
        moved(2, score=0.5),  # seat 1, its largest: seat 0's view is the bottom
        moved(3, score=-25),  # half of seat 0's largest, against it
        moved(4),  # no statistics: no point, but a place on the axis
        moved(5, score=999_995, outcome="win", outcome_plies=5),  # proven: the edge
    ]
    plot = score_plot(moves)
    assert plot is not None and plot.plies == 5
    assert [(p.ply, p.seat, p.x, p.y) for p in plot.points] == [
        (1, 0, 10.0, 10.0),
        (2, 1, 155.0, 230.0),
        (3, 0, 300.0, 175.0),
        (5, 0, 590.0, 10.0),
    ]
    assert [p.proven for p in plot.points] == [False, False, False, True]
    assert plot.line == "10.0,10.0 155.0,230.0 300.0,175.0 590.0,10.0"
    assert plot.points[-1].label == "5. 5: win in 5"
    assert score_plot([moved(1), moved(2)]) is None
    assert score_plot([moved(1, score=None)]) is None


@pytest.mark.parametrize(
    ("search", "text"),
    [
        ({"score": 35}, "+35"),
        ({"score": -10.0}, "-10"),
        ({"score": 0}, "0"),
        ({"score": 0.394}, "+0.39"),
        ({"score": -0.5}, "-0.50"),
        ({}, "no score"),
        ({"outcome": "loss", "outcome_plies": 4, "score": -999_996}, "loss in 4"),
        ({"outcome": "draw"}, "draw"),
    ],
)
def test_a_score_reads_in_the_bots_units_or_as_the_proven_result(
    search: dict[str, Any], text: str
) -> None:
    info = SearchInfo.model_validate({"depth": 2, "nodes": 12_345, **search})
    assert score_text(info) == text
    assert search_summary(info) == f"depth 2 · 12,345 nodes · {text}"
