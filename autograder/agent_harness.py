"""Call a student's `agent.select_move` for each request; run INSIDE the sandbox (stdlib only).

The grader (autograder/agent.py) copies this file next to the student's agent.py as
`_arena_agent_harness.py` and runs it with /usr/bin/python3. It cannot import Arena.

Protocol. stdin: one JSON array of requests ``{"id", "board" (8 strings), "player",
"depth_limit", "time_limit"}``. stdout: JSON lines, each flushed at once so that the lines of
finished calls survive if the sandbox later kills the program:

- ``{"import_error": TEXT}`` when agent.py cannot be imported or has no callable select_move
  (nothing else follows), else ``{"ready": true}``;
- then per request, in order, ``{"id", "ok": true, "result": VALUE, "elapsed": SECONDS}`` or
  ``{"id", "ok": false, "error": TEXT, "elapsed": SECONDS}`` (the call raised, even SystemExit).

VALUE is the returned object made plain: lists and tuples become lists; ints, floats, strings,
booleans and None stay; anything else becomes ``{"unsupported": TYPE NAME}``. Only exact
built-in types are read, so no student method runs during the conversion. The harness enforces
no time limit: the sandbox does, and the grader compares each `elapsed` with the time limit.
File descriptor 1 is moved to stderr before agent.py is imported, so whatever the student
prints cannot corrupt the protocol.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from typing import Any

MAX_ITEMS = 64
MAX_DEPTH = 6
MAX_TEXT = 200
MAX_INT = 10**18
MAX_TRACE = 2000


def plain(value: Any, depth: int = 0) -> Any:
    """Return `value` as JSON-ready data, bounded in size and depth."""
    kind = type(value)
    if value is None or kind is bool or kind is float:
        return value
    if kind is int:
        return value if -MAX_INT <= value <= MAX_INT else {"unsupported": "int (too large)"}
    if kind is str:
        return value[:MAX_TEXT]
    if kind is list or kind is tuple:
        if depth >= MAX_DEPTH:
            return {"unsupported": "nesting too deep"}
        if len(value) > MAX_ITEMS:
            return {"unsupported": f"{kind.__name__} of {len(value)} items"}
        return [plain(item, depth + 1) for item in value]
    return {"unsupported": kind.__name__}


def trace() -> str:
    """Return the current exception's traceback, its last lines first kept."""
    text = traceback.format_exc()
    return text[-MAX_TRACE:]


def main() -> None:
    """Read the requests, import agent, answer every request."""
    requests = json.loads(sys.stdin.buffer.read() or b"[]")
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def emit(message: dict[str, Any]) -> None:
        protocol.write(json.dumps(message) + "\n")
        protocol.flush()

    try:
        import agent  # type: ignore[import-not-found]  # noqa: PLC0415 - the student's module, after fd 1 moved

        select_move = agent.select_move
        if not callable(select_move):
            raise TypeError("agent.select_move is not a function")
    except BaseException:  # noqa: BLE001 - any failure of student code is reported
        emit({"import_error": trace()})
        return
    emit({"ready": True})
    for request in requests:
        board = list(request["board"])
        start = time.perf_counter()
        try:
            result = select_move(
                board, request["player"], request["depth_limit"], request["time_limit"]
            )
        except BaseException:  # noqa: BLE001 - any failure of student code is reported
            elapsed = time.perf_counter() - start
            emit({"id": request["id"], "ok": False, "error": trace(), "elapsed": elapsed})
            continue
        elapsed = time.perf_counter() - start
        emit({"id": request["id"], "ok": True, "result": plain(result), "elapsed": elapsed})


if __name__ == "__main__":
    main()
