"""Checkers endings: does the engine convert three kings against two within the 80-ply rule?

    python bench/endings.py [--placements 24] [--nodes 3000] [--evals positional,endings]
                            [--defenders engine,greedy,random] [--seed 17] [--egdb] [--json]

From every placement of a fixed sample (random squares from `--seed`, the side ahead Black in
half of them and White in the other half, the side to move alternating, no capture pending),
the engine with three kings (`id:nodes=N,time=0,eval=E`: a node budget, so every run plays
the same moves) plays against each defender with two kings:

- `engine`: the same engine and evaluation (it knows the double corners and avoids trades);
- `greedy`: Arena's one-ply greedy bot on material;
- `random`: uniformly random moves (seeded).

A game ends by the rules (a side without pieces or moves loses; 80 plies without a capture or
a man move, or a threefold repetition, draw), so a win counts only if every capture came
within 80 plies of the last. Reported per evaluation and defender: wins, draws, losses, the
plies the wins took (median and maximum) and the longest capture-free stretch in them (how
close the win came to the 80-ply draw). Goal: every placement won, well within the rule.
`--evals` compares the old evaluation (`positional`) with the ending-aware one (`endings`).
`--egdb` adds `egdb=on` to the engine's spec (attacker, and the engine defender: then both sides
play perfectly from the endgame database, which must hold 5 pieces: `arena egdb build --pieces 5`,
found through ARENA_EGDB_DIR or the default directory).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO_ROOT))

from machine import describe, machine_info  # noqa: E402 - bench/ is put on the path above

from bots.spec import create_bot  # noqa: E402
from games import get_game  # noqa: E402
from games.checkers import BIT_OF_SQUARE, BLACK, WHITE, CheckersState, format_fen  # noqa: E402

TACTIC_MARGIN = 150
"""A placement is kept when a depth-6 material search leaves the side ahead this much up."""
MAX_PLIES = 400
"""A safety cap; the rules end every game long before (80 capture-free plies at most)."""


def placements(count: int, seed: int) -> list[CheckersState]:
    """Return `count` positions of three kings against two, the side ahead alternating colour.

    Squares are drawn at random from `seed`; positions where the side to move has a capture
    (or that are over), or where a short tactic wins material back (a depth-6 material search
    leaves the side ahead less than a king up: the defender has a two-for-one shot, and the
    position is no longer three kings against two) are drawn again, so every game starts quiet
    and is a real conversion task.
    """
    game = get_game("checkers")
    rng = random.Random(seed)
    probe = create_bot("alphabeta:depth=6,eval=material", game)
    states: list[CheckersState] = []
    while len(states) < count:
        index = len(states)
        strong = BLACK if index % 2 == 0 else WHITE
        turn = strong if index % 4 < 2 else 1 - strong
        squares = rng.sample(range(1, 33), 5)
        mask = [1 << BIT_OF_SQUARE[s] for s in squares]
        three = mask[0] | mask[1] | mask[2]
        two = mask[3] | mask[4]
        black, white = (three, two) if strong == BLACK else (two, three)
        state = CheckersState(game, black, white, black | white, turn)  # type: ignore[arg-type]
        if not state.legal_moves() or state.has_capture():
            continue
        score = probe.choose(state).score
        if (score if state.turn == strong else -score) >= TACTIC_MARGIN:
            states.append(state)
    return states


def play(state: CheckersState, attacker: Any, defender: Any) -> tuple[str, int, int]:
    """Play one game from `state`; return ("win" | "draw" | "loss" for the side ahead, plies,
    the longest stretch of plies without a capture)."""
    strong = 0 if state.black.bit_count() > state.white.bit_count() else 1
    plies = 0
    stretch = 0
    node: Any = state
    while node.outcome() is None and plies < MAX_PLIES:
        bot = attacker if node.to_move == strong else defender
        node = node.apply(bot.choose(node).move)
        plies += 1
        stretch = max(stretch, node.quiet)
    outcome = node.outcome()
    if outcome is None or outcome.winner is None:
        return "draw", plies, stretch
    return ("win" if outcome.winner == strong else "loss"), plies, stretch


def run(
    evaluation: str,
    defender_name: str,
    states: list[CheckersState],
    nodes: int,
    seed: int,
    egdb: bool = False,
) -> dict[str, Any]:
    """Play every placement with `evaluation` against one defender; return the tally."""
    game = get_game("checkers")
    engine_spec = f"id:time=0,nodes={nodes},eval={evaluation}" + (",egdb=on" if egdb else "")
    defender_spec = {
        "engine": engine_spec,
        "greedy": f"greedy:seed={seed}",
        "random": f"random:seed={seed}",
    }[defender_name]
    results = {"win": 0, "draw": 0, "loss": 0}
    win_plies: list[int] = []
    stretches: list[int] = []
    failed: list[str] = []
    start = time.perf_counter()
    for state in states:
        # Fresh bots per game: no table or history carried from one placement to the next.
        attacker = create_bot(engine_spec, game)
        defender = create_bot(defender_spec, game)
        result, plies, stretch = play(state, attacker, defender)
        results[result] += 1
        if result == "win":
            win_plies.append(plies)
            stretches.append(stretch)
        else:
            failed.append(format_fen(state))
    return {
        "evaluation": evaluation,
        "defender": defender_name,
        "attacker": engine_spec,
        "defender_spec": defender_spec,
        "games": len(states),
        **results,
        "median_plies": statistics.median(win_plies) if win_plies else None,
        "max_plies": max(win_plies) if win_plies else None,
        "median_stretch": statistics.median(stretches) if stretches else None,
        "max_stretch": max(stretches) if stretches else None,
        "not_won": failed,
        "seconds": round(time.perf_counter() - start, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--placements", type=int, default=24)
    parser.add_argument("--nodes", type=int, default=3000, help="engine nodes per move")
    parser.add_argument("--evals", default="positional,endings")
    parser.add_argument("--defenders", default="engine,greedy,random")
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--egdb", action="store_true", help="the engine probes the database")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not 1 <= args.placements <= 1000 or not 1 <= args.nodes <= 10**7:
        parser.error("--placements must be 1-1000 and --nodes 1-10000000")
    states = placements(args.placements, args.seed)
    rows = []
    for evaluation in args.evals.split(","):
        for defender in args.defenders.split(","):
            row = run(evaluation, defender, states, args.nodes, args.seed, args.egdb)
            rows.append(row)
            if not args.json:
                label = evaluation + ("+egdb" if args.egdb else "")
                print(
                    f"{label:>10} vs {defender:<7} won {row['win']:>2}/{row['games']} "
                    f"draw {row['draw']:>2} loss {row['loss']} "
                    f"plies median {row['median_plies']} max {row['max_plies']}, "
                    f"capture-free stretch median {row['median_stretch']} "
                    f"max {row['max_stretch']} "
                    f"({row['seconds']} s)",
                    flush=True,
                )
    if args.json:
        print(json.dumps({"machine": machine_info(), "rows": rows}, indent=2))
    else:
        print(describe(machine_info()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
