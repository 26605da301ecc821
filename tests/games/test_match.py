"""The values of a match: time controls and match set-ups check themselves."""

from __future__ import annotations

from typing import Any

import pytest

from games import get_game
from games.match import MatchConfig, TimeControl

CHECKERS = get_game("checkers")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"base_ms": 0}, "base_ms must be positive"),
        ({"base_ms": 1.5}, "base_ms must be an integer"),
        ({"base_ms": 1, "increment_ms": -1}, "increment_ms must be 0 or more"),
        ({"base_ms": 1, "move_cap_ms": 0}, "move_cap_ms must be a positive integer"),
    ],
)
def test_time_control_validation(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TimeControl(**kwargs)


def test_time_control_parse() -> None:
    assert TimeControl.parse("5+2") == TimeControl(300_000, 2_000)
    assert TimeControl.parse(" 0.5 + 0.1 ", 250) == TimeControl(30_000, 100, 250)
    with pytest.raises(ValueError, match="expected minutes\\+increment"):
        TimeControl.parse("5 minutes")


def test_match_config_validation() -> None:
    with pytest.raises(ValueError, match="max_illegal_moves must be at least 1"):
        MatchConfig(CHECKERS, max_illegal_moves=0)
    with pytest.raises(ValueError, match="the start state follows"):
        MatchConfig(CHECKERS, get_game("nim").initial_state())
