"""The move time budget every clock user shares (client, house bots, tournaments)."""

from __future__ import annotations

import pytest

from bots.engine.timing import time_budget


def test_a_share_of_the_clock_plus_most_of_the_increment() -> None:
    assert time_budget(60_000, 1_000, margin_ms=0) == pytest.approx(3.8)


def test_capped_by_the_move_cap_and_by_the_time_left() -> None:
    assert time_budget(600_000, 0, 2_000, margin_ms=100) == pytest.approx(1.9)
    # Increment would allow 1.6 s but only 300 ms are left: keep 100 ms for latency.
    assert time_budget(300, 2_000, margin_ms=100) == pytest.approx(0.2)


def test_never_below_ten_milliseconds() -> None:
    assert time_budget(5, 0) == pytest.approx(0.01)
