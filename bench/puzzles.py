"""Benchmark: making endgame puzzles (autograder/endgame_puzzles.py) with the default options.

    python bench/puzzles.py [--count 10] [--seed 1] [--material 3v5 ...] [--kings 0.25]
                            [--no-peer] [--json]

Makes a suite as `arena grader make-puzzles` does (the default options, or the mixes and kings
given) and prints the seconds, the puzzles per second, the positions tried, and the suite's
plies, materials and branching. The peer is the old generator's way, random 2-against-2
positions kept when the proof search proves the win, on the same number of puzzles: what
realism costs.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO_ROOT))

from machine import describe, machine_info  # noqa: E402 - bench/ is put on the path just above

from autograder.endgame_puzzle_options import (  # noqa: E402
    Material,
    Progress,
    PuzzleOptions,
    parse_material,
)
from autograder.endgame_puzzles import make_puzzle_suite, make_puzzles  # noqa: E402


def run(count: int, seed: int, options: PuzzleOptions, peer: bool = True) -> dict[str, Any]:
    """Time a suite of `options` and (with `peer`) the 2v2 peer; return the figures."""
    drawn = [0]

    def note(progress: Progress) -> None:
        drawn[0] = progress.tries

    start = time.perf_counter()
    suite = make_puzzle_suite(seed, count, options, progress=note)
    seconds = time.perf_counter() - start
    peer_seconds = None
    if peer:
        peer_options = PuzzleOptions(materials=(Material(2, 2),), kings=0.5, min_choices=1)
        start = time.perf_counter()
        make_puzzles(random.Random(seed), count, peer_options)
        peer_seconds = round(time.perf_counter() - start, 2)
    return {
        "options": options.describe(),
        "count": count,
        "seed": seed,
        "seconds": round(seconds, 2),
        "puzzles_per_second": round(count / seconds, 3),
        "positions": drawn[0],
        "plies": [p.plies for p in suite],
        "materials": dict(sorted(Counter(p.material or "?" for p in suite).items())),
        "branching": [p.difficulty.branching for p in suite if p.difficulty],
        "peer_2v2_seconds": peer_seconds,
        "machine": machine_info(),
    }


def main() -> None:
    """Parse the options, run, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--material", action="append", default=[], help="a mix such as 3v5")
    parser.add_argument("--kings", type=float, default=PuzzleOptions().kings)
    parser.add_argument("--no-peer", action="store_true", help="leave out the 2v2 peer")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    options = PuzzleOptions(
        materials=tuple(parse_material(text) for text in args.material), kings=args.kings
    )
    result = run(args.count, args.seed, options, peer=not args.no_peer)
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print(describe(result["machine"]))
    print(result["options"])
    print(
        f"{result['count']} puzzles in {result['seconds']} s "
        f"({result['puzzles_per_second']} a second), {result['positions']:,} positions tried"
    )
    print(f"plies {result['plies']}; materials {result['materials']}")
    print(f"branching {result['branching']}")
    if result["peer_2v2_seconds"] is not None:
        print(f"peer (old way, 2v2): {result['peer_2v2_seconds']} s for as many puzzles")


if __name__ == "__main__":
    main()
