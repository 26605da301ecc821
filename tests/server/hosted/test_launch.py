"""The launcher starts hosted programs in the process's compute slots: a program holds its slot
(and its uid) until it closes, and a start that finds no slot fails saying why."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from bots.programs.child import EngineError
from games import get_game
from sandbox import can_isolate, sandbox_support
from server.hosted.files import VersionFiles
from server.hosted.launch import Launcher
from server.hosted.service import RunLimits
from server.limits.slots import ComputeSlots, Split
from server.settings import Settings

ROOT = Path(__file__).resolve().parents[3]
PLUGIN = ROOT / "examples" / "plugins" / "first_win.py"
UID_BASE = int(os.environ.get("ARENA_GRADER_UID_BASE", "100000")) + 700
"""Uids of this test's own, apart from the other tests' sandboxes."""
LIMITS = RunLimits(memory_mb=256, processes=8, move_seconds=10.0, cpu_seconds=20)
TICTACTOE = get_game("tictactoe")

pytestmark = [
    pytest.mark.skipif(not can_isolate(), reason=f"no sandbox here: {sandbox_support().reason}"),
    pytest.mark.skipif(not os.path.exists("/usr/bin/python3"), reason="no /usr/bin/python3"),
]


@pytest.fixture
def version(tmp_path: Path) -> VersionFiles:
    files = tmp_path / "files"
    files.mkdir()
    shutil.copy(PLUGIN, files / "bot.py")
    return VersionFiles(files, "plugin", "bot.py", "tictactoe")


def settings(**values: object) -> Settings:
    return Settings(
        database_url="sqlite+aiosqlite:///:memory:",
        hosted_uid_base=UID_BASE,
        hosted_max_running=1,
        compute_hosted_wait_s=0.0,
        **values,
    )


def test_a_program_holds_its_slot_until_it_closes(version: VersionFiles) -> None:
    split = Split(slots=3, grading_reserved=1, hosted_reserved=1, grading_max=1, hosted_max=2)
    slots = ComputeSlots(split)
    launcher = Launcher(settings(), slots)
    first = launcher(version, TICTACTOE, LIMITS)
    second = launcher(version, TICTACTOE, LIMITS)
    try:
        assert slots.held("hosted") == 2
        assert first.engine_name == "FirstWin 1.0"
        assert first.choose(TICTACTOE.initial_state(), None, None).move is not None
        with pytest.raises(EngineError) as refused:
            launcher(version, TICTACTOE, LIMITS)
        assert str(refused.value) == (
            "the bot was not started: no compute slot came free on this server within 0 s: "
            "hosted holds all 2 slots it may"
        )
        assert slots.try_take("grading")  # grading's reserve is still free
        slots.give_back("grading")
    finally:
        first.close()
        first.close()  # a second close gives nothing back twice
    assert slots.held("hosted") == 1
    third = launcher(version, TICTACTOE, LIMITS)  # the slot and the uid given back serve again
    third.close()
    second.close()
    assert slots.held("hosted") == 0


def test_a_program_that_does_not_start_gives_its_slot_back(tmp_path: Path) -> None:
    files = tmp_path / "broken"
    files.mkdir()
    (files / "bot.py").write_text("raise SystemExit('no engine here')\n", encoding="utf-8")
    split = Split(slots=2, grading_reserved=1, hosted_reserved=1, grading_max=1, hosted_max=1)
    slots = ComputeSlots(split)
    launcher = Launcher(settings(), slots)
    for _ in range(2):  # the second would find no slot had the first kept it
        with pytest.raises(EngineError) as failed:
            launcher(VersionFiles(files, "engine", "bot.py", "tictactoe"), TICTACTOE, LIMITS)
        assert "no compute slot" not in str(failed.value)
        assert slots.held("hosted") == 0


def test_a_flood_of_grading_leaves_hosted_bots_their_reserve(version: VersionFiles) -> None:
    split = Split(slots=4, grading_reserved=1, hosted_reserved=1, grading_max=3, hosted_max=3)
    slots = ComputeSlots(split)
    gradings = 0
    while slots.try_take("grading"):  # every grading worker busy
        gradings += 1
    assert gradings == 3  # every slot but hosted bots' reserve
    launcher = Launcher(settings(), slots)
    bot = launcher(version, TICTACTOE, LIMITS)  # starts at once, in the reserve
    try:
        assert bot.choose(TICTACTOE.initial_state(), None, None).move is not None
        with pytest.raises(EngineError, match="hosted holds 1 and grading 3 of the 4 slots"):
            launcher(version, TICTACTOE, LIMITS)
    finally:
        bot.close()
    assert slots.held("hosted") == 0
