"""Bot specs and game sizes beyond the server's maxima are refused at once, with the maximum.

"At once" is shown by the work the server did, not by the seconds it took: the server runs in
this process, so the test records every bot it builds, every Nim legal-move list it computes
and every tournament schedule it plans, and a refused request must have started none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from bots.spec import Bot, describe_bots
from games import Game
from games.nim import NimState
from protocol.messages import BotList
from server.limits.compute import oversize
from server.matches import builtbots
from server.settings import Settings
from server.tournaments import planning, played
from tests.server.conftest import RunningServer, start_server


@dataclass
class Work:
    """What the server started computing during a test."""

    bots: list[str] = field(default_factory=list)
    """The specs of the bots it built."""
    nim_positions: list[NimState] = field(default_factory=list)
    """The Nim positions whose legal moves it listed."""
    plans: int = 0
    """The tournament schedules and default openings it started to compute."""

    def oversized(self, server: RunningServer) -> list[tuple[int, ...]]:
        """Return the heaps of the positions beyond the server's maxima it listed moves of."""
        settings = server.server.config.app.state.settings
        return [p.heaps for p in self.nim_positions if oversize(p, settings) is not None]


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch) -> Iterator[Work]:
    """Record the work of the in-process server (see `Work`)."""
    done = Work()

    def building(real: Callable[[str, Game], Bot]) -> Callable[..., Bot]:
        def build(spec: str, game: Game, *args: Any, **kwargs: Any) -> Bot:
            done.bots.append(spec)
            return real(spec, game, *args, **kwargs)

        return build

    def planned(real: Callable[..., Any]) -> Callable[..., Any]:
        def plan(*args: Any, **kwargs: Any) -> Any:
            done.plans += 1
            return real(*args, **kwargs)

        return plan

    listing = NimState.legal_moves

    def legal_moves(state: NimState) -> Any:
        done.nim_positions.append(state)
        return listing(state)

    monkeypatch.setattr(builtbots, "create_bot", building(builtbots.create_bot))
    monkeypatch.setattr(played, "create_bot", building(played.create_bot))
    monkeypatch.setattr(planning, "schedule", planned(planning.schedule))
    monkeypatch.setattr(planning, "default_openings", planned(planning.default_openings))
    monkeypatch.setattr(NimState, "legal_moves", legal_moves)
    yield done


def player(http: httpx.Client, name: str) -> dict[str, str]:
    response = http.post("/players", json={"name": name})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


def refused(response: httpx.Response, field: str, *words: str) -> None:
    """Assert `response` is the documented VALIDATION_ERROR naming `field` and `words`."""
    assert response.status_code == 422, response.text
    error = response.json()
    assert error["code"] == "VALIDATION_ERROR"
    assert error["message"].startswith(f"{field}: "), error
    assert field in error["details"], error
    for word in words:
        assert word in error["message"], error


@pytest.mark.parametrize(
    ("bot", "words"),
    [
        ("alphabeta:depth=40", ("depth is 40", "maximum of 10")),
        ("alphabeta:depth=" + "9" * 100, ("depth is a number of 100 characters", "at most 128")),
        ("minimax:depth=11", ("depth is 11", "maximum of 10")),
        ("mcts:simulations=1000000", ("simulations is 1000000", "maximum of 100,000")),
        ("mcts:time=31", ("time is 31.0", "maximum of 30")),
        ("id:time=0,depth=64", ("depth is 64", "maximum of 10")),
        ("id:nodes=20000000", ("nodes is 20000000", "maximum of 10,000,000")),
    ],
)
def test_house_bots_beyond_the_maxima_are_refused(
    live_server: RunningServer, work: Work, bot: str, words: tuple[str, ...]
) -> None:
    with httpx.Client(base_url=live_server.url, timeout=10) as http:
        alice = player(http, "alice")
        response = http.post(
            "/matches", json={"game": "checkers", "seats": ["alice", {"bot": bot}]}, headers=alice
        )
        refused(response, "seats.1.bot", *words)
        tournament = http.post(
            "/tournaments",
            json={"game": "tictactoe", "bots": ["random", bot]},
            headers=alice,
        )
        refused(tournament, "bots", *words)
        # Refused before the bot was built or a game planned, and nothing was created.
        assert work.bots == [] and work.plans == 0
        assert http.get("/matches").json()["matches"] == []
        assert http.get("/tournaments").json()["tournaments"] == []


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"options": {"heaps": "1000000"}}, "options", ("1000000 objects", "maximum of 64")),
        ({"options": {"heaps": "1,2,3,4,5,6,7,8,9"}}, "options", ("9 heaps", "maximum of 8")),
        ({"start_position": "1,65/2"}, "start_position", ("heap 2 has 65", "maximum of 64")),
    ],
)
def test_nim_matches_beyond_the_maxima_are_refused(
    live_server: RunningServer,
    work: Work,
    body: dict[str, Any],
    field: str,
    words: tuple[str, ...],
) -> None:
    with httpx.Client(base_url=live_server.url, timeout=10) as http:
        alice = player(http, "alice")
        response = http.post(
            "/matches",
            json={"game": "nim", "seats": ["alice", {"bot": "random"}], **body},
            headers=alice,
        )
        refused(response, field, *words)
        # Refused before the game's moves were listed or its house bot built.
        assert work.nim_positions == [] and work.bots == []
        # At the maxima, the match is played.
        fine = http.post(
            "/matches",
            json={
                "game": "nim",
                "options": {"heaps": ",".join(["64"] * 8)},
                "seats": ["alice", {"bot": "random"}],
            },
            headers=alice,
        )
        assert fine.status_code == 201, fine.text
        assert len(fine.json()["legal_moves"]) == 512
        assert work.nim_positions and work.oversized(live_server) == []


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"options": {"heaps": "1000000"}}, "options", ("1000000 objects", "maximum of 64")),
        ({"options": {"heaps": "1,1,1,1,1,1,1,1,1"}}, "options", ("9 heaps",)),
        (
            {"openings": ["fen:3,5", "fen:100,100"]},
            "openings",
            ("opening 2 of 2 ('fen:100,100')", "heap 1 has 100"),
        ),
    ],
)
def test_nim_tournaments_beyond_the_maxima_are_refused_at_once(
    live_server: RunningServer,
    work: Work,
    body: dict[str, Any],
    field: str,
    words: tuple[str, ...],
) -> None:
    with httpx.Client(base_url=live_server.url, timeout=30) as http:
        alice = player(http, "alice")
        response = http.post(
            "/tournaments",
            json={"game": "nim", "bots": ["random", "greedy"], "games_per_pairing": 10, **body},
            headers=alice,
        )
        refused(response, field, *words)
        # No opening was played and no game planned: nothing listed the moves of huge heaps.
        assert work.oversized(live_server) == [] and work.plans == 0 and work.bots == []


def test_the_house_bots_are_listed_with_this_servers_limits(tmp_path: Path) -> None:
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}",
        grader_dir=tmp_path / "grader",
        bot_max_depth=5,
        bot_max_nodes=1234,
    )
    running = start_server(settings)
    try:
        with httpx.Client(base_url=running.url, timeout=30) as http:
            listed = http.get("/bots")
            assert listed.status_code == 200, listed.text
            body = BotList.model_validate_json(listed.text)
            assert [bot.name for bot in body.bots] == [name for name, _, _ in describe_bots()]
            assert (body.limits.max_depth, body.limits.max_nodes) == (5, 1234)
            options = {(bot.name, o.name): o for bot in body.bots for o in bot.options}
            depth = options["alphabeta", "depth"]
            assert (depth.default, depth.minimum, depth.server_maximum) == ("6", 1, 5)
            assert depth.server_setting == "ARENA_BOT_MAX_DEPTH"
            assert options["id", "depth"].unless == ("time", "nodes")
            assert options["id", "nodes"].server_maximum == 1234
            assert options["alphabeta", "tt"].server_maximum is None
            # What is listed is what a match may seat: at the maximum, and not beyond it.
            alice = player(http, "alice")
            for spec, status in [("alphabeta:depth=5", 201), ("alphabeta:depth=6", 422)]:
                seats = ["alice", {"bot": spec}]
                created = http.post(
                    "/matches", json={"game": "tictactoe", "seats": seats}, headers=alice
                )
                assert created.status_code == status, created.text
            assert "maximum of 5" in created.json()["message"]
            # The OpenAPI description documents the route and its body.
            operation = http.get("/openapi.json").json()["paths"]["/bots"]["get"]
            answer = operation["responses"]["200"]["content"]["application/json"]["schema"]
            assert answer["$ref"].endswith("/BotList")
    finally:
        running.stop()
