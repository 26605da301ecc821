"""HTTP robustness end to end: bounded parameters, body limits and error bodies.

A real uvicorn server and real clients: whatever a client sends, the answer is the documented
`ErrorResponse` with a code, never a 500 or the framework's own `{"detail": ...}`.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from games import game_names
from protocol.errors import HTTP_STATUS, ErrorCode
from protocol.messages import (
    MAX_MESSAGE_BYTES,
    MAX_OFFSET,
    MAX_PAGE_LIMIT,
    ErrorResponse,
    next_offset,
)
from server.settings import Settings
from tests.server.conftest import RunningServer, sqlite_server, start_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """One server on SQLite for the whole module (these tests change no state that matters)."""
    with sqlite_server(tmp_path_factory.mktemp("http")) as running:
        yield running


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
    token = client.post("/players", json={"name": "uploader"}).json()["token"]
    for content_type in ("multipart/form-data", "multipart/form-data; boundary=xyz"):
        response = client.post(
            "/grader/jobs",
            content=b"garbage",
            headers={"content-type": content_type, "authorization": f"Bearer {token}"},
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


# -- 2. request bodies are limited before they are read -----------------------------------------


def raw_exchange(
    port: int, request: bytes, timeout: float = 30.0
) -> tuple[int, dict[str, str], Any]:
    """Send `request` bytes as they are and read one HTTP/1.1 answer: status, headers, JSON.

    The request may leave its body unfinished: the answer must come without the rest.
    """
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            assert chunk, f"connection closed before an answer: {data!r}"
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        status_line, *lines = head.decode("latin-1").split("\r\n")
        headers = {
            name.strip().lower(): value.strip()
            for name, _, value in (line.partition(":") for line in lines)
        }
        while len(rest) < int(headers["content-length"]):
            chunk = sock.recv(65536)
            assert chunk, "connection closed in the middle of the answer"
            rest += chunk
    return int(status_line.split()[1]), headers, json.loads(rest)


def chunk(data: bytes) -> bytes:
    """Return `data` as one chunk of a chunked body."""
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def player_body(size: int, name: str) -> bytes:
    """Return a valid `player_create` JSON body of exactly `size` bytes (padded with spaces)."""
    body = b'{"name": "%s"}' % name.encode()
    return body[:-1] + b" " * (size - len(body)) + b"}"


def test_a_chunked_body_over_the_limit_is_refused(client: httpx.Client) -> None:
    def pieces() -> Iterator[bytes]:
        for _ in range(20):
            yield b" " * 10_000

    response = client.post(
        "/players", content=pieces(), headers={"content-type": "application/json"}
    )
    assert "content-length" not in response.request.headers  # it was sent chunked
    body = assert_error(response, ErrorCode.MESSAGE_TOO_LARGE)
    assert body.details["limit"] == MAX_MESSAGE_BYTES
    assert isinstance(body.details["size"], int) and body.details["size"] > MAX_MESSAGE_BYTES


def test_a_chunked_body_is_refused_as_soon_as_it_passes_the_limit(server: RunningServer) -> None:
    """The body never ends: only a server counting bytes as they arrive can answer."""
    head = (
        b"POST /players HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
    )
    status, headers, body = raw_exchange(
        server.port, head + chunk(b" " * 40_000) + chunk(b" " * 40_000)
    )
    assert status == 413
    assert headers["connection"] == "close"
    assert ErrorResponse.model_validate(body).code == ErrorCode.MESSAGE_TOO_LARGE


def test_a_declared_length_over_the_limit_is_refused_before_the_body(
    server: RunningServer,
) -> None:
    """Content-Length says 10 MB and 10 bytes follow: the answer comes without waiting."""
    request = (
        b"POST /matches HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
        b'Content-Length: 10000000\r\n\r\n{"game": 1'
    )
    status, _, body = raw_exchange(server.port, request)
    assert status == 413
    error = ErrorResponse.model_validate(body)
    assert error.code == ErrorCode.MESSAGE_TOO_LARGE
    assert error.details == {"size": 10_000_000, "limit": MAX_MESSAGE_BYTES}


def test_a_body_of_exactly_the_limit_is_read(client: httpx.Client) -> None:
    headers = {"content-type": "application/json"}
    at_limit = client.post(
        "/players", content=player_body(MAX_MESSAGE_BYTES, "padded"), headers=headers
    )
    assert at_limit.status_code == 201, at_limit.text
    over = client.post(
        "/players", content=player_body(MAX_MESSAGE_BYTES + 1, "over"), headers=headers
    )
    assert_error(over, ErrorCode.MESSAGE_TOO_LARGE)

    def pieces(size: int) -> Iterator[bytes]:
        body = player_body(size, "chunked")
        yield from (body[i : i + 5000] for i in range(0, len(body), 5000))

    chunked = client.post("/players", content=pieces(MAX_MESSAGE_BYTES), headers=headers)
    assert chunked.status_code == 201, chunked.text
    assert_error(
        client.post("/players", content=pieces(MAX_MESSAGE_BYTES + 1), headers=headers),
        ErrorCode.MESSAGE_TOO_LARGE,
    )


def test_the_grader_upload_is_not_held_to_the_json_limit(client: httpx.Client) -> None:
    """POST /grader/jobs takes multipart uploads far larger than 64 KB (its own limit)."""
    program = b"# padding\n" * 20_000  # 200 KB
    response = client.post(
        "/grader/jobs", data={"profile": "endgame"}, files={"files": ("checkers.py", program)}
    )
    assert response.status_code != 413 or response.json()["code"] != "MESSAGE_TOO_LARGE"
    assert response.json()["type"] in {"grading_job", "error"}


def test_the_body_limit_is_the_setting(tmp_path: Path) -> None:
    running = start_server(
        Settings(
            database_url=f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}",
            grader_dir=tmp_path / "g",
            max_body_bytes=1000,
        )
    )
    try:
        with httpx.Client(base_url=running.url, timeout=10) as http:
            headers = {"content-type": "application/json"}
            fits = http.post("/players", content=player_body(1000, "fits"), headers=headers)
            assert fits.status_code == 201, fits.text
            over = http.post("/players", content=player_body(1001, "over"), headers=headers)
            assert assert_error(over, ErrorCode.MESSAGE_TOO_LARGE).details["limit"] == 1000
    finally:
        running.stop()


# -- 5. the OpenAPI description documents every answer ------------------------------------------


@pytest.fixture(scope="module")
def openapi(server: RunningServer) -> dict[str, Any]:
    """The description as the server serves it."""
    response = httpx.get(f"{server.url}/openapi.json", timeout=10)
    assert response.status_code == 200
    document: dict[str, Any] = response.json()
    return document


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            yield method.upper(), path, operation


def test_every_error_of_every_operation_is_an_error_response(openapi: dict[str, Any]) -> None:
    documented = 0
    for method, path, operation in operations(openapi):
        for status, response in operation["responses"].items():
            if int(status) >= 400:
                content = dict(response["content"])
                # A web form's route may answer with a page instead (the form again, or why
                # it was refused): only /web routes do, and as HTML.
                if path.startswith("/web/"):
                    content.pop("text/html", None)
                assert content == {
                    "application/json": {"schema": {"$ref": "#/components/schemas/ErrorResponse"}}
                }, (method, path, status)
                documented += 1
    assert documented > 100


def test_every_operation_documents_the_errors_the_server_answers_around_it(
    openapi: dict[str, Any],
) -> None:
    for method, path, operation in operations(openapi):
        statuses = set(operation["responses"])
        where = f"{method} {path}"
        assert "429" in statuses, where
        has_body = "requestBody" in operation
        if has_body:
            assert "400" in statuses, where
            assert "413" in statuses, where  # the grader documents its own 413
        if has_body or operation.get("parameters"):
            assert "422" in statuses, where
        elif "422" in statuses:  # only a web form read by the route itself, answered as a page
            assert "text/html" in operation["responses"]["422"]["content"], where
        if operation.get("security"):
            assert "401" in statuses, where
        if "{" in path:
            assert "404" in statuses, where


def test_game_is_an_enum_of_the_registered_games(openapi: dict[str, Any]) -> None:
    schemas = openapi["components"]["schemas"]
    for body in ("MatchCreate", "TournamentCreate"):
        assert schemas[body]["properties"]["game"]["enum"] == game_names(), body
    (game,) = [p for p in openapi["paths"]["/matches"]["get"]["parameters"] if p["name"] == "game"]
    assert {"type": "string", "enum": game_names(), "description": "A game's name."} in game[
        "schema"
    ]["anyOf"]


def test_every_integer_parameter_has_a_maximum(openapi: dict[str, Any]) -> None:
    bounded = 0
    for method, path, operation in operations(openapi):
        for parameter in operation.get("parameters", []):
            schema = parameter["schema"]
            if schema.get("type") == "integer":
                assert "maximum" in schema and "minimum" in schema, (method, path, parameter)
                bounded += "courses" not in path  # a course route's ids are bounded too
            if schema.get("type") == "string":
                assert "maxLength" in schema or "enum" in schema, (method, path, parameter)
    # limit and offset of /matches, /tournaments, /leaderboard and /hosted-bots; limit of
    # /bots/online and of a hosted bot's failures
    assert bounded == 10


async def test_another_framework_refusal_keeps_its_status_with_the_code_that_fits() -> None:
    """A framework HTTPException raised anywhere (429 from a limiter, 418) keeps its status."""
    from fastapi import FastAPI, HTTPException

    from server.routes import install

    app = FastAPI()
    install(app)

    @app.get("/limited")
    async def limited() -> None:
        raise HTTPException(429, "slow down", headers={"Retry-After": "3"})

    @app.get("/teapot")
    async def teapot() -> None:
        raise HTTPException(418, "a teapot")

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        response = await http.get("/limited")
        body = assert_error(response, ErrorCode.RATE_LIMITED)
        assert body.message == "refused request: slow down"
        assert response.headers["retry-after"] == "3"
        teapot = await http.get("/teapot")
        assert teapot.status_code == 418
        assert ErrorResponse.model_validate(teapot.json()).code == ErrorCode.BAD_MESSAGE
