"""One standings computation behind the server and the local report: their output is pinned.

`standings_golden.json` holds, for a few result lists, what the server sends (the
`TournamentStandings` of REST and the `tournament_*` messages, and the points table of
`tournament_game_finished`) and what the local report writes (JSON, text and HTML), as the code
produced it before the two were made to share one standings function (the report's `crash`
and `no move` counts became one, `bot failure`, when results got codes, and each game its
`code`). Numbers are compared to 1e-9 relative (the fits are iterative), keys in order, text
exactly.

Set ARENA_WRITE_GOLDEN=1 to write the file again from the code as it is.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from competition.report import html_report, result_json, summarize, text_summary
from competition.runner import BotTotals, GameRecord, TournamentSpec
from competition.standings import compute_standings, tally_points
from competition.stats import GameResult, StatsError
from games.match import ResultCode
from protocol.messages import TournamentCreate, TournamentGame
from server.tournaments import wire
from server.tournaments.tournament import HostedTournament

GOLDEN = Path(__file__).with_name("standings_golden.json")
A, B, C, D = "alphabeta:depth=2", "random", "greedy", "mcts:simulations=10"

# Each game: first, second, result (None: still being played), pair, reason.
Game = tuple[str, str, float | None, int, str]

# The result code of each reason the cases give (the local report counts adjudications by code).
CODES = {
    "crash: RuntimeError: boom": ResultCode.BOT_FAILURE,
    "ply cap": ResultCode.PLY_CAP,
    "second played '9': square 9 is taken": ResultCode.FORFEIT,
    "X ran out of time": ResultCode.TIMEOUT,
    "second returned no move": ResultCode.BOT_FAILURE,
    "drawn": ResultCode.BOARD_FULL,
}
CASES: dict[str, tuple[tuple[str, ...], list[Game]]] = {
    "wins, draws and adjudications": (
        (A, B, C),
        [
            (A, B, 1.0, 0, "X wins"),
            (B, A, 0.0, 0, "crash: RuntimeError: boom"),
            (A, C, 0.5, 1, "ply cap"),
            (C, A, 1.0, 1, "second played '9': square 9 is taken"),
            (B, C, 0.0, 2, "X ran out of time"),
            (C, B, 1.0, 2, "second returned no move"),
        ],
    ),
    "unfinished games and a bot with no game": (
        (A, B, C, D),
        [
            (A, B, 0.5, 0, "drawn"),
            (B, A, 1.0, 0, "X wins"),
            (A, C, 1.0, 1, "X wins"),
            (C, A, None, 1, ""),
            (B, C, None, 2, ""),
            (C, B, 0.0, 2, "O wins"),
            (A, D, None, 3, ""),
        ],
    ),
    "every game drawn": (
        (A, B),
        [(A, B, 0.5, 0, "drawn"), (B, A, 0.5, 0, "drawn"), (A, B, 0.5, 1, "ply cap")],
    ),
    "one game": ((B, A), [(A, B, 1.0, 0, "X wins")]),
    "no game finished": ((A, B, C), [(A, B, None, 0, ""), (B, A, None, 0, "")]),
    "no game begun": ((A, B, C), []),
    "equal points keep the given order": (
        (C, A, B, D),
        [
            (A, B, 1.0, 0, "X wins"),
            (B, A, 1.0, 0, "X wins"),
            (C, D, 0.5, 1, "drawn"),
            (D, C, 0.5, 1, "drawn"),
            (A, C, 0.0, 2, "O wins"),
            (C, A, 0.0, 2, "O wins"),
            (B, D, 1.0, 3, "X wins"),
            (D, B, 0.0, 3, "O wins"),
        ],
    ),
}


def server_output(bots: tuple[str, ...], games: list[Game]) -> dict[str, Any]:
    """Return the server's standings and game-finished points table for these games."""
    body = TournamentCreate(game="tictactoe", bots=bots, games_per_pairing=2)
    held = HostedTournament(
        id="t1", body=body, status="running", games_total=len(games), created_ms=0
    )
    games_on_wire = [
        TournamentGame(
            index=index, pair=pair, first=first, second=second, opening="4 0",
            match_id=f"m{index}", result=result, reason=reason or None,
        )
        for index, (first, second, result, pair, reason) in enumerate(games)
    ]  # fmt: skip
    for game in games_on_wire:
        held.record_result(game)
    return {
        "standings": json.loads(wire.standings(bots, games_on_wire).model_dump_json()),
        "points": [json.loads(row.model_dump_json()) for row in held.points()],
    }


def report_output(bots: tuple[str, ...], games: list[Game]) -> dict[str, Any]:
    """Return the local report's JSON, text and HTML for the finished ones of these games."""
    spec = TournamentSpec(game="tictactoe", bots=bots)
    records = [
        GameRecord(
            index=index, pair=pair, first=first, second=second, opening="4 0",
            moves=("4", "0"), result=result, reason=reason,
            code=CODES.get(reason, ResultCode.LINE),
            stats=(BotTotals(2, 20, 0.01, 4), BotTotals(3, 3, 0.0, 3)),
        )
        for index, (first, second, result, pair, reason) in enumerate(games)
        if result is not None
    ]  # fmt: skip
    result = summarize(spec, records)
    return {
        "json": json.loads(json.dumps(result_json(result), allow_nan=False)),
        "text": text_summary(result),
        "html": html_report(result),
    }


def outputs() -> dict[str, Any]:
    return {
        name: {"server": server_output(*case), "report": report_output(*case)}
        for name, case in CASES.items()
    }


@pytest.fixture(scope="module")
def golden() -> dict[str, Any]:
    if os.environ.get("ARENA_WRITE_GOLDEN") == "1":
        GOLDEN.write_text(json.dumps(outputs(), indent=1, allow_nan=False) + "\n")
    data: dict[str, Any] = json.loads(GOLDEN.read_text(encoding="utf-8"))
    return data


def assert_same(got: Any, want: Any, where: str = "") -> None:
    """Assert equal JSON values: dict keys in the same order, numbers to 1e-9 relative."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and list(got) == list(want), where
        for key in want:
            assert_same(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for index, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_same(g, w, f"{where}[{index}]")
    elif isinstance(want, float) and not isinstance(got, bool):
        assert isinstance(got, int | float), where
        assert math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9), (where, got, want)
    else:
        assert type(got) is type(want) and got == want, (where, got, want)


@pytest.mark.parametrize("name", list(CASES))
def test_the_server_sends_the_standings_it_sent_before(name: str, golden: dict[str, Any]) -> None:
    assert_same(server_output(*CASES[name]), golden[name]["server"], name)


@pytest.mark.parametrize("name", list(CASES))
def test_the_report_writes_the_standings_it_wrote_before(name: str, golden: dict[str, Any]) -> None:
    got, want = report_output(*CASES[name]), golden[name]["report"]
    assert_same(got["json"], want["json"], name)
    assert got["text"] == want["text"]
    assert got["html"] == want["html"]


def test_the_golden_cases_cover_what_they_claim(golden: dict[str, Any]) -> None:
    """Draws, unfinished games, a bot without games, unrated and tied tables are all pinned."""
    unfinished = golden["unfinished games and a bot with no game"]["server"]["standings"]
    assert {row["bot"]: row["games"] for row in unfinished["points"]}[D] == 0
    assert D not in unfinished["crosstable"] and unfinished["ratings"]
    drawn = golden["every game drawn"]["server"]["standings"]
    assert all(r["lower"] is None and r["upper"] is None for r in drawn["ratings"])
    empty = golden["no game finished"]["server"]["standings"]
    assert empty["ratings"] == [] and empty["rating_note"] == "no game is finished yet"
    assert "no games" in golden["no game begun"]["report"]["json"]["elo_error"]
    tied = golden["equal points keep the given order"]["report"]["json"]["standings"]
    assert [row["bot"] for row in tied] == [B, C, A, D]  # C and A tie at 2 points


def test_tally_points_ranks_by_points_with_ties_in_the_given_order() -> None:
    games = [GameResult(A, B, 1.0), GameResult(C, A, 0.5), GameResult(B, C, 1.0, pair=4)]
    rows = tally_points((C, B, A, D), iter(games))  # any iterable, read once
    assert [(r.bot, r.points, r.wins, r.draws, r.losses, r.games) for r in rows] == [
        (A, 1.5, 1, 1, 0, 2),
        (B, 1.0, 1, 0, 1, 2),
        (C, 0.5, 0, 1, 1, 2),
        (D, 0.0, 0, 0, 0, 0),
    ]
    assert rows[-1].score == 0.0 and rows[0].score == 0.75


def test_bots_that_played_without_being_given_follow_the_given_ones() -> None:
    table = compute_standings((B,), [GameResult(C, A, 0.5), GameResult(A, B, 0.5)])
    assert table.bots == (B, C, A)
    assert [row.bot for row in table.points] == [A, B, C]  # B and C tie at 0.5: given first
    assert table.crosstable.totals[A].games == 2


def test_compute_standings_fits_elo_with_los_or_says_why_not() -> None:
    games = [GameResult(A, B, 1.0, 0), GameResult(B, A, 0.5, 0), GameResult(B, A, 0.0, 1)]
    table = compute_standings((A, B), games)
    assert table.fit is not None and table.elo_error is None and table.los is not None
    assert table.fit.bots == (A, B)
    assert table.los[A][B] == table.fit.los(A, B) > 0.5 == table.los[A][A]
    empty = compute_standings((A, B), [])
    assert empty.fit is None and empty.los is None
    assert empty.elo_error is not None and "no games" in empty.elo_error
    assert [row.games for row in empty.points] == [0, 0]


def test_invalid_results_are_refused_not_counted() -> None:
    with pytest.raises(StatsError, match="score must be 1, "):
        tally_points((A, B), [GameResult(A, B, 0.25)])
    with pytest.raises(StatsError, match="cannot play itself"):
        compute_standings((A,), [GameResult(A, A, 1.0)])
