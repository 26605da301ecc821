"""The suite-file envelope: format and version checked, clear errors, private files 0600."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from autograder.suite_file import read_suite_json, write_suite_json


class BadSuiteError(Exception):
    pass


def read(path: Path) -> dict[str, object]:
    return read_suite_json(
        path, format_name="f", version=1, kind="agent suite", error=BadSuiteError
    )


@pytest.mark.parametrize("public", [True, False])
def test_a_suite_file_round_trips_with_its_mode(tmp_path: Path, public: bool) -> None:
    path = tmp_path / "suite.json"
    path.write_text("{}")
    path.chmod(0o644)
    write_suite_json(path, {"format": "f", "version": 1, "x": [1, 2]}, public=public)
    assert read(path) == {"format": "f", "version": 1, "x": [1, 2]}
    assert stat.S_IMODE(path.stat().st_mode) == (0o644 if public else 0o600)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (None, "cannot read the agent suite"),
        ("{not json", "is not a JSON agent suite"),
        ('{"format": "g", "version": 1}', 'is not an agent suite: expected "format": "f"'),
        ("[1]", "is not an agent suite"),
        ('{"format": "f", "version": 2}', "unsupported suite version 2"),
    ],
)
def test_a_bad_suite_file_names_the_file_and_the_problem(
    tmp_path: Path, text: str | None, words: str
) -> None:
    path = tmp_path / "suite.json"
    if text is not None:
        path.write_text(text)
    with pytest.raises(BadSuiteError) as caught:
        read(path)
    assert words in str(caught.value) and str(path) in str(caught.value)
