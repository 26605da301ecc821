"""Crash with an exception (exit code 1 and a traceback on stderr)."""


def solve() -> None:
    raise ValueError("no legal move found")


solve()
