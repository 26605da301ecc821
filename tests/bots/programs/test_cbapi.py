"""CheckerBoard-API engines as bots: a C engine of the tests' own, played through the referee."""

from __future__ import annotations

import math
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

import bots.programs.child
from bots.programs.cbapi import (
    CheckerBoardBot,
    Engine,
    EngineError,
    EngineReply,
    cb_board,
    cb_square,
    identify_move,
    parse_search_text,
)
from bots.spec import BotSpecError, SearchLimits, check_limits, create_bot, parse_bot_spec
from competition.openings import deck
from competition.runner import GameTask, play_game
from games import get_game
from games.checkers import CheckersState
from games.match import ResultCode
from tests.bots.programs.cb_engines import compile_engines

CHECKERS = get_game("checkers")
RULE_ENDINGS = {ResultCode.NO_MOVES, ResultCode.REPETITION, ResultCode.MOVE_RULE}


@pytest.fixture(scope="module")
def engines(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return compile_engines(tmp_path_factory.mktemp("cb"))


def position(fen: str) -> CheckersState:
    state = CHECKERS.parse_position(fen)
    assert isinstance(state, CheckersState)
    return state


def test_squares_sit_where_checkerboard_puts_them() -> None:
    """The API's board[x][y] as Fierz's simplech and Cake read it: square 1 at (6, 0)."""
    assert cb_square(1) == (6, 0)
    assert cb_square(4) == (0, 0)
    assert cb_square(5) == (7, 1)
    assert cb_square(8) == (1, 1)
    assert cb_square(29) == (7, 7)
    assert cb_square(32) == (1, 7)
    assert sorted(cb_square(s) for s in range(1, 33)) == sorted(
        (x, y) for x in range(8) for y in range(8) if (x + y) % 2 == 0
    )


def test_the_start_has_black_men_at_the_bottom() -> None:
    cells = cb_board(position("B:W21-32:B1-12"))
    assert {cells[8 * x + y] for x in range(8) for y in range(3)} == {0, 2 | 4}
    assert {cells[8 * x + y] for x in range(8) for y in range(5, 8)} == {0, 1 | 4}


def test_a_spec_names_the_library_first(engines: dict[str, Path]) -> None:
    path = engines["plain"]
    spec = parse_bot_spec(f"cb:{path}:time=0.5,depth=3")
    assert spec.options == {"path": str(path), "time": 0.5, "depth": 3}
    assert str(spec) == f"cb:{path}:time=0.5,depth=3"
    assert str(parse_bot_spec(f"cb:{path}")) == f"cb:{path}"
    # A colon inside the path stays in the path.
    assert parse_bot_spec("cb:/odd:dir/x.so:time=2").options["path"] == "/odd:dir/x.so"
    assert parse_bot_spec("cb:/odd:dir/x.so").options["path"] == "/odd:dir/x.so"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("cb", "cb needs its path first"),
        ("cb::time=1", "cb needs its path first"),
        ("cb:/x.so:path=/y.so", "given twice"),
        ("cb:/x.so:time=0", "at least 0.001"),
        ("cb:/x.so:speed=1", "no option 'speed'"),
    ],
)
def test_bad_specs_say_what_is_wrong(text: str, words: str) -> None:
    with pytest.raises(BotSpecError, match=words):
        parse_bot_spec(text)


def test_a_missing_library_is_refused_when_the_bot_is_built(tmp_path: Path) -> None:
    with pytest.raises(BotSpecError, match=r"cb: no engine library at .*missing\.so"):
        create_bot(f"cb:{tmp_path / 'missing.so'}", CHECKERS)


def test_a_file_that_is_no_library_is_refused(tmp_path: Path) -> None:
    text = tmp_path / "engine.so"
    text.write_text("not a library")
    with pytest.raises(BotSpecError, match=r"cannot load engine .*engine\.so"):
        create_bot(f"cb:{text}", CHECKERS)


def test_a_library_without_getmove_is_refused(tmp_path: Path, engines: dict[str, Path]) -> None:
    gcc = shutil.which("gcc")
    assert gcc is not None
    source = tmp_path / "other.c"
    source.write_text("int enginecommand(char *c, char *r) { return 0; }\n")
    target = tmp_path / "other.so"
    subprocess.run([gcc, "-shared", "-fPIC", "-o", target, source], check=True)
    with pytest.raises(BotSpecError, match=r"cannot load engine .*getmove"):
        create_bot(f"cb:{target}", CHECKERS)


def test_a_host_refuses_engines_from_disk(engines: dict[str, Path]) -> None:
    limits = SearchLimits(depth=10, simulations=1000, seconds=5.0, nodes=10**6)
    with pytest.raises(BotSpecError, match="runs a program from this machine's disk"):
        check_limits(parse_bot_spec(f"cb:{engines['plain']}"), limits)


def test_only_checkers(engines: dict[str, Path]) -> None:
    with pytest.raises(BotSpecError, match="plays checkers, not connect4"):
        create_bot(f"cb:{engines['plain']}", get_game("connect4"))


@pytest.mark.parametrize(
    ("fen", "expected"),
    [
        ("B:W9,18:B5", "5x14x23"),  # a double jump
        ("B:W26,27:B22", "22x31"),  # crowned by a capture: the move ends there
        ("W:W9,10,17,18:BK6,1", "9x2"),  # White's man captures upward
    ],
)
def test_forced_moves_come_back_whole(engines: dict[str, Path], fen: str, expected: str) -> None:
    bot = create_bot(f"cb:{engines['plain']}:time=0.01", CHECKERS)
    assert str(bot.choose(position(fen)).move) == expected


def test_a_man_reaching_the_far_row_is_crowned(engines: dict[str, Path]) -> None:
    bot = create_bot(f"cb:{engines['plain']}:time=0.01", CHECKERS)
    state = position("B:WK1:B27")
    move = bot.choose(state).move
    assert str(move) in ("27-31", "27-32")
    after = state.apply(move)
    assert after.piece_at(int(str(move).split("-")[1])) == "B"


def test_captures_ending_on_one_board_are_told_apart_by_the_path(
    engines: dict[str, Path],
) -> None:
    """A king's loop around four men, either way round, leaves the same board."""
    state = position("B:W9,10,17,18:BK6")
    loops = {str(m) for m in state.legal_moves()}
    assert loops == {"6x13x22x15x6", "6x15x22x13x6"}
    bot = create_bot(f"cb:{engines['plain']}:time=0.01", CHECKERS)
    assert str(bot.choose(state).move) in loops
    blind = create_bot(f"cb:{engines['no_path']}:time=0.01", CHECKERS)
    with pytest.raises(EngineError, match="fits several captures"):
        blind.choose(state)


def test_an_unchanged_board_is_no_move() -> None:
    state = position("B:W21-32:B1-12")
    with pytest.raises(EngineError, match="unchanged"):
        identify_move(state, cb_board(state))


def test_statistics_are_read_from_the_engine_text(engines: dict[str, Path]) -> None:
    bot = create_bot(f"cb:{engines['plain']}:depth=7", CHECKERS)
    result = bot.choose(position("B:W21-32:B1-12"))
    assert result.stats.depth == 7  # info bit 3: maxtime carried the depth
    assert result.stats.nodes == 7  # the engine's count of legal moves at the start
    assert result.score == 1.0  # its first call


def test_cake_style_text_is_read() -> None:
    text = (
        "best: 11-15 depth 13/35 nodes 514102 value 2 time 0.15s 3377kN/s db 0 "
        "pv: 11-15 22-18 15x22 25x18  8-11 29-25  4- 8"
    )
    stats, score = parse_search_text(text)
    assert (stats.depth, stats.nodes, score) == (13, 514102, 2.0)
    assert stats.pv == ["11-15", "22-18", "15x22", "25x18", "8-11", "29-25", "4-8"]
    assert parse_search_text("best: 9-14 value>-35")[1] == -35.0
    stats, score = parse_search_text("thinking")
    assert (stats.depth, stats.nodes, math.isnan(score)) == (0, 0, True)


def test_each_bot_has_its_own_engine_state(engines: dict[str, Path]) -> None:
    """Two bots of one library count their calls apart: each runs in a process of its own."""
    one = create_bot(f"cb:{engines['plain']}:time=0.01", CHECKERS)
    two = create_bot(f"cb:{engines['plain']}:time=0.01", CHECKERS)
    state = position("B:W21-32:B1-12")
    assert [one.choose(state).score for _ in range(3)] == [1.0, 2.0, 3.0]
    assert two.choose(state).score == 1.0


def test_the_repetition_history_is_reset_out_of_sequence(engines: dict[str, Path]) -> None:
    engine = Engine(engines["plain"], time.perf_counter)
    texts = []
    original = engine.getmove

    def spy(*args: Any, **kwargs: Any) -> EngineReply:
        reply = original(*args, **kwargs)
        texts.append(reply.text)
        return reply

    engine.getmove = spy  # type: ignore[method-assign]
    bot = CheckerBoardBot(engine, 0.01, 0)
    state = position("B:W21-32:B1-12")
    answer = state.apply(bot.choose(state, None, None).move)
    bot.choose(answer.apply(answer.legal_moves()[0]), None, None)  # follows its own move
    bot.choose(state, None, None)  # out of sequence
    assert ["reset" in text for text in texts] == [True, False, True]
    engine.close()


@pytest.mark.parametrize("seat", [0, 1])
def test_games_through_the_referee_are_legal_both_ways(engines: dict[str, Path], seat: int) -> None:
    openings = deck("acf-3move", CHECKERS)[:3]
    engine = f"cb:{engines['plain']}:time=0.01"
    for index, opening in enumerate(openings):
        players = ("greedy", engine) if seat else (engine, "greedy")
        record = play_game(GameTask(index, 0, *players, opening), ply_cap=300)
        assert record.code in RULE_ENDINGS | {ResultCode.PLY_CAP}, record.reason
        assert record.stats[seat].moves > 0
        captures = [m for m in record.moves if "x" in m]
        assert captures  # the deck's openings always come to blows


def test_engine_games_cross_multi_jumps_and_crownings(engines: dict[str, Path]) -> None:
    """Three games of the engine against itself: the referee accepted every move, and the
    moves include multi-jumps and men crowned."""
    engine = f"cb:{engines['plain']}:time=0.01"
    multi_jumps = crownings = 0
    for index, opening in enumerate(deck("acf-3move", CHECKERS)[:3]):
        record = play_game(GameTask(index, 0, engine, engine, opening), ply_cap=400)
        assert record.code in RULE_ENDINGS | {ResultCode.PLY_CAP}, record.reason
        state = CHECKERS.position_or_initial(opening.position)
        for text in record.moves:
            move = state.parse_move(text)
            piece = state.piece_at(move.path[0])  # type: ignore[attr-defined]
            crownings += (piece == "b" and move.path[-1] >= 29) or (
                piece == "w" and move.path[-1] <= 4
            )
            multi_jumps += len(move.path) > 2 and move.is_capture
            state = state.apply(move)
    assert multi_jumps > 0
    assert crownings > 0


def test_an_illegal_board_loses_as_a_bot_failure(engines: dict[str, Path]) -> None:
    opening = deck("acf-3move", CHECKERS)[0]
    record = play_game(GameTask(0, 0, f"cb:{engines['broken']}", "greedy", opening), ply_cap=50)
    assert record.code is ResultCode.BOT_FAILURE
    assert record.result == 0.0
    assert "no legal move" in record.reason
    assert "value 1 depth 1" in record.reason  # the engine's words


def test_a_crashing_engine_loses_as_a_bot_failure(engines: dict[str, Path]) -> None:
    opening = deck("acf-3move", CHECKERS)[0]
    record = play_game(GameTask(0, 0, "greedy", f"cb:{engines['crash']}", opening), ply_cap=50)
    assert record.code is ResultCode.BOT_FAILURE
    assert record.result == 1.0
    assert "the engine crashed (signal 6)" in record.reason


def test_an_engine_is_told_to_play_at_the_move_time(engines: dict[str, Path]) -> None:
    opening = deck("acf-3move", CHECKERS)[0]
    task = GameTask(0, 0, f"cb:{engines['stall']}", "random", opening)
    record = play_game(task, ply_cap=len(opening.moves) + 4, move_time=0.05)
    assert record.code is ResultCode.PLY_CAP, record.reason
    assert record.stats[0].moves == 2


def test_an_engine_that_never_plays_is_killed(
    engines: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bots.programs.child, "GRACE_SECONDS", 0.2)
    bot = create_bot(f"cb:{engines['hang']}:time=0.01", CHECKERS)
    with pytest.raises(EngineError, match=r"did not play within 0\.2 s of being told to play now"):
        bot.choose(position("B:W21-32:B1-12"), stop=lambda: True)
