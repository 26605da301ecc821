"""Depth ladder: does each ply of search buy strength? A round robin of alpha-beta depths.

Usage:
    python bench/ladder.py [--depths 1,2,3,4,5,6] [--eval threats] [--extra SPEC ...]
                           [--openings 60] [--plies 4] [--seed 1] [--workers 1]
                           [--journal FILE] [--check] [--json] [--no-nice]

Plays a round robin of `alphabeta:depth=D,eval=E` for each depth D (plus any `--extra` specs)
on Connect Four with competition.runner: every pairing plays the same `--openings` random
openings of `--plies` plies (competition.openings.random_openings, seeded), each opening twice
with colours swapped, so a pairing plays 2 x openings games. The bots are deterministic (fixed
depth, no clock), so a game is a function of its pairing, opening and colours, and a rerun
replays the same games.

Reported per entrant: games, points (wins + draws / 2), points per 100 games, and the Elo of
competition.stats (Davidson model with first-move advantage, 95% profile-likelihood intervals
widened by the colour-swapped pairs' design effect), with the likelihood of superiority of each
depth over the one below it.

`--check` exits with status 1 unless (a) the points are strictly increasing in depth and (b)
the 95% Elo intervals of depth 2 and depth 4 do not overlap (when both are entrants). A
targeted match is the same command with two depths (`--depths 2,4 --openings 400`): its check
is then (b) alone, with (a) on two entrants.

`--journal FILE` records every finished game (competition.journal) so a killed run resumes;
`--workers N` plays games in N processes. The run lowers its own priority (nice 10) unless
`--no-nice`: the machine is shared.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO_ROOT))

from machine import describe, machine_info  # noqa: E402 - bench/ is put on the path above

from competition.openings import random_openings  # noqa: E402
from competition.runner import GameRecord, TournamentSpec, run_tournament  # noqa: E402
from competition.stats import EloFit, GameResult, fit_elo  # noqa: E402

GAME = "connect4"
PLY_CAP = 200


@dataclass(frozen=True)
class Entrant:
    """One entrant's line of the table."""

    spec: str
    depth: int | None
    games: int
    points: float
    elo: float
    lower: float
    upper: float

    @property
    def per_100(self) -> float:
        """Points per 100 games."""
        return 100.0 * self.points / self.games if self.games else 0.0


def depth_spec(depth: int, evaluation: str) -> str:
    """Return the spec of the ladder's entrant at `depth`."""
    return f"alphabeta:depth={depth},eval={evaluation}"


def ladder_spec(
    depths: list[int], evaluation: str, extra: list[str], openings: int, seed: int
) -> TournamentSpec:
    """Return the round robin of the depths (and extra specs), 2 x openings games a pairing."""
    bots = tuple(depth_spec(d, evaluation) for d in depths) + tuple(extra)
    return TournamentSpec(
        game=GAME, bots=bots, games_per_pairing=2 * openings, seed=seed, ply_cap=PLY_CAP
    )


def table(
    records: list[GameRecord], depths: list[int], evaluation: str, extra: list[str]
) -> tuple[list[Entrant], EloFit]:
    """Return the entrants in ladder order (depths ascending, then extras) and the Elo fit."""
    results = [GameResult(r.first, r.second, r.result, r.pair) for r in records]
    fit = fit_elo(results)
    specs = [(depth_spec(d, evaluation), d) for d in depths] + [(s, None) for s in extra]
    entrants = []
    for spec, depth in specs:
        games = [r for r in records if spec in (r.first, r.second)]
        rating = fit.rating(spec)
        entrants.append(
            Entrant(
                spec,
                depth,
                len(games),
                sum(r.score_of(spec) for r in games),
                rating.elo,
                rating.lower,
                rating.upper,
            )
        )
    return entrants, fit


def head_to_head(records: list[GameRecord], a: str, b: str) -> float:
    """Return `a`'s points in its games against `b`."""
    return sum(r.score_of(a) for r in records if {r.first, r.second} == {a, b})


def verdict(entrants: list[Entrant]) -> dict[str, Any]:
    """Return the two checks: points monotone in depth, depth 2 and 4 intervals separated."""
    ladder = [e for e in entrants if e.depth is not None]
    monotone = all(a.per_100 < b.per_100 for a, b in itertools.pairwise(ladder))
    by_depth = {e.depth: e for e in ladder}
    separated: bool | None = None
    if 2 in by_depth and 4 in by_depth:
        two, four = by_depth[2], by_depth[4]
        separated = two.upper < four.lower or four.upper < two.lower
    return {
        "monotone": monotone,
        "separated_2_4": separated,
        "passed": monotone and separated is not False,
    }


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--depths", default="1,2,3,4,5,6", help="depths, comma-separated")
    parser.add_argument("--eval", default="threats", help="evaluation of the depth entrants")
    parser.add_argument("--extra", action="append", default=[], help="another entrant's spec")
    parser.add_argument("--openings", type=int, default=60, help="openings per pairing (60)")
    parser.add_argument("--plies", type=int, default=4, help="plies of each opening (4)")
    parser.add_argument("--seed", type=int, default=1, help="seed of openings and schedule")
    parser.add_argument("--workers", type=int, default=1, help="game processes (1)")
    parser.add_argument("--journal", type=Path, help="resume from / record to this journal")
    parser.add_argument("--check", action="store_true", help="exit 1 unless the ladder holds")
    parser.add_argument("--json", action="store_true", help="print one JSON object at the end")
    parser.add_argument("--no-nice", action="store_true", help="do not lower the priority")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)
    try:
        args.depth_list = [int(d) for d in args.depths.split(",") if d.strip()]
    except ValueError:
        parser.error(f"--depths: expected comma-separated integers, got {args.depths!r}")
    if not args.depth_list or any(not 1 <= d <= 12 for d in args.depth_list):
        parser.error("--depths: each depth must be 1 to 12")
    if sorted(set(args.depth_list)) != args.depth_list:
        parser.error("--depths: give distinct depths in increasing order")
    if len(args.depth_list) + len(args.extra) < 2:
        parser.error("a ladder needs at least two entrants")
    if not 1 <= args.openings <= 2000:
        parser.error("--openings must be 1 to 2000")
    if not 0 <= args.plies <= 12:
        parser.error("--plies must be 0 to 12")
    if not 1 <= args.workers <= 8:
        parser.error("--workers must be 1 to 8")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.no_nice:
        os.nice(10)
    spec = ladder_spec(args.depth_list, args.eval, args.extra, args.openings, args.seed)
    try:
        spec.validate()
    except ValueError as error:
        print(f"ladder: {error}", file=sys.stderr)
        return 2
    openings = random_openings(GAME, args.openings, args.plies, args.seed)
    started = time.perf_counter()
    shown = [0.0]

    def progress(record: GameRecord, done: int, total: int) -> None:
        now = time.perf_counter()
        if args.quiet or (now - shown[0] < 10 and done != total):
            return
        shown[0] = now
        elapsed = now - started
        print(
            f"[{done}/{total}] {elapsed:.0f} s; last: {record.first} vs {record.second} "
            f"{record.result:g}",
            file=sys.stderr,
            flush=True,
        )

    records = run_tournament(
        spec, openings, concurrency=args.workers, journal_path=args.journal, progress=progress
    )
    seconds = time.perf_counter() - started
    entrants, fit = table(records, args.depth_list, args.eval, args.extra)
    checks = verdict(entrants)
    info = machine_info()
    ladder = [e for e in entrants if e.depth is not None]
    los = {f"{b.depth}>{a.depth}": fit.los(b.spec, a.spec) for a, b in itertools.pairwise(ladder)}
    report = {
        "game": GAME,
        "eval": args.eval,
        "openings": args.openings,
        "plies": args.plies,
        "seed": args.seed,
        "games": len(records),
        "games_per_pairing": 2 * args.openings,
        "seconds_this_run": round(seconds, 1),
        "entrants": [
            {
                "spec": e.spec,
                "games": e.games,
                "points": e.points,
                "per_100": round(e.per_100, 1),
                "elo": round(e.elo, 1),
                "elo_95": [round(e.lower, 1), round(e.upper, 1)],
            }
            for e in entrants
        ],
        "los_next_depth": {k: round(v, 4) for k, v in los.items()},
        "head_to_head": {
            a.spec: {b.spec: head_to_head(records, a.spec, b.spec) for b in entrants if b != a}
            for a in entrants
        },
        "first_move_advantage": round(fit.first_move_advantage, 1),
        "draw_rate": round(sum(r.result == 0.5 for r in records) / len(records), 3),
        "checks": checks,
        "machine": info,
    }
    print(
        f"Connect Four depth ladder, eval={args.eval}: {len(records)} games, "
        f"{2 * args.openings} per pairing ({args.openings} openings of {args.plies} plies, "
        f"both colours), seed {args.seed}"
    )
    print(describe(info))
    print(f"  {'entrant':<34} {'games':>6} {'points':>7} {'/100':>6} {'Elo':>7}  95% interval")
    for e in entrants:
        print(
            f"  {e.spec:<34} {e.games:>6} {e.points:>7g} {e.per_100:>6.1f} {e.elo:>7.0f}  "
            f"[{e.lower:.0f}, {e.upper:.0f}]"
        )
    short = [str(e.depth) if e.depth is not None else f"x{i}" for i, e in enumerate(entrants)]
    print("  points of the row's entrant against the column's:")
    print("        " + "".join(f"{name:>7}" for name in short))
    for e, name in zip(entrants, short, strict=True):
        cells = [
            "      -"
            if other.spec == e.spec
            else f"{head_to_head(records, e.spec, other.spec):>7g}"
            for other in entrants
        ]
        print(f"  {name:>6}" + "".join(cells))
    print(
        "  LOS of each depth over the one below: "
        + ", ".join(f"{k} {v:.3f}" for k, v in los.items())
    )
    print(
        f"  draws {report['draw_rate']:.1%}; first-move advantage "
        f"{fit.first_move_advantage:.0f} Elo; {seconds:.0f} s this run"
    )
    separated = checks["separated_2_4"]
    print(
        f"  points monotone in depth: {'yes' if checks['monotone'] else 'NO'}; "
        f"depth 2 and 4 intervals separated: "
        f"{'n/a' if separated is None else 'yes' if separated else 'NO'}"
    )
    if args.json:
        print(json.dumps(report))
    if args.check and not checks["passed"]:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
