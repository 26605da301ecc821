"""Connect Four benchmark: Arena's exact solvers on Pascal Pons' test sets, against open-spiel.

Usage:
    python bench/connect4.py [--sets L3_R1,L2_R1,L2_R2] [--limit N] [--limit-l2r2 N]
                             [--solvers compiled,python] [--peer-limit N] [--peer-cap SECONDS]
                             [--no-peer] [--weak] [--json] [--check-target]

Arena has two solvers of the same algorithm: the compiled one (bots.core.connect4, what Arena
solves Connect Four with) and the plain-Python reference (bots.solvers.connect4). Both are
measured on the same lines in one run (`--solvers` picks), their scores and node counts
checked against the file and against each other, and the report gives the speed-up: the
reference's time over the compiled one's, by total and by median per position. Loading the
compiled core (compiling it the first time on a machine, announced on stderr) and its first
call are done before any timing, on a position of no set.

Follows the test protocol of Pascal Pons, "Solving Connect 4" (blog.gamesolver.org, part 2):
each line of a test file is a move string and its exact score; the solver's transposition
table is emptied before each position; the time of one position is the time of
`Solver.score` alone (parsing the move string is not timed). Every score is checked against
the file. Reported per set: mean, median and 99th-percentile milliseconds per position, mean
nodes (negamax calls) per position and nodes per second.

The data files are read from ../shared/data/connect4/ (see its README.md); a missing file is
reported and skipped. Test_L3_R1 and Test_L2_R1 are solved whole by default; Test_L2_R2 takes
about 0.1 s per position, so only its first `--limit-l2r2` lines (default 200) are solved.

The peer, measured in the same run on the first `--peer-limit` positions of each set, is
open-spiel's pure-Python `open_spiel.python.algorithms.minimax.alpha_beta_search` on
`pyspiel.load_game("connect_four")`, reached by applying the same moves (1-based columns in the
file, 0-based actions in open-spiel), with no value function and a depth limit equal to the
number of empty cells, so that it searches exactly to the end. It scores only win/draw/loss
(+1/0/-1 for the side to move), so its outcome is compared with the sign of the file's score.
Each peer position is capped at `--peer-cap` seconds (SIGALRM); a capped position counts the cap
as its time, which makes the reported Arena/peer ratio an upper bound, and the report says so.

Targets (exact scores), for each solver measured: Test_L3_R1 mean <= 1 ms per position,
Test_L2_R1 mean <= 10 ms per position. `--check-target` makes a miss exit with status 2.
Exit status: 0 when every score (and every peer outcome) matches and the two solvers count the
same nodes on every line, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA = REPO_ROOT.parent / "shared" / "data" / "connect4"
sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import describe, machine_info  # noqa: E402 - bench/ is put on the path just above

SETS = {
    "L3_R1": ("Test_L3_R1", "End-Easy"),
    "L2_R1": ("Test_L2_R1", "Middle-Easy"),
    "L2_R2": ("Test_L2_R2", "Middle-Medium"),
}
TARGET_MS = {"L3_R1": 1.0, "L2_R1": 10.0}
# Pons' final C++ solver on the same sets (../shared/oracles/search.md), for the node counts.
PONS_REFERENCE = {
    "L3_R1": "about 51 positions, 4.6 us per position",
    "L2_R1": "about 450 positions, 37 us per position",
}


# --------------------------------------------------------------------------------------------
# Data and statistics
# --------------------------------------------------------------------------------------------


def read_set(path: Path, limit: int | None) -> list[tuple[str, int]]:
    """Return the first `limit` (move string, score) lines of a Pons test file."""
    lines: list[tuple[str, int]] = []
    with path.open(encoding="ascii") as handle:
        for line in handle:
            if limit is not None and len(lines) >= limit:
                break
            moves, score = line.split()
            lines.append((moves, int(score)))
    return lines


def sign(value: float) -> int:
    """Return -1, 0 or +1."""
    return (value > 0) - (value < 0)


def percentile(sorted_values: list[float], fraction: float) -> float:
    """Return the nearest-rank percentile of an ascending list."""
    rank = max(1, math.ceil(fraction * len(sorted_values)))
    return sorted_values[rank - 1]


def summarise_ms(seconds: list[float]) -> dict[str, float]:
    """Mean, median and p99 of per-position times, in milliseconds."""
    ordered = sorted(seconds)
    return {
        "mean_ms": 1000 * statistics.fmean(ordered),
        "median_ms": 1000 * statistics.median(ordered),
        "p99_ms": 1000 * percentile(ordered, 0.99),
        "max_ms": 1000 * ordered[-1],
    }


# --------------------------------------------------------------------------------------------
# Arena and the peer
# --------------------------------------------------------------------------------------------


SOLVERS = ("compiled", "python")
"""The solvers `--solvers` may name: bots.core.connect4's and bots.solvers.connect4's."""


def make_solver(kind: str) -> Any:
    """Return a fresh solver of `kind`, the compiled one loaded and called once untimed."""
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    if kind == "python":
        from bots.solvers.connect4 import Solver

        return Solver()
    from bots.core import load
    from games.connect4 import ConnectFour

    load("connect4", announce=lambda line: print(line, file=sys.stderr))
    from bots.core.connect4 import Solver as CompiledSolver

    solver = CompiledSolver()
    solver.score(ConnectFour().parse_position("4455"))  # the first call's one-time costs
    solver.reset()
    return solver


def run_arena(lines: list[tuple[str, int]], weak: bool, kind: str = "compiled") -> dict[str, Any]:
    """Solve every line with a table emptied per position; return times, nodes, mismatches."""
    solver = make_solver(kind)
    from games.connect4 import ConnectFour

    game = ConnectFour()
    seconds: list[float] = []
    nodes: list[int] = []
    wrong: list[dict[str, Any]] = []
    clock = time.perf_counter
    for moves, expected in lines:
        state = game.parse_position(moves)
        solver.reset()
        start = clock()
        score = solver.score(state, weak=weak)
        seconds.append(clock() - start)
        nodes.append(solver.nodes)
        want = sign(expected) if weak else expected
        if score != want:
            wrong.append({"moves": moves, "expected": want, "got": score})
    total = sum(seconds)
    return {
        "positions": len(lines),
        **summarise_ms(seconds),
        "mean_nodes": statistics.fmean(nodes),
        "nodes_per_second": sum(nodes) / total if total > 0 else float("inf"),
        "mismatches": wrong,
        "seconds": seconds,
        "nodes": nodes,
    }


def speed_up(compiled: dict[str, Any], python: dict[str, Any]) -> dict[str, Any]:
    """The reference's time over the compiled solver's on the same lines, and whether the two
    counted the same nodes on every line."""
    fast: list[float] = compiled["seconds"]
    slow: list[float] = python["seconds"]
    ratios = [p / c for c, p in zip(fast, slow, strict=True) if c > 0]
    return {
        "ratio_of_totals": sum(slow) / sum(fast) if sum(fast) > 0 else None,
        "median_ratio": statistics.median(ratios) if ratios else None,
        "same_nodes": compiled["nodes"] == python["nodes"],
    }


class PeerTimeoutError(Exception):
    """Raised inside the peer's search when its time cap expires."""


@contextmanager
def time_cap(seconds: float) -> Iterator[None]:
    """Raise PeerTimeoutError in the main thread after `seconds` (no cap without SIGALRM)."""
    if not hasattr(signal, "setitimer") or seconds <= 0:
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise PeerTimeoutError

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_peer(lines: list[tuple[str, int]], cap: float) -> dict[str, Any]:
    """Solve each line with open-spiel's Python alpha-beta; raises ImportError without it."""
    import pyspiel
    from open_spiel.python.algorithms.minimax import alpha_beta_search

    game = pyspiel.load_game("connect_four")
    cells = game.max_game_length()  # 42: every cell filled
    seconds: list[float] = []
    capped: list[str] = []
    wrong: list[dict[str, Any]] = []
    for moves, expected in lines:
        state = game.new_initial_state()
        for char in moves:
            state.apply_action(int(char) - 1)
        start = time.perf_counter()
        try:
            with time_cap(cap):
                value, _ = alpha_beta_search(game, state, maximum_depth=cells - len(moves))
        except PeerTimeoutError:
            seconds.append(cap)
            capped.append(moves)
            continue
        seconds.append(time.perf_counter() - start)
        if sign(value) != sign(expected):
            wrong.append({"moves": moves, "expected_sign": sign(expected), "got": value})
    return {
        "positions": len(lines),
        **summarise_ms(seconds),
        "capped": capped,
        "cap_seconds": cap,
        "mismatches": wrong,
        "seconds": seconds,
    }


def compare(arena_seconds: list[float], peer: dict[str, Any]) -> dict[str, Any]:
    """Arena/peer time ratios on the peer's positions (Arena's times of the same lines)."""
    peer_seconds: list[float] = peer["seconds"]
    arena = arena_seconds[: len(peer_seconds)]
    ratios = [a / p for a, p in zip(arena, peer_seconds, strict=True) if p > 0]
    total_peer = sum(peer_seconds)
    return {
        "positions": len(peer_seconds),
        "ratio_of_means": sum(arena) / total_peer if total_peer > 0 else None,
        "median_ratio": statistics.median(ratios) if ratios else None,
        "upper_bound": bool(peer["capped"]),
    }


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Connect Four exact solver on Pons' test sets, against open-spiel."
    )
    parser.add_argument(
        "--sets", default="L3_R1,L2_R1,L2_R2", help="comma-separated sets (L3_R1, L2_R1, L2_R2)"
    )
    parser.add_argument(
        "--limit", type=int, default=None, help="positions per set (default: all 1000)"
    )
    parser.add_argument(
        "--limit-l2r2", type=int, default=200, help="positions of L2_R2 (default 200)"
    )
    parser.add_argument(
        "--solvers", default="compiled,python", help="comma-separated: compiled, python (both)"
    )
    parser.add_argument("--peer-limit", type=int, default=20, help="peer positions per set")
    parser.add_argument(
        "--peer-cap", type=float, default=5.0, help="peer seconds per position (default 5)"
    )
    parser.add_argument("--no-peer", action="store_true", help="measure Arena alone")
    parser.add_argument("--weak", action="store_true", help="solve for the sign only")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--check-target", action="store_true", help="exit with status 2 when a target is missed"
    )
    args = parser.parse_args(argv)
    args.sets = [name.strip() for name in args.sets.split(",") if name.strip()]
    unknown = [name for name in args.sets if name not in SETS]
    if unknown:
        parser.error(f"unknown set(s) {', '.join(unknown)}; choose from {', '.join(SETS)}")
    args.solvers = [name.strip() for name in args.solvers.split(",") if name.strip()]
    if not args.solvers or any(name not in SOLVERS for name in args.solvers):
        parser.error(f"--solvers takes one or both of {', '.join(SOLVERS)}")
    for option in ("limit", "limit_l2r2", "peer_limit"):
        value = getattr(args, option)
        if value is not None and value < 0:
            parser.error(f"--{option.replace('_', '-')} must be >= 0")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; return the exit status."""
    args = parse_args(argv)
    notes: list[str] = []
    status = 0
    target_missed = False
    peer_available = not args.no_peer
    results: dict[str, dict[str, Any]] = {}

    for name in args.sets:
        filename, blog_name = SETS[name]
        path = DATA / filename
        if not path.is_file():
            notes.append(f"{path} is absent: {name} skipped")
            continue
        limit = args.limit_l2r2 if name == "L2_R2" and args.limit is None else args.limit
        lines = read_set(path, limit)
        entry: dict[str, Any] = {"file": filename, "blog_name": blog_name}
        runs = {kind: run_arena(lines, args.weak, kind) for kind in args.solvers}
        arena = runs[args.solvers[0]]
        entry["solvers"] = runs
        if any(run["mismatches"] for run in runs.values()):
            status = 1
        if len(runs) == 2:
            entry["speed_up"] = speed_up(runs["compiled"], runs["python"])
            if not entry["speed_up"]["same_nodes"]:
                status = 1
        target = TARGET_MS.get(name)
        if target is not None:
            met = all(run["mean_ms"] <= target for run in runs.values())
            entry["target_mean_ms"] = target
            entry["target_met"] = met
            entry["target_on_whole_file"] = len(lines) == 1000
            target_missed |= not met
        entry["pons_reference"] = PONS_REFERENCE.get(name)
        if peer_available and args.peer_limit > 0:
            try:
                peer = run_peer(lines[: args.peer_limit], args.peer_cap)
            except ImportError as error:
                notes.append(f"open-spiel is not importable (pip install open_spiel): {error}")
                peer_available = False
            else:
                entry["peer"] = peer
                entry["comparison"] = compare(arena["seconds"], peer)
                if peer["mismatches"]:
                    status = 1
                del peer["seconds"]
        for run in runs.values():
            del run["seconds"], run["nodes"]
        results[name] = entry

    if args.check_target and target_missed and status == 0:
        status = 2
    report = {
        "benchmark": "Connect Four exact solver, Pons' test protocol (table reset per position)",
        "solvers": args.solvers,
        "mode": "weak (sign)" if args.weak else "strong (exact score)",
        "machine": {
            **machine_info(),
            "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
        },
        "peer": "open_spiel.python.algorithms.minimax.alpha_beta_search (win/draw/loss only)",
        "results": results,
        "notes": notes,
        "status": status,
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return status
    print_report(report, args)
    return status


def print_report(report: dict[str, Any], args: argparse.Namespace) -> None:
    """Print the human-readable report."""
    machine = report["machine"]
    print(f"Connect Four solver, Pons' test protocol, {report['mode']}")
    print(describe(machine))
    if machine["load_average"] is not None:
        load = ", ".join(f"{value:.2f}" for value in machine["load_average"])
        print(f"  load average (1, 5, 15 min) at the end: {load}")
    for note in report["notes"]:
        print(f"  NOTE: {note}")
    for entry in report["results"].values():
        runs = entry["solvers"]
        positions = next(iter(runs.values()))["positions"]
        print(f"\n{entry['file']} ({entry['blog_name']}), {positions} positions")
        for kind, arena in runs.items():
            wrong = len(arena["mismatches"])
            print(
                f"  {kind:<9}mean {arena['mean_ms']:8.3f} ms  median {arena['median_ms']:8.3f} ms"
                f"  p99 {arena['p99_ms']:9.3f} ms  max {arena['max_ms']:9.3f} ms"
            )
            print(
                f"           mean nodes {arena['mean_nodes']:10.1f}  "
                f"{arena['nodes_per_second']:,.0f} nodes/s  "
                f"scores: {'all correct' if not wrong else f'{wrong} WRONG'}"
            )
        faster = entry.get("speed_up")
        if faster is not None and faster["ratio_of_totals"] is not None:
            nodes = "the same" if faster["same_nodes"] else "DIFFERENT"
            print(
                f"  speed-up compiled over python: {faster['ratio_of_totals']:.1f}x by total "
                f"time, {faster['median_ratio']:.1f}x median per position; {nodes} node counts"
            )
        if entry.get("pons_reference"):
            print(f"           Pons' C++ solver: {entry['pons_reference']}")
        if "target_met" in entry:
            scope = "" if entry["target_on_whole_file"] else " (on part of the file only)"
            verdict = "met" if entry["target_met"] else "NOT met"
            print(f"  target   mean <= {entry['target_mean_ms']:g} ms: {verdict}{scope}")
        peer = entry.get("peer")
        if peer is None:
            continue
        comparison = entry["comparison"]
        capped = len(peer["capped"])
        solved = peer["positions"] - capped
        if peer["mismatches"]:
            outcome = f"{len(peer['mismatches'])} WRONG"
        elif solved:
            outcome = f"all {solved} finished correct"
        else:
            outcome = "none finished"
        print(
            f"  peer     mean {peer['mean_ms']:8.3f} ms  median {peer['median_ms']:8.3f} ms"
            f"  on the first {peer['positions']} positions; outcomes: {outcome}"
        )
        if capped:
            print(
                f"           capped at {peer['cap_seconds']:g} s on {capped} of "
                f"{peer['positions']} positions (counted as {peer['cap_seconds']:g} s)"
            )
        if comparison["ratio_of_means"] is None:
            continue
        bound = " (an upper bound: the peer was capped)" if comparison["upper_bound"] else ""
        print(
            f"  ratio   {next(iter(runs))}/peer {comparison['ratio_of_means']:.5f} (mean time "
            "over the same "
            f"{comparison['positions']} positions){bound};"
            f" median per-position ratio {comparison['median_ratio']:.5f}"
        )
    if args.check_target:
        print(f"\nstatus {report['status']}")


if __name__ == "__main__":
    sys.exit(main())
