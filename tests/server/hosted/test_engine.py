"""Users' bots hosted in the sandbox: real processes playing checkers, and hostile ones losing.

The hostile engines run the sandbox's own gallery of hostile programs (tests/sandbox/gallery/)
when told to move; each ends with an EngineError whose words name what it did.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bots.programs.child import EngineError
from bots.spec import create_bot
from games import get_game
from games.checkers import CheckersState
from sandbox import MIB, Isolation, can_isolate, sandbox_support
from server.hosted.engine import ENTRY, HostedBot, HostedLimits, Kind, start_hosted_engine
from tests.sandbox.processes import survivors

ROOT = Path(__file__).resolve().parents[3]
GALLERY = ROOT / "tests" / "sandbox" / "gallery"
PLUGIN = ROOT / "examples" / "plugins" / "first_win.py"
ENGINE = ROOT / "examples" / "engines" / "random_engine.py"
COURSE_AGENT = ROOT / "autograder" / "reference" / "agent_solution.py"
ROOTED = os.geteuid() == 0
UID = int(os.environ.get("ARENA_GRADER_UID_BASE", "100000")) + 600
"""A uid of this test worker's own: its processes are counted after each test."""
LIMITS = HostedLimits(move_seconds=10.0, cpu_seconds=20, memory_bytes=256 * MIB)
CHECKERS = get_game("checkers")
PLY_CAP = 400

pytestmark = [
    pytest.mark.skipif(not can_isolate(), reason=f"no sandbox here: {sandbox_support().reason}"),
    pytest.mark.skipif(not os.path.exists("/usr/bin/python3"), reason="no /usr/bin/python3"),
]

HOSTILE = """
import contextlib, io, runpy, sys

sys.stdout.reconfigure(line_buffering=True)  # what the gallery prints reaches Arena at once

def send(text):
    sys.stdout.write(text + "\\n")
    sys.stdout.flush()

for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "arena":
        send("id name Hostile")
        send("arenaok 1")
    elif words[0] == "isready":
        send("readyok")
    elif words[0] == "go":
        GO
    elif words[0] == "quit":
        break
"""


class SteppingClock:
    """A clock the test controls: still until `step` is set, then `step` seconds a reading."""

    def __init__(self) -> None:
        self.now = 0.0
        self.step = 0.0

    def __call__(self) -> float:
        self.now += self.step
        return self.now


@pytest.fixture
def bot_dir() -> Iterator[Path]:
    """A directory for a bot's files, readable by the sandbox's uid."""
    directory = Path(tempfile.mkdtemp(prefix="arena-hosted-"))
    directory.chmod(0o755)
    yield directory
    shutil.rmtree(directory)


@pytest.fixture
def hosted() -> Iterator[list[HostedBot]]:
    """Bots the test starts: closed after it, and none of their processes may survive."""
    bots: list[HostedBot] = []
    yield bots
    for bot in bots:
        bot.close()
    if ROOTED:
        assert not survivors(UID)


def start(
    bots: list[HostedBot],
    kind: Kind,
    directory: Path,
    limits: HostedLimits = LIMITS,
    clock: Any = time.monotonic,
    **kwargs: Any,
) -> HostedBot:
    bot = start_hosted_engine(
        kind, directory, CHECKERS, limits, clock=clock, isolation=Isolation(UID, UID), **kwargs
    )
    bots.append(bot)
    return bot


def play_out(bot: HostedBot, opponent_spec: str) -> tuple[CheckersState, int]:
    """Play checkers to the end (or PLY_CAP plies), `bot` first; each move applied checked."""
    opponent = create_bot(opponent_spec, CHECKERS, rng=random.Random(7))
    state = CHECKERS.initial_state()
    plies = 0
    while not state.is_terminal() and plies < PLY_CAP:
        player = bot.choose(state, None, None) if plies % 2 == 0 else opponent.choose(state)
        state = state.apply(player.move)
        plies += 1
    assert isinstance(state, CheckersState)
    return state, plies


def hostile(directory: Path, go: str, program: str | None = None) -> None:
    (directory / ENTRY).write_text(HOSTILE.replace("GO", go))
    if program is not None:
        shutil.copy(GALLERY / program, directory / program)


def reporting(program: str, *args: str) -> str:
    """The GO of an engine that runs a gallery `program` and says all it printed as `error`."""
    return (
        f"sys.argv = [{program!r}, *{list(args)!r}]\n"
        "        out = io.StringIO()\n"
        "        with contextlib.redirect_stdout(out):\n"
        f"            runpy.run_path({program!r})\n"
        '        send("error " + " / ".join(out.getvalue().splitlines()))'
    )


def failure(bot: HostedBot, stderr_bytes: int = HostedLimits().stderr_bytes) -> str:
    """The words of the EngineError its first move ends in; they and its stderr are bounded."""
    with pytest.raises(EngineError) as caught:
        bot.choose(CHECKERS.initial_state(), None, None)
    words = str(caught.value)
    assert len(words) < 2000
    assert len(bot.stderr_tail().encode()) <= stderr_bytes
    return words


# -- bots that play ---------------------------------------------------------------------------


def test_a_plugin_plays_a_whole_game_of_checkers_from_its_sandbox(
    hosted: list[HostedBot], bot_dir: Path
) -> None:
    shutil.copy(PLUGIN, bot_dir / ENTRY)
    bot = start(hosted, "plugin", bot_dir, target="FirstWin")
    assert bot.sandboxed
    assert bot.identity.name == "FirstWin"
    state, plies = play_out(bot, "alphabeta:depth=2")
    assert state.is_terminal() or plies == PLY_CAP
    assert plies > 10


def test_an_engine_protocol_program_plays_a_whole_game_of_checkers(
    hosted: list[HostedBot], bot_dir: Path
) -> None:
    shutil.copy(ENGINE, bot_dir / ENTRY)
    bot = start(hosted, "engine", bot_dir)
    assert bot.sandboxed
    state, plies = play_out(bot, "random")
    assert state.is_terminal() or plies == PLY_CAP
    assert plies > 10


def test_the_course_s_select_move_is_hosted_too(hosted: list[HostedBot], bot_dir: Path) -> None:
    shutil.copy(COURSE_AGENT, bot_dir / ENTRY)
    bot = start(hosted, "plugin", bot_dir, limits=HostedLimits(move_seconds=5.0))
    state = CHECKERS.initial_state()
    move = bot.choose(state, None, None).move
    assert move in state.legal_moves()


def test_a_plugin_sees_no_installed_package_and_no_server_file(
    hosted: list[HostedBot], bot_dir: Path
) -> None:
    (bot_dir / ENTRY).write_text(
        "import os, sys\n"
        "class Probe:\n"
        "    def choose(self, state, limits):\n"
        "        seen = sorted(os.listdir('/arena')), sorted(os.listdir('/arena/bots'))\n"
        "        try:\n"
        "            import sqlalchemy\n"
        "            found = 'sqlalchemy'\n"
        "        except ImportError:\n"
        "            found = 'none'\n"
        "        raise RuntimeError(f'{seen} {found} {os.path.exists(\"" + str(ROOT) + "\")}')\n"
    )
    bot = start(hosted, "plugin", bot_dir, target="Probe")
    words = failure(bot)
    assert (
        "(['bots', 'games'], ['__init__.py', 'plugin.py', 'programs', 'result.py']) none False"
        in words
    )


# -- hostile bots -----------------------------------------------------------------------------


def test_a_crash_names_the_exception_and_keeps_only_the_tail_of_stderr(
    hosted: list[HostedBot], bot_dir: Path
) -> None:
    go = 'sys.stderr.write("noise " * 200000 + "\\n"); runpy.run_path("crash.py")'
    hostile(bot_dir, go, "crash.py")
    bot = start(hosted, "engine", bot_dir, limits=HostedLimits(stderr_bytes=8192))
    words = failure(bot, stderr_bytes=8192)
    assert "ended: your program exited with code 1: ValueError: no legal move found" in words
    tail = bot.stderr_tail()
    assert "noise noise" in tail
    assert tail.rstrip().endswith("ValueError: no legal move found")


def test_a_hang_is_killed_at_its_move_s_wall_limit(hosted: list[HostedBot], bot_dir: Path) -> None:
    hostile(bot_dir, 'runpy.run_path("busy_loop.py")', "busy_loop.py")
    clock = SteppingClock()
    bot = start(hosted, "engine", bot_dir, limits=HostedLimits(move_seconds=1.0), clock=clock)
    clock.step = 0.5
    words = failure(bot)
    assert "did not play within 5 s of being told to play now" in words
    assert bot.process.poll() is not None
    assert "stopped before it finished" in bot.end_reason()


@pytest.mark.parametrize(
    ("go", "words"),
    [
        ('send("bestmove 99-98")', "played '99-98', which is no legal move here"),
        ('send("hello there")', "answered 'hello there' where the protocol has info or bestmove"),
    ],
)
def test_illegal_moves_and_garbage_are_quoted(
    hosted: list[HostedBot], bot_dir: Path, go: str, words: str
) -> None:
    hostile(bot_dir, go)
    assert words in failure(start(hosted, "engine", bot_dir))


def test_binary_garbage_is_refused(hosted: list[HostedBot], bot_dir: Path) -> None:
    hostile(bot_dir, 'runpy.run_path("garbage.py")', "garbage.py")
    words = failure(start(hosted, "engine", bot_dir))
    assert "wrote a line of more than" in words or "where the protocol has" in words


def test_a_memory_hog_is_stopped_at_its_memory_limit(
    hosted: list[HostedBot], bot_dir: Path
) -> None:
    hostile(bot_dir, 'runpy.run_path("memory_bomb.py")', "memory_bomb.py")
    bot = start(hosted, "engine", bot_dir, limits=HostedLimits(memory_bytes=128 * MIB))
    assert "ended: your program used more than 128 MiB of memory" in failure(bot)


def test_a_spinning_bot_is_stopped_at_its_cpu_limit(hosted: list[HostedBot], bot_dir: Path) -> None:
    hostile(bot_dir, 'runpy.run_path("busy_loop.py")', "busy_loop.py")
    bot = start(hosted, "engine", bot_dir, limits=HostedLimits(move_seconds=600.0, cpu_seconds=1))
    assert "ended: your program used more than 1 s of CPU time and was stopped" in failure(bot)


def test_a_fork_bomb_is_held_by_the_process_limit_and_killed_at_its_wall_limit(
    hosted: list[HostedBot], bot_dir: Path
) -> None:
    hostile(bot_dir, 'runpy.run_path("fork_bomb.py")', "fork_bomb.py")
    clock = SteppingClock()
    limits = HostedLimits(move_seconds=1.0, processes=8)
    bot = start(hosted, "engine", bot_dir, limits=limits, clock=clock)
    clock.step = 0.01  # a few hundred readings: time for the bomb to meet its limit
    words = failure(bot)
    assert "did not play within 5 s of being told to play now" in words
    assert "fork refused: Resource temporarily unavailable" in bot.stderr_tail()


def test_the_network_is_unreachable(hosted: list[HostedBot], bot_dir: Path) -> None:
    hostile(bot_dir, reporting("socket_connect.py"), "socket_connect.py")
    words = failure(start(hosted, "engine", bot_dir))
    # Its own loopback has nothing listening; nothing beyond it is reachable.
    assert "said 'error 127.0.0.1:5432 failed ECONNREFUSED / 1.1.1.1:53 failed ENETUNREACH'" in (
        words
    )


@pytest.mark.parametrize("target", ["/etc/hostname", "SERVER"])
def test_files_outside_its_directory_are_not_there(
    hosted: list[HostedBot], bot_dir: Path, target: str
) -> None:
    server_data = Path(tempfile.mkdtemp(prefix="arena-server-data-"))
    try:
        secret = server_data / "arena.db"
        secret.write_text("the server's data")
        path = str(secret) if target == "SERVER" else target
        hostile(bot_dir, reporting("read_file.py", path), "read_file.py")
        words = failure(start(hosted, "engine", bot_dir))
        assert f"error FileNotFoundError [Errno 2] No such file or directory: {path!r}" in words
    finally:
        shutil.rmtree(server_data)


def test_a_plugin_s_failure_is_its_own_words(hosted: list[HostedBot], bot_dir: Path) -> None:
    (bot_dir / ENTRY).write_text(
        "class Nosy:\n"
        "    def choose(self, state, limits):\n"
        "        return open('/etc/hostname').read()\n"
    )
    words = failure(start(hosted, "plugin", bot_dir, target="Nosy"))
    assert "No such file or directory: '/etc/hostname'" in words


def test_without_a_sandbox_a_bot_runs_with_rlimits_only_and_says_so(
    hosted: list[HostedBot], bot_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sandbox.support.can_isolate", lambda: False)
    monkeypatch.setattr("server.hosted.engine.can_isolate", lambda: False)
    shutil.copy(PLUGIN, bot_dir / ENTRY)
    bot = start(hosted, "plugin", bot_dir, target="FirstWin")
    assert not bot.sandboxed
    assert "unsandboxed: rlimits only" in bot.what
    state = CHECKERS.initial_state()
    assert bot.choose(state, None, None).move in state.legal_moves()
