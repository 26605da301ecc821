"""The house engine's search: compiled core against the Python engine, same run.

    python bench/engine.py [--repeat 3] [--games checkers,connect4] [--json]

For each game's start position and a middle-game position, with the game's evaluation
(checkers: the full `positional`; Connect Four: its default, `threats`), table and ordering on
(`alphabeta:depth=N`'s search):

1. both engines search to a depth where the Python engine takes a few seconds; they must
   agree node for node (score, move, principal variation, every count: the script exits 1
   otherwise), and the ratio of their nodes per second is printed;
2. the compiled search alone searches deeper (a second or more), its figure at a depth
   where the start-up of a search does not count. Target (checkers): at least 5 M nodes/s.

Each engine is fresh for each search (an empty table). Times are the best of `--repeat` runs,
wall clock and CPU time of this process (on a loaded machine the CPU time is the steadier);
the machine's load average is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO_ROOT))

from machine import describe, machine_info  # noqa: E402 - bench/ is put on the path above

from bots.engine.compiled import (  # noqa: E402
    CompiledConnectFourEngine,
    CompiledEngine,
    compiled_engine,
)
from bots.engine.search import AlphaBetaEngine  # noqa: E402
from bots.evaluation.knowledge import knowledge_for  # noqa: E402
from bots.result import SearchResult  # noqa: E402
from games import get_game  # noqa: E402

TARGET_NPS = 5e6
POSITIONS = {
    "checkers": {
        "start": ("start", 10, 16),
        # Eleven men a side, the centre contested, exchanges in reach.
        "middle game": (
            "B:W15,18,19,21,23,24,26,27,28,30,31:B1,2,3,5,6,9,10,11,12,14,16",
            14,
            19,
        ),
    },
    "connect4": {
        "start": ("", 9, 13),
        # Four stones in the centre columns: threats begin to form.
        "opening": ("4453", 7, 12),
    },
}
"""Per game, name: (position, depth of both engines, depth of the compiled engine alone)."""
EVALUATIONS = {"checkers": "positional", "connect4": "threats"}


def timed(run: Any, repeat: int) -> tuple[float, float, SearchResult]:
    """Return the best wall and CPU seconds of `repeat` runs of `run()` and its last result."""
    wall = cpu = float("inf")
    result = None
    for _ in range(repeat):
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        result = run()
        wall = min(wall, time.perf_counter() - start_wall)
        cpu = min(cpu, time.process_time() - start_cpu)
    assert result is not None
    return wall, cpu, result


def row(wall: float, cpu: float, result: SearchResult) -> dict[str, Any]:
    nodes = result.stats.nodes
    return {
        "nodes": nodes,
        "seconds": round(wall, 4),
        "cpu_seconds": round(cpu, 4),
        "nps": round(nodes / wall),
        "nps_cpu": round(nodes / cpu) if cpu > 0 else None,
        "move": str(result.move),
        "score": result.score,
    }


def summary(result: SearchResult) -> tuple[Any, ...]:
    s = result.stats
    return (result.score, str(result.move), s.pv, s.nodes, s.evaluations, s.tt_hits, s.cutoffs)


def measure(game_name: str, repeat: int) -> dict[str, Any]:
    game = get_game(game_name)
    knowledge = knowledge_for(game)
    function = knowledge.evaluation(EVALUATIONS[game_name]).function

    def compiled() -> CompiledEngine | CompiledConnectFourEngine:
        """A fresh engine whose buffer is allocated and its pages mapped already, as a bot's
        after its first move (the table's pages are the operating system's business)."""
        engine = compiled_engine(knowledge, function)
        assert engine is not None
        engine.buffer[engine.table_start :] = 0  # writes map the zero pages
        return engine

    def searches(state: Any, depth: int) -> Any:
        engines = iter([compiled() for _ in range(repeat)])
        return lambda: next(engines).search(state, depth)

    compiled().search(game.initial_state(), 1)  # load (or compile) the core first
    out: dict[str, Any] = {}
    for name, (text, depth, core_depth) in POSITIONS[game_name].items():
        state = game.parse_position(text)
        python = timed(
            lambda state=state, depth=depth: AlphaBetaEngine(knowledge, function).search(
                state, depth
            ),
            1,
        )
        core = timed(searches(state, depth), repeat)
        deep = timed(searches(state, core_depth), repeat)
        out[name] = {
            "position": game.format_position(state),
            "depth": depth,
            "python": row(*python),
            "compiled": row(*core),
            "identical": summary(python[2]) == summary(core[2]),
            "ratio": round(python[0] / core[0], 1),
            "core_depth": core_depth,
            "compiled_deep": row(*deep),
        }
    return out


def perft_calibration() -> dict[str, Any]:
    """The compiled perft(10) from the start in this run: the machine's speed now, to compare
    with the perft figures of docs/BENCHMARKS.md measured at other loads."""
    from bots.core import load

    load("checkers")
    from bots.core.checkers import perft

    start = get_game("checkers").initial_state()
    perft(start, 8)  # type: ignore[arg-type]
    start_cpu = time.process_time()
    leaves = perft(start, 10)  # type: ignore[arg-type]
    cpu = time.process_time() - start_cpu
    return {
        "leaves": leaves,
        "cpu_seconds": round(cpu, 3),
        "leaves_per_cpu_second": round(leaves / cpu),
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the report; exit 1 if the engines disagree."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each compiled search")
    parser.add_argument(
        "--games", default="checkers,connect4", help="games to measure, comma-separated"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    games = [name for name in args.games.split(",") if name]
    unknown = [name for name in games if name not in POSITIONS]
    if unknown:
        parser.error(f"no positions for {', '.join(unknown)}; games: {', '.join(POSITIONS)}")
    load_before = os.getloadavg()
    report: dict[str, Any] = {
        "machine": machine_info(),
        "games": {name: measure(name, args.repeat) for name in games},
        "perft": perft_calibration(),
    }
    report["load_average"] = [round(x, 2) for x in (*load_before, *os.getloadavg())]
    agree = all(
        p["identical"] for positions in report["games"].values() for p in positions.values()
    )
    if args.json:
        print(json.dumps(report, indent=2))
        return 0 if agree else 1
    print("House engine: compiled core against the Python engine")
    print(describe(report["machine"]))
    for game_name, positions in report["games"].items():
        evaluation = EVALUATIONS[game_name]
        for name, p in positions.items():
            print(
                f"\n{game_name}, {name} ({p['position'] or 'empty board'}), evaluation "
                f"{evaluation}, table and ordering on"
            )
            for label, key, depth in (
                ("python", "python", p["depth"]),
                ("compiled", "compiled", p["depth"]),
                ("compiled", "compiled_deep", p["core_depth"]),
            ):
                r = p[key]
                print(
                    f"  {label:<9} depth {depth:>2} {r['nodes']:>11,} nodes {r['seconds']:8.3f} s "
                    f"{r['nps']:>11,} nodes/s ({r['nps_cpu']:,} per CPU second)  "
                    f"move {r['move']} score {r['score']}"
                )
            same = "identical" if p["identical"] else "DIFFERENT"
            print(f"  same depth: {same} results and counts; compiled {p['ratio']}x faster")
            if game_name == "checkers":
                deep = p["compiled_deep"]["nps"]
                met = "met" if deep >= TARGET_NPS else "NOT met"
                print(f"  compiled nodes/s target >= {TARGET_NPS / 1e6:g} M: {met}")
    perft = report["perft"]
    print(
        f"\ncalibration: compiled perft(10) {perft['leaves_per_cpu_second'] / 1e6:.0f} M leaves "
        "per CPU second in this run"
    )
    load = report["load_average"]
    print(
        f"\nload average (1, 5, 15 min) before: {load[0]}, {load[1]}, {load[2]}; "
        f"after: {load[3]}, {load[4]}, {load[5]}"
    )
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
