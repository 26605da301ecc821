"""A child process's channel over a process starter the caller injects."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import IO

import pytest

from bots.programs.child import ChildProcess, EngineError, Explained, popen_starter
from bots.programs.external import ExternalBot, ProtocolEngine
from games import get_game

ENGINE = """
import sys

def send(text):
    sys.stdout.write(text + "\\n")
    sys.stdout.flush()

for line in sys.stdin:
    words = line.split()
    if words and words[0] == "arena":
        send("id name Told"); send("arenaok 1")
    elif words and words[0] == "isready":
        send("readyok")
    elif words and words[0] == "go":
        sys.stderr.write("first words\\nlast words\\n")
        sys.stderr.flush()
        sys.exit(7)
    elif words and words[0] == "quit":
        break
"""


class Narrated:
    """A real child process that keeps its own stderr and says how it ended, as one run in a
    sandbox does (sandbox.SandboxedProcess)."""

    def __init__(self, argv: list[str]) -> None:
        self.popen = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.starts = 1

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def stdin(self) -> IO[bytes] | None:
        return self.popen.stdin

    @property
    def stdout(self) -> IO[bytes] | None:
        return self.popen.stdout

    @property
    def stderr(self) -> IO[bytes] | None:
        return None

    def poll(self) -> int | None:
        return self.popen.poll()

    def wait(self, timeout: float | None = None) -> int:
        return self.popen.wait(timeout)

    def kill(self) -> None:
        self.popen.kill()

    def end_reason(self) -> str:
        code = self.popen.poll()
        return "" if code is None else f"the keeper saw it leave with {code}"

    def stderr_tail(self) -> str:
        if self.popen.poll() is None or self.popen.stderr is None:
            return ""
        return self.popen.stderr.read().decode()


def engine_file(tmp_path: Path) -> Path:
    path = tmp_path / "told.py"
    path.write_text(ENGINE)
    return path


def test_an_injected_starter_runs_the_engine_and_its_own_words_explain_its_end(
    tmp_path: Path,
) -> None:
    started: list[Narrated] = []

    def start() -> Narrated:
        started.append(Narrated([sys.executable, str(engine_file(tmp_path))]))
        return started[-1]

    engine = ProtocolEngine(start, time.monotonic, what="engine 'told.py'")
    assert isinstance(started[0], Explained)
    assert engine.identity.name == "Told"
    game = get_game("checkers")
    bot = ExternalBot(engine, game, 1.0, 0, 0)
    with pytest.raises(EngineError) as failure:
        bot.choose(game.initial_state(), None, None)
    words = str(failure.value)
    assert "engine 'told.py' ended: the keeper saw it leave with 7" in words
    assert "it wrote on stderr: 'first words' / 'last words'" in words
    assert len(started) == 1


def test_a_plain_popen_starter_is_what_an_argument_list_gets(tmp_path: Path) -> None:
    argv = [sys.executable, str(engine_file(tmp_path))]
    for command in (argv, popen_starter(argv, keep_stderr=True)):
        child = ChildProcess(command, time.monotonic, what="engine", keep_stderr=True)
        child.send("arena 1")
        assert child.read_line(starting=True) == "id name Told"
        assert child.read_line(starting=True) == "arenaok 1"
        child.send("go")
        with pytest.raises(EngineError, match=r"exit status 7\).*'last words'"):
            child.read_line(starting=True)


def test_a_starter_that_cannot_start_is_refused_with_its_words() -> None:
    def start() -> subprocess.Popen[bytes]:
        raise OSError("the sandbox could not start: no room")

    with pytest.raises(EngineError, match="cannot start engine: the sandbox could not start"):
        ChildProcess(start, time.monotonic, what="engine")
