"""Commands over the search bots: `arena analyse`, `arena solve`, `arena bots`."""

from __future__ import annotations

import json
import time
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from bots.common import pv_texts
from bots.scoring import ENGINE
from bots.solve import solve
from bots.spec import BotSpecError, create_bot, describe_bots
from cli.common import fail, game_errors, load_game, plural
from cli.games import GameArg, OptionOpt, PositionOpt, natural_key

console = Console(highlight=False)


def register(app: typer.Typer) -> None:
    """Add the search commands to `app`."""
    app.command("bots")(list_bots)
    app.command("analyse")(analyse)
    app.command("analyze", hidden=True)(analyse)
    app.command("solve")(solve_command)


def list_bots() -> None:
    """List the bots, their options and defaults (bot specs: NAME:KEY=VALUE,...)."""
    table = Table(title="Arena bots: write a spec as NAME or NAME:KEY=VALUE,KEY=VALUE")
    table.add_column("bot")
    table.add_column("what it does")
    table.add_column("options (default)")
    for name, description, options in describe_bots():
        table.add_row(name, description, "\n".join(f"{k}={d}: {h}" for k, d, h in options) or "-")
    console.print(table)


def analyse(
    game: GameArg,
    bot: Annotated[
        str, typer.Option("--bot", "-b", help="The bot spec, e.g. alphabeta:depth=6,eval=material.")
    ],
    position: PositionOpt = None,
    option: OptionOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Search a position with a bot: its move, score, principal variation and statistics.

    The score is from the point of view of the side to move.
    """
    rules = load_game(game, option)
    with game_errors():
        state = rules.position_or_initial(position)
    if state.is_terminal():
        fail("the game is over in this position: there is nothing to analyse")
    try:
        searcher = create_bot(bot, rules, clock=time.perf_counter)
    except (BotSpecError, ValueError) as exc:
        fail(str(exc))
    result = searcher.choose(state)
    stats = result.stats
    move_text = state.format_move(result.move) if result.move is not None else None
    pv = stats.pv or pv_texts(state, result.pv)
    outcome, plies = score_outcome(result.score)
    if as_json:
        payload: dict[str, Any] = {
            "move": move_text,
            "score": result.score,
            "outcome": outcome,
            "plies": plies,
            "pv": pv,
            "nodes": stats.nodes,
            "depth": stats.depth,
            "seconds": round(stats.seconds, 6),
            "nps": round(stats.nps, 1),
            "bot": searcher.name,
            "stats": stats.as_dict(),
        }
        print(json.dumps(payload))
        return
    # The spec as given: the canonical name leaves out options at their defaults.
    console.print(f"{bot.strip()} on {rules.name}, {rules.player_names[state.to_move]} to move")
    console.print(f"  move   {move_text}")
    console.print(f"  score  {describe_score(result.score)} (for the side to move)")
    console.print(f"  pv     {' '.join(pv)}")
    console.print(
        f"  depth {stats.depth}, {stats.nodes:,} nodes, {stats.evaluations:,} evaluations, "
        f"{stats.seconds:.3f} s, {stats.nps:,.0f} nodes/s, table hits {stats.tt_hits:,}, "
        f"cut-offs {stats.cutoffs:,}"
        + (f", {stats.simulations:,} simulations" if stats.simulations else "")
    )


def score_outcome(score: float) -> tuple[str | None, int | None]:
    """Return what a search score proves: ("win" or "loss", plies to the end) or (None, None).

    Engine scores count a win `plies` plies away as WIN - plies; an MCTS proof is exactly
    WIN, with no distance (plies None).
    """
    if not (ENGINE.is_win(score) or ENGINE.is_loss(score)):
        return None, None
    outcome = "win" if score > 0 else "loss"
    distance = round(ENGINE.win - abs(score))
    return outcome, distance if distance > 0 else None


def describe_score(score: float) -> str:
    """Return a search score in words: "a forced win in 3 plies", "0.42"."""
    outcome, plies = score_outcome(score)
    if outcome is None:
        return f"{score:g}"
    if plies is None:
        return f"a proven {outcome}"
    return f"a forced {outcome} in {plural(plies, 'ply', 'plies')}"


def solve_command(
    game: GameArg,
    position: PositionOpt = None,
    option: OptionOpt = None,
    max_plies: Annotated[
        int | None,
        typer.Option("--max-plies", min=1, help="Checkers: longest forced win to look for."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Solve a position exactly: its value for the side to move and every optimal move.

    Connect Four scores follow Pons' convention (+(22-k) for a win with the k-th stone of the
    side to move); other games score +1 win, 0 draw, -1 loss. Checkers: small endgames, by a
    proof search of up to --max-plies plies (default 30).
    """
    rules = load_game(game, option)
    with game_errors():
        state = rules.position_or_initial(position)
    solution = solve(state, max_plies=max_plies, clock=time.perf_counter)
    best = sorted((state.format_move(m) for m in solution.best_moves), key=natural_key)
    if as_json:
        print(
            json.dumps(
                {
                    "value": solution.value,
                    "score": solution.score,
                    "best_moves": best,
                    "plies": solution.plies,
                    "nodes": solution.nodes,
                    "seconds": round(solution.seconds, 6),
                }
            )
        )
        return
    console.print(
        f"{rules.name}: {solution.value} for {rules.player_names[state.to_move]} (to move)"
    )
    console.print(f"  score       {solution.score}")
    if solution.plies is not None:
        console.print(f"  plies       {solution.plies} to the end with best play")
    console.print(f"  best moves  {' '.join(best) if best else '-'}")
    console.print(f"  {solution.nodes:,} nodes in {solution.seconds:.3f} s")
