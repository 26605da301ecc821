"""Prints to stdout and returns things that are not moves."""

import sys


def select_move(
    board: list[str], player: str, depth_limit: int | None, time_limit: float
) -> object:
    print('{"id": 0, "ok": true, "result": [[5, 0], [4, 1]]}')
    sys.stdout.flush()
    return {"move": "up"}, object()
