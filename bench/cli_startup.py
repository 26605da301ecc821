"""Start-up time of the `arena` command, against a bare Typer command as the peer.

Usage:
    python bench/cli_startup.py [--runs 15] [--json] [--check-target]

Runs each command `--runs` times as a fresh process (the venv's `arena` console script) and
prints the median and best wall time of each, and the ratio to the peer: a one-command Typer
app that imports nothing else, run the same way with the same interpreter. That peer is the
floor any Typer CLI pays (interpreter start, Typer, Rich); `python -c pass` is printed too.

The target (issue 11) is `arena --help`, `arena games` and `arena perft checkers 1` each done
within 0.3 s (median); `--check-target` makes a miss exit with status 2.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import machine_info

TARGET_SECONDS = 0.3
COMMANDS: tuple[tuple[str, ...], ...] = (
    ("--help",),
    ("games",),
    ("perft", "checkers", "1"),
    ("bots",),
    ("serve", "--help"),
)
"""The commands measured; the first three have the 0.3 s target."""
TARGETED = 3

PEER = '''
import typer

app = typer.Typer(add_completion=False)


@app.command()
def hello(name: str = "world") -> None:
    """Say hello."""
    typer.echo(f"hello {name}")


app()
'''


def time_command(argv: list[str], runs: int) -> list[float]:
    """Return the wall times of `runs` fresh runs of `argv` (output discarded; must exit 0)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return times


def summary(times: list[float]) -> dict[str, float]:
    """Return the median and best of `times`, in seconds."""
    return {"median": statistics.median(times), "best": min(times)}


def main() -> int:
    """Measure, print, and check the target if asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--check-target", action="store_true")
    args = parser.parse_args()

    arena = shutil.which("arena", path=str(Path(sys.executable).parent))
    if arena is None:
        print("the arena console script is not installed next to this Python", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as folder:
        peer_file = Path(folder) / "peer.py"
        peer_file.write_text(PEER, encoding="utf-8")
        # Warm the file cache once before timing anything.
        time_command([sys.executable, str(peer_file), "--help"], 1)
        time_command([arena, "--help"], 1)
        python = summary(time_command([sys.executable, "-c", "pass"], args.runs))
        peer = summary(time_command([sys.executable, str(peer_file), "--help"], args.runs))
        rows = []
        for command in COMMANDS:
            measured = summary(time_command([arena, *command], args.runs))
            rows.append(
                {
                    "command": "arena " + " ".join(command),
                    **measured,
                    "ratio_to_peer": measured["median"] / peer["median"],
                }
            )
    missed = [row["command"] for row in rows[:TARGETED] if row["median"] > TARGET_SECONDS]
    result: dict[str, Any] = {
        "python_c_pass": python,
        "peer_bare_typer_help": peer,
        "arena": rows,
        "target_seconds": TARGET_SECONDS,
        "target_missed": missed,
        "machine": machine_info(),
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"{'command':32} {'median':>8} {'best':>8} {'x peer':>7}")
        print(f"{'python -c pass':32} {python['median']:8.3f} {python['best']:8.3f}")
        print(f"{'peer: bare Typer --help':32} {peer['median']:8.3f} {peer['best']:8.3f} {1:7.2f}")
        for row in rows:
            print(
                f"{row['command']:32} {row['median']:8.3f} {row['best']:8.3f} "
                f"{row['ratio_to_peer']:7.2f}"
            )
        verdict = "met" if not missed else f"missed by {', '.join(missed)}"
        print(f"target: the first {TARGETED} within {TARGET_SECONDS} s (median): {verdict}")
    return 2 if args.check_target and missed else 0


if __name__ == "__main__":
    sys.exit(main())
