"""The match page at /matches/{id}: a browser gets HTML, a program the same JSON as before."""

from __future__ import annotations

from pathlib import Path

import httpx

from protocol.messages import MatchRecord, MatchState, SeatInfo
from server.matches.queries import MatchPage
from server.web.pages import CONTENT_SECURITY_POLICY, Pages
from server.web.play import Viewer
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
    for you in (Viewer(), Viewer(name=name, seat=0)):  # a spectator, and the player in play mode
        html = bytes(
            Pages().render("match.html", {**context, "page": page, "you": you}).body
        ).decode()
        assert name not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
        assert ('id="play"' in html) is (you.seat is not None)
