"""Host one CheckerBoard-API engine in a child process (standard library only).

bots/programs/cbapi.py runs this file as `python -I -S cbhost.py LIBRARY`: it loads the shared
library with ctypes, writes one JSON line on stdout (`{"name": ...}`, or `{"error": ...}` and
exits), then answers requests, one JSON line each way:

- `{"id": N, "getmove": {"board": [64 ints, board[x][y] at 8x+y], "color": C, "maxtime": T,
  "info": I}}` -> `{"id": N, "board": [...], "result": R, "text": STR, "move": {...}}`, the
  library's `getmove` with the board it wrote back, its return value, its status text and
  its CBmove (`from`, `to`, `path` as [x, y] pairs, `jumps`);
- `{"id": N, "command": TEXT}` -> `{"id": N, "handled": R, "reply": TEXT}`, its
  `enginecommand`;
- `{"stop": N}` sets `*playnow` while request N is searching (no answer).

The engine's own writes to stdout go to /dev/null so that they cannot garble the replies. The
host exits at the end of its input, even while the engine searches.
"""

from __future__ import annotations

import ctypes
import json
import os
import queue
import sys
import threading
from typing import Any

Board = (ctypes.c_int * 8) * 8


class Coor(ctypes.Structure):
    """CheckerBoard's `struct coor`."""

    _fields_ = [("x", ctypes.c_int), ("y", ctypes.c_int)]


class CBMove(ctypes.Structure):
    """CheckerBoard's `struct CBmove`."""

    _fields_ = [
        ("jumps", ctypes.c_int),
        ("newpiece", ctypes.c_int),
        ("oldpiece", ctypes.c_int),
        ("frm", Coor),
        ("to", Coor),
        ("path", Coor * 12),
        ("delete", Coor * 12),
        ("delpiece", ctypes.c_int * 12),
    ]


TEXT_BYTES = 1024
"""The size of getmove's `str` and enginecommand's `reply` in the API."""


def load(path: str) -> tuple[Any, Any]:
    """Return the library's (getmove, enginecommand or None); OSError/AttributeError if not."""
    library = ctypes.CDLL(path)
    getmove = library.getmove
    getmove.restype = ctypes.c_int
    getmove.argtypes = [
        ctypes.POINTER(Board),
        ctypes.c_int,
        ctypes.c_double,
        ctypes.c_char_p,
        ctypes.POINTER(ctypes.c_int),
        ctypes.c_int,
        ctypes.c_int,
        ctypes.POINTER(CBMove),
    ]
    command = getattr(library, "enginecommand", None)
    if command is not None:
        command.restype = ctypes.c_int
        command.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    return getmove, command


def call_getmove(getmove: Any, request: dict[str, Any], playnow: Any) -> dict[str, Any]:
    """Run getmove on the request's board and return what the engine wrote."""
    board = Board()
    cells = request["board"]
    for x in range(8):
        for y in range(8):
            board[x][y] = int(cells[8 * x + y])
    text = ctypes.create_string_buffer(TEXT_BYTES)
    move = CBMove()
    result = getmove(
        ctypes.byref(board),
        int(request["color"]),
        float(request["maxtime"]),
        text,
        ctypes.byref(playnow),
        int(request["info"]),
        0,
        ctypes.byref(move),
    )
    jumps = max(0, min(move.jumps, 12))
    return {
        "board": [board[x][y] for x in range(8) for y in range(8)],
        "result": result,
        "text": text.value.decode("latin-1"),
        "move": {
            "from": [move.frm.x, move.frm.y],
            "to": [move.to.x, move.to.y],
            "jumps": move.jumps,
            "path": [[move.path[i].x, move.path[i].y] for i in range(jumps)],
        },
    }


def call_command(command: Any, text: str) -> dict[str, Any]:
    """Run enginecommand; an engine without it handles nothing."""
    if command is None:
        return {"handled": 0, "reply": "?"}
    request = ctypes.create_string_buffer(text.encode("latin-1")[:255], 256)
    reply = ctypes.create_string_buffer(TEXT_BYTES)
    handled = command(request, reply)
    return {"handled": handled, "reply": reply.value.decode("latin-1")}


def main(path: str) -> int:
    """Serve the library at `path` on stdin/stdout until stdin ends."""
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)
    try:
        getmove, command = load(path)
    except (OSError, AttributeError) as exc:
        replies.write(json.dumps({"error": str(exc)}) + "\n")
        replies.flush()
        return 1
    playnow = ctypes.c_int(0)
    current = [-1]
    requests: queue.Queue[dict[str, Any]] = queue.Queue()

    def read() -> None:
        for line in sys.stdin:
            message = json.loads(line)
            if "stop" in message:
                if message["stop"] == current[0]:
                    playnow.value = 1
            else:
                requests.put(message)
        # The parent is gone or done: end now, even in the middle of a search.
        replies.flush()
        os._exit(0)

    threading.Thread(target=read, daemon=True).start()
    name = call_command(command, "name")
    replies.write(json.dumps({"name": name["reply"] if name["handled"] else None}) + "\n")
    replies.flush()
    while True:
        message = requests.get()
        answer: dict[str, Any] = {"id": message["id"]}
        if "getmove" in message:
            playnow.value = 0
            current[0] = message["id"]
            answer.update(call_getmove(getmove, message["getmove"], playnow))
            current[0] = -1
        else:
            answer.update(call_command(command, str(message["command"])))
        replies.write(json.dumps(answer) + "\n")
        replies.flush()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
