"""Playing strength with Elo intervals: Arena against open-spiel's bots, and evaluation A/B.

    python bench/strength.py peers --game checkers [--time 0.1] [--openings 20] [--journal F]
    python bench/strength.py evals --game checkers --a positional --b positional_v1
                                   (--depth 6 | --time 0.1) [--openings 40] [--journal F]
    python bench/strength.py engine --engine ~/.cache/arena/peers/cake/cake.so [--time 0.1]
                                    [--arena SPEC] [--depths 1,3,5] [--openings 20] [--journal F]
    python bench/strength.py specs --a "id:time=0.05" --b "id:time=0.05,lmr=off"
                                   [--openings 40] [--journal F]

`peers`: an external strength anchor. Arena's engine (`id:time=T`, iterative-deepening
alpha-beta with the game's default evaluation) plays open-spiel's own bots on the same game:

- `openspiel-mcts`: open-spiel's `MCTSBot` (UCT, c = 2, one random rollout per leaf, solver on),
  its simulation count per move set from its own measured speed so that a move takes about T
  seconds (the rate is re-measured after every move);
- `openspiel-alphabeta`: open-spiel's `alpha_beta_search` with a material evaluation (men 1,
  kings 2, scaled into (-1, 1) below its win value 1; Connect Four has no material, so there it
  searches for wins only), iterative deepening from depth 1 under a hard deadline of T seconds
  (an iteration that runs out of time is discarded).

A multi-jump is several open-spiel actions: each peer searches again after a jump that
continues (a forced continuation is played without search). The peers see the position
rebuilt from its FEN each move (checkers; tests/games/checkers_oracles.py does the mapping,
open-spiel cannot load positions) or replayed from the move history (Connect Four).

`evals`: the same engine with evaluation A against evaluation B, at equal depth
(`alphabeta:depth=D`) or at equal time (`id:time=T`).

`engine`: Arena (`id:time=T`, or `--arena SPEC`) against a real checkers engine, a shared
library speaking the CheckerBoard API (`cb:PATH` bots, bots/programs/cbapi.py), at equal time per
move (`cb:PATH:time=T`), or with `--depths` against the engine at each fixed depth in turn (a
ladder that places Arena between depths). docs/BENCHMARKS.md says how to build the engine
(Cake, outside the repository).

`specs`: any two Arena bot specs against each other (A/B of search options: one feature on
against off, the rest equal).

`--weights FILE` (every mode) names variants of checkers' `engine` evaluation for the specs'
`eval` option: a JSON object `{"name": {"feature": weight, ...}}`, the weights not given
kept at `engine`'s (bots.evaluation.checkers_engine.ENGINE_NAMES). The compiled core
searches them as it searches `engine`, so a tuned weight table plays from the file, e.g.
`specs --weights w.json --a "id:time=0,nodes=100000,eval=tuned" --b
"id:time=0,nodes=100000,eval=engine"`; the journal's identity holds the weights.

Both play each opening twice, colours swapped (checkers: the ACF three-move deck; Connect
Four: seeded random openings checked by Arena's solver, competition.openings), games judged by
Arena's referee (rules, 80-ply rule, repetition) with a ply cap, and fit Davidson Elo with 95%
profile intervals (competition.stats) with the peer, or B, at 0. Finished games go to a journal
as they end: rerunning with the same arguments resumes.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import math
import random
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO_ROOT))

from machine import describe, machine_info  # noqa: E402 - bench/ is put on the path above

from bots.evaluation import Knowledge, checkers_engine  # noqa: E402
from bots.evaluation.checkers_endings import engine_evaluation  # noqa: E402
from bots.evaluation.knowledge import knowledge_for  # noqa: E402
from bots.result import SearchResult, SearchStats  # noqa: E402
from bots.spec import Bot, BotSpecError, create_bot  # noqa: E402
from competition.journal import Journal  # noqa: E402
from competition.openings import Opening, deck, default_openings, select_openings  # noqa: E402
from competition.runner import GameRecord, GameTask, play_game  # noqa: E402
from competition.stats import GameResult, fit_elo  # noqa: E402
from games import Game, State, get_game  # noqa: E402

PEERS = ("openspiel-mcts", "openspiel-alphabeta")
OPENSPIEL_NAMES = {"checkers": "checkers", "connect4": "connect_four"}
PLY_CAP = {"checkers": 200, "connect4": 42}
UCT_C = 2.0
INITIAL_RATE = 500.0
"""open-spiel MCTS simulations per second assumed for its first move (then measured)."""


class PeerTimeoutError(Exception):
    """Raised inside open-spiel's alpha-beta when its deadline has passed."""


class OpenSpielPeer:
    """One of open-spiel's bots, playing Arena states: `choose` returns an Arena move."""

    def __init__(self, kind: str, game: Game, seconds: float, seed: int) -> None:
        import pyspiel

        self.kind = kind
        self.game = game
        self.seconds = seconds
        self.engine_name = f"OpenSpiel {importlib.metadata.version('open_spiel')} {kind}"
        """What game records name the peer as (a tournament's bots carry it)."""
        self.peer_game = pyspiel.load_game(OPENSPIEL_NAMES[game.name])
        self.rng = random.Random(seed)
        self.rate = INITIAL_RATE
        self.mcts: Any = None
        if kind == "openspiel-mcts":
            import numpy as np
            from open_spiel.python.algorithms import mcts

            evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(seed))
            self.mcts = mcts.MCTSBot(
                self.peer_game,
                UCT_C,
                max_simulations=100,
                evaluator=evaluator,
                solve=True,
                random_state=np.random.RandomState(seed + 1),
            )
        elif kind != "openspiel-alphabeta":
            raise ValueError(f"unknown peer {kind!r} (peers: {', '.join(PEERS)})")

    # -- positions and moves -------------------------------------------------------------------

    def peer_state(self, state: State[Any]) -> Any:
        """Return the open-spiel state of Arena's `state`."""
        if self.game.name == "connect4":
            peer = self.peer_game.new_initial_state()
            for column in state.history:  # type: ignore[attr-defined]
                peer.apply_action(int(column) - 1)
            return peer
        from tests.games.checkers_oracles import openspiel_state_from_fen

        return openspiel_state_from_fen(self.game.format_position(state))

    def arena_move(self, state: State[Any], peer: Any, actions: list[int]) -> Any:
        """Return Arena's move for the open-spiel `actions` played from `peer`."""
        if self.game.name == "connect4":
            return state.parse_move(str(actions[0] + 1))
        from tests.games.checkers_oracles import openspiel_complete_moves

        for notation, sequence in openspiel_complete_moves(peer):
            if sequence == actions:
                return state.parse_move(notation)
        raise RuntimeError(f"open-spiel actions {actions} are no whole move here")

    # -- search --------------------------------------------------------------------------------

    def choose(
        self, state: State[Any], *, time_budget: float | None = None, stop: Any = None
    ) -> SearchResult:
        """Return the peer's move for `state` (its time: `seconds`, within `time_budget`)."""
        seconds = self.seconds if time_budget is None else min(self.seconds, time_budget)
        start = time.perf_counter()
        root = self.peer_state(state)
        player = root.current_player()
        node = root.clone()
        actions: list[int] = []
        stats = SearchStats()
        while not node.is_terminal() and node.current_player() == player:
            legal = node.legal_actions()
            if len(legal) == 1:
                action = legal[0]
            else:
                left = max(seconds - (time.perf_counter() - start), seconds / 4)
                action = self._search(node, player, left, stats)
            actions.append(action)
            was_capture = self.game.name == "checkers" and _is_capture(node, action)
            node.apply_action(action)
            if not was_capture:
                break
        stats.seconds = time.perf_counter() - start
        return SearchResult(self.arena_move(state, root, actions), 0.0, stats=stats)

    def _search(self, node: Any, player: int, seconds: float, stats: SearchStats) -> int:
        if self.mcts is not None:
            simulations = max(10, int(self.rate * seconds))
            self.mcts.max_simulations = simulations
            started = time.perf_counter()
            action = int(self.mcts.step(node))
            elapsed = max(time.perf_counter() - started, 1e-6)
            self.rate = 0.5 * self.rate + 0.5 * simulations / elapsed
            stats.simulations += simulations
            stats.nodes += simulations
            return action
        return self._alphabeta(node, player, seconds, stats)

    def _alphabeta(self, node: Any, player: int, seconds: float, stats: SearchStats) -> int:
        from open_spiel.python.algorithms import minimax

        deadline = time.perf_counter() + seconds
        checkers = self.game.name == "checkers"
        counter = [0]

        def value(peer: Any) -> float:
            counter[0] += 1
            if counter[0] & 63 == 0 and time.perf_counter() > deadline:
                raise PeerTimeoutError
            if not checkers:
                return 0.0
            board = str(peer)
            mine = board.count("o") + 2 * board.count("8")
            theirs = board.count("+") + 2 * board.count("*")
            diff = mine - theirs if player == 0 else theirs - mine
            return diff / 50.0

        best = node.legal_actions()[0]
        for depth in range(1, 200):
            try:
                _, action = minimax.alpha_beta_search(
                    self.peer_game,
                    state=node.clone(),
                    value_function=value,
                    maximum_depth=depth,
                    maximizing_player_id=player,
                )
            except PeerTimeoutError:
                break
            best = int(action)
            stats.depth = depth
            if time.perf_counter() > deadline:
                break
        stats.nodes += counter[0]
        return best


def _is_capture(node: Any, action: int) -> bool:
    """Return True when open-spiel's checkers `action` removes a piece."""
    before = str(node)
    after = str(node.child(action))
    return sum(before.count(c) for c in "o8+*") != sum(after.count(c) for c in "o8+*")


def load_weights(path: Path) -> dict[str, dict[str, int]]:
    """Read a weights file: a JSON object of evaluation names, each an object of `engine`'s
    weights to change (the others keep `engine`'s: bots.evaluation.checkers_engine); ValueError
    when a name is taken or a weight unknown."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise ValueError(f"{path}: a weights file is an object of names, each an object")
    taken = knowledge_for(get_game("checkers")).evaluations
    variants: dict[str, dict[str, int]] = {}
    for name, changes in data.items():
        if name in taken:
            raise ValueError(f"{path}: {name!r} is already an evaluation of checkers")
        table = {**checkers_engine.ENGINE_WEIGHTS, **changes}
        variants[name] = checkers_engine.check_engine_weights(table)
    return variants


def knowledge_with(game: Game, variants: dict[str, dict[str, int]]) -> Knowledge | None:
    """The game's knowledge plus the `engine` variants by name (None: no variants)."""
    if not variants:
        return None
    knowledge = knowledge_for(game)
    added = {name: engine_evaluation(name, table) for name, table in variants.items()}
    return replace(knowledge, evaluations={**knowledge.evaluations, **added})


def peer_factory(
    seconds: float,
    seed: int,
    cpu_clock: str | None = None,
    knowledge: Knowledge | None = None,
) -> Callable[[str, Game], Any]:
    """Return a bot factory: open-spiel peers by name, Arena bots by spec (the bot `cpu_clock`
    names timed in CPU seconds of this process, the others in wall seconds) with `knowledge`
    (None: the game's own)."""

    def make(spec: str, game: Game) -> Bot | OpenSpielPeer:
        if spec in PEERS:
            return OpenSpielPeer(spec, game, seconds, seed)
        clock = time.process_time if spec == cpu_clock else time.perf_counter
        return create_bot(spec, game, clock=clock, knowledge=knowledge)

    return make


def openings_for(game: Game, count: int, seed: int) -> list[Opening]:
    """Return `count` openings: the ACF deck for checkers, random solver-checked ones else."""
    if game.name == "checkers":
        return select_openings(deck("acf-3move", game), count, seed)
    return select_openings(default_openings(game, count, seed), count, seed)


def run_match(
    game: Game,
    arena: str,
    opponents: list[str],
    openings: list[Opening],
    factory: Callable[[str, Game], Any],
    journal_path: Path | None,
    identity: dict[str, Any],
) -> list[GameRecord]:
    """Play `arena` against each opponent from every opening twice (colours swapped)."""
    tasks = []
    for pairing, other in enumerate(opponents):
        for opening in openings:
            pair = len(tasks) // 2
            for first, second in ((arena, other), (other, arena)):
                tasks.append(GameTask(len(tasks), pair, first, second, opening, pairing))
    journal = None if journal_path is None else Journal(journal_path, identity)
    done: dict[int, GameRecord] = {}
    if journal is not None:
        for data in journal.finished:
            record = GameRecord.from_dict(data)
            done[record.index] = record
    started = time.perf_counter()
    try:
        for task in tasks:
            if task.index in done:
                continue
            record = play_game(task, PLY_CAP[game.name], None, factory)
            done[record.index] = record
            if journal is not None:
                journal.append(record.to_dict())
            points = sum(r.score_of(arena) for r in done.values())
            print(
                f"  game {len(done)}/{len(tasks)}: {record.first} - {record.second} "
                f"{record.result:g} ({record.code.value}, {len(record.moves)} plies); "
                f"{arena} {points:g}/{len(done)}; {time.perf_counter() - started:.0f} s",
                file=sys.stderr,
                flush=True,
            )
    finally:
        if journal is not None:
            journal.close()
    return [done[t.index] for t in tasks]


def summarise(records: list[GameRecord], arena: str, opponents: list[str]) -> dict[str, Any]:
    """Return, per opponent: W/D/L for `arena`, Elo difference with 95% interval, move times."""
    out: dict[str, Any] = {}
    for other in opponents:
        games = [r for r in records if other in (r.first, r.second)]
        results = [GameResult(r.first, r.second, r.result, r.pair) for r in games]
        fit = fit_elo(results, anchor=other)
        rating = fit.rating(arena)
        scores = [r.score_of(arena) for r in games]

        def seconds_per_move(spec: str, games: list[GameRecord] = games) -> float:
            moves = sum(r.stats[0 if r.first == spec else 1].moves for r in games)
            secs = sum(r.stats[0 if r.first == spec else 1].seconds for r in games)
            return secs / moves if moves else 0.0

        def mean_depth(spec: str, games: list[GameRecord] = games) -> float:
            moves = sum(r.stats[0 if r.first == spec else 1].moves for r in games)
            depth = sum(r.stats[0 if r.first == spec else 1].depth_sum for r in games)
            return depth / moves if moves else 0.0

        codes: dict[str, int] = {}
        for r in games:
            codes[r.code.value] = codes.get(r.code.value, 0) + 1
        out[other] = {
            "games": len(games),
            "wins": scores.count(1.0),
            "draws": scores.count(0.5),
            "losses": scores.count(0.0),
            "score": sum(scores) / len(scores),
            "elo": rating.elo,
            "lower": rating.lower,
            "upper": rating.upper,
            "los": fit.los(arena, other),
            "seconds_per_move": {arena: seconds_per_move(arena), other: seconds_per_move(other)},
            "mean_depth": {arena: mean_depth(arena), other: mean_depth(other)},
            "endings": codes,
        }
    return out


def _elo(value: float) -> str:
    return f"{value:+.0f}" if math.isfinite(value) else ("+inf" if value > 0 else "-inf")


def print_summary(title: str, arena: str, summary: dict[str, Any], info: dict[str, Any]) -> None:
    """Print one line per opponent."""
    print(title)
    print(describe(info))
    for other, row in summary.items():
        t = row["seconds_per_move"]
        print(
            f"  {arena} vs {other}: +{row['wins']} ={row['draws']} -{row['losses']} "
            f"({row['games']} games, score {row['score']:.3f}); Elo {_elo(row['elo'])} "
            f"[{_elo(row['lower'])}, {_elo(row['upper'])}] (95%), LOS {row['los']:.3f}; "
            f"s/move {t[arena]:.3f} vs {t[other]:.3f}; endings {row['endings']}"
        )


def engine_match(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> tuple[str, list[str]]:
    """Return the Arena spec and the engine's specs for `engine`: one at time T, or a ladder."""
    if not args.time > 0:
        parser.error("--time must be positive")
    library = Path(args.engine).expanduser().resolve()
    arena = args.arena or f"id:time={args.time:g}"
    if not args.depths:
        return arena, [f"cb:{library}:time={args.time:g}"]
    try:
        depths = [int(d) for d in args.depths.split(",") if d.strip()]
    except ValueError:
        parser.error(f"--depths takes whole numbers separated by commas, not {args.depths!r}")
    if not depths or min(depths) < 1:
        parser.error("--depths must name depths of at least 1")
    return arena, [f"cb:{library}:depth={d}" for d in depths]


def main(argv: list[str] | None = None) -> int:
    """Run a mode and print the Elo summary; exit 0 (2 for bad arguments)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    peers = sub.add_parser("peers", help="Arena id:time=T against open-spiel's bots")
    evals = sub.add_parser("evals", help="evaluation A against evaluation B")
    engine = sub.add_parser("engine", help="Arena against a CheckerBoard-API engine")
    specs = sub.add_parser("specs", help="Arena bot spec A against bot spec B")
    for p in (peers, evals, engine, specs):
        p.add_argument("--game", choices=sorted(OPENSPIEL_NAMES), default="checkers")
        p.add_argument("--openings", type=int, default=20, help="openings (2 games each)")
        p.add_argument("--seed", type=int, default=17)
        p.add_argument("--journal", type=Path, help="JSON-lines journal (resume)")
        p.add_argument("--json", action="store_true", help="print one JSON object")
        p.add_argument(
            "--weights",
            type=Path,
            help="JSON file naming variants of the `engine` evaluation (name: {feature: "
            "weight}, the rest engine's), each then an `eval` of the specs",
        )
    peers.add_argument("--time", type=float, default=0.1, help="seconds per move, both sides")
    peers.add_argument("--peers", default=",".join(PEERS), help="comma-separated peers")
    evals.add_argument("--a", default="positional")
    evals.add_argument("--b", default="positional_v1")
    limit = evals.add_mutually_exclusive_group(required=True)
    limit.add_argument("--depth", type=int, help="equal depth: alphabeta:depth=D")
    limit.add_argument("--time", type=float, help="equal time: id:time=T")
    engine.add_argument("--engine", required=True, help="the engine's shared library")
    engine.add_argument("--time", type=float, default=0.1, help="seconds per move, both sides")
    engine.add_argument("--arena", help="Arena's bot spec (default: id:time=T)")
    engine.add_argument("--depths", help="comma-separated engine depths instead of its time")
    engine.add_argument(
        "--cpu-time",
        action="store_true",
        help="time Arena in CPU seconds of its process, as Cake's clock() times Cake "
        "(equal time on a loaded machine)",
    )
    specs.add_argument("--a", required=True, help="bot spec A (Elo reported for it)")
    specs.add_argument("--b", required=True, help="bot spec B (at Elo 0)")
    args = parser.parse_args(argv)
    if args.command == "engine" and args.game != "checkers":
        parser.error("a CheckerBoard engine plays checkers only")
    if args.openings < 1:
        parser.error("--openings must be at least 1")
    game = get_game(args.game)
    openings = openings_for(game, args.openings, args.seed)
    variants: dict[str, dict[str, int]] = {}
    if args.weights is not None:
        if game.name != "checkers":
            parser.error("--weights: the `engine` evaluation is a checkers one")
        try:
            variants = load_weights(args.weights)
        except (OSError, ValueError) as exc:
            parser.error(f"--weights: {exc}")
    knowledge = knowledge_with(game, variants)
    if args.command == "peers":
        if not args.time > 0:
            parser.error("--time must be positive")
        opponents = [p for p in args.peers.split(",") if p]
        unknown = [p for p in opponents if p not in PEERS]
        if unknown or not opponents:
            parser.error(f"unknown peers {unknown} (peers: {', '.join(PEERS)})")
        arena = f"id:time={args.time:g}"
        factory: Callable[[str, Game], Any] = peer_factory(
            args.time, args.seed, knowledge=knowledge
        )
        title = f"Arena {arena} against open-spiel's bots at {args.time:g} s/move, {game.name}"
    elif args.command == "engine":
        arena, opponents = engine_match(parser, args)
        for spec in (arena, *opponents):
            try:
                create_bot(spec, game, knowledge=knowledge)  # a missing library fails here
            except BotSpecError as exc:
                parser.error(f"{spec}: {exc}")
        factory = peer_factory(
            args.time, args.seed, arena if args.cpu_time else None, knowledge=knowledge
        )
        clock = " (Arena in CPU time)" if args.cpu_time else ""
        title = f"Arena {arena}{clock} against {', '.join(opponents)}, {game.name}"
    elif args.command == "specs":
        if args.a == args.b:
            parser.error("--a and --b must differ")
        arena, opponents = args.a, [args.b]
        for spec in (arena, *opponents):
            try:
                create_bot(spec, game, knowledge=knowledge)
            except BotSpecError as exc:
                parser.error(f"{spec}: {exc}")
        factory = peer_factory(1.0, args.seed, knowledge=knowledge)
        title = f"{arena} against {opponents[0]}, {game.name}"
    else:
        if args.depth is not None:
            if args.depth < 1:
                parser.error("--depth must be at least 1")
            limit_text = f"alphabeta:depth={args.depth}"
        else:
            if not args.time > 0:
                parser.error("--time must be positive")
            limit_text = f"id:time={args.time:g}"
        arena = f"{limit_text},eval={args.a}"
        opponents = [f"{limit_text},eval={args.b}"]
        for spec in (arena, *opponents):
            try:
                create_bot(spec, game, knowledge=knowledge)  # a bad name fails here
            except BotSpecError as exc:
                parser.error(str(exc))
        factory = peer_factory(1.0, args.seed, knowledge=knowledge)
        title = f"{arena} against {opponents[0]}, {game.name}"
    identity = {
        "bench": "strength",
        "command": args.command,
        "game": game.name,
        "arena": arena,
        "opponents": opponents,
        "openings": [o.name for o in openings],
        "seed": args.seed,
    }
    if getattr(args, "cpu_time", False):
        identity["cpu_time"] = True
    if variants:
        identity["weights"] = variants
    info = machine_info()
    print(f"{title}: {len(openings) * 2 * len(opponents)} games", file=sys.stderr)
    records = run_match(game, arena, opponents, openings, factory, args.journal, identity)
    summary = summarise(records, arena, opponents)
    if args.json:
        print(json.dumps({"machine": info, "title": title, "arena": arena, "summary": summary}))
        return 0
    print_summary(title, arena, summary, info)
    return 0


if __name__ == "__main__":
    sys.exit(main())
