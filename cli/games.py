"""Commands over the rules alone: `arena games`, `arena show`, `arena perft`."""

from __future__ import annotations

import json
import re
import time
from typing import Annotated, Any

import typer
from rich.console import Console

from cli.common import fail, game_errors, load_game, plural
from games import State, game_names, perft
from games.registry import GAME_CLASSES

console = Console(highlight=False)

GameArg = Annotated[str, typer.Argument(help=f"The game: {', '.join(game_names())}.")]
PositionOpt = Annotated[
    str | None,
    typer.Option(
        "--position",
        "-p",
        help="Start from this position, in the game's notation (default: the start position).",
    ),
]
OptionOpt = Annotated[
    list[str] | None,
    typer.Option("--option", "-o", help="A game option as KEY=VALUE; repeatable."),
]


def natural_key(text: str) -> list[tuple[int, int | str]]:
    """Return a sort key that orders the numbers inside move text numerically (9-13 < 10-14)."""
    return [(0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", text)]


def register(app: typer.Typer) -> None:
    """Add the rules commands to `app`."""
    app.command("games")(list_games)
    app.command("show")(show)
    # A negative depth must reach the command as a number, to be refused in words, not be
    # taken for an unknown option.
    app.command("perft", context_settings={"ignore_unknown_options": True})(perft_command)


def list_games() -> None:
    """List the games with their options and defaults."""
    from rich.table import Table

    table = Table(title="Arena games")
    table.add_column("game")
    table.add_column("players")
    table.add_column("options (default)")
    table.add_column("description")
    for name in game_names():
        cls = GAME_CLASSES[name]
        options = ", ".join(f"{k}={v}" for k, v in cls.option_defaults().items()) or "-"
        table.add_row(name, " / ".join(cls.player_names), options, cls.description)
    console.print(table)


def show(game: GameArg, position: PositionOpt = None, option: OptionOpt = None) -> None:
    """Print the board, the side to move and the legal moves."""
    rules = load_game(game, option)
    with game_errors():
        state = rules.position_or_initial(position)
    console.print(state.render())
    console.print(f"position: {rules.format_position(state)}")
    outcome = state.outcome()
    if outcome is not None:
        winner = "draw" if outcome.winner is None else f"{rules.player_names[outcome.winner]} wins"
        console.print(f"game over: {winner} ({outcome.reason})")
        return
    moves = sorted((state.format_move(m) for m in state.legal_moves()), key=natural_key)
    console.print(
        f"{rules.player_names[state.to_move].capitalize()} to move; "
        f"{plural(len(moves), 'legal move')}:"
    )
    console.print("  " + " ".join(moves))


def perft_command(
    game: GameArg,
    depth: Annotated[int, typer.Argument(help="Plies to search (0 or more).")],
    position: PositionOpt = None,
    option: OptionOpt = None,
    divide: Annotated[
        bool, typer.Option("--divide", help="Also print the count below each legal move.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Count the leaf nodes of the legal-move tree to DEPTH plies (a whole multi-jump is one)."""
    if depth < 0:
        fail(f"the depth must be 0 or more plies, not {depth}")
    rules = load_game(game, option)
    with game_errors():
        state = rules.position_or_initial(position)
    start = time.perf_counter()
    per_move = _count(state, depth, show_progress=not as_json and depth >= 7)
    nodes = sum(n for _, n in per_move) if depth > 0 else 1
    seconds = time.perf_counter() - start
    if as_json:
        result: dict[str, Any] = {
            "game": rules.name,
            "depth": depth,
            "nodes": nodes,
            "seconds": round(seconds, 6),
            "position": rules.format_position(state),
        }
        if divide:
            result["divide"] = dict(per_move)
        print(json.dumps(result))
        return
    if divide:
        for text, count in sorted(per_move, key=lambda item: natural_key(item[0])):
            console.print(f"{text:>16}  {count:,}")
    rate = nodes / seconds if seconds > 0 else float("inf")
    console.print(f"perft({depth}) = {nodes:,} nodes in {seconds:.3f} s ({rate:,.0f} nodes/s)")


def _count(state: State[Any], depth: int, show_progress: bool) -> list[tuple[str, int]]:
    """Return (move text, leaf count) per legal move; a progress bar on long runs."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    if depth == 0:
        return []
    moves = state.legal_moves()
    if depth == 1:
        return [(state.format_move(m), 1) for m in moves]
    results: list[tuple[str, int]] = []
    with Progress(
        TextColumn("perft"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("root moves"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
        disable=not show_progress,
    ) as progress:
        task = progress.add_task("perft", total=len(moves))
        for move in moves:
            results.append((state.format_move(move), perft(state.apply_unchecked(move), depth - 1)))
            progress.advance(task)
    return results
