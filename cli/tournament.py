"""The `arena tournament` command: play bots against each other in-process and score them."""

from __future__ import annotations

import json
from collections.abc import Sequence
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
    from cli.tournament_swiss import SwissPlayed
    from competition.openings import Opening
    from competition.runner import GameRecord, GameTask, TournamentSpec


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
        typer.Option(
            "--format",
            help="round-robin, gauntlet (the first bot against each), or swiss (rounds "
            "paired from the results so far; see --rounds).",
        ),
    ] = "round-robin",
    games: Annotated[
        int | None,
        typer.Option(
            "--games",
            help="Games per pairing, 2 unless told (even: colour-swapped pairs; a Swiss board "
            "plays 2).",
        ),
    ] = None,
    rounds: Annotated[
        int | None,
        typer.Option(
            "--rounds",
            help="With --format swiss: rounds to play, at most bots - 1 (default: "
            "ceil(log2(bots)), enough for a bot that wins every board to finish alone on top).",
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
    opening is played twice with colours swapped. With --format swiss, each round
    pairs bots of like scores who have not met, every board one opening played
    twice with colours swapped, and an odd bot out gets a bye worth a won board
    (2 points); the Swiss table ranks by score, then Buchholz, then
    Sonneborn-Berger. With --journal, an interrupted run continues where it
    stopped. With --sprt and two bots, pairs are played until the test says
    whether the first bot is stronger (see `arena match`).
    """
    from competition.journal import JournalError
    from competition.openings import OpeningError
    from competition.report import html_report, result_json, summarize, text_summary, write_records
    from competition.runner import FORMATS, TournamentError, TournamentSpec
    from games import GameError, get_game

    specs = [*bots, *(extra_bots or [])]
    if sprt is not None:
        specs, sprt_words = split_settings(specs)
        if fmt == "swiss" or rounds is not None:
            fail(
                "--sprt plays a match of two bots, not a Swiss tournament: leave out "
                "--format swiss and --rounds"
            )
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
    if fmt not in FORMATS:
        fail(f"unknown format {fmt!r} (formats: {', '.join(FORMATS)})")
    if fmt == "swiss":
        from cli.tournament_swiss import default_rounds

        if games not in (None, 2):
            fail(
                f"a Swiss board is one colour-swapped pair of games, not --games {games}: "
                "leave --games out, and play more --rounds for more games"
            )
        rounds = default_rounds(len(specs)) if rounds is None else rounds
    elif rounds is not None:
        fail(f"--rounds is for --format swiss (a {fmt} plays all its pairings, --games games each)")
    games = 2 if games is None else games
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
        rounds=rounds,
    )
    played: SwissPlayed | None = None
    try:
        spec.validate()
        if rounds is None:
            chosen = openings(rules, openings_choice, games // 2, seed)
            records = _play(spec, chosen, concurrency, journal)
        else:
            chosen = openings(rules, openings_choice, rounds, seed)  # one a round
            played = _play_swiss(spec, chosen, concurrency, journal)
            records = list(played.records)
    except (TournamentError, OpeningError, JournalError, ValueError) as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot read {exc.filename or 'a file'}: {exc.strerror or exc}")
    result = summarize(spec, records)
    console.print(text_summary(result), markup=False, soft_wrap=True)
    if played is not None:
        from cli.tournament_swiss import table_text

        console.print("\n" + table_text(played.table()), markup=False, soft_wrap=True)
    try:
        if json_out is not None:
            data = result_json(result)
            if played is not None:
                from cli.tournament_swiss import swiss_json

                data["swiss"] = swiss_json(played)
            text = json.dumps(data, indent=2, allow_nan=False)
            json_out.write_text(text + "\n", encoding="utf-8")
            console.print(f"wrote {json_out}", markup=False)
        if html_out is not None:
            table = () if played is None else played.table()
            html_out.write_text(html_report(result, table), encoding="utf-8")
            console.print(f"wrote {html_out}", markup=False)
        if records_dir is not None:
            numbers = None if played is None else played.round_numbers()
            paths = write_records(records_dir, spec, records, chosen, rounds=numbers)
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


def _play_swiss(
    spec: TournamentSpec, openings: list[Opening], concurrency: int, journal: Path | None
) -> SwissPlayed:
    """Play a Swiss tournament round by round, each round's boards printed as it ends."""
    from cli.tournament_swiss import BYE_POINTS, round_text, run_swiss
    from competition.swiss_schedule import games_per_round

    assert spec.rounds is not None
    rounds = spec.rounds
    columns = (
        TextColumn("[bold]games"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
    )
    scores = dict.fromkeys(spec.bots, 0.0)  # byes included, journal games too
    done = 0
    current = 0
    with Progress(
        *columns, console=console, transient=True, disable=not console.is_terminal
    ) as bar:
        task = bar.add_task("", total=rounds * games_per_round(len(spec.bots)))

        def show() -> None:
            description = f"round {current}/{rounds}  {leaders(scores)}"
            bar.update(task, completed=done, description=description)

        def round_start(tasks: Sequence[GameTask], stored: dict[int, GameRecord]) -> None:
            nonlocal current
            current += 1
            seated = {t.first for t in tasks} | {t.second for t in tasks}
            for bot in spec.bots:
                if bot not in seated:
                    scores[bot] += BYE_POINTS
            for record in stored.values():
                count(record)
            show()

        def count(record: GameRecord) -> None:
            nonlocal done
            done += 1
            scores[record.first] += record.result
            scores[record.second] += 1.0 - record.result

        def game_over(record: GameRecord) -> None:
            count(record)
            show()

        return run_swiss(
            spec,
            openings,
            concurrency,
            journal,
            round_start=round_start,
            game_over=game_over,
            round_over=lambda result: console.print(
                round_text(result, rounds), markup=False, soft_wrap=True
            ),
        )


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
