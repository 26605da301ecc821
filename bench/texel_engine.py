"""Texel tuning of the `engine` checkers evaluation at compiled speed.

    python bench/texel_engine.py play [--nodes 4000] [--games-per-opening 8] [--seed 17]
                                      [--data DIR]
    python bench/texel_engine.py label [--deep-nodes 50000] [--every 3]
    python bench/texel_engine.py fit [--fixed men,...] [--ridge 0] [--start FILE]
                                     [--label result|score|deep] [--json] [--weights-out FILE]

`play`: self-play of the compiled engine (`id:time=0,nodes=N`, engine mode, the `engine`
evaluation) from each of the 156 openings of the ACF three-move deck, `--games-per-opening`
games each, the first RANDOM_PLIES plies after the opening chosen at random with probability
RANDOM_RATE so games from one opening differ. Every quiet middle-game position (no capture for
the side to move, more than ENDGAME_PIECES pieces) from the end of the random plies on is kept
as a position (black, white, kings, side to move), with its game's result and the search's
score for the side to move. The positions are data, not code: they stay in `--data` (default
$XDG_CACHE_HOME/arena/texel or ~/.cache/arena/texel), one file per (nodes, games, seed); a
run resumes from the games already in it.

`label`: searches every `--every`-th position again, to `--deep-nodes` nodes (a fresh engine,
no history), and keeps its score: a label less noisy than the game's result.

`fit`: measures every feature of `engine` (bots.evaluation.checkers_engine.ENGINE_NAMES) in
each position, as the evaluation under a unit weight table (the evaluation is linear in its
weights, so this is exactly the feature), and fits the weights with competition.tuning.tune to
the game results (`--label result`), or to sigmoid(K x score) of the game's own search
(`--label score`) or of the deeper one (`--label deep`), a man kept at 100 (`--start` sets
starting weights, which `--fixed` keeps); whole games split 4:1 into training and held-out
positions. The fitted, rounded weights can be written as a weights file for
`bench/strength.py --weights` (an evaluation named `tuned`).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO_ROOT))

from machine import describe, machine_info  # noqa: E402 - bench/ is put on the path above

from bots.evaluation import checkers as ck  # noqa: E402
from bots.evaluation import checkers_engine  # noqa: E402
from bots.spec import create_bot  # noqa: E402
from competition.openings import deck  # noqa: E402
from competition.tuning import LOSSES, loss, sigmoid, tune  # noqa: E402
from games import get_game  # noqa: E402
from games.checkers import CheckersState  # noqa: E402

GAME = get_game("checkers")
RANDOM_PLIES = 12
RANDOM_RATE = 0.25
PLY_CAP = 200
HOLDOUT_EVERY = 5
"""Every fifth game is held out of the fit (its positions only score the weights)."""
SCORE_SCALE = 0.006
"""Log-odds per hundredth of a man when the search's score is the label (`--label score`)."""


def default_data_dir() -> Path:
    """Return the cache directory for the generated positions (outside the repository)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "arena" / "texel"


def play_one(
    opening_index: int, game_number: int, seed: int, nodes: int
) -> tuple[list[tuple[int, int, int, int, float]], float]:
    """Play one self-play game; return its kept positions (black, white, kings, turn, score
    for the side to move) and Black's result (1, 0.5, 0)."""
    game = get_game("checkers")
    openings = deck("acf-3move", game)
    rng = random.Random(f"{seed}:{opening_index}:{game_number}")
    spec = f"id:time=0,nodes={nodes}"
    bots = (create_bot(spec, game), create_bot(spec, game))
    state = openings[opening_index].start_state(game)
    assert isinstance(state, CheckersState)
    rows: list[tuple[int, int, int, int, float]] = []
    plies = 0
    while not state.is_terminal() and plies < PLY_CAP:
        if plies < RANDOM_PLIES and rng.random() < RANDOM_RATE:
            move = rng.choice(list(state.legal_moves()))
        else:
            result = bots[state.turn].choose(state)
            move = result.move
            if (
                plies >= RANDOM_PLIES
                and not state.has_capture()
                and (state.black | state.white).bit_count() > ck.ENDGAME_PIECES
            ):
                rows.append((state.black, state.white, state.kings, state.turn, result.score))
        state = state.apply(move)  # type: ignore[assignment]
        plies += 1
    outcome = state.outcome() if state.is_terminal() else None
    black = 0.5 if outcome is None or outcome.winner is None else 1.0 - outcome.winner
    return rows, black


def data_path(data: Path, nodes: int, games_per_opening: int, seed: int) -> Path:
    return data / f"engine-n{nodes}-g{games_per_opening}-s{seed}.jsonl"


def play(path: Path, nodes: int, games_per_opening: int, seed: int) -> None:
    """Play the games not yet in `path` (one JSON line a game)."""
    openings = len(deck("acf-3move", "checkers"))
    total = openings * games_per_opening
    done: set[int] = set()
    if path.exists():
        with path.open(encoding="utf-8") as lines:
            done = {json.loads(line)["game"] for line in lines if line.strip()}
    path.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with path.open("a", encoding="utf-8") as out:
        for number in range(total):
            if number in done:
                continue
            rows, black = play_one(number % openings, number // openings, seed, nodes)
            out.write(json.dumps({"game": number, "black": black, "rows": rows}) + "\n")
            out.flush()
            done.add(number)
            if len(done) % 25 == 0 or len(done) == total:
                print(
                    f"  {len(done)}/{total} games, {time.perf_counter() - started:.0f} s",
                    file=sys.stderr,
                    flush=True,
                )


def load(path: Path) -> tuple[list[CheckersState], np.ndarray, np.ndarray, np.ndarray]:
    """Return the positions, their results and scores for the side to move, and game numbers."""
    states: list[CheckersState] = []
    results: list[float] = []
    scores: list[float] = []
    games: list[int] = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            record = json.loads(line)
            for black, white, kings, turn, score in record["rows"]:
                states.append(CheckersState(GAME, black, white, kings, turn))
                results.append(record["black"] if turn == 0 else 1.0 - record["black"])
                scores.append(score)
                games.append(record["game"])
    return states, np.array(results), np.array(scores, dtype=np.float64), np.array(games)


def deep_path(path: Path, nodes: int, every: int) -> Path:
    return path.with_name(f"{path.stem}-deep-n{nodes}-e{every}.json")


def label_deep(path: Path, nodes: int, every: int) -> None:
    """Search every `every`-th position to `nodes` nodes (a fresh engine each, no history)
    and save the scores for the side to move, resuming from the scores already saved."""
    states, _results, _scores, _games = load(path)
    out = deep_path(path, nodes, every)
    scores: dict[str, float] = json.loads(out.read_text()) if out.exists() else {}
    spec = f"id:time=0,nodes={nodes}"
    started = time.perf_counter()
    for count, index in enumerate(range(0, len(states), every)):
        if str(index) in scores:
            continue
        scores[str(index)] = create_bot(spec, GAME).choose(states[index]).score
        if count % 500 == 499:
            out.write_text(json.dumps(scores))
            print(
                f"  {count + 1}/{len(states) // every} positions, "
                f"{time.perf_counter() - started:.0f} s",
                file=sys.stderr,
                flush=True,
            )
    out.write_text(json.dumps(scores))


def measure(states: list[CheckersState]) -> np.ndarray:
    """The features of ENGINE_NAMES for each position, for the side to move."""
    names = checkers_engine.ENGINE_NAMES
    functions = [
        checkers_engine.engine_function({n: int(n == name) for n in names}) for name in names
    ]
    return np.array([[f(s) for f in functions] for s in states], dtype=np.float64)


def fit(args: argparse.Namespace) -> int:
    path = data_path(args.data, args.nodes, args.games_per_opening, args.seed)
    states, results, scores, games = load(path)
    if args.label == "deep":
        deep = json.loads(deep_path(path, args.deep_nodes, args.every).read_text())
        kept = sorted(int(i) for i in deep)
        states = [states[i] for i in kept]
        results, games = results[kept], games[kept]
        scores = np.array([deep[str(i)] for i in kept], dtype=np.float64)
    x = measure(states)
    if args.label in ("score", "deep"):
        clipped = np.clip(scores, -1000, 1000)
        y = sigmoid(SCORE_SCALE * clipped)
    else:
        y = results
    held = games % HOLDOUT_EVERY == HOLDOUT_EVERY - 1
    names = checkers_engine.ENGINE_NAMES
    start = dict(checkers_engine.ENGINE_WEIGHTS)
    if args.start is not None:
        start.update(json.loads(args.start.read_text(encoding="utf-8")))
    initial = [float(start[n]) for n in names]
    fixed = tuple(f for f in args.fixed.split(",") if f)
    unused = [n for i, n in enumerate(names) if not np.any(x[~held, i]) and n not in fixed]
    fit = tune(
        x[~held],
        y[~held],
        names,
        initial,
        kind=args.loss,
        ridge=args.ridge,
        anchor="men",
        fixed=(*fixed, *unused),
    )
    rounded = fit.rounded()
    w_round = np.array([rounded[n] for n in names], dtype=np.float64)
    report: dict[str, Any] = {
        "machine": machine_info(),
        "data": str(path),
        "label": args.label,
        "positions": {"train": int((~held).sum()), "held_out": int(held.sum())},
        "games": len(set(games.tolist())),
        "fixed": [*fixed, *unused],
        "train": {"before": fit.loss_before, "after": fit.loss_after},
        "held_out": {
            "before": loss(x[held], y[held], np.array(initial), fit.initial_scale, args.loss),
            "after": loss(x[held], y[held], np.array(fit.weights), fit.scale, args.loss),
            "after_rounded": loss(x[held], y[held], w_round, fit.scale, args.loss),
        },
        "scale": {"before": fit.initial_scale, "after": fit.scale},
        "weights_before": dict(zip(names, initial, strict=True)),
        "weights_rounded": rounded,
        "nonzero_positions": {n: int(np.count_nonzero(x[:, i])) for i, n in enumerate(names)},
    }
    if args.weights_out is not None:
        args.weights_out.write_text(json.dumps({"tuned": rounded}, indent=1) + "\n")
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print("Texel tuning of the engine evaluation")
    print(describe(report["machine"]))
    print(
        f"\n{report['games']} games, {report['positions']['train']:,} training and "
        f"{report['positions']['held_out']:,} held-out positions ({path}), label {args.label}"
    )
    ho = report["held_out"]
    print(f"  training loss  {fit.loss_before:.5f} -> {fit.loss_after:.5f}")
    print(
        f"  held-out loss  {ho['before']:.5f} -> {ho['after']:.5f} "
        f"(rounded weights {ho['after_rounded']:.5f})"
    )
    print(f"  scale K {fit.initial_scale:.6f} -> {fit.scale:.6f}")
    print(f"\n  {'feature':<18} {'old':>6} {'fitted':>9} {'rounded':>8}  positions != 0")
    for i, name in enumerate(names):
        print(
            f"  {name:<18} {initial[i]:>6g} {fit.weights[i]:>9.2f} {rounded[name]:>8}  "
            f"{report['nonzero_positions'][name]:,}"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Play or fit; exit 0 (2 for bad arguments)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    playing = sub.add_parser("play", help="play the self-play games")
    fitting = sub.add_parser("fit", help="fit the weights to the positions")
    labelling = sub.add_parser("label", help="label positions by a deeper search")
    for p in (playing, fitting, labelling):
        p.add_argument("--nodes", type=int, default=4000, help="nodes a move")
        p.add_argument("--games-per-opening", type=int, default=8)
        p.add_argument("--seed", type=int, default=17)
        p.add_argument("--data", type=Path, default=default_data_dir())
    fitting.add_argument("--loss", choices=LOSSES, default="log")
    fitting.add_argument("--ridge", type=float, default=0.0)
    fitting.add_argument("--label", choices=("result", "score", "deep"), default="result")
    for p in (labelling, fitting):
        p.add_argument("--deep-nodes", type=int, default=50_000, help="nodes of the label")
        p.add_argument("--every", type=int, default=3, help="label every n-th position")
    fitting.add_argument("--fixed", default="", help="comma-separated weights kept as they are")
    fitting.add_argument(
        "--start", type=Path, help="JSON object of starting weights (the rest engine's)"
    )
    fitting.add_argument("--weights-out", type=Path, help="write a strength.py weights file")
    fitting.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if args.nodes < 1 or args.games_per_opening < 1:
        parser.error("--nodes and --games-per-opening must be at least 1")
    if args.command == "play":
        path = data_path(args.data, args.nodes, args.games_per_opening, args.seed)
        print(f"Playing self-play games into {path}", file=sys.stderr)
        play(path, args.nodes, args.games_per_opening, args.seed)
        return 0
    if args.command == "label":
        path = data_path(args.data, args.nodes, args.games_per_opening, args.seed)
        label_deep(path, args.deep_nodes, args.every)
        return 0
    return fit(args)


if __name__ == "__main__":
    sys.exit(main())
