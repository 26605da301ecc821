"""Refusing hostile client messages: time grows linearly with their length.

    python bench/protocol.py [--repeat 5] [--json]

A client message that is not valid JSON is diagnosed by `protocol.messages` before it is
answered `BAD_MESSAGE`: its nesting depth is scanned first (json.loads recurses once per level).
The hostile case for that scan is an unclosed string full of escaped quotes, `"\\"\\"\\"...`: a
string pattern that needs its closing quote fails at every quote and starts again from the next
one, in quadratic time. The peer is Python's own `json.loads` refusing the same text, in the
same run. Each text is refused `--repeat` times; the best time is shown, and how much it grows
when the text doubles (2 is linear, 4 quadratic). Target: growth at most 2.5 per doubling, and
under 50 ms at 32,000 escaped quotes (the largest a message can hold).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO_ROOT))

from machine import describe, machine_info  # noqa: E402 - bench/ is put on the path above

from protocol.errors import ProtocolError  # noqa: E402
from protocol.messages import parse_client_message  # noqa: E402

SIZES = (8_000, 16_000, 32_000)
"""Escaped quotes in the unclosed string (two bytes each: the largest is within the 64 KiB a
message may have)."""
GROWTH_TARGET = 2.5
LARGEST_TARGET_MS = 50.0


def best_ms(repeat: int, refuse: Callable[[str], None], text: str) -> float:
    """Return the best time in milliseconds of `repeat` refusals of `text`."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        refuse(text)
        best = min(best, time.perf_counter() - start)
    return best * 1000


def arena(text: str) -> None:
    try:
        parse_client_message(text)
    except ProtocolError as error:
        assert error.code == "BAD_MESSAGE", error
    else:
        raise AssertionError("the message was accepted")


def peer(text: str) -> None:
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return
    raise AssertionError("the text was accepted")


def measure(repeat: int) -> dict[str, Any]:
    """Return the best times per size for Arena and the peer, and Arena's growth."""
    rows = []
    for size in SIZES:
        text = '"' + '\\"' * size
        rows.append(
            {
                "escaped_quotes": size,
                "arena_ms": round(best_ms(repeat, arena, text), 3),
                "peer_ms": round(best_ms(repeat, peer, text), 3),
            }
        )
    growth = [
        later["arena_ms"] / earlier["arena_ms"] for earlier, later in itertools.pairwise(rows)
    ]
    return {
        "rows": rows,
        "arena_growth_per_doubling": [round(g, 2) for g in growth],
        "target_met": max(growth) <= GROWTH_TARGET and rows[-1]["arena_ms"] <= LARGEST_TARGET_MS,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the report; exit 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    report: dict[str, Any] = {"machine": machine_info(), **measure(args.repeat)}
    report["load_average"] = [round(x, 2) for x in (*load_before, *os.getloadavg())]
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print("Refusing an unclosed string of escaped quotes (best of each)")
    print(describe(report["machine"]))
    load = report["load_average"]
    print(
        f"  load average (1, 5, 15 min) before: {load[0]}, {load[1]}, {load[2]}; after: "
        f"{load[3]}, {load[4]}, {load[5]}"
    )
    for row in report["rows"]:
        print(
            f"  {row['escaped_quotes']:>7,} escaped quotes: arena {row['arena_ms']:8.3f} ms, "
            f"json.loads {row['peer_ms']:8.3f} ms"
        )
    growth = ", ".join(f"{g:g}" for g in report["arena_growth_per_doubling"])
    met = "met" if report["target_met"] else "NOT met"
    print(
        f"  arena's growth per doubling: {growth} (target <= {GROWTH_TARGET:g}, and "
        f"<= {LARGEST_TARGET_MS:g} ms at {SIZES[-1]:,}: {met})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
