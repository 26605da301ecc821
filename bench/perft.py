"""Checkers perft benchmark: Arena against open-spiel's checkers, both driven from Python.

Usage:
    python bench/perft.py [--depth 8] [--repeat N] [--json] [--peer-only | --arena-only]
                          [--check-target]

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
    nodes = -1
    for _ in range(repeat):
        start = time.perf_counter()
        nodes = run(depth)
        times.append(time.perf_counter() - start)
    best = min(times)
    expected = PUBLISHED.get(depth)
    return {
        "name": name,
        "nodes": nodes,
        "expected": expected,
        "correct": None if expected is None else nodes == expected,
        "best_seconds": best,
        "median_seconds": statistics.median(times),
        "all_seconds": times,
        "nodes_per_second": nodes / best if best > 0 else float("inf"),
    }


def format_row(result: dict[str, Any]) -> str:
    """One line of the text report for an engine's result."""
    verdict = {True: "OK", False: "WRONG", None: "(no published count)"}[result["correct"]]
    return (
        f"  {result['name']:<16} {result['nodes']:>11,} nodes"
        f"   best {result['best_seconds']:8.3f} s   median {result['median_seconds']:8.3f} s"
        f"   {result['nodes_per_second']:>12,.0f} nodes/s   {verdict}"
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Checkers perft from the start: Arena against open-spiel (multi-jump = 1 ply)."
    )
    parser.add_argument("--depth", type=int, default=8, help="perft depth (default 8)")
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
    return status


if __name__ == "__main__":
    sys.exit(main())
