"""Suite files on disk: the JSON envelope shared by the endgame and agent suites.

A suite file is a JSON object with `"format"` (what kind of suite) and `"version"`; each suite
module (autograder.endgame_suite, autograder.agent_suite) reads and checks the rest. A private
suite is written readable by its owner only (0600), a public one 0644.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def read_suite_json(
    path: Path | str, *, format_name: str, version: int, kind: str, error: type[Exception]
) -> dict[str, Any]:
    """Return the object of a suite file of `format_name` and `version`.

    Raises `error` naming the file and the problem: unreadable, not JSON, not a `kind` (another
    format), or another version.
    """
    source = Path(path)
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except OSError as problem:
        raise error(f"cannot read the {kind} {source}: {problem.strerror}") from problem
    except (UnicodeDecodeError, json.JSONDecodeError) as problem:
        raise error(f"{source} is not a JSON {kind}: {problem}") from problem
    if not isinstance(data, dict) or data.get("format") != format_name:
        article = "an" if kind[:1] in "aeiou" else "a"
        raise error(f'{source} is not {article} {kind}: expected "format": "{format_name}"')
    if data.get("version") != version:
        raise error(f"{source}: unsupported suite version {data.get('version')!r}")
    return data


def write_suite_json(path: Path | str, data: dict[str, Any], *, public: bool) -> None:
    """Write a suite file: 0644 when `public`, else created (or tightened to) 0600."""
    mode = 0o644 if public else 0o600
    descriptor = os.open(Path(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        os.fchmod(descriptor, mode)
        handle.write(json.dumps(data, indent=2) + "\n")
