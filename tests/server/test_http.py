"""HTTP robustness end to end: bounded parameters, body limits and error bodies.

A real uvicorn server and real clients: whatever a client sends, the answer is the documented
`ErrorResponse` with a code, never a 500 or the framework's own `{"detail": ...}`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from games import game_names
from protocol.errors import HTTP_STATUS, ErrorCode
from protocol.messages import MAX_OFFSET, MAX_PAGE_LIMIT, ErrorResponse, next_offset
from server.settings import Settings
from tests.server.conftest import RunningServer, start_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """One server on SQLite for the whole module (these tests change no state that matters)."""
    root: Path = tmp_path_factory.mktemp("http")
    running = start_server(
        Settings(database_url=f"sqlite+aiosqlite:///{root / 'arena.db'}", grader_dir=root / "g")
    )
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def client(server: RunningServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=10) as http:
        yield http


def assert_error(response: httpx.Response, code: ErrorCode) -> ErrorResponse:
    """Check that `response` is the documented error body for `code`, with its status."""
    assert response.status_code == HTTP_STATUS[code], response.text
    assert response.headers["content-type"].startswith("application/json")
    body = ErrorResponse.model_validate(response.json())
    assert body.code == code, response.text
    assert body.message
    return body


# -- 1. every integer parameter is bounded ------------------------------------------------------

HUGE = 2**63  # one past the largest 64-bit integer: what overflowed the database driver


@pytest.mark.parametrize("path", ["/matches", "/tournaments"])
@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("offset", HUGE),
        ("offset", 10**40),
        ("offset", MAX_OFFSET + 1),
        ("offset", -1),
        ("limit", HUGE),
        ("limit", MAX_PAGE_LIMIT + 1),
        ("limit", 0),
        ("limit", "ten"),
    ],
)
def test_page_parameters_out_of_range_are_a_422_naming_them(
    client: httpx.Client, path: str, name: str, value: object
) -> None:
    body = assert_error(client.get(path, params={name: value}), ErrorCode.VALIDATION_ERROR)
    assert f"query.{name}" in body.details
    assert f"query.{name}" in body.message


def test_offset_overflow_is_refused_on_every_database(live_server: RunningServer) -> None:
    """The issue's reproduction, on SQLite and (with ARENA_TEST_DATABASE_URL) PostgreSQL."""
    with httpx.Client(base_url=live_server.url, timeout=10) as http:
        for path in ("/matches", "/tournaments"):
            response = http.get(f"{path}?offset=9223372036854775808")
            assert_error(response, ErrorCode.VALIDATION_ERROR)
            # The largest offset allowed reaches the database and is an empty page.
            page = http.get(path, params={"offset": MAX_OFFSET, "limit": MAX_PAGE_LIMIT})
            assert page.status_code == 200, page.text
            assert page.json()["next_offset"] is None


def test_next_offset_never_points_past_the_largest_offset() -> None:
    assert next_offset(0, 50, 51) == 50
    assert next_offset(0, 50, 50) is None
    assert next_offset(MAX_OFFSET - 50, 50, 51) == MAX_OFFSET
    assert next_offset(MAX_OFFSET - 49, 50, 51) is None


def test_an_unknown_game_filter_is_refused_naming_the_games(client: httpx.Client) -> None:
    response = client.get("/matches", params={"game": "chess"})
    body = assert_error(response, ErrorCode.VALIDATION_ERROR)
    assert "query.game" in body.details
    assert "'chess'" in body.message
    for name in game_names():
        assert name in body.message
    # A game's alias is not its name: a filter would silently match nothing.
    assert_error(client.get("/matches", params={"game": "draughts"}), ErrorCode.VALIDATION_ERROR)
    known = client.get("/matches", params={"game": "checkers"})
    assert known.status_code == 200, known.text
    assert known.json()["type"] == "match_list"


# -- 4. what the framework refuses by itself is the documented error body -----------------------


def test_an_unknown_route_is_not_found_naming_it(client: httpx.Client) -> None:
    body = assert_error(client.get("/no/such/route"), ErrorCode.NOT_FOUND)
    assert body.details == {"method": "GET", "path": "/no/such/route"}
    assert "GET /no/such/route" in body.message
    assert_error(client.post("/matches/m_1/no-such-action"), ErrorCode.NOT_FOUND)


def test_a_websocket_route_asked_over_plain_http_says_so(client: httpx.Client) -> None:
    body = assert_error(client.get("/ws"), ErrorCode.NOT_FOUND)
    assert "WebSocket" in body.message


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("DELETE", "/matches", "GET, POST"),
        ("PUT", "/matches", "GET, POST"),
        ("GET", "/matches/m_1/moves", "POST"),
        ("PATCH", "/players", "POST"),
        ("POST", "/games", "GET"),
    ],
)
def test_a_wrong_method_is_refused_with_every_method_the_path_takes(
    client: httpx.Client, method: str, path: str, allowed: str
) -> None:
    response = client.request(method, path)
    body = assert_error(response, ErrorCode.METHOD_NOT_ALLOWED)
    assert response.headers["allow"] == allowed
    assert body.details == {"method": method, "path": path, "allow": allowed}


def test_an_unreadable_multipart_body_is_a_bad_message(client: httpx.Client) -> None:
    for content_type in ("multipart/form-data", "multipart/form-data; boundary=xyz"):
        response = client.post(
            "/grader/jobs", content=b"garbage", headers={"content-type": content_type}
        )
        body = assert_error(response, ErrorCode.BAD_MESSAGE)
        assert body.message.startswith("unreadable request: ")


def test_a_body_that_is_not_json_is_a_validation_error(client: httpx.Client) -> None:
    for content in (b"{", b"\xff\xfe", b"[]", b'"alice"'):
        response = client.post(
            "/players", content=content, headers={"content-type": "application/json"}
        )
        body = assert_error(response, ErrorCode.VALIDATION_ERROR)
        assert any(where.startswith("body") for where in body.details)
