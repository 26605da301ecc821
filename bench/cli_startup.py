"""Start-up time of the `arena` command, against a bare Typer command as the peer.

Usage:
    python bench/cli_startup.py [--runs 15] [--json] [--check-target]

Runs each command `--runs` times as a fresh process (the venv's `arena` console script) and
prints the median and best wall time of each, and the ratio to the peer: a one-command Typer
app that imports nothing else, run the same way with the same interpreter, once for `--help`
and once parsing one option (Typer converts parameter values with pydantic, which it imports
then). That peer is the floor any Typer CLI pays; `python -c pass` is printed too.

The target is `arena --help`, `arena games` and `arena perft checkers 1` each done
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


def time_once(argv: list[str]) -> float:
    """Return the wall time of one fresh run of `argv` (output discarded; it must exit 0)."""
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def time_interleaved(commands: dict[str, list[str]], runs: int) -> dict[str, list[float]]:
    """Return each command's wall times over `runs` rounds, every command once per round.

    Interleaving spreads the machine's drift (frequency, other tenants) over every command
    alike, so the ratios hold even when the absolute times wander.
    """
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, argv in commands.items():
            times[name].append(time_once(argv))
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
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "peer: bare Typer --help": [sys.executable, str(peer_file), "--help"],
            "peer: bare Typer --name arena": [sys.executable, str(peer_file), "--name", "arena"],
        }
        for command in COMMANDS:
            commands["arena " + " ".join(command)] = [arena, *command]
        time_interleaved(commands, 1)  # warm the file cache
        measured = {name: summary(t) for name, t in time_interleaved(commands, args.runs).items()}
    peer = measured["peer: bare Typer --help"]
    rows = [
        {"command": name, **figures, "ratio_to_peer": figures["median"] / peer["median"]}
        for name, figures in measured.items()
    ]
    arena_rows = [row for row in rows if row["command"].startswith("arena ")]
    missed = [row["command"] for row in arena_rows[:TARGETED] if row["median"] > TARGET_SECONDS]
    result: dict[str, Any] = {
        "runs": args.runs,
        "commands": rows,
        "target_seconds": TARGET_SECONDS,
        "target_missed": missed,
        "machine": machine_info(),
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"{'command':32} {'median':>8} {'best':>8} {'x peer':>7}")
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
