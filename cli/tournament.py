"""The `arena tournament` command: play bots against each other in-process and score them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from cli.common import fail, parse_option_pairs
from cli.games import OptionOpt
from games import Game, GameError, get_game
from tournament.journal import JournalError
from tournament.openings import (
    Opening,
    OpeningError,
    checkers_deck,
    load_openings,
    random_openings,
)
from tournament.runner import (
    FORMATS,
    GameRecord,
    TournamentError,
    TournamentSpec,
    run_tournament,
)

console = Console(highlight=False)


def register(app: typer.Typer) -> None:
    """Add the tournament command to `app`."""
    app.command("tournament")(tournament)


def tournament(
    bots: Annotated[
        list[str],
        typer.Option("--bots", "-b", help="Bot specs; repeat the option or list several."),
    ],
    extra_bots: Annotated[
        list[str] | None, typer.Argument(help="More bot specs (after --bots A B ...).")
    ] = None,
    game: Annotated[str, typer.Option("--game", "-g", help="The game.")] = "checkers",
    option: OptionOpt = None,
    fmt: Annotated[
        str,
        typer.Option("--format", help="round-robin, or gauntlet (the first bot against each)."),
    ] = "round-robin",
    games: Annotated[
        int, typer.Option("--games", help="Games per pairing (even: colour-swapped pairs).")
    ] = 2,
    concurrency: Annotated[int, typer.Option("--concurrency", "-j", help="Worker processes.")] = 1,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the openings.")] = 0,
    ply_cap: Annotated[
        int, typer.Option("--ply-cap", help="Plies after which a game is drawn.")
    ] = 200,
    move_time: Annotated[
        float | None,
        typer.Option("--move-time", help="Seconds per move (default: the bots' own limits)."),
    ] = None,
    openings_file: Annotated[
        Path | None, typer.Option("--openings", help="Openings file, one per line.")
    ] = None,
    journal: Annotated[
        Path | None,
        typer.Option("--journal", help="Journal file: resume from it, append each game to it."),
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the spec and every game as JSON here.")
    ] = None,
) -> None:
    """Play a tournament between bots and print the points table.

    Checkers games start from the ACF 3-move deck; other games from seeded random openings.
    Each opening is played twice with colours swapped. With --journal, an interrupted run
    continues where it stopped.
    """
    specs = [*bots, *(extra_bots or [])]
    if fmt not in FORMATS:
        fail(f"unknown format {fmt!r} (formats: {', '.join(FORMATS)})")
    if concurrency < 1:
        fail(f"--concurrency must be at least 1, not {concurrency}")
    try:
        rules = get_game(game, parse_option_pairs(option))
    except GameError as exc:
        fail(str(exc))
    spec = TournamentSpec(
        game=rules.name,
        bots=tuple(specs),
        options=tuple(sorted(rules.option_texts.items())),
        format=fmt,  # type: ignore[arg-type]  # checked against FORMATS above
        games_per_pairing=games,
        seed=seed,
        ply_cap=ply_cap,
        move_time=move_time,
    )
    try:
        spec.validate()
        openings = _openings(rules, openings_file, games // 2, seed)
        records = _play(spec, openings, concurrency, journal)
    except (TournamentError, OpeningError, JournalError, FileNotFoundError, ValueError) as exc:
        fail(str(exc))
    _print_table(spec, records)
    if json_out is not None:
        payload: dict[str, Any] = {
            "spec": spec.to_dict(),
            "standings": standings(spec, records),
            "games": [record.to_dict() for record in records],
        }
        json_out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        console.print(f"wrote {json_out}")


def _openings(rules: Game, path: Path | None, needed: int, seed: int) -> list[Opening]:
    if path is not None:
        return load_openings(path, rules)
    if rules.name == "checkers":
        return checkers_deck()
    plies = 2 if rules.name == "tictactoe" else 4
    return random_openings(rules, max(needed, 1), plies, seed)


def _play(
    spec: TournamentSpec, openings: list[Opening], concurrency: int, journal: Path | None
) -> list[GameRecord]:
    columns = (
        TextColumn("[bold]games"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("games", total=None)

        def advance(record: GameRecord, done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        return run_tournament(spec, openings, concurrency, journal, progress=advance)


def standings(spec: TournamentSpec, records: list[GameRecord]) -> list[dict[str, Any]]:
    """Return each bot's points, wins, draws and losses, best first (ties in spec order)."""
    points = dict.fromkeys(spec.bots, 0.0)
    counts = {bot: [0, 0, 0] for bot in spec.bots}  # wins, draws, losses
    for record in records:
        for bot in (record.first, record.second):
            score = record.score_of(bot)
            points[bot] += score
            counts[bot][0 if score == 1 else 1 if score == 0.5 else 2] += 1
    return [
        {
            "bot": bot,
            "points": points[bot],
            "wins": counts[bot][0],
            "draws": counts[bot][1],
            "losses": counts[bot][2],
            "games": sum(counts[bot]),
        }
        for bot in sorted(spec.bots, key=lambda bot: -points[bot])
    ]


def _print_table(spec: TournamentSpec, records: list[GameRecord]) -> None:
    table = Table(title=f"{spec.game} {spec.format}: {len(records)} games")
    for column in ("bot", "points", "W", "D", "L", "games"):
        table.add_column(column, justify="left" if column == "bot" else "right")
    for row in standings(spec, records):
        table.add_row(
            row["bot"],
            f"{row['points']:g}",
            str(row["wins"]),
            str(row["draws"]),
            str(row["losses"]),
            str(row["games"]),
        )
    console.print(table)
