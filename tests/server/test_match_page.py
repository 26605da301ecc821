"""The match page at /matches/{id}: a browser gets HTML, a program the same JSON as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from protocol.messages import MatchRecord, MatchState, RecordedMove, SearchInfo, SeatInfo
from server.match_queries import MatchPage
from server.web.pages import CONTENT_SECURITY_POLICY, Pages
from server.web.plots import score_plot, score_text, search_summary
from tests.server.conftest import sqlite_server

HTML = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


def _register(client: httpx.Client, name: str) -> dict[str, str]:
    response = client.post("/players", json={"name": name})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


def test_a_browser_gets_the_page_and_a_program_the_json(tmp_path: Path) -> None:
    with sqlite_server(tmp_path) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        ann, bob = _register(client, "ann"), _register(client, "bob")
        body = {"game": "tictactoe", "seats": ["ann", "bob"], "time_control": {"base_ms": 60000}}
        match_id = str(client.post("/matches", json=body, headers=ann).json()["match_id"])
        assert client.post(f"/matches/{match_id}/accept", headers=bob).status_code == 200
        for move, who in (("4", ann), ("0", bob)):
            played = client.post(f"/matches/{match_id}/moves", json={"move": move}, headers=who)
            assert played.status_code == 200, played.text

        # Programs: JSON whatever they accept, the state as before (no field of the page).
        for accept in (None, "*/*", "application/json", "application/json, text/html"):
            headers = {} if accept is None else {"Accept": accept}
            answer = client.get(f"/matches/{match_id}", headers=headers)
            assert answer.status_code == 200
            assert answer.headers["content-type"] == "application/json"
            state = MatchState.model_validate(answer.json())
            assert state.moves == ("4", "0") and state.position == "O...X...."
            assert "content-security-policy" not in answer.headers

        page = client.get(f"/matches/{match_id}", headers=HTML)
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        # The text alternative: the position, each move with the position after it.
        assert '<code id="position-text">O...X....</code>' in page.text
        assert 'data-start-position="........."' in page.text
        assert 'data-ply="1" data-seat="0" data-position="....X...."' in page.text
        assert 'data-ply="2" data-seat="1" data-position="O...X...."' in page.text
        assert f'href="/matches/{match_id}/record"' in page.text
        assert "/pdn" not in page.text  # PDN is for checkers only
        for asset in ("/static/match.js", "/static/board.js", "/static/match.css"):
            assert client.get(asset).status_code == 200, asset


def test_an_unknown_match_is_a_page_for_browsers_and_an_error_for_programs(
    tmp_path: Path,
) -> None:
    with sqlite_server(tmp_path) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        page = client.get("/matches/m_nothing", headers=HTML)
        assert page.status_code == 404
        assert page.headers["content-type"].startswith("text/html")
        assert "There is no match m_nothing" in page.text
        answer = client.get("/matches/m_nothing")
        assert answer.status_code == 404
        assert answer.json()["code"] == "UNKNOWN_MATCH"


def test_the_match_page_draws_a_name_with_markup_as_text() -> None:
    """The protocol refuses such names; the template escapes them all the same."""
    name = "<script>alert(1)</script>"
    seats = (
        SeatInfo.model_construct(seat=0, side="X", player=name, bot=None, challenged=None),
        SeatInfo.model_construct(seat=1, side="O", player=None, bot="random", challenged=None),
    )
    common = {"match_id": "m_1", "game": "tictactoe", "seats": seats, "status": "active"}
    state = MatchState.model_construct(
        **common,
        options={},
        start_position=".........",
        position=".........",
        moves=(),
        to_move=0,
        your_seat=None,
        time_control=None,
        max_plies=None,
        clocks=None,
        legal_moves=(),
        result=None,
        draw_offer=None,
        seq=0,
    )
    record = MatchRecord.model_construct(**common, moves=())
    context = {"section": None, "version": "0", "protocol_version": "1"}
    page = MatchPage(state=state, record=record, positions=(".........",))
    html = bytes(Pages().render("match.html", {**context, "page": page}).body).decode()
    assert name not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


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
