"""Benchmark: making endgame puzzles (grader/endgame_puzzles.py) with the default options.

    python bench/puzzles.py [--count 10] [--seed 1] [--json]

Makes a suite as `arena grader make-puzzles` does and prints the seconds, the puzzles per
second, the positions drawn, and the suite's plies, materials and branching. The peer is the
old generator's way, random 2-against-2 positions kept when the proof search proves the win,
on the same number of puzzles: what realism costs.
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

from grader.endgame_puzzles import (  # noqa: E402
    Material,
    Progress,
    PuzzleOptions,
    make_puzzle_suite,
    make_puzzles,
)


def run(count: int, seed: int) -> dict[str, Any]:
    """Time a default suite and the 2v2 peer; return the figures."""
    drawn = [0]

    def note(progress: Progress) -> None:
        drawn[0] = progress.tries

    start = time.perf_counter()
    suite = make_puzzle_suite(seed, count, PuzzleOptions(), progress=note)
    seconds = time.perf_counter() - start
    peer_options = PuzzleOptions(materials=(Material(2, 2),), kings=0.5, min_choices=1)
    start = time.perf_counter()
    make_puzzles(random.Random(seed), count, peer_options)
    peer = time.perf_counter() - start
    return {
        "count": count,
        "seed": seed,
        "seconds": round(seconds, 2),
        "puzzles_per_second": round(count / seconds, 3),
        "positions": drawn[0],
        "plies": [p.plies for p in suite],
        "materials": dict(sorted(Counter(p.material or "?" for p in suite).items())),
        "branching": [p.difficulty.branching for p in suite if p.difficulty],
        "peer_2v2_seconds": round(peer, 2),
        "machine": machine_info(),
    }


def main() -> None:
    """Parse the options, run, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.count, args.seed)
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print(describe(result["machine"]))
    print(
        f"{result['count']} puzzles in {result['seconds']} s "
        f"({result['puzzles_per_second']} a second), {result['positions']:,} positions drawn"
    )
    print(f"plies {result['plies']}; materials {result['materials']}")
    print(f"branching {result['branching']}")
    print(f"peer (old way, 2v2): {result['peer_2v2_seconds']} s for as many puzzles")


if __name__ == "__main__":
    main()
