"""Engines speaking Arena's engine protocol and Python plug-ins, run as real child processes.

The example engines (examples/engines/, one in Python and one in C compiled here) play all
four games through the referee; hostile engines written here crash, hang, write garbage and
play illegal moves, and each loses its game with its own words quoted.
"""

from __future__ import annotations

import importlib.util
import json
import random
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import bots.programs.child
from bots.programs.child import EngineError
from bots.programs.external import Info, parse_option
from bots.spec import BotSpecError, SearchLimits, check_limits, create_bot, parse_bot_spec
from competition.openings import Opening, deck
from competition.runner import GameRecord, GameTask, play_game
from games import get_game
from games.match import ResultCode

ROOT = Path(__file__).resolve().parents[3]
PY_ENGINE = ROOT / "examples" / "engines" / "random_engine.py"
C_ENGINE = ROOT / "examples" / "engines" / "random_engine.c"
PLUGIN = ROOT / "examples" / "plugins" / "first_win.py"
COURSE_AGENT = ROOT / "autograder" / "reference" / "agent_solution.py"
ARENA = "from cli.main import main; main()"
GAMES = ("tictactoe", "nim", "connect4", "checkers")
FAILURES = {ResultCode.BOT_FAILURE, ResultCode.FORFEIT, ResultCode.TIMEOUT}
"""The endings that are no game's rules: a bot that failed."""


@pytest.fixture(scope="module")
def c_engine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    gcc = shutil.which("gcc")
    assert gcc is not None, "the C example engine is compiled with gcc"
    target = tmp_path_factory.mktemp("engine") / "random_engine"
    subprocess.run([gcc, "-std=c99", "-O2", "-Wall", "-Werror", "-o", target, C_ENGINE], check=True)
    return target


def python_engine() -> str:
    return f"cmd:{sys.executable} {PY_ENGINE}"


def opening(game: str) -> Opening:
    if game == "checkers":
        return deck("acf-3move", get_game("checkers"))[0]
    return Opening("start", game)


def play(first: str, second: str, game: str = "connect4", **kwargs: Any) -> GameRecord:
    return play_game(GameTask(0, 0, first, second, opening(game)), ply_cap=300, **kwargs)


def load_module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- the example engines ------------------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES)
def test_the_python_example_knows_the_rules_as_arena_does(game: str) -> None:
    """Its own move generator, differentially against games/: every position of 30 random
    games, each sent as Arena sends it (a start and the moves since)."""
    engine = load_module(PY_ENGINE)
    rules = get_game(game)
    rng = random.Random(7)
    for _ in range(30):
        state = rules.initial_state()
        played: list[str] = []
        while not state.is_terminal():
            expected = sorted(state.format_move(m) for m in state.legal_moves())
            position = ["startpos", "moves", *played]
            assert sorted(engine.legal_moves(game, {}, position)) == expected, played
            fen = ["fen", rules.format_position(state)] if played else ["startpos"]
            assert sorted(engine.legal_moves(game, {}, fen)) == expected, played
            move = rng.choice(list(state.legal_moves()))
            played.append(state.format_move(move))
            state = state.apply(move)


@pytest.mark.parametrize("game", GAMES)
def test_the_example_engines_play_whole_games_in_every_game(c_engine: Path, game: str) -> None:
    for first, second in ((python_engine(), f"cmd:{c_engine}:seed=5"), ("random", python_engine())):
        record = play(first, second, game)
        assert record.code not in FAILURES, record.reason
        if game in ("connect4", "checkers"):
            assert len(record.moves) > 6
        engine_seat = 0 if first != "random" else 1
        assert record.stats[engine_seat].moves > 0
        # Its info lines came back as the search statistics: depth 1, the legal moves.
        assert record.stats[engine_seat].depth_sum == record.stats[engine_seat].moves
        assert record.stats[engine_seat].nodes >= record.stats[engine_seat].moves


def test_the_c_engine_plays_checkers_captures_and_crownings(c_engine: Path) -> None:
    multi = crowned = 0
    for seed in range(4):
        record = play(f"cmd:{c_engine}:seed={seed}", "greedy", "checkers")
        assert record.code not in FAILURES, record.reason
        state = get_game("checkers").position_or_initial(None)
        for text in record.moves:
            move = state.parse_move(text)
            piece = state.piece_at(move.path[0])  # type: ignore[attr-defined]
            crowned += piece in "bw" and (move.path[-1] >= 29 or move.path[-1] <= 4)
            multi += len(move.path) > 2 and move.is_capture
            state = state.apply(move)
    assert multi > 0
    assert crowned > 0


def test_the_handshake_gives_the_engine_s_name_version_and_options(c_engine: Path) -> None:
    bot = create_bot(f"cmd:{c_engine}", get_game("nim"))
    identity = bot._chooser.__self__.identity  # type: ignore[attr-defined]
    assert (identity.name, identity.author, identity.version) == (
        "Random (C)",
        "the Arena authors",
        "1.0",
    )
    assert identity.games == GAMES
    assert identity.options["seed"].describe() == "seed (int, default 0)"


def test_a_seed_option_reaches_the_engine(c_engine: Path) -> None:
    game = get_game("connect4")
    state = game.initial_state()

    def first_moves(spec: str) -> list[str]:
        bot = create_bot(spec, game)
        moves = []
        for _ in range(6):
            move = bot.choose(state).move
            moves.append(state.format_move(move))
        return moves

    one = first_moves(f"cmd:{c_engine}:seed=1")
    assert first_moves(f"cmd:{c_engine}:seed=1") == one
    assert first_moves(f"cmd:{c_engine}:seed=2") != one


def test_nim_options_reach_the_engine(c_engine: Path) -> None:
    nim = get_game("nim", {"heaps": "0,0,4"})
    bot = create_bot(f"cmd:{c_engine}", nim)
    result = bot.choose(nim.initial_state())
    assert nim.initial_state().format_move(result.move).startswith("3:")
    assert result.stats.nodes == 4


# -- Python plug-ins --------------------------------------------------------------------------


def test_a_plugin_s_statistics_reach_the_result() -> None:
    game = get_game("tictactoe")
    state = game.parse_position("XX.OO....")
    bot = create_bot(f"py:{PLUGIN}:FirstWin", game)
    result = bot.choose(state)
    assert state.format_move(result.move) == "2"
    assert (result.score, result.stats.depth, result.stats.nodes) == (1.0, 1, 5)
    assert result.stats.pv == ["2"]
    assert [state.format_move(m) for m in result.pv] == ["2"]


@pytest.mark.parametrize("game", GAMES)
def test_a_plugin_plays_every_game(game: str) -> None:
    record = play(f"py:{PLUGIN}:FirstWin:seed=3", "random", game)
    assert record.code not in FAILURES, record.reason
    assert record.stats[0].moves > 0


def test_the_course_s_select_move_plays_through_the_adapter() -> None:
    """The reference agent of the course, `select_move(board, player, depth, time)`."""
    record = play(f"py:{COURSE_AGENT}:depth=2", "random", "checkers")
    assert record.code not in FAILURES, record.reason
    assert record.stats[0].moves > 5
    assert record.stats[0].depth_sum == 2 * record.stats[0].moves


def write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


def test_a_plugin_from_an_entry_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "shelf_bot.py", (PLUGIN.read_text()))
    info = tmp_path / "shelf_bot-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: shelf-bot\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[arena.bots]\nshelf = shelf_bot:FirstWin\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    bot = create_bot("py:shelf", get_game("connect4"))
    assert bot._chooser.__self__.identity.name == "FirstWin"  # type: ignore[attr-defined]
    with pytest.raises(BotSpecError, match=r"no plug-in named 'nobody'.*installed: shelf"):
        create_bot("py:nobody", get_game("connect4"))


PLUGIN_OPTIONS = """
    from bots.plugin import Option, Reply

    class Deep:
        options = {"width": Option(2, "how wide", 1, 5), "loud": Option(False)}

        def __init__(self, width, loud):
            self.width, self.loud = width, loud

        def choose(self, state, limits):
            moves = list(state.legal_moves())
            return Reply(moves[0], depth=limits.depth or 0, nodes=self.width + 10 * self.loud)

    class NoChoose:
        pass

    def helper():
        pass
"""


def test_a_plugin_s_options_and_limits(tmp_path: Path) -> None:
    path = write(tmp_path, "deep.py", PLUGIN_OPTIONS)
    game = get_game("connect4")
    result = create_bot(f"py:{path}:Deep:width=4,loud=on,depth=3", game).choose(
        game.initial_state()
    )
    assert (result.stats.nodes, result.stats.depth) == (14, 3)
    with pytest.raises(BotSpecError, match="option width must be at most 5"):
        create_bot(f"py:{path}:Deep:width=9", game)
    with pytest.raises(BotSpecError, match=r"has no option 'colour' \(its options: width"):
        create_bot(f"py:{path}:Deep:colour=red", game)


@pytest.mark.parametrize(
    ("target", "words"),
    [
        ("{tmp}/missing.py:Bot", r"^py: no file '.*missing\.py'$"),
        ("{tmp}/deep.py:Shallow", r"^py: '.*deep\.py' has no 'Shallow'$"),
        ("{tmp}/deep.py:NoChoose", r"NoChoose is not an Arena bot: a plug-in is a class with a "),
        (
            "{tmp}/two.py",
            r"has no select_move function and not one plug-in class \(it defines One, Two\): "
            r"name the class, py:.*two\.py:CLASS$",
        ),
        ("{tmp}/none.py", r"has no select_move function and not one plug-in class: name the"),
        ("{tmp}/broken.py:Bot", r"^py: cannot load '.*broken\.py': NameError: name 'oops'"),
        ("no_such_module:Bot", r"^py: cannot import module 'no_such_module'"),
    ],
)
def test_a_plugin_that_cannot_be_loaded_is_refused_in_one_line(
    tmp_path: Path, target: str, words: str
) -> None:
    write(tmp_path, "deep.py", PLUGIN_OPTIONS)
    write(tmp_path, "broken.py", "oops\n")
    two = "class One:\n    def choose(self, state, limits): ...\n"
    write(tmp_path, "two.py", two + "class Two(One):\n    pass\n")
    write(tmp_path, "none.py", "class Helper:\n    pass\n")
    with pytest.raises(BotSpecError, match=words) as caught:
        create_bot(f"py:{target.format(tmp=tmp_path)}", get_game("connect4"))
    assert "\n" not in str(caught.value)


def test_a_file_with_one_plugin_class_needs_no_class_name(tmp_path: Path) -> None:
    path = write(tmp_path, "deep.py", PLUGIN_OPTIONS)
    game = get_game("connect4")
    result = create_bot(f"py:{path}:width=4,loud=on,depth=3", game).choose(game.initial_state())
    assert (result.stats.nodes, result.stats.depth) == (14, 3)


def test_a_plugin_for_one_game_refuses_another(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "only.py",
        """
        class Only:
            games = ("nim",)
            def choose(self, state, limits):
                return state.legal_moves()[0]
        """,
    )
    with pytest.raises(BotSpecError, match=r"plug-in 'only.py:Only' plays nim, not connect4"):
        create_bot(f"py:{path}:Only", get_game("connect4"))


def test_a_plugin_that_raises_loses_with_its_words(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "raises.py",
        """
        class Raises:
            def choose(self, state, limits):
                raise RuntimeError("my evaluation broke")
        """,
    )
    record = play("random", f"py:{path}:Raises")
    assert record.code is ResultCode.BOT_FAILURE
    assert record.result == 1.0
    assert "RuntimeError: my evaluation broke" in record.reason


# -- hostile engines ----------------------------------------------------------------------------

ENGINE = """
import os, sys, time

def send(text):
    sys.stdout.write(text + "\\n")
    sys.stdout.flush()

gos = 0
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "arena":
        HANDSHAKE
    elif words[0] == "isready":
        send("readyok")
    elif words[0] == "go":
        gos += 1
        GO
    elif words[0] == "quit":
        break
"""
HELLO = 'send("id name Hostile"); send("id version 0.1"); send("arenaok 1")'


def hostile(tmp_path: Path, go: str, handshake: str = HELLO) -> str:
    source = ENGINE.replace("HANDSHAKE", handshake).replace("GO", go)
    path = tmp_path / "hostile.py"
    path.write_text(source)
    return f"cmd:{sys.executable} {path}"


def test_a_crash_loses_quoting_the_signal_and_stderr_and_the_next_game_starts_afresh(
    tmp_path: Path,
) -> None:
    """It crashes at its second search: so it does in each game, each a process of its own."""
    go = (
        'send(f"bestmove {gos}") if gos < 2 else '
        '(sys.stderr.write("out of ideas\\n"), sys.stderr.flush(), os.abort())'
    )
    engine = hostile(tmp_path, go)
    for _ in range(2):
        record = play(engine, "random")
        assert record.code is ResultCode.BOT_FAILURE
        assert record.result == 0.0
        assert len(record.moves) == 2  # its first move and the reply
        assert "engine 'python3 hostile.py' crashed (signal 6)" in record.reason.replace(
            Path(sys.executable).name, "python3"
        )
        assert "'out of ideas'" in record.reason


def test_an_exit_loses_quoting_the_status(tmp_path: Path) -> None:
    record = play("random", hostile(tmp_path, "sys.exit(3)"))
    assert record.code is ResultCode.BOT_FAILURE
    assert "process ended (exit status 3)" in record.reason


def test_a_hang_is_killed_after_its_time_and_grace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bots.programs.child, "GRACE_SECONDS", 0.2)
    record = play(hostile(tmp_path, "time.sleep(3600)") + ":time=0.05", "random")
    assert record.code is ResultCode.BOT_FAILURE
    assert "did not play within 0.2 s of being told to play now" in record.reason


def test_an_engine_that_obeys_stop_plays(tmp_path: Path) -> None:
    go = 'assert sys.stdin.readline().split() == ["stop"]; send("info depth 2"); send("bestmove 4")'
    bot = create_bot(hostile(tmp_path, go) + ":time=0.05", get_game("connect4"))
    result = bot.choose(get_game("connect4").initial_state())
    assert (result.move, result.stats.depth) == (3, 2)


@pytest.mark.parametrize(
    ("go", "words"),
    [
        ('send("I think column 4 is nice")', "answered 'I think column 4 is nice' where the"),
        ('send("error out of memory")', "said 'error out of memory'"),
        ('send("bestmove 9")', "played '9', which is no legal move here"),
        ('send("bestmove")', "answered 'bestmove' where the protocol has info or bestmove"),
    ],
)
def test_garbage_and_illegal_moves_lose_quoting_the_engine(
    tmp_path: Path, go: str, words: str
) -> None:
    record = play(hostile(tmp_path, go), "random")
    assert record.code is ResultCode.BOT_FAILURE
    assert record.result == 0.0
    assert words in record.reason


def test_an_illegal_move_quotes_the_engine_s_last_info(tmp_path: Path) -> None:
    go = 'send("info depth 3 string all good"); send("bestmove 9")'
    record = play(hostile(tmp_path, go), "random")
    assert "its last info: 'info depth 3 string all good'" in record.reason


@pytest.mark.parametrize(
    ("handshake", "words"),
    [
        ('send("arenaok 2")', "speaks protocol version 2, Arena speaks 1"),
        ('send("hello there")', "answered 'hello there' to `arena 1`"),
        ('send("error no licence")', "refused to start: 'no licence'"),
        ('send("option name x type colour"); send("arenaok 1")', "an option without a name"),
        ("sys.exit(0)", "process ended (exit status 0)"),
    ],
)
def test_a_failed_handshake_is_refused_when_the_bot_is_built(
    tmp_path: Path, handshake: str, words: str
) -> None:
    with pytest.raises(BotSpecError, match=r"^cmd: .*" + re.escape(words)):
        create_bot(hostile(tmp_path, 'send("bestmove 1")', handshake), get_game("connect4"))


# -- specs ------------------------------------------------------------------------------------


def test_commands_in_specs() -> None:
    spec = parse_bot_spec("cmd:./mybot --fast:time=0.1,hash=64")
    assert spec.options["command"] == "./mybot --fast"
    assert (spec.options["time"], spec.options["hash"]) == (0.1, "64")
    assert str(spec) == "cmd:./mybot --fast:time=0.1,hash=64"
    quoted = parse_bot_spec('cmd:"./mybot --x=a:b":depth=3')
    assert quoted.options["command"] == "./mybot --x=a:b"
    assert str(quoted) == 'cmd:"./mybot --x=a:b":depth=3'
    assert parse_bot_spec(str(quoted)) == quoted
    assert parse_bot_spec("py:./my.py:MyBot").options["target"] == "./my.py:MyBot"
    assert parse_bot_spec("py:./my.py:MyBot:seed=2").options["seed"] == "2"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("cmd", "cmd needs its command first"),
        ('cmd:"./mybot', "the quote in .* is not closed"),
        ('cmd:"./mybot"x', "after the closing quote comes : and the options"),
        ("cmd:./mybot:time=-1", "time must be at least 0"),
        ("cmd:./mybot:seed=1,seed=2", "option seed is given twice"),
        ("py", "py needs its target first"),
    ],
)
def test_bad_specs_say_what_is_wrong(text: str, words: str) -> None:
    with pytest.raises(BotSpecError, match=words):
        parse_bot_spec(text)


def test_a_command_that_cannot_start_is_refused(tmp_path: Path) -> None:
    with pytest.raises(
        BotSpecError, match=r"^cmd: cannot start engine 'nothing-here': No such file"
    ):
        create_bot(f"cmd:{tmp_path}/nothing-here", get_game("nim"))
    with pytest.raises(BotSpecError, match=r"^cmd: cannot read the command"):
        create_bot('cmd:"a \'b"', get_game("nim"))


@pytest.mark.parametrize("spec", ["cmd:./mybot", "py:./mybot.py:Bot", "engine:mine"])
def test_a_host_refuses_programs_from_disk(spec: str) -> None:
    limits = SearchLimits(depth=10, simulations=1000, seconds=5.0, nodes=10**6)
    with pytest.raises(BotSpecError, match="runs a program from this machine's disk"):
        check_limits(parse_bot_spec(spec), limits)


def test_named_engines_come_from_a_json_file(
    tmp_path: Path, c_engine: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engines = tmp_path / "engines.json"
    engines.write_text(
        json.dumps(
            [
                {
                    "name": "rc",
                    "command": "./random_engine",
                    "workingDirectory": str(c_engine.parent),
                    "protocol": "arena",
                    "options": {"seed": 4},
                }
            ]
        )
    )
    monkeypatch.setenv("ARENA_ENGINES", str(engines))
    game = get_game("connect4")
    named = create_bot("engine:rc", game)
    direct = create_bot(f"cmd:{c_engine}:seed=4", game)
    state = game.initial_state()
    assert [named.choose(state).move for _ in range(5)] == [
        direct.choose(state).move for _ in range(5)
    ]
    with pytest.raises(BotSpecError, match=r"names no engine 'other' \(rc\)"):
        create_bot("engine:other", game)
    engines.write_text("[{}]")
    with pytest.raises(BotSpecError, match="entry 1 is not an object with a name and a command"):
        create_bot("engine:rc", game)


# -- the protocol's pieces ----------------------------------------------------------------------


def test_option_lines_are_read() -> None:
    option = parse_option("option name Style type string default very sharp max 3")
    assert (option.name, option.kind, option.default, option.maximum) == (
        "Style",
        "string",
        "very sharp",
        3.0,
    )
    with pytest.raises(EngineError, match="cannot read"):
        parse_option("option name x colour red")
    assert parse_option("option name On type bool default true").convert("off") == "false"


def test_info_lines_keep_the_latest_values() -> None:
    info = Info()
    info.read("info depth 3 nodes 120 score -15 time 4 pv 4 4 3")
    info.read("info depth 4 nodes x score 2.5 string thinking hard")
    assert (info.depth, info.nodes, info.score, info.pv) == (4, 120, 2.5, ["4", "4", "3"])


def test_a_tournament_runs_engines_from_the_command_line(c_engine: Path, tmp_path: Path) -> None:
    """`arena tournament` in a subprocess, with two worker processes, each game's engine a
    process of its own."""
    out = tmp_path / "result.json"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            ARENA,
            "tournament",
            "-g",
            "connect4",
            "-b",
            f"cmd:{c_engine}",
            "-b",
            python_engine(),
            f"py:{PLUGIN}:FirstWin",
            "--games",
            "2",
            "-j",
            "2",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    games = json.loads(out.read_text())["games"]
    assert len(games) == 6
    assert all(g["code"] not in ("bot_failure", "forfeit", "timeout") for g in games)
    # Each game's record names the programs as they named themselves in the handshake.
    named = {
        f"cmd:{c_engine}": "Random (C) 1.0",
        python_engine(): "Random (Python) 1.0",
        f"py:{PLUGIN}:FirstWin": "FirstWin 1.0",
    }
    for game in games:
        assert game["engines"] == {
            "first": named[game["first"]],
            "second": named[game["second"]],
        }, game
    assert "Engines, as they named themselves:" in done.stdout
    assert f"cmd:{c_engine}: Random (C) 1.0" in done.stdout


def test_a_bad_spec_on_the_command_line_is_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", ARENA, "tournament", "-b", f"py:{tmp_path}/none.py:X", "random"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "py: no file" in lines[0]


STOPPING = """
    import time
    from bots.plugin import Reply

    class Patient:
        def choose(self, state, limits):
            polls = 0
            while not limits.stop():
                polls += 1
                time.sleep(0.001)
            return Reply(state.legal_moves()[0], nodes=polls, depth=7)

    class Stubborn:
        def choose(self, state, limits):
            time.sleep(3600)
"""


def test_a_plugin_is_told_to_stop_at_its_time(tmp_path: Path) -> None:
    path = write(tmp_path, "stopping.py", STOPPING)
    game = get_game("nim")
    result = create_bot(f"py:{path}:Patient:time=0.05", game).choose(game.initial_state())
    assert result.stats.depth == 7
    assert result.stats.nodes > 0  # it searched until the stop came


def test_a_plugin_that_ignores_stop_is_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bots.programs.child, "GRACE_SECONDS", 0.2)
    path = write(tmp_path, "stopping.py", STOPPING)
    record = play("random", f"py:{path}:Stubborn:time=0.05")
    assert record.code is ResultCode.BOT_FAILURE
    assert record.result == 1.0
    assert "plug-in 'stopping.py:Stubborn' did not play within 0.2 s" in record.reason


def test_arena_analyse_searches_with_an_engine(c_engine: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", ARENA, "analyse", "connect4", "-b", f"cmd:{c_engine}", "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["move"] in [str(c) for c in range(1, 8)]
    assert (answer["depth"], answer["nodes"]) == (1, 7)
