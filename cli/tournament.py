"""The `arena tournament` command: play bots against each other in-process and score them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from cli.common import fail, parse_option_pairs, plural
from cli.games import OptionOpt
from cli.sprt import SprtRun, match, split_settings, sprt_command
from cli.tournament_options import (
    SPRT_HELP,
    ConcurrencyOpt,
    GameOpt,
    JournalOpt,
    MoveTimeOpt,
    OpeningsOpt,
    PlyCapOpt,
    RecordsOpt,
    SeedOpt,
    console,
    openings,
)

if TYPE_CHECKING:
    from competition.openings import Opening
    from competition.runner import GameRecord, TournamentSpec


def register(app: typer.Typer) -> None:
    """Add the tournament and match commands to `app`."""
    app.command("tournament")(tournament)
    app.command("match")(match)


def tournament(
    bots: Annotated[
        list[str],
        typer.Option("--bots", "-b", help="Bot specs; repeat the option or list several."),
    ],
    extra_bots: Annotated[
        list[str] | None, typer.Argument(help="More bot specs (after --bots A B ...).")
    ] = None,
    game: GameOpt = "checkers",
    option: OptionOpt = None,
    fmt: Annotated[
        str,
        typer.Option("--format", help="round-robin, or gauntlet (the first bot against each)."),
    ] = "round-robin",
    games: Annotated[
        int | None,
        typer.Option(
            "--games", help="Games per pairing (even: colour-swapped pairs). [default: 2]"
        ),
    ] = None,
    concurrency: ConcurrencyOpt = 1,
    seed: SeedOpt = 0,
    ply_cap: PlyCapOpt = 200,
    move_time: MoveTimeOpt = None,
    openings_choice: OpeningsOpt = None,
    journal: JournalOpt = None,
    json_out: Annotated[
        Path | None,
        typer.Option(
            "--json", help="Write the results (standings, Elo, LOS, search, games) as JSON here."
        ),
    ] = None,
    html_out: Annotated[
        Path | None,
        typer.Option("--html", help="Write a self-contained HTML report with an Elo plot here."),
    ] = None,
    records_dir: RecordsOpt = None,
    sprt: Annotated[str | None, typer.Option("--sprt", metavar="SETTINGS", help=SPRT_HELP)] = None,
    max_games: Annotated[
        int, typer.Option("--max-games", help="With --sprt: stop, inconclusive, after this many.")
    ] = 10_000,
) -> None:
    """Play a tournament between bots; print points, Elo with 95% intervals and search stats.

    Checkers games start from the ACF 3-move deck (acf-3move), other games from
    seeded random openings; --openings names a deck or a file instead. Each
    opening is played twice with colours swapped. With --journal, an interrupted
    run continues where it stopped. With --sprt and two bots, pairs are played
    until the test says whether the first bot is stronger (see `arena match`).
    """
    from competition.journal import JournalError
    from competition.openings import OpeningError
    from competition.report import html_report, result_json, summarize, text_summary, write_records
    from competition.runner import FORMATS, TournamentError, TournamentSpec
    from games import GameError, get_game

    specs = [*bots, *(extra_bots or [])]
    if sprt is not None:
        specs, sprt_words = split_settings(specs)
        if games is not None:
            fail("with --sprt the games are capped by --max-games, not --games")
        sprt_command(
            SprtRun(
                specs,
                " ".join([sprt, *sprt_words]),
                game,
                option,
                max_games,
                concurrency,
                seed,
                ply_cap,
                move_time,
                openings_choice,
                journal,
                json_out,
                html_out,
                records_dir,
            )
        )
        return
    games = 2 if games is None else games
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
        chosen = openings(rules, openings_choice, games // 2, seed)
        records = _play(spec, chosen, concurrency, journal)
    except (TournamentError, OpeningError, JournalError, ValueError) as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot read {exc.filename or 'a file'}: {exc.strerror or exc}")
    result = summarize(spec, records)
    console.print(text_summary(result), markup=False, soft_wrap=True)
    try:
        if json_out is not None:
            text = json.dumps(result_json(result), indent=2, allow_nan=False)
            json_out.write_text(text + "\n", encoding="utf-8")
            console.print(f"wrote {json_out}", markup=False)
        if html_out is not None:
            html_out.write_text(html_report(result), encoding="utf-8")
            console.print(f"wrote {html_out}", markup=False)
        if records_dir is not None:
            paths = write_records(records_dir, spec, records, chosen)
            console.print(f"wrote {plural(len(paths), 'file')} in {records_dir}", markup=False)
    except (OSError, ValueError) as exc:
        fail(f"cannot write the results: {exc}")


def _play(
    spec: TournamentSpec, openings: list[Opening], concurrency: int, journal: Path | None
) -> list[GameRecord]:
    from competition.runner import run_tournament

    columns = (
        TextColumn("[bold]games"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
    )
    points = dict.fromkeys(spec.bots, 0.0)
    # Drawn on a terminal only: piped, a transient bar still leaves an empty line behind.
    with Progress(
        *columns, console=console, transient=True, disable=not console.is_terminal
    ) as bar:
        task = bar.add_task("", total=None)

        def advance(record: GameRecord, done: int, total: int) -> None:
            points[record.first] += record.result
            points[record.second] += 1.0 - record.result
            bar.update(task, completed=done, total=total, description=leaders(points))

        return run_tournament(spec, openings, concurrency, journal, progress=advance)


def leaders(points: dict[str, float], shown: int = 3) -> str:
    """Return the best `shown` bots with their points as rich markup, the leader in bold.

    `points` counts the games finished in this run (a resumed run's journal games are not
    reported to the progress callback).
    """
    best = sorted(points.items(), key=lambda item: -item[1])
    cells = [f"{escape(bot)} {score:g}" for bot, score in best[:shown]]
    if cells:
        cells[0] = f"[bold]{cells[0]}[/bold]"
    return "  ".join(cells) + (" ..." if len(best) > shown else "")
