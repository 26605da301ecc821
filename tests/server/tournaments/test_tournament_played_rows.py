"""The rows a tournament game played on a worker writes, pinned: the finished `matches` row,
its `match_events` rows (each stamped when the referee accepted it) and the game's result,
and the words of each way a house bot loses its game."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from bots.result import SearchResult
from games.base import Game, State
from protocol.messages import TournamentCreate
from server.settings import Settings
from server.tournaments import played as played_module
from server.tournaments.planning import plan
from server.tournaments.played import PlayedGame, play_game

GOLDEN = Path(__file__).with_name("played_game_golden.json")
BODY = {
    "game": "tictactoe",
    "bots": ["alphabeta:depth=2", "alphabeta:depth=9"],
    "games_per_pairing": 2,
    "seed": 7,
    "ply_cap": 9,
    "time_control": {"base_ms": 60000, "increment_ms": 0},
}
TIMED = ("time_ms", "nps")
"""What a search record measures of the machine it ran on: left out of the comparison."""


def _play(tmp_path: Path) -> PlayedGame:
    body = TournamentCreate.model_validate(BODY)
    settings = Settings(database_url="sqlite+aiosqlite:///unused.db", grader_dir=tmp_path)
    _spec, tasks = plan(body, settings)
    ticks = itertools.count()
    stamps = itertools.count()
    return play_game(
        "t_golden",
        body,
        tasks[0],
        settings,
        match_id="m_golden",
        clock=lambda: next(ticks) * 0.25,
        wall=lambda: 1_700_000_000 + next(stamps) * 0.5,
    )


def _rows(played: PlayedGame) -> dict[str, Any]:
    events = [
        event | {"search": {k: v for k, v in event["search"].items() if k not in TIMED}}
        if event["search"] is not None
        else event
        for event in played.events
    ]
    return {
        "match": played.match,
        "events": events,
        "game": played.game.model_dump(mode="json"),
    }


def test_a_played_game_writes_the_pinned_rows(tmp_path: Path) -> None:
    rows = json.loads(json.dumps(_rows(_play(tmp_path))))
    assert rows == json.loads(GOLDEN.read_text())


class _Failing:
    """A bot that fails its first move as `how` says."""

    engine_name = None

    def __init__(self, how: str) -> None:
        self.how = how

    def choose(self, state: State[Any], **_: object) -> SearchResult:
        if self.how == "crash":
            raise RuntimeError("out of cheese")
        if self.how == "none":
            return SearchResult(move=None, score=0.0)
        occupied = next(i for i in range(9) if i not in state.legal_moves())
        return SearchResult(move=occupied, score=0.0)


@pytest.mark.parametrize(
    ("how", "reason"),
    [
        ("crash", "X (house bot alphabeta:depth=2) crashed: RuntimeError: out of cheese"),
        ("none", "X (house bot alphabeta:depth=2) returned no move"),
        (
            "illegal",
            "X (house bot alphabeta:depth=2) played an illegal move: illegal move 2: cell 2 is "
            "taken by O (rejected move 1 of 3: 2 more and you forfeit the match)",
        ),
    ],
)
def test_a_failing_house_bot_loses_in_these_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str, reason: str
) -> None:
    def create_bot(spec: str, game: Game) -> _Failing:
        return _Failing(how)

    monkeypatch.setattr(played_module, "create_bot", create_bot)
    played = _play(tmp_path)
    assert played.match["result_reason"] == "bot_failure"
    assert played.match["result_winner"] == 1
    assert played.match["result_detail"] == reason
    assert played.game.result == 0.0
