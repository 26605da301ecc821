"""Checkers perft benchmark: Arena against open-spiel's checkers, both driven from Python,
and Arena's compiled core (bots/core) against Arena's pure-Python perft.

Usage:
    python bench/perft.py [--depth 8] [--core-depth 11] [--repeat N] [--json]
                          [--peer-only | --arena-only] [--check-target] [--compile-times]

Counts perft(DEPTH) from the standard start position (a whole multi-jump is one move) with
Arena (`perft(get_game("checkers").initial_state(), depth)`) and, in the same run, with
open-spiel's checkers (`pyspiel`, C++ rules called from Python), checks both against the
published count (../shared/oracles/checkers.md: perft(8) = 845,931), and prints the best time
of each over `--repeat` runs, nodes per second and the ratio arena_time / openspiel_time.
The target is a ratio of at most 0.25; `--check-target` makes a miss exit with status 2.

The open-spiel traversal is as fast as is fair from Python: depth-first with `state.child`
(clone + apply; `undo_action` does not restore open-spiel's no-capture counter, so it is not
used). A multi-jump is several open-spiel actions by the same player, so a child whose
`current_player()` is still the mover continues the same ply. At the last ply nothing is
applied except capture actions, whose continuations must be followed to count whole moves:
plain moves are counted straight from `legal_actions()`.

The compiled core (`bots.core.checkers.perft`, numba) counts the same depth in the same run,
and then `--core-depth` (default 11, the deepest published count) on its own: its leaves per
second there are its figure, the target being 150 M. Times are wall-clock and CPU time of this
process (on a loaded machine the CPU time is the steadier); the report gives medians.
`--compile-times` also times, each in a fresh interpreter, loading the core with an empty
cache directory (a compilation) and again with that cache (a load).

open-spiel is optional (`pip install open_spiel`): without it the script says so and measures
Arena alone. `--peer-only` measures open-spiel alone (e.g. before Arena's checkers exists).
Exit status: 0 when every count matches, 1 on a wrong count or a requested side missing,
2 when `--check-target` is given and the ratio misses the target.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import machine_info  # noqa: E402 - bench/ is put on the path just above

# Published perft counts from the start position (checkers.md; OEIS A133046).
PUBLISHED: dict[int, int] = {
    1: 7,
    2: 49,
    3: 302,
    4: 1_469,
    5: 7_361,
    6: 36_768,
    7: 179_740,
    8: 845_931,
    9: 3_963_680,
    10: 18_391_564,
    11: 85_242_128,
}
TARGET_RATIO = 0.25
CORE_TARGET = 150e6
"""Leaves per second the compiled core is to count at --core-depth."""


# --------------------------------------------------------------------------------------------
# The two perft implementations
# --------------------------------------------------------------------------------------------


def load_arena() -> Callable[[int], int]:
    """Return depth -> Arena's perft from the checkers start position.

    Raises ImportError (or another error from Arena) when Arena's checkers is unavailable.
    """
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    from games import get_game, perft

    game = get_game("checkers")

    def run(depth: int) -> int:
        return perft(game.initial_state(), depth)

    return run


def load_arena_state_api() -> Callable[[int], int]:
    """Return depth -> perft through Arena's public State API (what a search sees).

    Informational: legal_moves() and apply_unchecked() on state objects, no fast path.
    """
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    from games import get_game
    from games.perft import perft_generic

    game = get_game("checkers")

    def run(depth: int) -> int:
        return perft_generic(game.initial_state(), depth)

    return run


def load_arena_core() -> Callable[[int], int]:
    """Return depth -> perft by Arena's compiled core (compiled first if this machine has not)."""
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    from bots.core import load
    from games import get_game

    load("checkers", announce=lambda text: print(text, file=sys.stderr, flush=True))
    from bots.core.checkers import perft as core_perft
    from games.checkers import CheckersState

    state = get_game("checkers").initial_state()
    assert isinstance(state, CheckersState)

    def run(depth: int) -> int:
        return core_perft(state, depth)

    run(4)  # the first call of a loaded module links it: not part of any count's time
    return run


LOAD_CORE = (
    "import time; start = time.perf_counter(); from bots.core import load; load('checkers'); "
    "print(time.perf_counter() - start)"
)


def compile_times() -> dict[str, float]:
    """Time loading the core in fresh interpreters: with an empty cache (cold, a compilation),
    then with the cache it left (warm), and importing numba alone."""
    import os
    import subprocess
    import tempfile

    def seconds(code: str, env: dict[str, str]) -> float:
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env=env,
            cwd=REPO_ROOT,
        )
        return float(done.stdout.split()[-1])

    with tempfile.TemporaryDirectory() as cache:
        env = os.environ | {"NUMBA_CACHE_DIR": cache}
        cold = seconds(LOAD_CORE, env)
        warm = statistics.median(seconds(LOAD_CORE, env) for _ in range(5))
        numba = statistics.median(
            seconds(
                "import time; start = time.perf_counter(); import numba; "
                "print(time.perf_counter() - start)",
                env,
            )
            for _ in range(5)
        )
    return {"cold_seconds": cold, "warm_seconds": warm, "numba_import_seconds": numba}


def load_openspiel() -> Callable[[int], int]:
    """Return depth -> open-spiel's perft from the start position. Raises ImportError."""
    import pyspiel

    game = pyspiel.load_game("checkers")

    def count_moves(state: Any, player: int) -> int:
        """Whole moves from `state`: plain moves count 1; captures follow continuations."""
        count = 0
        for action in state.legal_actions():
            if action & 1:  # a capture (open-spiel's action encodes the move type last)
                child = state.child(action)
                if child.current_player() == player:
                    count += count_moves(child, player)
                    continue
            count += 1
        return count

    def children(state: Any, depth: int, player: int) -> int:
        """Sum perft(depth - 1) over the whole moves of `state` by `player` (depth >= 2)."""
        total = 0
        for action in state.legal_actions():
            child = state.child(action)
            mover = child.current_player()
            if mover == player:  # the multi-jump goes on: still the same ply
                total += children(child, depth, player)
            elif mover >= 0:  # a terminal child (no moves) adds nothing below it
                total += (
                    count_moves(child, mover) if depth == 2 else children(child, depth - 1, mover)
                )
        return total

    def run(depth: int) -> int:
        state = game.new_initial_state()
        if depth == 0:
            return 1
        player = state.current_player()
        return count_moves(state, player) if depth == 1 else children(state, depth, player)

    return run


# --------------------------------------------------------------------------------------------
# Measurement and report
# --------------------------------------------------------------------------------------------


def measure(name: str, run: Callable[[int], int], depth: int, repeat: int) -> dict[str, Any]:
    """Run `run(depth)` `repeat` times; return counts, times and the verdict."""
    times: list[float] = []
    cpu_times: list[float] = []
    nodes = -1
    for _ in range(repeat):
        start, cpu_start = time.perf_counter(), time.process_time()
        nodes = run(depth)
        times.append(time.perf_counter() - start)
        cpu_times.append(time.process_time() - cpu_start)
    best = min(times)
    cpu = statistics.median(cpu_times)
    expected = PUBLISHED.get(depth)
    return {
        "name": name,
        "depth": depth,
        "nodes": nodes,
        "expected": expected,
        "correct": None if expected is None else nodes == expected,
        "best_seconds": best,
        "median_seconds": statistics.median(times),
        "all_seconds": times,
        "median_cpu_seconds": cpu,
        "nodes_per_second": nodes / best if best > 0 else float("inf"),
        "nodes_per_cpu_second_median": nodes / cpu if cpu > 0 else float("inf"),
    }


def format_row(result: dict[str, Any]) -> str:
    """One line of the text report for an engine's result."""
    verdict = {True: "OK", False: "WRONG", None: "(no published count)"}[result["correct"]]
    return (
        f"  {result['name']:<22} perft({result['depth']}) {result['nodes']:>11,} nodes"
        f"   best {result['best_seconds']:8.3f} s   median {result['median_seconds']:8.3f} s"
        f"   {result['nodes_per_second']:>12,.0f} nodes/s"
        f"   median CPU {result['nodes_per_cpu_second_median']:>12,.0f} nodes/s   {verdict}"
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Checkers perft from the start: Arena against open-spiel (multi-jump = 1 ply)."
    )
    parser.add_argument("--depth", type=int, default=8, help="perft depth (default 8)")
    parser.add_argument(
        "--core-depth",
        type=int,
        default=11,
        help="the compiled core's own perft depth (default 11; 0: skip)",
    )
    parser.add_argument(
        "--compile-times",
        action="store_true",
        help="also time compiling the core (empty cache) and loading it (warm cache)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per engine; best is kept")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    side = parser.add_mutually_exclusive_group()
    side.add_argument("--peer-only", action="store_true", help="measure open-spiel alone")
    side.add_argument("--arena-only", action="store_true", help="measure Arena alone")
    parser.add_argument(
        "--check-target",
        action="store_true",
        help=f"exit with status 2 unless arena_time / openspiel_time <= {TARGET_RATIO}",
    )
    args = parser.parse_args(argv)
    if args.depth < 0:
        parser.error("--depth must be >= 0")
    if args.repeat < 1:
        parser.error("--repeat must be >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; return the exit status."""
    args = parse_args(argv)
    notes: list[str] = []
    status = 0
    results: dict[str, dict[str, Any]] = {}

    engines: list[tuple[str, Callable[[], Callable[[int], int]]]] = []
    if not args.peer_only:
        engines.append(("arena", load_arena))
        engines.append(("arena State API", load_arena_state_api))
        engines.append(("arena compiled core", load_arena_core))
    if not args.arena_only:
        engines.append(("open-spiel", load_openspiel))
    for name, loader in engines:
        try:
            run = loader()
        except ImportError as error:
            hint = " (pip install open_spiel)" if name == "open-spiel" else ""
            notes.append(f"{name} is not importable{hint}: {error}; measuring without it")
            if name.startswith("arena"):
                status = 1
            continue
        except Exception as error:  # noqa: BLE001 - report any failure to set up a side
            notes.append(f"{name} could not be set up: {type(error).__name__}: {error}")
            status = 1
            continue
        results[name] = measure(name, run, args.depth, args.repeat)
        if results[name]["correct"] is False:
            status = 1
        if name == "arena compiled core" and args.core_depth > 0:
            deep = measure(name, run, args.core_depth, args.repeat)
            results[f"{name}, perft({args.core_depth})"] = deep
            if deep["correct"] is False:
                status = 1

    speedup: float | None = None
    if "arena" in results and "arena compiled core" in results:
        core_time = results["arena compiled core"]["best_seconds"]
        speedup = results["arena"]["best_seconds"] / core_time if core_time > 0 else None
    core_deep = results.get(f"arena compiled core, perft({args.core_depth})")
    compilation = compile_times() if args.compile_times and not args.peer_only else None

    ratio: float | None = None
    target_met: bool | None = None
    if "arena" in results and "open-spiel" in results:
        peer_time = results["open-spiel"]["best_seconds"]
        ratio = results["arena"]["best_seconds"] / peer_time if peer_time > 0 else None
        target_met = ratio is not None and ratio <= TARGET_RATIO
        if args.check_target and not target_met and status == 0:
            status = 2

    report = {
        "benchmark": "checkers perft from the start position (whole multi-jump = one move)",
        "depth": args.depth,
        "repeat": args.repeat,
        "published_nodes": PUBLISHED.get(args.depth),
        "machine": machine_info(),
        "results": results,
        "ratio_arena_over_openspiel": ratio,
        "target_ratio": TARGET_RATIO,
        "target_met": target_met,
        "core_speedup_over_arena": speedup,
        "core_target_nodes_per_second": CORE_TARGET,
        "core_compile": compilation,
        "notes": notes,
        "status": status,
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return status

    machine = report["machine"]
    published = PUBLISHED.get(args.depth)
    print(
        f"Checkers perft({args.depth}) from the start position, a whole multi-jump = one move; "
        f"published: {f'{published:,}' if published is not None else 'none for this depth'}"
    )
    print(f"  machine: {machine['platform']}")
    print(f"  cpu: {machine['cpu']} ({machine['cpu_count']} logical CPUs)")
    print(f"  python: {machine['python']} ({machine['python_executable']})")
    print(f"  arena: {machine['arena']}; open_spiel: {machine['open_spiel'] or 'not installed'}")
    print(f"  best of {args.repeat} run(s) each")
    for note in notes:
        print(f"  NOTE: {note}")
    for result in results.values():
        print(format_row(result))
    api = results.get("arena State API")
    if api is not None and "open-spiel" in results:
        print(
            "  ratio arena State API / openspiel_time = "
            f"{api['best_seconds'] / results['open-spiel']['best_seconds']:.3f} (informational)"
        )
    if ratio is not None:
        verdict = "met" if target_met else "NOT met"
        print(
            f"  ratio arena_time / openspiel_time = {ratio:.3f} "
            f"(target <= {TARGET_RATIO}: {verdict})"
        )
    if speedup is not None:
        print(
            f"  compiled core: {speedup:,.1f} times as fast as arena perft() at perft({args.depth})"
        )
    if core_deep is not None:
        rate = core_deep["nodes_per_cpu_second_median"]
        verdict = "met" if rate >= CORE_TARGET else "NOT met"
        print(
            f"  compiled core perft({args.core_depth}): {rate / 1e6:,.1f} M leaves per CPU second "
            f"(median), {core_deep['nodes_per_second'] / 1e6:,.1f} M per second (best wall) "
            f"(target >= {CORE_TARGET / 1e6:.0f} M: {verdict})"
        )
    if compilation is not None:
        print(
            f"  loading the core in a fresh interpreter: {compilation['cold_seconds']:.2f} s with "
            f"an empty cache (compiling), {compilation['warm_seconds']:.2f} s with the cache "
            f"(median of 5; importing numba alone: {compilation['numba_import_seconds']:.2f} s)"
        )
    return status


if __name__ == "__main__":
    sys.exit(main())
