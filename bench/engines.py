"""The engine protocol's overhead: one move's round trip through a child process.

    python bench/engines.py [--moves 2000] [--rounds 5] [--json]

A bot run as an engine (`cmd:`, docs/ENGINES.md) or a Python plug-in (`py:`, bots/plugin.py)
gets each move by writing `position` and `go` to its child process and reading `info` and
`bestmove` back. This measures that round trip with engines that do nothing (they answer
`bestmove 4` at once, in Connect Four's start position), against the peer in the same run:
Arena's built-in `random` bot called in-process, the least a move can cost. Per move, the
median over `--rounds` rounds of `--moves` moves; the ratio is each against the built-in.
The C engine is compiled with gcc when there is one.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO_ROOT))

from machine import describe, machine_info  # noqa: E402 - bench/ is put on the path above

from bots.spec import create_bot  # noqa: E402
from games import get_game  # noqa: E402

PYTHON_ENGINE = """
import sys
for line in sys.stdin:
    word = line.split()[0] if line.split() else ""
    if word == "arena":
        print("id name Idle", "arenaok 1", sep="\\n", flush=True)
    elif word == "isready":
        print("readyok", flush=True)
    elif word == "go":
        print("info depth 1 nodes 1", "bestmove 4", sep="\\n", flush=True)
    elif word == "quit":
        break
"""

C_ENGINE = r"""
#include <stdio.h>
#include <string.h>
int main(void) {
    char line[65536];
    while (fgets(line, sizeof line, stdin)) {
        if (!strncmp(line, "arena", 5)) printf("id name Idle\narenaok 1\n");
        else if (!strncmp(line, "isready", 7)) printf("readyok\n");
        else if (!strncmp(line, "go", 2)) printf("info depth 1 nodes 1\nbestmove 4\n");
        else if (!strncmp(line, "quit", 4)) break;
        fflush(stdout);
    }
    return 0;
}
"""

PLUGIN = """
class Idle:
    def choose(self, state, limits):
        return "4"
"""


def per_move_us(spec: str, moves: int, rounds: int) -> float:
    """Median over rounds of the mean time of one move, in microseconds."""
    game = get_game("connect4")
    state = game.initial_state()
    bot = create_bot(spec, game)
    for _ in range(20):
        bot.choose(state)
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(moves):
            bot.choose(state)
        times.append((time.perf_counter() - start) / moves * 1e6)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--moves", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        where = Path(scratch)
        (where / "idle.py").write_text(textwrap.dedent(PYTHON_ENGINE))
        (where / "idle_plugin.py").write_text(textwrap.dedent(PLUGIN))
        specs = {
            "built-in random (in-process)": "random",
            "cmd: idle engine in Python": f"cmd:{sys.executable} {where / 'idle.py'}:time=0",
            "py: idle plug-in": f"py:{where / 'idle_plugin.py'}:Idle:time=0",
        }
        gcc = shutil.which("gcc")
        if gcc is not None:
            (where / "idle.c").write_text(C_ENGINE)
            subprocess.run([gcc, "-O2", "-o", where / "idle", where / "idle.c"], check=True)
            specs["cmd: idle engine in C"] = f"cmd:{where / 'idle'}:time=0"
        figures = {name: per_move_us(spec, args.moves, args.rounds) for name, spec in specs.items()}
    peer = figures["built-in random (in-process)"]
    if args.json:
        print(json.dumps({"machine": machine_info(), "per_move_us": figures}, indent=2))
        return
    print(describe(machine_info()))
    print(f"one move, Connect Four start, median of {args.rounds} x {args.moves} moves:")
    for name, micros in figures.items():
        print(f"  {name:32} {micros:9.1f} us   x{micros / peer:7.1f} the built-in")


if __name__ == "__main__":
    main()
