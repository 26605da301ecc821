"""Shared test fixtures: where ../shared lives, and skipping when its data is absent."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"


def shared_file(relative: str) -> Path:
    """Return the path of a file under ../shared, skipping the test when it is absent."""
    path = SHARED / relative
    if not path.is_file():
        pytest.skip(f"{path} is absent (shared data lives beside the repository)")
    return path
