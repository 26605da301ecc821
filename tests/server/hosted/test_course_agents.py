"""The grader's gallery of broken course agents, hosted as bots: each plays or fails as it should.

The same files the autograder grades (tests/autograder/agents/) are a class's typical mistakes:
hosted as a player's bot (a `select_move` plug-in in the sandbox), a sound one plays legal moves
and each broken one ends its game with its owner told what it did, in its own words.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from bots.programs.child import EngineError
from games.checkers import CheckersState
from server.hosted.engine import ENTRY, HostedBot, HostedLimits
from tests.server.hosted.test_engine import (  # noqa: F401 (fixtures)
    CHECKERS,
    ROOT,
    SteppingClock,
    bot_dir,
    failure,
    hosted,
    pytestmark,
    start,
)

AGENTS = ROOT / "tests" / "autograder" / "agents"
REFERENCE = ROOT / "autograder" / "reference" / "agent_solution.py"
LIMITS = HostedLimits(move_seconds=5.0)
Clock = Callable[[], float]


def host(
    bots: list[HostedBot], directory: Path, agent: str, clock: Clock = time.monotonic
) -> HostedBot:
    """Host the gallery's `agent` as a bot, with the course's reference beside it."""
    shutil.copy(AGENTS / f"{agent}.py", directory / ENTRY)
    shutil.copy(REFERENCE, directory / "reference.py")
    return start(bots, "plugin", directory, limits=LIMITS, clock=clock)


@pytest.mark.parametrize("agent", ["move_only", "wrong_side"])
def test_sound_but_weak_agents_play_legal_moves(
    hosted: list[HostedBot],  # noqa: F811
    bot_dir: Path,  # noqa: F811
    agent: str,
) -> None:
    bot = host(hosted, bot_dir, agent)
    state = CHECKERS.initial_state()
    for _ in range(6):
        move = bot.choose(state, None, None).move
        assert move in state.legal_moves()
        state = state.apply(move)
        state = state.apply(min(state.legal_moves(), key=str))
    assert isinstance(state, CheckersState)


@pytest.mark.parametrize(
    ("agent", "words"),
    [
        ("crash", "error RuntimeError: not implemented yet"),
        ("garbage", "select_move returned {'move': 'up'}, not a list of (row, column)"),
        ("illegal", "which is no legal move here"),
    ],
)
def test_broken_agents_lose_with_their_owner_told_why(
    hosted: list[HostedBot],  # noqa: F811
    bot_dir: Path,  # noqa: F811
    agent: str,
    words: str,
) -> None:
    assert words in failure(host(hosted, bot_dir, agent))


def test_an_agent_that_never_returns_is_stopped_at_its_move_s_limit(
    hosted: list[HostedBot],  # noqa: F811
    bot_dir: Path,  # noqa: F811
) -> None:
    clock = SteppingClock()
    bot = host(hosted, bot_dir, "infinite_loop", clock=clock)
    clock.step = 0.5
    words = failure(bot)
    assert "did not play within" in words
    assert bot.process.poll() is not None


def test_an_agent_without_select_move_is_refused_at_its_start(
    hosted: list[HostedBot],  # noqa: F811
    bot_dir: Path,  # noqa: F811
) -> None:
    with pytest.raises(EngineError, match="has no select_move function and not one plug-in"):
        host(hosted, bot_dir, "no_function")
