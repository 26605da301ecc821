"""Benchmark: building the checkers endgame database (retrograde analysis).

    python bench/egdb.py --pieces 4 [--dir D] [--peer-sample 30] [--json]

Builds every signature of 1 to N pieces into a fresh directory (a temporary one unless --dir
names an empty one), prints the seconds per signature, the positions per second and the whole
time. The peer is a forward solve of the same kind of positions with the project's own solver
(bots.solvers.solve, the checkers proof search: iterative deepening to the shortest forced win), on
a random sample of the N-piece positions the database found won or lost (the proof search cannot
prove a draw): its positions per second against the database's give the ratio.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO_ROOT))

from machine import describe, machine_info  # noqa: E402 - bench/ is put on the path just above

from bots.egdb.index import count, signatures, signatures_up_to  # noqa: E402
from bots.egdb.probe import Database  # noqa: E402
from bots.egdb.store import BuildEvent, build, read_manifest  # noqa: E402
from bots.solvers.solve import solve  # noqa: E402
from games import get_game  # noqa: E402
from games.checkers import CheckersState  # noqa: E402

TARGET_SECONDS = {4: 15 * 60, 5: 60 * 60}


def _peer(directory: Path, pieces: int, sample: int, seconds_each: float) -> dict[str, Any]:
    """Solve `sample` decided N-piece positions with bots.solvers.solve; compare with the
    database."""
    import numpy as np

    from bots.egdb.index import positions
    from bots.egdb.store import table_path

    game = get_game("checkers")
    database = Database(directory)
    rng = random.Random(1)
    sigs = [
        s
        for s in signatures(pieces)
        if s.mover_men + s.mover_kings and s.opponent_men + s.opponent_kings
    ]
    solved = agreed = 0
    spent = 0.0
    for _ in range(sample):
        sig = rng.choice(sigs)
        table = np.fromfile(table_path(directory, sig), dtype=np.uint8)
        decided = np.nonzero(table)[0]
        i = int(rng.choice(list(decided[:: max(1, len(decided) // 5000)])))
        mm, mk, om, ok = (int(t[i]) for t in positions(sig))
        state = CheckersState(game, mm | mk, om | ok, mk | ok, 0)  # type: ignore[arg-type]
        entry = database.probe(state)
        assert entry is not None
        start = time.perf_counter()
        solution = solve(
            state,
            max_plies=(entry.plies or 0) + 1,
            clock=time.perf_counter,
            deadline=time.perf_counter() + seconds_each,
        )
        spent += time.perf_counter() - start
        if solution.limit is None and solution.value != "unknown":
            solved += 1
            agreed += solution.value == entry.value and solution.plies == entry.plies
    return {
        "sample": sample,
        "solved_within_limit": solved,
        "agreed": agreed,
        "seconds": spent,
        "positions_per_second": sample / spent if spent else None,
        "seconds_limit_each": seconds_each,
    }


def endings(directory: Path, sample: int, seconds: float, name: str = "0302") -> dict[str, Any]:
    """Three kings against two: play `sample` won placements (fixed seed, both colours) to the
    end under the real rules (80-ply rule on), the engine with the database (depth 1: every
    child probed) and without it (`id` at `seconds` a move), against the database's best
    defence; return how many each won and in how many plies."""
    import numpy as np

    from bots.egdb.index import Signature, flip_one, positions
    from bots.egdb.store import table_path
    from bots.engine.search import AlphaBetaEngine
    from bots.evaluation.knowledge import knowledge_for
    from bots.spec import create_bot

    game = get_game("checkers")
    database = Database(directory)
    sig = Signature.parse(name)
    if sig.mover_men or sig.opponent_men:
        raise ValueError("--endings plays kings-only signatures")
    table = np.fromfile(table_path(directory, sig), dtype=np.uint8)
    won = np.nonzero((table > 0) & (table % 2 == 0))[0]
    rng = random.Random(17)
    arrays = positions(sig)
    starts: list[CheckersState] = []
    # Quiet starts only (no capture for the side to move), colours alternating.
    for i in rng.sample(list(won), min(len(won), 50 * sample)):
        if len(starts) == sample:
            break
        _, mk, _, ok = (int(t[i]) for t in arrays)
        if len(starts) % 2 == 0:
            candidate = CheckersState(game, mk, ok, mk | ok, 0)  # type: ignore[arg-type]
        else:
            f = flip_one
            candidate = CheckersState(game, f(ok), f(mk), f(mk | ok), 1)  # type: ignore[arg-type]
        if not candidate.has_capture():
            starts.append(candidate)
    rows = []
    for start in starts:
        entry = database.probe(start)
        assert entry is not None and entry.plies is not None
        row: dict[str, Any] = {"position": game.format_position(start), "plies": entry.plies}
        for who in ("egdb", "id"):
            engine = AlphaBetaEngine(
                knowledge_for(game), lambda s: 0.0, exact=database.engine_score
            )
            bot = create_bot(f"id:time={seconds}", game, clock=time.perf_counter)

            def attack(state: Any, who: str = who, engine: Any = engine, bot: Any = bot) -> Any:
                if who == "egdb":
                    return engine.search(state, 1).move
                return bot.choose(state).move

            state: Any = start
            plies = 0
            while state.outcome() is None and plies < 400:
                if state.turn == start.turn:
                    move = attack(state)
                else:
                    fresh = CheckersState(game, state.black, state.white, state.kings, state.turn)  # type: ignore[arg-type]
                    move = max(database.best_moves(fresh), key=str)
                state = state.apply_unchecked(move)
                plies += 1
            outcome = state.outcome()
            row[who] = {
                "won": outcome is not None and outcome.winner == start.turn,
                "plies": plies,
                "ending": outcome.reason if outcome else "unfinished",
            }
        rows.append(row)
    return {
        "signature": sig.name,
        "sample": sample,
        "egdb_won": sum(r["egdb"]["won"] for r in rows),
        "id_won": sum(r["id"]["won"] for r in rows),
        "id_seconds": seconds,
        "games": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pieces", type=int, default=4)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--peer-sample", type=int, default=30)
    parser.add_argument("--peer-seconds", type=float, default=10.0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--endings",
        type=int,
        default=0,
        help="With --dir holding 5 pieces: play this many 3-kings-against-2 wins, no build.",
    )
    parser.add_argument("--endings-seconds", type=float, default=0.1)
    parser.add_argument("--endings-signature", default="0302", help="kings only, e.g. 0201")
    args = parser.parse_args()
    if args.endings:
        if args.dir is None:
            parser.error("--endings needs --dir with a 5-piece database")
        report = endings(args.dir, args.endings, args.endings_seconds, args.endings_signature)
        if args.json:
            print(json.dumps(report, indent=1))
            return
        for row in report["games"]:
            print(
                f"{row['position']:32} db {row['plies']:3} | egdb: {row['egdb']['plies']:3} "
                f"{row['egdb']['ending']} | id: {row['id']['plies']:3} {row['id']['ending']}"
            )
        print(
            f"won: egdb=on {report['egdb_won']}/{report['sample']}, "
            f"id:time={report['id_seconds']:g} {report['id_won']}/{report['sample']}"
        )
        return
    with tempfile.TemporaryDirectory() as scratch:
        directory = args.dir or Path(scratch)
        if read_manifest(directory).signatures:
            parser.error(f"{directory} already holds a database; give an empty --dir")
        layers: dict[str, int] = {}

        def note(event: BuildEvent) -> None:
            if event.kind == "layer":
                layers[event.signature.name] = event.layer
            elif event.kind == "done" and not args.json:
                print(f"  {event.signature.name}: {event.seconds:7.2f} s", flush=True)

        start = time.perf_counter()
        manifest = build(directory, args.pieces, progress=note)
        seconds = time.perf_counter() - start
        total = sum(count(s) for s in signatures_up_to(args.pieces))
        per_pieces = {
            n: {
                "positions": sum(count(s) for s in signatures(n)),
                "seconds": round(sum(manifest.signatures[s].seconds for s in signatures(n)), 2),
                "longest": max(manifest.signatures[s].max_plies for s in signatures(n)),
            }
            for n in range(1, args.pieces + 1)
        }
        disk = sum(p.stat().st_size for p in directory.glob("*.u8"))
        peer = (
            _peer(directory, args.pieces, args.peer_sample, args.peer_seconds)
            if args.peer_sample
            else None
        )
    result: dict[str, Any] = {
        "pieces": args.pieces,
        "positions": total,
        "seconds": round(seconds, 2),
        "positions_per_second": round(total / seconds),
        "target_seconds": TARGET_SECONDS.get(args.pieces),
        "bytes_on_disk": disk,
        "by_pieces": per_pieces,
        "per_signature_seconds": {
            s.name: round(i.seconds, 3) for s, i in sorted(manifest.signatures.items())
        },
        "peer": peer,
        "machine": machine_info(),
    }
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print(describe(result["machine"]))
    for n, row in per_pieces.items():
        print(
            f"{n} pieces: {row['positions']:>12,} positions {row['seconds']:8.2f} s "
            f"longest {row['longest']} plies"
        )
    print(
        f"total: {total:,} positions (one side to move; both sides by symmetry) "
        f"in {seconds:.1f} s, {total / seconds:,.0f} positions/s, {disk:,} bytes; "
        f"target {TARGET_SECONDS.get(args.pieces)} s"
    )
    if peer is not None and peer["positions_per_second"]:
        ratio = (total / seconds) / peer["positions_per_second"]
        print(
            f"peer (bots.solvers.solve proof search, {peer['sample']} decided {args.pieces}-piece "
            f"positions, {peer['seconds_limit_each']:g} s limit each): "
            f"{peer['positions_per_second']:.3f} positions/s, {peer['solved_within_limit']} "
            f"solved, {peer['agreed']} agreeing; database/peer = {ratio:,.0f}x"
        )


if __name__ == "__main__":
    main()
