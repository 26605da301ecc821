"""Search speed: Arena's alpha-beta and solvers against open-spiel's Python algorithms.

    python bench/search.py [--checkers-depth 8] [--skip-peer-nim] [--json]

Measured in one run, on the same work:

1. Checkers alpha-beta from the start position to depth 8 with the default evaluation:
   Arena with table and ordering (`alphabeta:depth=8`), Arena plain (`tt=off,ordering=off`),
   and open-spiel's `minimax.alpha_beta_search` (Python alpha-beta over the C++ rules, a
   material evaluation, depth counted in open-spiel actions). Targets: Arena >= 100,000
   nodes/s, and >= 5x fewer nodes than plain alpha-beta.
2. Tic-tac-toe solved from the empty board: Arena's solver (table + symmetry) vs open-spiel's
   alpha_beta_search. Target: <= 10 ms.
3. Misère Nim (1,3,5,7) solved: Arena vs open-spiel's alpha_beta_search (about 40 s: it has
   no table; `--skip-peer-nim` leaves it out). Target: <= 10 ms.
4. Stopping: each kind of search is stopped 0.3 s into a search that would run for minutes,
   and the time from the stop to the search's return is measured (worst of `--stop-repeat`
   runs). Target: <= 100 ms, a fraction of a second (a house bot's search stops so when its
   match ends; the tests count the nodes after the stop instead, never seconds).

Nodes are counted as calls of the recursive search (root and leaves included) on both sides.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO_ROOT))

from machine import describe, machine_info  # noqa: E402 - bench/ is put on the path above

from bots.result import SearchStopped  # noqa: E402
from bots.solvers.solve import solve  # noqa: E402
from bots.spec import create_bot  # noqa: E402
from games import get_game  # noqa: E402

NPS_TARGET = 100_000
NODE_RATIO_TARGET = 5.0
SOLVE_TARGET_MS = 10.0
STOP_TARGET_MS = 100.0
STOPPED_SEARCHES = (
    ("checkers", "minimax:depth=12"),
    ("checkers", "alphabeta:depth=30,tt=off,ordering=off"),
    ("checkers", "alphabeta:depth=30"),
    ("checkers", "alphabeta_lecture:depth=12"),
    ("checkers", "negamax:depth=12"),
    ("checkers", "id:time=0,depth=40"),
    ("connect4", "mcts:simulations=100000000"),
    ("connect4", "mcts:time=3600"),
)
"""Searches that run for minutes unless stopped: the one kind of each search module."""


def best_of(repeat: int, run: Callable[[], Any]) -> tuple[float, Any]:
    """Return the best wall time of `repeat` runs and the last result."""
    best = float("inf")
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
    return best, result


def counting_openspiel_alpha_beta() -> tuple[Any, list[int]]:
    """Return open-spiel's minimax module with its recursion counting calls into a list."""
    from open_spiel.python.algorithms import minimax

    counter = [0]
    original = minimax._alpha_beta

    def counted(*args: Any, **kwargs: Any) -> Any:
        counter[0] += 1
        return original(*args, **kwargs)

    minimax._alpha_beta = counted
    return minimax, counter


def checkers(depth: int) -> dict[str, Any]:
    game = get_game("checkers")
    state = game.initial_state()
    out: dict[str, Any] = {"depth": depth}
    for label, spec in (
        ("arena", f"alphabeta:depth={depth}"),
        ("arena_plain", f"alphabeta:depth={depth},tt=off,ordering=off"),
        ("arena_material", f"alphabeta:depth={depth},eval=material"),
    ):
        bot = create_bot(spec, game)
        seconds, result = best_of(1, lambda bot=bot: bot.choose(state))
        out[label] = {
            "spec": spec,
            "move": state.format_move(result.move),
            "score": result.score,
            "nodes": result.stats.nodes,
            "seconds": round(seconds, 4),
            "nps": round(result.stats.nodes / seconds),
        }
    out["node_ratio_plain_over_arena"] = round(
        out["arena_plain"]["nodes"] / out["arena"]["nodes"], 2
    )
    try:
        minimax, counter = counting_openspiel_alpha_beta()
        import pyspiel
    except ImportError as error:
        out["openspiel"] = {"error": f"not importable: {error}"}
        return out
    peer_game = pyspiel.load_game("checkers")

    def material(peer_state: Any) -> float:
        # From player 0's view: men 1, kings 2 (o/+ men, 8/* kings in open-spiel's board).
        board = str(peer_state)
        mine = board.count("o") + 2 * board.count("8")
        theirs = board.count("+") + 2 * board.count("*")
        return float(mine - theirs)

    start = time.perf_counter()
    value, _action = minimax.alpha_beta_search(
        peer_game, value_function=material, maximum_depth=depth, maximizing_player_id=0
    )
    seconds = time.perf_counter() - start
    out["openspiel"] = {
        "value": value,
        "nodes": counter[0],
        "seconds": round(seconds, 4),
        "nps": round(counter[0] / seconds),
    }
    return out


def solved(
    name: str, options: dict[str, str], peer: tuple[str, dict[str, Any]] | None
) -> dict[str, Any]:
    game = get_game(name, options)
    seconds, solution = best_of(5, lambda: solve(game.initial_state()))
    out: dict[str, Any] = {
        "arena": {
            "value": solution.value,
            "nodes": solution.nodes,
            "ms": round(seconds * 1000, 3),
        }
    }
    out["target_met"] = seconds * 1000 <= SOLVE_TARGET_MS
    if peer is None:
        out["openspiel"] = {"skipped": True}
        return out
    try:
        minimax, counter = counting_openspiel_alpha_beta()
        import pyspiel
    except ImportError as error:
        out["openspiel"] = {"error": f"not importable: {error}"}
        return out
    peer_game = pyspiel.load_game(*peer)
    start = time.perf_counter()
    value, _ = minimax.alpha_beta_search(peer_game, maximum_depth=100)
    seconds = time.perf_counter() - start
    out["openspiel"] = {"value": value, "nodes": counter[0], "ms": round(seconds * 1000, 3)}
    out["ratio_arena_over_openspiel"] = round(out["arena"]["ms"] / out["openspiel"]["ms"], 5)
    return out


def stop_latency(game_name: str, spec: str, after: float = 0.3) -> float:
    """Return the seconds from setting the stop, `after` seconds into the search, to its end."""
    game = get_game(game_name)
    bot = create_bot(spec, game)
    flag = threading.Event()
    set_at: list[float] = []

    def set_stop() -> None:
        set_at.append(time.perf_counter())
        flag.set()

    timer = threading.Timer(after, set_stop)
    timer.start()
    try:
        bot.choose(game.initial_state(), stop=flag.is_set)
    except SearchStopped:
        pass  # the fixed-depth searches have no move to return
    finally:
        timer.cancel()
    ended = time.perf_counter()
    if not set_at:
        raise RuntimeError(f"{spec} ended before it was stopped")
    return ended - set_at[0]


def stopping(repeat: int) -> dict[str, Any]:
    """Return the worst stop latency of `repeat` runs of each search in STOPPED_SEARCHES,
    with the machine's load average before and after (the figures are wall time)."""
    rows: dict[str, Any] = {}
    load_before = os.getloadavg()
    for game_name, spec in STOPPED_SEARCHES:
        worst = max(stop_latency(game_name, spec) for _ in range(repeat))
        rows[f"{game_name} {spec}"] = round(worst * 1000, 2)
    return {
        "worst_ms": rows,
        "target_met": all(ms <= STOP_TARGET_MS for ms in rows.values()),
        "load_average": [round(load, 2) for load in (*load_before, *os.getloadavg())],
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks and print the report; exit 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkers-depth", type=int, default=8)
    parser.add_argument("--skip-peer-nim", action="store_true", help="skip open-spiel on Nim")
    parser.add_argument("--stop-repeat", type=int, default=5, help="runs of each stopped search")
    parser.add_argument("--only-stop", action="store_true", help="measure the stopping only")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)

    report: dict[str, Any] = {"machine": machine_info()}
    if args.only_stop:
        report["stopping"] = stopping(args.stop_repeat)
        if args.json:
            print(json.dumps(report, indent=2))
        else:
            print("Search benchmarks")
            print(describe(report["machine"]))
            print_stopping(report["stopping"])
        return 0

    report["checkers"] = checkers(args.checkers_depth)
    report["tictactoe"] = solved("tictactoe", {}, ("tic_tac_toe", {}))
    report["nim_misere_1357"] = solved(
        "nim",
        {},
        None if args.skip_peer_nim else ("nim", {"pile_sizes": "1;3;5;7", "is_misere": True}),
    )
    report["stopping"] = stopping(args.stop_repeat)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0

    print("Search benchmarks")
    print(describe(report["machine"]))
    ck = report["checkers"]
    a, p = ck["arena"], ck["arena_plain"]
    print(f"\nCheckers alpha-beta, depth {ck['depth']} from the start (default evaluation)")
    m = ck["arena_material"]
    for label, row in (("arena (tt+ordering)", a), ("arena plain", p), ("arena eval=material", m)):
        print(
            f"  {label:<22} {row['nodes']:>10,} nodes  {row['seconds']:8.3f} s  "
            f"{row['nps']:>9,} nodes/s  move {row['move']} score {row['score']:g}"
        )
    peer = ck.get("openspiel", {})
    if "nodes" in peer:
        print(
            f"  {'open-spiel alpha_beta':<22} {peer['nodes']:>10,} nodes  "
            f"{peer['seconds']:8.3f} s  {peer['nps']:>9,} nodes/s  (material evaluation)"
        )
    else:
        print(f"  open-spiel: {peer}")
    print(
        f"  nodes/s target >= {NPS_TARGET:,}: {'met' if a['nps'] >= NPS_TARGET else 'NOT met'}; "
        f"plain/arena nodes = {ck['node_ratio_plain_over_arena']} (target >= {NODE_RATIO_TARGET}:"
        f" {'met' if ck['node_ratio_plain_over_arena'] >= NODE_RATIO_TARGET else 'NOT met'})"
    )
    for key, title in (
        ("tictactoe", "Tic-tac-toe solved"),
        ("nim_misere_1357", "Misère Nim 1,3,5,7 solved"),
    ):
        row = report[key]
        print(f"\n{title}")
        print(
            f"  arena       {row['arena']['ms']:10.3f} ms  value {row['arena']['value']}  "
            f"({row['arena']['nodes']:,} nodes)  target <= {SOLVE_TARGET_MS} ms: "
            f"{'met' if row['target_met'] else 'NOT met'}"
        )
        peer = row.get("openspiel", {})
        if "ms" in peer:
            print(
                f"  open-spiel  {peer['ms']:10.3f} ms  value {peer['value']}  "
                f"({peer['nodes']:,} nodes)  ratio {row['ratio_arena_over_openspiel']}"
            )
        else:
            print(f"  open-spiel: {peer}")
    print_stopping(report["stopping"])
    return 0


def print_stopping(report: dict[str, Any]) -> None:
    """Print the stop latencies, the machine's load and whether the target is met."""
    print("\nStopped 0.3 s into a search of minutes: from the stop to the search's return")
    for label, ms in report["worst_ms"].items():
        print(f"  {label:<46} {ms:8.2f} ms (worst)")
    load = report["load_average"]
    print(
        f"  load average (1, 5, 15 min) before: {load[0]}, {load[1]}, {load[2]}; after: "
        f"{load[3]}, {load[4]}, {load[5]}"
    )
    met = "met" if report["target_met"] else "NOT met"
    print(f"  target <= {STOP_TARGET_MS:g} ms: {met}")


if __name__ == "__main__":
    sys.exit(main())
