"""Tournament reports: summary, JSON, game records (JSON and PDN), text and HTML."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from draughts.PDN import PDNReader

from competition.openings import Opening
from competition.report import (
    ADJUDICATIONS,
    adjudication_of,
    html_report,
    result_json,
    summarize,
    text_summary,
    write_records,
)
from competition.runner import BotTotals, GameRecord, TournamentSpec
from games import get_game
from games.match import ResultCode

A, B, C = "alphabeta:depth=2", "random", "greedy"
SPEC = TournamentSpec(game="tictactoe", bots=(A, B, C))


def record(
    index: int,
    pair: int,
    first: str,
    second: str,
    result: float,
    reason: str,
    stats: tuple[BotTotals, BotTotals] | None = None,
    opening: str = "4 0",
    moves: tuple[str, ...] = ("4", "0"),
    code: ResultCode = ResultCode.LINE,
    engines: tuple[str | None, str | None] = (None, None),
) -> GameRecord:
    return GameRecord(
        index=index,
        pair=pair,
        first=first,
        second=second,
        opening=opening,
        moves=moves,
        result=result,
        reason=reason,
        code=code,
        stats=stats or (BotTotals(), BotTotals()),
        engines=engines,
    )


# Points: A 1 + 1 + 0.5 + 0 = 2.5; B 0; C 0.5 + 1 + 1 + 1 = 3.5.
RECORDS = [
    record(0, 0, A, B, 1.0, "X wins", (BotTotals(3, 30, 0.3, 6), BotTotals(2, 2, 0.02, 2))),
    record(1, 0, B, A, 0.0, "crash: RuntimeError: boom",
           (BotTotals(1, 1, 0.0, 1), BotTotals(2, 10, 0.1, 4)), code=ResultCode.BOT_FAILURE),
    record(2, 1, A, C, 0.5, "ply cap", code=ResultCode.PLY_CAP),
    record(3, 1, C, A, 1.0, "second played '9': square 9 is taken", code=ResultCode.FORFEIT),
    record(4, 2, B, C, 0.0, "X ran out of time", code=ResultCode.TIMEOUT),
    record(5, 2, C, B, 1.0, "second returned no move", code=ResultCode.BOT_FAILURE),
]  # fmt: skip


def test_summarize_counts_points_crosstable_search_and_adjudications() -> None:
    result = summarize(SPEC, RECORDS)
    table = [(s.bot, s.points, s.wins, s.draws, s.losses, s.games) for s in result.standings]
    assert table == [(C, 3.5, 3, 1, 0, 4), (A, 2.5, 2, 1, 1, 4), (B, 0.0, 0, 0, 4, 4)]
    head = result.crosstable.head_to_head
    assert (head[(A, B)].points, head[(A, B)].games) == (2.0, 2)
    assert (head[(A, C)].points, head[(C, A)].points) == (0.5, 1.5)
    assert head[(B, C)].points == 0.0

    a = result.search[A]
    assert (a.moves, a.nodes, a.depth_sum) == (5, 40, 10)
    assert a.nodes_per_move == 8.0
    assert a.mean_depth == 2.0
    assert a.nodes_per_second == pytest.approx(100.0)
    assert a.seconds_per_move == pytest.approx(0.08)
    b = result.search[B]
    assert (b.moves, b.nodes_per_move, b.mean_depth) == (3, 1.0, 1.0)
    assert result.search[C].nodes_per_second is None  # no time measured

    assert result.adjudications[A] == {
        **dict.fromkeys(ADJUDICATIONS, 0),
        "ply cap": 1,
        "illegal": 1,
    }
    assert result.adjudications[B] == {
        **dict.fromkeys(ADJUDICATIONS, 0), "bot failure": 2, "time": 1,
    }  # fmt: skip
    assert result.adjudications[C] == {**dict.fromkeys(ADJUDICATIONS, 0), "ply cap": 1}

    assert result.fit is not None and result.elo_error is None
    assert result.fit.bots == (C, A, B)
    assert result.fit.units == 3  # three pairings, one opening each: three colour-swapped pairs
    assert result.los is not None
    assert result.los[C][B] > 0.5 > result.los[B][C]
    assert result.los[A][B] + result.los[B][A] == pytest.approx(1.0)


def test_adjudications_are_classified_by_result_code() -> None:
    assert adjudication_of(ResultCode.PLY_CAP) == "ply cap"
    assert adjudication_of(ResultCode.BOT_FAILURE) == "bot failure"
    assert adjudication_of(ResultCode.FORFEIT) == "illegal"
    assert adjudication_of(ResultCode.TIMEOUT) == "time"
    counted = {code for code in ResultCode if adjudication_of(code) is not None}
    assert {adjudication_of(code) for code in counted} == set(ADJUDICATIONS)
    assert all(not code.is_rules for code in counted)
    for code in (ResultCode.NO_MOVES, ResultCode.REPETITION, ResultCode.RESIGN):
        assert adjudication_of(code) is None


def test_the_words_of_a_result_do_not_change_how_it_is_counted() -> None:
    """A reason that reads like an adjudication counts by its code, and the other way round."""
    games = [
        record(
            0, 0, A, B, 1.0, "crash: the opponent's king was crashed into", code=ResultCode.LINE
        ),
        record(1, 0, B, A, 0.0, "X wins", code=ResultCode.TIMEOUT),
    ]
    result = summarize(TournamentSpec(game="tictactoe", bots=(A, B)), games)
    assert result.adjudications[A] == dict.fromkeys(ADJUDICATIONS, 0)
    assert result.adjudications[B] == {**dict.fromkeys(ADJUDICATIONS, 0), "time": 1}


def test_without_games_the_points_stay_and_elo_says_why() -> None:
    result = summarize(SPEC, [])
    assert result.fit is None and result.los is None
    assert result.elo_error is not None and "no games" in result.elo_error
    assert [s.points for s in result.standings] == [0.0, 0.0, 0.0]
    data = json.loads(json.dumps(result_json(result), allow_nan=False))
    assert data["elo"] is None and "no games" in data["elo_error"]
    assert "not rated: no games" in text_summary(result)
    page = html_report(result)
    assert "No Elo ratings" in page and "<svg" not in page


def test_result_json_is_strict_json_and_round_trips() -> None:
    data = result_json(summarize(SPEC, RECORDS))
    text = json.dumps(data, allow_nan=False)
    assert json.loads(text) == data
    assert [row["bot"] for row in data["standings"]] == [C, A, B]
    assert data["standings"][0]["points"] == 3.5
    assert data["crosstable"][A][C]["points"] == 0.5
    assert [r["bot"] for r in data["elo"]["ratings"]] == [C, A, B]
    ends = {r["bot"]: (r["lower"], r["upper"]) for r in data["elo"]["ratings"]}
    # B lost every game: no game bounds how far B falls below A and C, so B's rating has no
    # lower end and A's and C's (centred on the mean of all three) no upper end: null in JSON.
    assert ends[B][0] is None and ends[A][1] is None and ends[C][1] is None
    assert all(math.isfinite(end) for end in (ends[A][0], ends[B][1], ends[C][0]))
    assert data["los"][C][B] > 0.5
    search = {row["bot"]: row for row in data["search"]}
    assert search[A]["nodes_per_move"] == 8.0
    assert search[C]["nodes_per_second"] is None
    assert data["adjudications"][B]["bot failure"] == 2
    assert [GameRecord.from_dict(g) for g in data["games"]] == RECORDS
    game = data["games"][1]
    assert {"index", "pair", "first", "second", "opening", "moves", "result", "reason"} <= set(game)
    assert game["code"] == "bot_failure"


def test_text_summary_has_the_elo_table_los_and_search() -> None:
    text = text_summary(summarize(SPEC, RECORDS))
    assert "95% interval" in text
    assert "inf]" in text and "cannot bound" in text  # unbounded ends say so
    assert "Likelihood of superiority" in text
    lines = {line.split()[0]: line for line in text.splitlines() if line.startswith(A)}
    assert "8.0" in lines[A] and "2.00" in lines[A]  # nodes per move, mean depth
    assert "bot failure 2" in text and "time 1" in text


def test_html_escapes_names_has_one_marker_per_bot_and_no_external_references() -> None:
    evil = "<b>evil</b>&co"
    spec = TournamentSpec(game="tictactoe", bots=(A, evil))
    games = [
        record(0, 0, A, evil, 1.0, "X wins"),
        record(1, 0, evil, A, 0.5, "drawn"),
        record(2, 1, A, evil, 0.0, "O wins", opening="0 4"),
        record(3, 1, evil, A, 0.0, "O wins", opening="0 4"),
    ]
    page = html_report(summarize(spec, games))
    assert page.startswith("<!DOCTYPE html>")
    assert A in page
    assert "&lt;b&gt;evil&lt;/b&gt;&amp;co" in page
    assert "<b>evil" not in page
    assert "http" not in page.lower()
    assert "<script" not in page.lower()
    svg = page[page.index("<svg") : page.index("</svg>")]
    assert svg.count("<circle") == 2
    assert "95% interval" in page and "Likelihood of superiority" in page
    assert "profile-likelihood" in page
    unbounded = html_report(summarize(SPEC, RECORDS))  # B lost every game
    assert "[-inf, " in unbounded and "cannot bound" in unbounded
    assert "Search statistics" in page and "Crosstable" in page


# -- game records --------------------------------------------------------------------------------

FEN = "W:W18,K30:B14,23"
CHECKERS_OPENINGS = [
    Opening(name="11-15 23-19", game="checkers", moves=("11-15", "23-19")),
    Opening(name=f"fen:{FEN}", game="checkers", position=FEN),
]
CHECKERS_SPEC = TournamentSpec(game="checkers", bots=(A, B))
CHECKERS_RECORDS = [
    record(0, 0, A, B, 0.5, "ply cap", opening="11-15 23-19",
           moves=("11-15", "23-19", "8-11", "22-17"), code=ResultCode.PLY_CAP),
    record(1, 0, B, A, 0.0, "second played '1-5': no such move", opening="11-15 23-19",
           moves=("11-15", "23-19", "8-11"), code=ResultCode.FORFEIT,
           engines=("Cake 1.22", None)),
    record(2, 1, A, B, 0.0, "Black has no legal moves", opening=f"fen:{FEN}",
           moves=("18x9", "23-27", "30-26"), code=ResultCode.NO_MOVES),
]  # fmt: skip


def test_write_records_writes_json_per_game_and_a_pdn_that_reads_back(tmp_path: Path) -> None:
    paths = write_records(tmp_path / "games", CHECKERS_SPEC, CHECKERS_RECORDS, CHECKERS_OPENINGS)
    jsons = sorted(p for p in paths if p.suffix == ".json")
    assert [p.name for p in jsons] == ["game-0001.json", "game-0002.json", "game-0003.json"]
    loaded = [json.loads(p.read_text()) for p in jsons]
    assert [GameRecord.from_dict(d) for d in loaded] == CHECKERS_RECORDS
    assert [d["start_position"] for d in loaded] == [None, None, FEN]

    pdn = (tmp_path / "games" / "games.pdn").read_text()
    games = PDNReader(pdn).games
    movetexts = [_pdn_moves(text) for text in re.split(r"\n\n(?=\[)", pdn)]
    assert len(games) == 3
    checkers = get_game("checkers")
    for game, rec in zip(games, CHECKERS_RECORDS, strict=True):
        token = {1.0: "2-0", 0.5: "1-1", 0.0: "0-2"}[rec.result]
        assert game.tags["Result"] == token == game.game_ending
        assert (game.tags["Black"], game.tags["White"]) == (rec.first, rec.second)
        assert game.tags["Round"] == str(rec.index + 1)
        # What an engine reported of itself, as a tag of its own; nothing otherwise.
        assert (game.tags.get("BlackEngine"), game.tags.get("WhiteEngine")) == rec.engines
        assert movetexts[rec.index] == list(rec.moves)
        if rec.index != 2:  # pydraughts reads "1... 18x9" as a move "2"; our reader does not
            assert game.moves == list(rec.moves)
        start = checkers.parse_position(game.tags["FEN"]) if "FEN" in game.tags else None
        assert (start is None) == (rec.index != 2)
        # The moves replay, each legal, from the tagged start.
        (start or checkers.initial_state()).play(*movetexts[rec.index])
    assert "1... 18x9 2. 23-27 30-26" in pdn


def test_a_record_from_before_engines_were_kept_reads_as_arenas_own_bots() -> None:
    data = CHECKERS_RECORDS[1].to_dict()
    assert data["engines"] == {"first": "Cake 1.22", "second": None}
    del data["engines"]
    assert GameRecord.from_dict(data).engines == (None, None)


def _pdn_moves(game: str) -> list[str]:
    """Return the moves of one PDN game: no tags, comments, move numbers or result."""
    text = "\n".join(line for line in game.splitlines() if not line.startswith("["))
    words = re.sub(r"\{[^}]*\}", " ", text).split()
    return [w for w in words if not re.fullmatch(r"\d+\.(\.\.)?|2-0|0-2|1-1|\*", w)]


def test_write_records_writes_no_pdn_for_other_games(tmp_path: Path) -> None:
    paths = write_records(tmp_path, SPEC, RECORDS[:2])
    assert [p.name for p in paths] == ["game-0001.json", "game-0002.json"]


def test_write_records_names_a_move_that_does_not_replay(tmp_path: Path) -> None:
    bad = [record(0, 0, A, B, 1.0, "", opening="x", moves=("11-15", "11-15"))]
    with pytest.raises(ValueError, match=re.escape("game 1: move 2 '11-15'")):
        write_records(tmp_path, CHECKERS_SPEC, bad)


def test_colour_swapped_pairs_give_a_pentanomial_elo_with_its_interval() -> None:
    # A against B over five pairs, A scoring 2, 1, 1.5, 0.5, 1 (B's seat first in each second
    # game); a pair with one game only, and C's pair, count for no A-B estimate.
    games = []
    for pair, (one, other) in enumerate([(1, 1), (1, 0), (1, 0.5), (0.5, 0), (0.5, 0.5)]):
        games.append(record(2 * pair, pair, A, B, one, "r"))
        games.append(record(2 * pair + 1, pair, B, A, 1.0 - other, "r"))
    games.append(record(10, 5, B, A, 0.0, "r"))
    games += [record(11, 6, C, A, 1.0, "r"), record(12, 6, A, C, 0.0, "r")]
    result = summarize(SPEC, games)
    ab, ac = result.paired
    assert (ab.first, ab.second, ab.pairs, ab.counts) == (A, B, 5, (0, 1, 2, 1, 1))
    # Mean pair score 1.2 of 2 (0.6 a game); variance of the pair score per game 0.065.
    half_width = 1.959964 * math.sqrt(0.065 / 5)
    assert ab.elo == pytest.approx(400 * math.log10(0.6 / 0.4))
    assert ab.lower == pytest.approx(400 * math.log10((0.6 - half_width) / (0.4 + half_width)))
    assert ab.upper == pytest.approx(400 * math.log10((0.6 + half_width) / (0.4 - half_width)))
    assert (ac.first, ac.second, ac.counts, ac.elo) == (A, C, (1, 0, 0, 0, 0), -math.inf)
    text = text_summary(result)
    assert f"{A} vs {B}: 5 pairs [0 1 2 1 1] Elo +70 [" in text
    assert f"{A} vs {C}: 1 pairs [1 0 0 0 0] Elo -inf [-inf, -inf]" in text
    paired = json.loads(json.dumps(result_json(result), allow_nan=False))["paired_elo"]
    assert paired[0]["pentanomial"] == [0, 1, 2, 1, 1] and paired[1]["elo"] is None
    assert "Colour-swapped pairs" in html_report(result)


def test_write_records_gives_a_swiss_game_its_round(tmp_path: Path) -> None:
    rounds = {0: 1, 1: 1, 2: 2}
    paths = write_records(tmp_path, CHECKERS_SPEC, CHECKERS_RECORDS, CHECKERS_OPENINGS, rounds)
    loaded = [json.loads(p.read_text()) for p in sorted(paths) if p.suffix == ".json"]
    assert [d["round"] for d in loaded] == [1, 1, 2]
    assert [GameRecord.from_dict(d) for d in loaded] == CHECKERS_RECORDS
    games = PDNReader((tmp_path / "games.pdn").read_text()).games
    assert [game.tags["Round"] for game in games] == ["1", "1", "2"]
