"""The explorer's routes over a real server: `POST /explore/trace` and `POST /explore/position`.

A trace over the wire is the trace `bots.trace.tree` makes of the same request, node for node; a
position reached by moves is the position the game's rules reach. Every refusal has its
documented code (docs/PROTOCOL.md): VALIDATION_ERROR naming the field, INVALID_MOVE and
ILLEGAL_MOVE naming the move, TRACE_TOO_LARGE past the node limit, TRACE_TIMEOUT at the time
limit (the trace is stopped: the server answers, and answers the next request), RATE_LIMITED
past the rate per address, MESSAGE_TOO_LARGE past the body limit; never a 500.
"""

from __future__ import annotations

import math
import threading
import typing
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import server.explore as explore_service
from bots.trace.tree import SEARCHES, trace
from games.registry import get_game
from protocol.explore import SearchName
from server.settings import Settings
from tests.server.conftest import RunningServer, start_server


@pytest.fixture
def make_server(tmp_path: Path) -> Iterator[Any]:
    """Start servers on a fresh SQLite file with some settings changed; stop them after."""
    running: list[RunningServer] = []

    def make(**changes: Any) -> httpx.Client:
        settings = Settings(
            database_url=f"sqlite+aiosqlite:///{tmp_path / f'arena{len(running)}.db'}",
            grader_dir=tmp_path / "grader",
            **changes,
        )
        server = start_server(settings)
        running.append(server)
        return httpx.Client(base_url=server.url, timeout=60)

    yield make
    for server in running:
        server.stop()


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    """A client of one server shared by the module's tests that change no other setting than
    the rates of traces and positions (raised: together they send more than a client would in
    a minute)."""
    folder = tmp_path_factory.mktemp("explore")
    server = start_server(
        Settings(
            database_url=f"sqlite+aiosqlite:///{folder / 'arena.db'}",
            grader_dir=folder,
            rate_traces_per_address="1000/minute",
            rate_positions_per_address="10000/minute",
        )
    )
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            yield client
    finally:
        server.stop()


def refused(response: httpx.Response, status: int, code: str, *words: str) -> dict[str, Any]:
    """Assert `response` is the documented refusal; return its body."""
    assert response.status_code == status, response.text
    error: dict[str, Any] = response.json()
    assert error["code"] == code, error
    for word in words:
        assert word in error["message"], error
    return error


def expected(
    game: str,
    position: str | None,
    search: str,
    depth: int,
    moves: tuple[str, ...] = (),
    **options: Any,
) -> dict[str, Any]:
    """The trace bots.trace.tree makes of the same request, as JSON."""
    state = get_game(game).position_or_initial(position)
    for move in moves:
        state = state.apply(state.parse_move(move))
    return trace(state, search, depth, **options).as_dict()


def test_the_wire_names_every_search_bots_trace_runs() -> None:
    assert set(typing.get_args(SearchName)) == set(SEARCHES)


CASES = [
    ("tictactoe", "X...O....", "alphabeta", 3, {}),
    ("tictactoe", "X...O....", "alphabeta_soft", 3, {}),
    ("tictactoe", "X...O....", "minimax", 2, {}),
    ("tictactoe", "XO..X....", "minimax_prune", 4, {"scoring": "lecture"}),
    ("tictactoe", "X...O....", "negamax", 3, {"window": (-2.0, 2.0)}),
    ("tictactoe", "X...O....", "abnodevalue", 3, {"window": (-math.inf, 5.0)}),
    ("nim", "1,2,3", "alphabeta", 9, {"scoring": "lecture", "window": (-1.0, 1.0)}),
    ("connect4", "4455", "engine", 3, {}),
    ("connect4", "4455", "engine", 3, {"tt": False, "ordering": False}),
    ("checkers", None, "engine", 2, {"evaluation": "material"}),
]


def wire_window(window: tuple[float, float]) -> list[float | str]:
    return [
        "inf" if bound == math.inf else "-inf" if bound == -math.inf else bound for bound in window
    ]


@pytest.mark.parametrize(("game", "position", "search", "depth", "options"), CASES)
def test_a_trace_is_bots_trace_of_the_same_request(
    http: httpx.Client,
    game: str,
    position: str | None,
    search: str,
    depth: int,
    options: dict[str, Any],
) -> None:
    body: dict[str, Any] = {"game": game, "search": search, "depth": depth, **options}
    if position is not None:
        body["position"] = position
    if "window" in options:
        body["window"] = wire_window(options["window"])
    response = http.post("/explore/trace", json=body)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    answer = response.json()
    assert answer == expected(game, position, search, depth, **options)
    assert answer["stats"]["nodes"] == len(answer["nodes"]) == sum(answer["counts_by_depth"])


def test_a_start_and_moves_trace_the_position_they_reach(http: httpx.Client) -> None:
    moves = ("0", "4", "8")
    body = {"game": "tictactoe", "moves": list(moves), "search": "alphabeta", "depth": 3}
    answer = http.post("/explore/trace", json=body).json()
    assert answer == expected("tictactoe", None, "alphabeta", 3, moves)
    assert answer["position"] == "X...O...X"


def test_a_position_and_its_legal_moves(http: httpx.Client) -> None:
    answer = http.post("/explore/position", json={"game": "connect4", "moves": ["4", "4"]})
    assert answer.status_code == 200, answer.text
    state = get_game("connect4").parse_position("44")
    assert answer.json() == {
        "game": "connect4",
        "position": "44",
        "to_move": get_game("connect4").player_names[state.to_move],
        "legal_moves": [state.format_move(m) for m in state.legal_moves()],
        "over": False,
    }
    over = http.post("/explore/position", json={"game": "tictactoe", "position": "XXXOO...."})
    assert over.status_code == 200
    # X has not won yet: X to move; after 5 X has a row.
    won = http.post(
        "/explore/position", json={"game": "tictactoe", "position": "XX.OO....", "moves": ["2"]}
    ).json()
    assert won["over"] is True and won["legal_moves"] == [] and won["position"] == "XXXOO...."


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"game": "chess"}, "game", ("unknown game",)),
        ({"game": "nim", "options": {"colour": "red"}}, "options", ("no option colour",)),
        ({"game": "tictactoe", "position": "XXXX"}, "position", ("4 cells",)),
        ({"game": "tictactoe", "position": "XXXOO...."}, "position", ("over",)),
        ({"game": "tictactoe", "depth": 10}, "depth", ("at most 9", "not 10")),
        ({"game": "tictactoe", "max_nodes": 50_000}, "max_nodes", ("at most 10,000",)),
        ({"game": "tictactoe", "window": [1, 1]}, "window", ("alpha must be less",)),
        ({"game": "tictactoe", "window": ["inf", 0]}, "window", ("alpha must be less",)),
        ({"game": "tictactoe", "evaluation": "nope"}, "evaluation", ("no evaluation 'nope'",)),
        ({"game": "nim", "position": "3,100"}, "position", ("heap 2 has 100",)),
        (
            {"game": "tictactoe", "moves": ["0", "3", "1", "4", "2", "5"]},
            "moves.5",
            ("over before",),
        ),
    ],
)
def test_bad_input_is_a_validation_error_naming_the_field(
    http: httpx.Client, body: dict[str, Any], field: str, words: tuple[str, ...]
) -> None:
    error = refused(http.post("/explore/trace", json=body), 422, "VALIDATION_ERROR", *words)
    assert error["message"].startswith(f"{field}: ") and field in error["details"], error


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({"game": "tictactoe", "search": "bfs"}, "body.search"),
        ({"game": "tictactoe", "depth": 0}, "body.depth"),
        ({"game": "tictactoe", "depth": "3"}, "body.depth"),
        ({"game": "tictactoe", "tt": "yes"}, "body.tt"),
        ({"game": "tictactoe", "window": [0, 1e13]}, "body.window"),
        ({"game": "tictactoe", "window": [0]}, "body.window"),
        ({"game": "tictactoe", "colour": "red"}, "body.colour"),
        ({"game": "tictactoe", "moves": ["0"] * 201}, "body.moves"),
        ({"game": "tictactoe", "scoring": "elo"}, "body.scoring"),
    ],
)
def test_a_malformed_body_is_a_validation_error(
    http: httpx.Client, body: dict[str, Any], where: str
) -> None:
    error = refused(http.post("/explore/trace", json=body), 422, "VALIDATION_ERROR")
    assert any(key.startswith(where) for key in error["details"]), error


def test_bad_moves_are_named_by_index(http: httpx.Client) -> None:
    for path in ("/explore/trace", "/explore/position"):
        body = {"game": "tictactoe", "moves": ["4", "zz"]}
        error = refused(http.post(path, json=body), 422, "INVALID_MOVE", "moves.1")
        assert error["details"] == {"index": 1}
        body = {"game": "tictactoe", "moves": ["4", "4"]}
        error = refused(http.post(path, json=body), 422, "ILLEGAL_MOVE", "moves.1")
        assert error["details"] == {"index": 1}
        assert error["legal_moves"] == ["0", "1", "2", "3", "5", "6", "7", "8"]


def test_a_tree_over_the_node_limit_is_refused(http: httpx.Client) -> None:
    body: dict[str, Any] = {"game": "checkers", "search": "minimax", "depth": 9}
    error = refused(http.post("/explore/trace", json=body), 422, "TRACE_TOO_LARGE", "10,000")
    assert error["details"] == {"limit": 10_000}
    # A client's own lower limit: the full tree of this position has 1 + 6 + 6 * 5 nodes.
    small = {"game": "tictactoe", "position": "X...O....", "moves": ["8"], "depth": 2}
    full = http.post("/explore/trace", json={**small, "search": "minimax"}).json()
    assert len(full["nodes"]) == 37
    error = refused(
        http.post("/explore/trace", json={**small, "search": "minimax", "max_nodes": 36}),
        422,
        "TRACE_TOO_LARGE",
        "more than 36 nodes",
    )
    assert error["details"] == {"limit": 36}
    exact = http.post("/explore/trace", json={**small, "search": "minimax", "max_nodes": 37})
    assert exact.status_code == 200


def test_a_trace_past_the_time_limit_is_stopped(make_server: Any) -> None:
    # A million nodes of checkers minimax would take minutes: the stop ends it at the limit.
    http = make_server(explore_max_seconds=0.3, explore_max_nodes=1_000_000)
    body = {"game": "checkers", "search": "minimax", "depth": 9}
    error = refused(http.post("/explore/trace", json=body), 503, "TRACE_TIMEOUT", "0.3 s")
    assert error["details"] == {"limit_s": 0.3}
    # The thread is free again: the next trace runs.
    small = {"game": "tictactoe", "position": "X...O....", "search": "alphabeta", "depth": 2}
    assert http.post("/explore/trace", json=small).status_code == 200


def test_traces_are_rate_limited_per_address(make_server: Any) -> None:
    http = make_server(rate_traces_per_address="2/day")
    body = {"game": "tictactoe", "position": "X...O....", "depth": 1}
    assert http.post("/explore/trace", json=body).status_code == 200
    assert http.post("/explore/trace", json={"game": "chess"}).status_code == 422
    response = http.post("/explore/trace", json=body)
    refused(response, 429, "RATE_LIMITED", "search traces")
    assert int(response.headers["Retry-After"]) >= 1
    # Positions cost no search and are not counted.
    assert http.post("/explore/position", json={"game": "tictactoe"}).status_code == 200


def test_positions_are_rate_limited_per_address(make_server: Any) -> None:
    http = make_server(rate_positions_per_address="2/day")
    body = {"game": "tictactoe", "moves": ["4"]}
    assert http.post("/explore/position", json=body).status_code == 200
    assert http.post("/explore/position", json={"game": "chess"}).status_code == 422
    response = http.post("/explore/position", json=body)
    error = refused(response, 429, "RATE_LIMITED", "positions")
    assert int(response.headers["Retry-After"]) >= 1
    assert error["details"]["scope"] == "address"
    # Traces have their own count.
    trace = {"game": "tictactoe", "position": "X...O....", "depth": 1}
    assert http.post("/explore/trace", json=trace).status_code == 200


class Held:
    """A stand-in for a function that waits, once entered, until the test releases it."""

    def __init__(self, real: typing.Callable[..., Any]) -> None:
        self.real = real
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.entered.set()
        self.release.wait(timeout=300)
        return self.real(*args, **kwargs)


def test_the_server_answers_others_while_a_position_is_worked_out(
    make_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = Held(explore_service.reach)
    monkeypatch.setattr(explore_service, "reach", held)
    http = make_server()
    body = {"game": "checkers", "moves": ["11-15", "23-19"]}
    try:
        with ThreadPoolExecutor(1) as pool:
            pending = pool.submit(http.post, "/explore/position", json=body)
            assert held.entered.wait(timeout=60), "the request never reached its work"
            try:
                # Working on the event loop, the server could not answer this at all.
                health = httpx.get(f"{http.base_url}/health", timeout=30)
            finally:
                held.release.set()
            assert health.status_code == 200 and health.json()["status"] == "ok"
            answer = pending.result()
    finally:
        held.release.set()
    assert answer.status_code == 200, answer.text
    assert answer.json()["to_move"] == "black"


def test_a_body_over_the_limit_is_refused_before_it_is_read(http: httpx.Client) -> None:
    body = {"game": "tictactoe", "position": "X" * 70_000}
    refused(http.post("/explore/trace", json=body), 413, "MESSAGE_TOO_LARGE")


def test_the_page_and_the_openapi_description(http: httpx.Client) -> None:
    page = http.get("/explore")
    assert page.status_code == 200
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert '<script type="module" src="/static/explore.js">' in page.text
    assert 'href="/explore" aria-current="page"' in page.text
    for name in SEARCHES:
        assert f'<option value="{name}"' in page.text
    paths = http.get("/openapi.json").json()["paths"]
    answers = paths["/explore/trace"]["post"]["responses"]
    assert {"200", "413", "422", "429", "503"} <= set(answers)
    assert "Retry-After" in answers["429"]["headers"]
    assert "/explore/position" in paths


TEXT = st.text(alphabet=st.sampled_from("0123456789,:-xXOo.KWB/ \t\n\u00e9\u221e"), max_size=40)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    game=st.sampled_from(["checkers", "connect4", "nim", "tictactoe"]),
    position=st.none() | TEXT,
    moves=st.lists(TEXT, max_size=4),
)
def test_any_position_or_move_text_is_answered_or_refused_by_name(
    http: httpx.Client, game: str, position: str | None, moves: list[str]
) -> None:
    body = {"game": game, "position": position, "moves": [m for m in moves if m]}
    response = http.post("/explore/position", json=body)
    assert response.status_code in (200, 422), response.text
    if response.status_code == 422:
        assert response.json()["code"] in ("VALIDATION_ERROR", "INVALID_MOVE", "ILLEGAL_MOVE")
        return
    answer = response.json()
    state = get_game(game).parse_position(answer["position"])
    assert answer["legal_moves"] == (
        [] if state.is_terminal() else [state.format_move(m) for m in state.legal_moves()]
    )
    if not answer["over"]:
        traced = http.post("/explore/trace", json={**body, "depth": 1, "search": "negamax"})
        assert traced.status_code == 200, traced.text
        assert traced.json()["position"] == answer["position"]


def test_traces_waiting_for_the_thread_are_stopped_at_the_limit_too(make_server: Any) -> None:
    # One thread: two long traces at once; the second waits, and both end at the limit.
    http = make_server(explore_max_seconds=0.5, explore_max_nodes=1_000_000, explore_threads=1)
    body = {"game": "checkers", "search": "minimax", "depth": 9}
    with ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(lambda _: http.post("/explore/trace", json=body), range(2)))
    for answer in answers:
        refused(answer, 503, "TRACE_TIMEOUT", "0.5 s")
    small = {"game": "tictactoe", "position": "X...O....", "search": "alphabeta", "depth": 2}
    assert http.post("/explore/trace", json=small).status_code == 200
