"""Tournaments on the server end to end: real uvicorn, real clients, real house-bot matches."""

from __future__ import annotations

import asyncio
import builtins
import io
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from competition.openings import deck, default_openings
from competition.runner import TournamentSpec, run_tournament
from protocol.messages import dump_server_message, parse_server_message
from server.settings import Settings
from tests.server.conftest import RunningServer, start_server
from tests.wsclient import connect

TIMEOUT = 60.0
HELLO = {"type": "hello", "protocol_version": "1.0", "client": "test"}
TICTACTOE = {
    "game": "tictactoe",
    "bots": ["alphabeta:depth=2", "alphabeta:depth=9", "greedy"],
    "games_per_pairing": 2,
    "seed": 7,
    "ply_cap": 9,
}
CHECKERS = {"game": "checkers", "bots": ["alphabeta:depth=1", "greedy"], "ply_cap": 8}
ACF = {opening.name: opening for opening in deck("acf-3move")}
SHARED = Path(__file__).resolve().parents[4] / "shared"


@pytest.fixture
def shared_hidden(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Open nothing under ../shared in this process (the server's too), as in a user's clone."""
    real_open = io.open

    def guarded_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(file, str | os.PathLike) and Path(os.fspath(file)).resolve().is_relative_to(
            SHARED
        ):
            raise FileNotFoundError(f"{file} is hidden: a user's clone has no ../shared")
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(io, "open", guarded_open)
    monkeypatch.setattr(builtins, "open", guarded_open)
    yield


def auth_headers(http: httpx.Client, name: str = "organiser") -> dict[str, str]:
    """Register a player; return its bearer header."""
    response = http.post("/players", json={"name": name})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


def create(http: httpx.Client, headers: dict[str, str], **body: Any) -> dict[str, Any]:
    """Create a tournament; return its state."""
    response = http.post("/tournaments", json=body, headers=headers)
    assert response.status_code == 201, response.text
    state: dict[str, Any] = response.json()
    assert state["status"] == "created" and state["games_done"] == 0
    return state


def wait_finished(http: httpx.Client, tournament_id: str) -> dict[str, Any]:
    """Poll a tournament until it is finished; return its state."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        state: dict[str, Any] = http.get(f"/tournaments/{tournament_id}").json()
        if state["status"] == "finished":
            return state
        assert time.monotonic() < deadline, state
        time.sleep(0.05)


def check_finished(http: httpx.Client, state: dict[str, Any]) -> None:
    """Every game has a finished match with the game's result; points sum to the games."""
    assert state["games_done"] == state["games_total"] == len(state["games"])
    points = state["standings"]["points"]
    assert sum(row["points"] for row in points) == state["games_total"]
    assert len({game["match_id"] for game in state["games"]}) == state["games_total"]
    check_matches(http, state)


def check_matches(http: httpx.Client, state: dict[str, Any]) -> None:
    """Every game has a match of its own, finished with the game's result."""
    assert len({game["match_id"] for game in state["games"]}) == len(state["games"])
    for game in state["games"]:
        match = http.get(f"/matches/{game['match_id']}").json()
        assert match["status"] == "finished"
        seats = [seat["bot"] for seat in match["seats"]]
        assert seats == [game["first"], game["second"]]
        winner = match["result"]["winner"]
        assert game["result"] == (0.5 if winner is None else 1.0 - winner)
        assert game["reason"] == match["result"]["description"]


def test_create_start_and_watch_a_tournament(live_server: RunningServer) -> None:
    with httpx.Client(base_url=live_server.url, timeout=30) as http:
        headers = auth_headers(http)
        state = create(http, headers, **TICTACTOE, concurrency=3)
        tournament_id = state["tournament_id"]
        assert state["games_total"] == 6  # 3 pairings x 2 games
        assert [row["points"] for row in state["standings"]["points"]] == [0, 0, 0]
        listed = http.get("/tournaments").json()["tournaments"]
        assert [t["tournament_id"] for t in listed] == [tournament_id]

        async def watch() -> list[dict[str, Any]]:
            url = f"{live_server.ws_url}/ws/tournaments/{tournament_id}"
            received: list[dict[str, Any]] = []
            async with connect(url) as ws:
                await ws.send(json.dumps(HELLO))
                while not received or received[-1]["type"] != "tournament_finished":
                    text = await asyncio.wait_for(ws.recv(), TIMEOUT)
                    message = json.loads(text)
                    # Sent in the hello's version (1.0): the fields added since are left out.
                    parsed = parse_server_message(text)
                    assert json.loads(dump_server_message(parsed, HELLO["protocol_version"])) == (
                        message
                    )
                    received.append(message)
                    if message["type"] == "tournament_state":
                        started = http.post(f"/tournaments/{tournament_id}/start", headers=headers)
                        assert started.status_code == 200, started.text
                        assert started.json()["status"] in ("running", "finished")
            return received

        messages = asyncio.run(watch())
        assert [m["type"] for m in messages[:2]] == ["welcome", "tournament_state"]
        finished = [m for m in messages if m["type"] == "tournament_game_finished"]
        assert sorted(m["game"]["index"] for m in finished) == list(range(6))
        assert [m["games_done"] for m in finished] == list(range(1, 7))
        final = messages[-1]
        assert sum(row["points"] for row in final["standings"]["points"]) == 6
        state = wait_finished(http, tournament_id)
        check_finished(http, state)
        standings = state["standings"]
        assert {r["bot"] for r in standings["ratings"]} == set(TICTACTOE["bots"])
        assert set(standings["los"]) == set(TICTACTOE["bots"])
        # Starting a finished tournament changes nothing.
        again = http.post(f"/tournaments/{tournament_id}/start", headers=headers)
        assert again.json()["games"] == state["games"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({**TICTACTOE, "game": "chess"}, "game"),
        ({**TICTACTOE, "options": {"size": "4"}}, "options"),
        ({**TICTACTOE, "bots": ["alphabeta:depth=2", "nosuchbot"]}, "bots"),
        ({**TICTACTOE, "bots": ["greedy", "greedy"]}, "bots"),
        ({**TICTACTOE, "bots": ["greedy"]}, "body.bots"),
        ({**TICTACTOE, "games_per_pairing": 3}, "body.games_per_pairing"),
        ({**TICTACTOE, "format": "swiss"}, "body.format"),
        ({**TICTACTOE, "concurrency": 0}, "body.concurrency"),
        ({**TICTACTOE, "concurrency": 17}, "body.concurrency"),
        ({**TICTACTOE, "ply_cap": 0}, "body.ply_cap"),
        ({**CHECKERS, "openings": "acf"}, "openings"),
        ({**TICTACTOE, "openings": "acf-3move"}, "openings"),
        ({**TICTACTOE, "openings": ["11-15 23-19 8-11"]}, "openings"),
        ({**TICTACTOE, "openings": "4 0"}, "body.openings.deck"),
        ({**TICTACTOE, "openings": 4}, "body.openings.list"),
        ({**TICTACTOE, "openings": []}, "body.openings.list"),
        ({**TICTACTOE, "openings": ["4"] * 1001}, "body.openings.list"),
        ({**TICTACTOE, "openings": ["4", "4\n0"]}, "body.openings.list.1"),
        ({**TICTACTOE, "openings": ["fen:" + "X" * 5000]}, "body.openings.list.0"),
    ],
)
def test_bad_tournaments_are_validation_errors(
    live_server: RunningServer, body: dict[str, Any], field: str
) -> None:
    with httpx.Client(base_url=live_server.url, timeout=30) as http:
        headers = auth_headers(http)
        response = http.post("/tournaments", json=body, headers=headers)
        assert response.status_code == 422, response.text
        error = response.json()
        assert error["code"] == "VALIDATION_ERROR"
        assert field in error["details"], error
        assert http.get("/tournaments").json()["tournaments"] == []


def test_an_opening_that_cannot_be_played_is_refused_by_its_entry(
    live_server: RunningServer,
) -> None:
    with httpx.Client(base_url=live_server.url, timeout=30) as http:
        headers = auth_headers(http)
        body = {**CHECKERS, "openings": ["11-15 23-19 8-11", "11-15 23-19 11-15", "fen:"]}
        response = http.post("/tournaments", json=body, headers=headers)
        assert response.status_code == 422, response.text
        error = response.json()
        assert error["code"] == "VALIDATION_ERROR"
        # Named by its place in the list, counted from 1, and by its text.
        assert error["details"]["openings"] == (
            "opening 2 of 3 ('11-15 23-19 11-15'): move 3 '11-15' is rejected: illegal move "
            "'11-15': there is no Black piece on square 11 (legal moves: 7-11, 8-11, 9-13, "
            "9-14, 10-14, 12-16, 15-18)"
        )
        assert error["message"].startswith("openings: opening 2 of 3 ('11-15 23-19 11-15'): ")


def test_a_refused_tournament_says_what_is_wrong_in_plain_words(
    live_server: RunningServer,
) -> None:
    with httpx.Client(base_url=live_server.url, timeout=30) as http:
        headers = auth_headers(http)
        cases = [
            (
                {**TICTACTOE, "bots": ["random"]},
                "body.bots",
                "needs at least 2 players (house bots or player:NAME), not 1",
            ),
            (
                {**TICTACTOE, "bots": ["random", "Not A Bot"]},
                "body.bots.1",
                "player 2 ('Not A Bot') is not a bot spec (NAME or NAME:KEY=VALUE,..., as GET "
                "/bots lists them) or player:NAME",
            ),
            (
                {**TICTACTOE, "games_per_pairing": 3},
                "body.games_per_pairing",
                "must be even, not 3",
            ),
            (
                {**CHECKERS, "openings": ["11-15", ""]},
                "body.openings.list.1",
                "opening 2 ('') must not be empty",
            ),
        ]
        for body, field, words in cases:
            response = http.post("/tournaments", json=body, headers=headers)
            assert response.status_code == 422, response.text
            error = response.json()
            assert error["code"] == "VALIDATION_ERROR"
            assert error["details"] == {field: words}, error
            assert error["message"] == f"bad request: {field}: {words}"
        twice = http.post(
            "/tournaments", json={**TICTACTOE, "bots": ["random", "random"]}, headers=headers
        )
        assert twice.json()["details"] == {
            "bots": "'random' is named twice: name each bot once (a bot is named by its spec)"
        }


def test_unknown_tournaments_and_missing_tokens(live_server: RunningServer) -> None:
    with httpx.Client(base_url=live_server.url, timeout=30) as http:
        assert http.post("/tournaments", json=TICTACTOE).status_code == 401
        missing = http.get("/tournaments/t_nope")
        assert missing.status_code == 404 and missing.json()["code"] == "UNKNOWN_TOURNAMENT"
        headers = auth_headers(http)
        assert http.post("/tournaments/t_nope/start", headers=headers).status_code == 404

    async def watch_unknown() -> dict[str, Any]:
        async with connect(f"{live_server.ws_url}/ws/tournaments/t_nope") as ws:
            await ws.send(json.dumps(HELLO))
            assert json.loads(await ws.recv())["type"] == "welcome"
            error: dict[str, Any] = json.loads(await ws.recv())
            return error

    assert asyncio.run(watch_unknown())["code"] == "UNKNOWN_TOURNAMENT"


def test_the_server_plays_the_same_games_as_the_local_runner(live_server: RunningServer) -> None:
    body = {
        "game": "connect4",
        "bots": ["alphabeta:depth=2", "alphabeta:depth=3"],
        "games_per_pairing": 4,
        "seed": 3,
        "ply_cap": 14,
    }
    spec = TournamentSpec(
        game="connect4",
        bots=("alphabeta:depth=2", "alphabeta:depth=3"),
        games_per_pairing=4,
        seed=3,
        ply_cap=14,
    )
    spec_game = spec.build_game()
    openings = default_openings(spec_game, 2, 3)
    local = run_tournament(spec, openings)
    by_name = {opening.name: opening for opening in openings}
    with httpx.Client(base_url=live_server.url, timeout=30) as http:
        headers = auth_headers(http)
        tournament_id = create(http, headers, **body)["tournament_id"]
        http.post(f"/tournaments/{tournament_id}/start", headers=headers)
        state = wait_finished(http, tournament_id)
        check_finished(http, state)
        assert len(state["games"]) == len(local) == 4
        reasons = set()
        for game, record in zip(state["games"], local, strict=True):
            assert (game["index"], game["first"], game["second"], game["opening"]) == (
                record.index,
                record.first,
                record.second,
                record.opening,
            )
            opening = by_name[record.opening]
            match = http.get(f"/matches/{game['match_id']}").json()
            assert match["start_position"] == opening.position_text(spec_game)
            assert tuple(match["moves"]) == record.moves[len(opening.moves) :]
            assert record.moves[: len(opening.moves)] == opening.moves
            assert (game["result"], game["reason"]) == (record.result, record.reason)
            reasons.add(record.reason)
        # The cap drew at least one game, so adjudication is compared too.
        assert "ply cap" in reasons


def test_a_game_reaching_the_ply_cap_is_adjudicated_a_draw(live_server: RunningServer) -> None:
    with httpx.Client(base_url=live_server.url, timeout=30) as http:
        headers = auth_headers(http)
        body = {"game": "connect4", "bots": ["random", "greedy"], "ply_cap": 5}
        tournament_id = create(http, headers, **body)["tournament_id"]
        http.post(f"/tournaments/{tournament_id}/start", headers=headers)
        state = wait_finished(http, tournament_id)
        check_finished(http, state)
        for game in state["games"]:
            assert (game["result"], game["reason"]) == (0.5, "ply cap")
            match = http.get(f"/matches/{game['match_id']}").json()
            # The openings have 4 plies: the cap leaves one move to the bots.
            assert len(match["moves"]) == 1
            assert match["result"] == {
                "winner": None,
                "reason": "adjudication",
                "description": "ply cap",
            }
            record = http.get(f"/matches/{game['match_id']}/record").json()
            assert record["result"] == match["result"]
            # A 1.1 client gets the result code and the match's own cap.
            v11 = {"Arena-Protocol-Version": "1.1"}
            match = http.get(f"/matches/{game['match_id']}", headers=v11).json()
            assert (match["result"]["code"], match["max_plies"]) == ("ply_cap", 1)


def test_a_restarted_server_finishes_the_tournament_without_replaying_games(
    server_settings: Settings,
) -> None:
    body = {
        "game": "connect4",
        "bots": ["alphabeta:depth=3", "alphabeta:depth=4"],
        "games_per_pairing": 6,
        "seed": 1,
        "ply_cap": 40,
        "concurrency": 2,
    }
    first = start_server(server_settings)
    try:
        with httpx.Client(base_url=first.url, timeout=30) as http:
            headers = auth_headers(http)
            tournament_id = create(http, headers, **body)["tournament_id"]
            http.post(f"/tournaments/{tournament_id}/start", headers=headers)
            deadline = time.monotonic() + TIMEOUT
            while True:
                state = http.get(f"/tournaments/{tournament_id}").json()
                if state["games_done"] >= 1:
                    break
                assert time.monotonic() < deadline
                time.sleep(0.02)
            before = {g["index"]: g for g in state["games"] if g["result"] is not None}
    finally:
        first.stop()
    assert state["status"] == "running", "the tournament finished before the restart"
    second = start_server(server_settings)
    try:
        with httpx.Client(base_url=second.url, timeout=30) as http:
            state = wait_finished(http, tournament_id)
            check_finished(http, state)
            after = {g["index"]: g for g in state["games"]}
            for index, game in before.items():
                assert after[index] == game
            matches = http.get("/matches", params={"limit": 200}).json()["matches"]
            # One match per game: nothing was played twice.
            assert len(matches) == state["games_total"] == 6
            # Each match kept its cap (40 plies less its opening's 4) across the restart.
            v11 = {"Arena-Protocol-Version": "1.1"}
            for game in state["games"]:
                match = http.get(f"/matches/{game['match_id']}", headers=v11).json()
                assert match["max_plies"] == 36 and len(match["moves"]) <= 36
                capped = match["result"]["code"] == "ply_cap"
                assert capped == (len(match["moves"]) == 36 and match["result"]["winner"] is None)
    finally:
        second.stop()


def play_checkers(http: httpx.Client, headers: dict[str, str], **extra: Any) -> dict[str, Any]:
    """Create, echo, start and finish a checkers tournament; return its final state."""
    created = create(http, headers, **CHECKERS, **extra)
    tournament_id = created["tournament_id"]
    assert created["spec"]["openings"] == extra.get("openings")
    assert http.get(f"/tournaments/{tournament_id}").json()["spec"] == created["spec"]
    assert http.get("/tournaments").json()["tournaments"][0]["spec"] == created["spec"]
    http.post(f"/tournaments/{tournament_id}/start", headers=headers)
    state = wait_finished(http, tournament_id)
    check_finished(http, state)
    return state


def start_positions(http: httpx.Client, state: dict[str, Any]) -> dict[str, str]:
    """Return each game's opening name with its match's start position."""
    return {
        game["opening"]: http.get(f"/matches/{game['match_id']}").json()["start_position"]
        for game in state["games"]
    }


def test_a_checkers_tournament_with_no_openings_plays_the_shipped_deck(
    live_server: RunningServer, shared_hidden: None
) -> None:
    with httpx.Client(base_url=live_server.url, timeout=30) as http:
        state = play_checkers(http, auth_headers(http), games_per_pairing=4, seed=5)
        assert len(state["games"]) == 4
        starts = start_positions(http, state)
        assert len(starts) == 2
        for name, position in starts.items():
            assert position == ACF[name].position_text()


def test_a_checkers_tournament_plays_a_named_deck(live_server: RunningServer) -> None:
    with httpx.Client(base_url=live_server.url, timeout=30) as http:
        headers = auth_headers(http)
        state = play_checkers(http, headers, openings="acf-3move", seed=9)
        (name,) = start_positions(http, state)
        assert name in ACF
        # The deck by name deals what the default deals: the same seed, the same opening.
        assert name == play_checkers(http, headers, seed=9)["games"][0]["opening"]


def test_a_checkers_tournament_plays_a_list_of_openings(live_server: RunningServer) -> None:
    openings = ["11-15, 23-19  8-11", "B:W18,22,29:B9,13,1"]
    with httpx.Client(base_url=live_server.url, timeout=30) as http:
        state = play_checkers(http, auth_headers(http), openings=openings, games_per_pairing=4)
        starts = start_positions(http, state)
        assert starts == {
            "11-15 23-19 8-11": ACF["11-15 23-19 8-11"].position_text(),
            "fen:B:W18,22,29:B9,13,1": "B:W18,22,29:B1,9,13",
        }


async def test_standings_are_fitted_off_the_event_loop_and_match_the_games(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The Elo fit (tenths of a second at 16 bots) runs in a thread, again if a game ends."""
    import threading

    from protocol.messages import TournamentCreate, TournamentGame
    from server.tournaments import wire
    from server.tournaments.tournament import HostedTournament

    body = TournamentCreate(game="tictactoe", bots=("random", "greedy"), games_per_pairing=4)
    held = HostedTournament(id="t1", body=body, status="running", games_total=4, created_ms=0)

    def game(index: int, result: float) -> TournamentGame:
        first, second = ("random", "greedy") if index % 2 == 0 else ("greedy", "random")
        return TournamentGame(
            index=index, pair=index // 2, first=first, second=second, opening="o",
            match_id=f"m{index}", result=result,
        )  # fmt: skip

    held.record_result(game(0, 0.0))
    fitted: list[int] = []
    gate = threading.Event()
    real = wire.standings

    def slow(bots: Any, games: Any, **options: Any) -> Any:
        fitted.append(sum(g.result is not None for g in games))
        if len(fitted) == 1:
            assert gate.wait(10)
        return real(bots, games, **options)

    monkeypatch.setattr(wire, "standings", slow)
    pending = asyncio.create_task(held.fresh_standings())
    await asyncio.sleep(0.05)
    # The event loop runs while the first fit waits in its thread: a second game ends.
    held.record_result(game(1, 1.0))
    gate.set()
    result = await pending
    assert fitted == [1, 2]
    assert sum(row.games for row in result.points) == 4  # both games, each counted twice
    assert {row.bot: row.points for row in result.points} == {"greedy": 2.0, "random": 0.0}
    assert await held.fresh_standings() is result  # cached until the next result


def test_a_finished_game_is_held_and_told_to_the_watchers_once() -> None:
    from protocol.messages import ServerMessage, TournamentCreate, TournamentGame
    from protocol.messages import TournamentGameFinished as Finished
    from server.tournaments.tournament import HostedTournament

    body = TournamentCreate(game="tictactoe", bots=("random", "greedy"), games_per_pairing=2)
    held = HostedTournament(id="t1", body=body, status="running", games_total=2, created_ms=0)
    told: list[ServerMessage] = []
    held.watchers.add(told.append)
    begun = TournamentGame(
        index=0, pair=0, first="random", second="greedy", opening="o", match_id="m0"
    )
    held.games[0] = begun  # in play: no result yet
    won = begun.model_copy(update={"result": 1.0, "reason": "three in a row"})

    assert held.finish_game(won)
    assert held.finish_game(won.model_copy(update={"result": 0.0})) is False

    assert held.games[0] == won
    assert held.done == 1
    assert len(told) == 1
    message = told[0]
    assert isinstance(message, Finished)
    assert (message.game, message.games_done, message.games_total) == (won, 1, 2)
    assert {p.bot: p.points for p in message.points} == {"random": 1.0, "greedy": 0.0}
    assert message.sprt is None
