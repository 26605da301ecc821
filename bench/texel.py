"""Texel tuning of the checkers positional evaluation from Arena's own self-play games.

    python bench/texel.py [--games-per-opening 4] [--data DIR] [--regenerate] [--loss log]
                          [--ridge 0] [--json]

1. Self-play (cached in `--data`, default $XDG_CACHE_HOME/arena/texel or ~/.cache/arena/texel;
   the positions are data, not code, and stay out of the repository): from each of the 156
   openings of the ACF three-move deck, `--games-per-opening` games of the engine against
   itself (`alphabeta`, depth 3 to 5 drawn per game, the old hand-set evaluation
   `positional_v1`), the first `RANDOM_PLIES` plies after the opening chosen at random with
   probability `RANDOM_RATE` so games from one opening differ. Games end by the rules (no
   move, 80 plies without progress, threefold repetition) or at `PLY_CAP` plies (a draw).
2. Every quiet position (side to move has no capture; quiescence search would look further
   there) from the end of the random plies on is labelled with its game's result for the side
   to move (1 win, 0.5 draw, 0 loss) and measured: the nine positional features.
3. `competition.tuning.tune` fits the scale K for the old weights (loss before), then the
   weights (loss after), rescaled so that a man stays 100. Games are split 4:1 into training
   and held-out positions (whole games, by index); both losses are printed for both parts.

Prints the fitted weights as a Python table to paste into bots/evaluation/checkers.py
(WEIGHTS_TUNED). Seeded: the same arguments give the same games and weights.
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
from bots.spec import create_bot  # noqa: E402
from competition.openings import deck  # noqa: E402
from competition.tuning import LOSSES, loss, tune  # noqa: E402
from games import get_game  # noqa: E402
from games.checkers import CheckersState  # noqa: E402

DEPTHS = (3, 4, 5)
RANDOM_PLIES = 10
RANDOM_RATE = 0.3
PLY_CAP = 300
HOLDOUT_EVERY = 5
"""Every fifth game is held out of the fit (its positions only score the weights)."""


def default_data_dir() -> Path:
    """Return the cache directory for the generated positions (outside the repository)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "arena" / "texel"


def play_one(
    opening_index: int, game_number: int, seed: int
) -> tuple[list[list[int]], float, int, int]:
    """Play one self-play game; return (feature rows, Black's result, plies, depth).

    Each row is the nine features of a quiet position followed by its side to move (0 Black).
    """
    game = get_game("checkers")
    openings = deck("acf-3move", game)
    rng = random.Random(f"{seed}:{opening_index}:{game_number}")
    depth = rng.choice(DEPTHS)
    bot = create_bot(f"alphabeta:depth={depth},eval=positional_v1", game)
    state = openings[opening_index].start_state(game)
    assert isinstance(state, CheckersState)
    rows: list[list[int]] = []
    plies = 0
    while not state.is_terminal() and plies < PLY_CAP:
        if plies < RANDOM_PLIES and rng.random() < RANDOM_RATE:
            move = rng.choice(list(state.legal_moves()))
        else:
            move = bot.choose(state).move
        if plies >= RANDOM_PLIES and not state.has_capture():
            rows.append([int(m(state)) for _, m, _ in ck.FEATURE_MEASURES] + [state.turn])
        state = state.apply(move)  # type: ignore[assignment]
        plies += 1
    outcome = state.outcome() if state.is_terminal() else None
    black = 0.5 if outcome is None or outcome.winner is None else 1.0 - outcome.winner
    return rows, black, plies, depth


def generate(path: Path, games_per_opening: int, seed: int) -> None:
    """Play the self-play games and save features, labels and game numbers to `path`."""
    openings = len(deck("acf-3move", "checkers"))
    features: list[list[int]] = []
    labels: list[float] = []
    games: list[int] = []
    total = openings * games_per_opening
    started = time.perf_counter()
    results = {1.0: 0, 0.5: 0, 0.0: 0}
    for number in range(total):
        rows, black, _plies, _depth = play_one(number % openings, number // openings, seed)
        results[black] += 1
        for row in rows:
            features.append(row[:-1])
            labels.append(black if row[-1] == 0 else 1.0 - black)
            games.append(number)
        if (number + 1) % 25 == 0 or number + 1 == total:
            print(
                f"  {number + 1}/{total} games, {len(labels):,} positions, "
                f"Black {results[1.0]} / draws {results[0.5]} / White {results[0.0]}, "
                f"{time.perf_counter() - started:.0f} s",
                file=sys.stderr,
                flush=True,
            )
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        path,
        features=np.array(features, dtype=np.int32),
        labels=np.array(labels, dtype=np.float64),
        games=np.array(games, dtype=np.int32),
        names=np.array(ck.FEATURE_NAMES),
    )


def main(argv: list[str] | None = None) -> int:
    """Generate (or load) the positions, fit, print the weights and losses; exit 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games-per-opening", type=int, default=4)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--data", type=Path, default=default_data_dir())
    parser.add_argument("--regenerate", action="store_true", help="replay the games")
    parser.add_argument("--loss", choices=LOSSES, default="log")
    parser.add_argument("--ridge", type=float, default=0.0)
    parser.add_argument(
        "--fixed",
        default="",
        help="comma-separated features whose weights stay as they are (e.g. endgame_approach)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if args.games_per_opening < 1:
        parser.error("--games-per-opening must be at least 1")

    path = args.data / f"checkers-g{args.games_per_opening}-s{args.seed}.npz"
    if args.regenerate or not path.exists():
        print(f"Playing self-play games into {path}", file=sys.stderr)
        generate(path, args.games_per_opening, args.seed)
    data = np.load(path)
    x = data["features"].astype(np.float64)
    y = data["labels"]
    held = data["games"] % HOLDOUT_EVERY == HOLDOUT_EVERY - 1
    names = ck.FEATURE_NAMES
    initial = [float(ck.WEIGHTS_V1[n]) for n in names]
    fixed = tuple(f for f in args.fixed.split(",") if f)
    fit = tune(
        x[~held],
        y[~held],
        names,
        initial,
        kind=args.loss,
        ridge=args.ridge,
        anchor="men",
        fixed=fixed,
    )
    rounded = fit.rounded()
    w_round = np.array([rounded[n] for n in names], dtype=np.float64)
    report: dict[str, Any] = {
        "machine": machine_info(),
        "data": str(path),
        "positions": {"train": int((~held).sum()), "held_out": int(held.sum())},
        "games": int(data["games"].max()) + 1,
        "loss": args.loss,
        "ridge": args.ridge,
        "fixed": list(fixed),
        "scale_before": fit.initial_scale,
        "scale_after": fit.scale,
        "train": {"before": fit.loss_before, "after": fit.loss_after},
        "held_out": {
            "before": loss(x[held], y[held], np.array(initial), fit.initial_scale, args.loss),
            "after": loss(x[held], y[held], np.array(fit.weights), fit.scale, args.loss),
            "after_rounded": loss(x[held], y[held], w_round, fit.scale, args.loss),
        },
        "weights_before": dict(zip(names, initial, strict=True)),
        "weights_after": dict(zip(names, fit.weights, strict=True)),
        "weights_rounded": rounded,
        "nonzero_positions": {n: int(np.count_nonzero(x[:, i])) for i, n in enumerate(names)},
        "newton_steps": fit.iterations,
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print("Texel tuning of the checkers positional evaluation")
    print(describe(report["machine"]))
    print(
        f"\n{report['games']} self-play games, {report['positions']['train']:,} training and "
        f"{report['positions']['held_out']:,} held-out quiet positions ({path})"
    )
    print(f"loss: mean {args.loss} loss, ridge {args.ridge}, fixed: {', '.join(fixed) or 'none'}")
    print(
        f"scale K: {fit.initial_scale:.6f} per hundredth of a man for the old weights, "
        f"{fit.scale:.6f} for the fitted ones"
    )
    ho = report["held_out"]
    print(f"  training loss  {fit.loss_before:.5f} -> {fit.loss_after:.5f}")
    print(
        f"  held-out loss  {ho['before']:.5f} -> {ho['after']:.5f} "
        f"(rounded weights {ho['after_rounded']:.5f})"
    )
    print(f"\n  {'feature':<18} {'old':>6} {'fitted':>9} {'rounded':>8}  positions != 0")
    for i, name in enumerate(names):
        print(
            f"  {name:<18} {initial[i]:>6g} {fit.weights[i]:>9.2f} {rounded[name]:>8}  "
            f"{report['nonzero_positions'][name]:,}"
        )
    print("\nWEIGHTS_TUNED = {" + ", ".join(f'"{n}": {rounded[n]}' for n in names) + "}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
