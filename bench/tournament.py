"""Tournament speed: worker scaling, and the server path against the local path.

    python bench/tournament.py [--games 24] [--depth 4] [--repeat 3] [--skip-server] [--json]

Measured in one run (the best of --repeat runs of each, interleaved), on the same checkers
tournament (alpha-beta bots at fixed depth, so every path plays the same games):

1. Local worker processes: the round-robin played with 1 worker and with 2; games per second
   of each and the speed-up. Target: 2 workers >= 1.7x the games per second of one.
2. The server path: the same tournament created on `arena serve` (its own process, a fresh
   SQLite file) with POST /tournaments, every game a real server match between house bots,
   against the local path with 1 worker; seconds per game of each and the ratio. Target:
   at most 1.15 (15% more time per game). Both run one game at a time, so the ratio is the
   server's cost per game (matches, commits, referee) and not a difference in parallelism.
3. The rating fit (informational, no target): `fit_elo` with its profile-likelihood intervals
   and LOS on seeded random results, for 3 bots and 24 games up to the server's largest
   tournament (16 bots); the server fits standings in a worker thread, once per finished game
   at most, so this is the delay before a `GET /tournaments/{id}` answer, not a stall.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO_ROOT))

from local import free_port  # noqa: E402 - bench/ is put on the path above
from machine import describe, machine_info  # noqa: E402 - bench/ is put on the path above

from competition.openings import default_openings  # noqa: E402
from competition.runner import TournamentSpec, run_tournament  # noqa: E402
from competition.stats import GameResult, fit_elo  # noqa: E402

SCALING_TARGET = 1.7
SERVER_OVERHEAD_TARGET = 1.15


def spec_for(args: argparse.Namespace) -> TournamentSpec:
    bots = (
        f"alphabeta:depth={args.depth}",
        f"alphabeta:depth={args.depth - 1}",
        f"alphabeta:depth={args.depth - 2}",
    )
    return TournamentSpec(
        game="checkers", bots=bots, games_per_pairing=args.games // 3, seed=args.seed
    )


def local(spec: TournamentSpec, workers: int) -> dict[str, Any]:
    """Play the tournament locally with `workers` processes; return its timing."""
    openings = default_openings(spec.game, spec.games_per_pairing, spec.seed)
    start = time.perf_counter()
    records = run_tournament(spec, openings, concurrency=workers)
    seconds = time.perf_counter() - start
    return {
        "workers": workers,
        "games": len(records),
        "seconds": seconds,
        "games_per_s": len(records) / seconds,
        "seconds_per_game": seconds / len(records),
        "moves": {r.index: list(r.moves) for r in records},
    }


def server(spec: TournamentSpec) -> dict[str, Any]:
    """Play the tournament on `arena serve`, one game at a time; return its timing."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp:
        database = f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}"
        arena = Path(sys.executable).parent / "arena"
        log = open(Path(tmp) / "server.log", "wb")  # noqa: SIM115 - closed below
        process = subprocess.Popen(
            [str(arena), "serve", "--port", str(port), "--database", database],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            with httpx.Client(base_url=base, timeout=60) as http:
                deadline = time.monotonic() + 30
                while True:
                    try:
                        if http.get("/health").status_code == 200:
                            break
                    except httpx.HTTPError:
                        pass
                    if time.monotonic() > deadline or process.poll() is not None:
                        raise RuntimeError("the server did not start")
                    time.sleep(0.1)
                token = http.post("/players", json={"name": "bench"}).json()["token"]
                auth = {"Authorization": f"Bearer {token}"}
                body = {
                    "game": spec.game,
                    "bots": list(spec.bots),
                    "format": spec.format,
                    "games_per_pairing": spec.games_per_pairing,
                    "seed": spec.seed,
                    "ply_cap": spec.ply_cap,
                    "concurrency": 1,
                }
                created = http.post("/tournaments", json=body, headers=auth)
                created.raise_for_status()
                tournament_id = created.json()["tournament_id"]
                start = time.perf_counter()
                http.post(f"/tournaments/{tournament_id}/start", headers=auth).raise_for_status()
                while True:
                    state = http.get(f"/tournaments/{tournament_id}").json()
                    if state["status"] == "finished":
                        break
                    time.sleep(0.05)
                seconds = time.perf_counter() - start
                games = state["games_total"]
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
            log.close()
    return {
        "games": games,
        "seconds": seconds,
        "games_per_s": games / seconds,
        "seconds_per_game": seconds / games,
    }


RATING_SIZES = ((3, 24), (10, 990), (16, 960))
"""(bots, games) of the rating-fit measurement."""


def rating_fit_seconds(bots: int, games: int, seed: int, repeat: int) -> float:
    """Return the best time of `fit_elo` over seeded random colour-swapped results."""
    import random

    rng = random.Random(seed)
    names = [f"bot{i}" for i in range(bots)]
    results = []
    for index in range(games // 2):
        first, second = rng.sample(names, 2)
        score = rng.choice((0.0, 0.5, 1.0))
        results.append(GameResult(first, second, score, index))
        results.append(GameResult(second, first, rng.choice((0.0, 0.5, 1.0)), index))
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fit_elo(results)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=24, help="games in all (24)")
    parser.add_argument("--depth", type=int, default=4, help="depth of the strongest bot (4)")
    parser.add_argument("--seed", type=int, default=1, help="tournament seed")
    parser.add_argument("--skip-server", action="store_true", help="local paths only")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each, best kept (3)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args()
    spec = spec_for(args)
    info = machine_info()
    print(f"Tournament bench: checkers round-robin of {', '.join(spec.bots)},")
    print(f"{spec.games_per_pairing} games per pairing ({3 * spec.games_per_pairing} games)")
    print(describe(info))
    # Best of `repeat` runs of each, interleaved, so a slow moment of the VM hits all alike.
    ones, twos, remotes = [], [], []
    for _ in range(args.repeat):
        ones.append(local(spec, 1))
        twos.append(local(spec, 2))
        if not args.skip_server:
            remotes.append(server(spec))
    one = min(ones, key=lambda r: r["seconds"])
    two = min(twos, key=lambda r: r["seconds"])
    speedup = two["games_per_s"] / one["games_per_s"]
    same = all(run.pop("moves") == ones[0]["moves"] for run in [*twos, *ones[1:]])
    ones[0].pop("moves")
    print(f"  local, 1 worker:  {one['games_per_s']:6.2f} games/s ({one['seconds']:.1f} s)")
    print(f"  local, 2 workers: {two['games_per_s']:6.2f} games/s ({two['seconds']:.1f} s)")
    verdict = "met" if speedup >= SCALING_TARGET else "NOT met"
    print(f"  speed-up {speedup:.2f}x (target >= {SCALING_TARGET}x): {verdict}")
    print(f"  same games with 1 and 2 workers: {same}")
    result: dict[str, Any] = {"machine": info, "one": one, "two": two, "speedup": speedup}
    if remotes:
        remote = min(remotes, key=lambda r: r["seconds"])
        ratio = remote["seconds_per_game"] / one["seconds_per_game"]
        print(
            f"  server path, 1 at a time: {remote['seconds_per_game'] * 1000:7.1f} ms/game, "
            f"local 1 worker {one['seconds_per_game'] * 1000:7.1f} ms/game"
        )
        verdict = "met" if ratio <= SERVER_OVERHEAD_TARGET else "NOT met"
        target = SERVER_OVERHEAD_TARGET
        print(f"  server/local time per game {ratio:.3f} (target <= {target}): {verdict}")
        result["server"] = remote
        result["server_ratio"] = ratio
    fits = {}
    for bots, games in RATING_SIZES:
        seconds = rating_fit_seconds(bots, games, args.seed, args.repeat)
        fits[f"{bots} bots, {games} games"] = seconds
        print(f"  rating fit, {bots:2} bots, {games:4} games: {seconds * 1000:7.1f} ms")
    result["rating_fit_seconds"] = fits
    if args.json:
        print(json.dumps(result, indent=2, default=str))


if __name__ == "__main__":
    main()
