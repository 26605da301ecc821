"""Time to the first move of the compiled checkers engine, from a warm cache, as a fresh process.

Usage:
    python bench/first_move.py [--runs 9] [--json]

Runs `arena analyse checkers --bot id:time=0.1` (loading the compiled search from numba's
cache, allocating its table, searching 0.1 s) as a fresh process `--runs` times and prints
the median wall time and CPU time (user + system, of the child: it does not count the time
spent waiting for a CPU on a loaded machine). The peer is the same command on tic-tac-toe,
whose `id` is the Python engine: the difference is what loading the core costs. Each is run
twice: as installed, and with SciPy hidden, as on a user's machine (numba imports SciPy
when it is installed; only the test-time peers bring it here).

The target: at most 1 s to the first move with a warm cache. The first run compiles the core
if this machine's cache is cold; it is not counted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import machine_info

TARGET_SECONDS = 1.0
RUN_CLI = "import sys; {hide}from cli.main import main; sys.argv[0] = 'arena'; main()"
"""Runs the `arena` command line as its console script does."""
HIDE_SCIPY = "sys.modules['scipy'] = None; "
"""Makes `import scipy` fail, as where SciPy is not installed."""


def run_once(argv: list[str]) -> tuple[float, float]:
    """Return the wall time and the child's CPU time of one run of `argv` (it must exit 0)."""
    before = os.times()
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return wall, cpu


def main() -> int:
    """Measure and print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error(f"--runs must be at least 1, not {args.runs}")

    python = sys.executable
    commands: dict[str, list[str]] = {}
    for game in ("checkers", "tictactoe"):
        analyse = ["analyse", game, "--bot", "id:time=0.1"]
        commands[f"{game}, as installed"] = [python, "-c", RUN_CLI.format(hide=""), *analyse]
        hidden = RUN_CLI.format(hide=HIDE_SCIPY)
        commands[f"{game}, SciPy hidden"] = [python, "-c", hidden, *analyse]
    for argv in commands.values():
        run_once(argv)  # compiles on a cold cache; warms the file cache
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    with open("/proc/loadavg", encoding="utf-8") as handle:
        load_before = handle.read().split()[0]
    for _ in range(args.runs):
        for name, argv in commands.items():  # interleaved: the machine's drift hits all alike
            times[name].append(run_once(argv))
    with open("/proc/loadavg", encoding="utf-8") as handle:
        load_after = handle.read().split()[0]
    rows = [
        {
            "command": name,
            "wall_median": statistics.median(wall for wall, _ in runs),
            "cpu_median": statistics.median(cpu for _, cpu in runs),
        }
        for name, runs in times.items()
    ]
    result: dict[str, Any] = {
        "runs": args.runs,
        "rows": rows,
        "target_seconds": TARGET_SECONDS,
        "load_average": [load_before, load_after],
        "machine": machine_info(),
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{'arena analyse GAME --bot id:time=0.1':40} {'wall':>7} {'cpu':>7}")
    for row in rows:
        print(f"{row['command']:40} {row['wall_median']:7.3f} {row['cpu_median']:7.3f}")
    by_name = {row["command"]: row for row in rows}
    for variant in ("as installed", "SciPy hidden"):
        cost = by_name[f"checkers, {variant}"]["cpu_median"]
        peer = by_name[f"tictactoe, {variant}"]["cpu_median"]
        print(f"{variant}: the core costs {cost - peer:.3f} s of CPU ({cost / peer:.2f}x the peer)")
    print(f"load average {load_before} before, {load_after} after; target {TARGET_SECONDS} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
