"""The `arena match` command (and `arena tournament --sprt`): two bots play colour-swapped
pairs until a sequential probability ratio test decides which is stronger."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from cli.common import fail, parse_option_pairs, plural
from cli.games import OptionOpt
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
    from competition.sequential import SprtStatus
    from competition.stats.sprt import SprtTest


def match(
    bots: Annotated[
        list[str],
        typer.Argument(
            metavar="BOT_A BOT_B", help="The two bot specs: is the first stronger than the second?"
        ),
    ],
    sprt: Annotated[str, typer.Option("--sprt", metavar="SETTINGS", help=SPRT_HELP)],
    game: GameOpt = "checkers",
    option: OptionOpt = None,
    max_games: Annotated[
        int, typer.Option("--max-games", help="Stop, inconclusive, after this many games.")
    ] = 10_000,
    concurrency: ConcurrencyOpt = 1,
    seed: SeedOpt = 0,
    ply_cap: PlyCapOpt = 200,
    move_time: MoveTimeOpt = None,
    openings_choice: OpeningsOpt = None,
    journal: JournalOpt = None,
    json_out: Annotated[
        Path | None,
        typer.Option("--json", help="Write the verdict, the counts and every game as JSON here."),
    ] = None,
    html_out: Annotated[
        Path | None,
        typer.Option("--html", help="Write a self-contained HTML report of the games here."),
    ] = None,
    records_dir: RecordsOpt = None,
) -> None:
    """Is the first bot stronger? Play colour-swapped pairs until an SPRT decides.

    Each pair plays one opening twice, the bots swapping colours (checkers:
    the ACF 3-move deck; other games: 16 seeded random openings; --openings
    names a deck or a file), the openings dealt in turn. The live line shows
    the log-likelihood ratio (LLR) of the completed pairs between its bounds,
    and the counts; the match ends when the LLR crosses a bound (H1: the
    first bot is elo1 stronger; H0: it is elo0) or, inconclusive, at
    --max-games. With --journal, an interrupted match continues where it
    stopped.
    """
    specs, words = split_settings(bots)
    sprt_command(
        SprtRun(
            specs,
            " ".join([sprt, *words]),
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


def split_settings(words: list[str]) -> tuple[list[str], list[str]]:
    """Return (bot specs, SPRT settings) of the command line's words.

    `--sprt elo0=0 elo1=5` leaves `elo1=5` among the bot specs: a word with `=` and no `:`
    cannot be a bot spec (those are NAME or NAME:KEY=VALUE), so it is an SPRT setting.
    """
    specs = [w for w in words if not ("=" in w and ":" not in w)]
    return specs, [w for w in words if "=" in w and ":" not in w]


@dataclass(frozen=True)
class SprtRun:
    """The command line of an SPRT match, as `arena match` and `arena tournament` take it."""

    bots: list[str]
    settings: str
    game: str
    option: list[str] | None
    max_games: int
    concurrency: int
    seed: int
    ply_cap: int
    move_time: float | None
    openings_choice: str | None
    journal: Path | None
    json_out: Path | None
    html_out: Path | None
    records_dir: Path | None


def sprt_command(run: SprtRun) -> None:
    """Check the settings, play the match live and print the verdict."""
    from dataclasses import replace

    from competition.journal import JournalError
    from competition.openings import OpeningError
    from competition.report import html_report, result_json, summarize, write_records
    from competition.runner import TournamentError, TournamentSpec
    from competition.sequential import SPRT_OPENINGS
    from competition.stats.sprt import SprtError, SprtTest
    from games import GameError, get_game

    try:
        test = SprtTest.parse(run.settings)
    except SprtError as exc:
        fail(str(exc))
    if len(run.bots) != 2:
        fail(f"an SPRT match is between 2 bots, got {len(run.bots)}: {' '.join(run.bots)}")
    if run.concurrency < 1:
        fail(f"--concurrency must be at least 1, not {run.concurrency}")
    if run.max_games < 2 or run.max_games % 2:
        fail(f"--max-games must be even and at least 2 (colour-swapped pairs), not {run.max_games}")
    try:
        rules = get_game(run.game, parse_option_pairs(run.option))
    except GameError as exc:
        fail(str(exc))
    spec = TournamentSpec(
        game=rules.name,
        bots=tuple(run.bots),
        options=tuple(sorted(rules.option_texts.items())),
        seed=run.seed,
        ply_cap=run.ply_cap,
        move_time=run.move_time,
    )
    try:
        spec.validate()
        chosen = openings(rules, run.openings_choice, SPRT_OPENINGS, run.seed)
        status, records = _play_sprt(spec, test, chosen, run)
    except (TournamentError, OpeningError, JournalError, ValueError) as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot read {exc.filename or 'a file'}: {exc.strerror or exc}")
    console.print(sprt_summary(status), markup=False, soft_wrap=True)
    if not records:
        return
    result = summarize(replace(spec, games_per_pairing=len(records)), records)
    try:
        if run.json_out is not None:
            data = {"sprt": status.to_dict(), **result_json(result)}
            text = json.dumps(data, indent=2, allow_nan=False)
            run.json_out.write_text(text + "\n", encoding="utf-8")
            console.print(f"wrote {run.json_out}", markup=False)
        if run.html_out is not None:
            run.html_out.write_text(html_report(result), encoding="utf-8")
            console.print(f"wrote {run.html_out}", markup=False)
        if run.records_dir is not None:
            paths = write_records(run.records_dir, spec, records, chosen)
            console.print(f"wrote {plural(len(paths), 'file')} in {run.records_dir}", markup=False)
    except (OSError, ValueError) as exc:
        fail(f"cannot write the results: {exc}")


def _play_sprt(
    spec: TournamentSpec, test: SprtTest, openings: list[Opening], run: SprtRun
) -> tuple[SprtStatus, list[GameRecord]]:
    from competition.sequential import run_sprt

    columns = (
        TextColumn("[bold]pairs"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
    )
    # Drawn on a terminal only: piped, a transient bar still leaves an empty line behind.
    with Progress(
        *columns, console=console, transient=True, disable=not console.is_terminal
    ) as bar:
        task = bar.add_task("", total=run.max_games // 2)

        def advance(status: SprtStatus, finished: int) -> None:
            bar.update(task, completed=status.pairs, description=escape(sprt_line(status)))

        return run_sprt(
            spec, test, openings, run.max_games, run.concurrency, run.journal, progress=advance
        )


def sprt_line(status: SprtStatus) -> str:
    """Return the live line: LLR within its bounds, W-D-L and the pentanomial counts."""
    test = status.test
    penta = " ".join(str(c) for c in status.pentanomial)
    return (
        f"LLR {status.llr:+.2f} ({test.lower_bound:+.2f}, {test.upper_bound:+.2f})  "
        f"W-D-L {status.wins}-{status.draws}-{status.losses}  penta [{penta}]"
    )


def sprt_summary(status: SprtStatus) -> str:
    """Return the verdict block printed at the end of an SPRT match."""
    from competition.stats.sprt import Verdict

    test = status.test
    first, second = status.bots
    favours = "the games favour elo{}={:g} over elo{}={:g}"
    verdict = {
        Verdict.H1: f"H1 accepted: {first} is stronger than {second} "
        f"({favours.format(1, test.elo1, 0, test.elo0)})",
        Verdict.H0: f"H0 accepted: {first} is not elo1 stronger than {second} "
        f"({favours.format(0, test.elo0, 1, test.elo1)})",
        Verdict.INCONCLUSIVE: f"inconclusive: no decision within {status.max_games:,} games",
        None: "stopped before a decision",
    }[status.verdict]
    lines = [
        f"SPRT {test.describe()}: {first} vs {second}",
        f"{verdict}",
        f"LLR {status.llr:+.3f} (bounds {test.lower_bound:+.3f}, {test.upper_bound:+.3f}) "
        f"after {plural(status.games, 'game')} ({plural(status.pairs, 'pair')})",
        f"games W-D-L {status.wins}-{status.draws}-{status.losses} for {first}",
        "pairs LL LD DD/WL WD WW: " + " ".join(str(c) for c in status.pentanomial),
    ]
    estimate = status.elo()
    if estimate is not None:
        lines.append(
            f"Elo {_signed(estimate.elo)} (95% {_signed(estimate.lower)} to "
            f"{_signed(estimate.upper)}), nElo {_signed(estimate.nelo)}, score "
            f"{estimate.score:.3f} (not corrected for stopping early)"
        )
    return "\n".join(lines)


def _signed(value: float) -> str:
    if value == float("inf"):
        return "+inf"
    if value == float("-inf"):
        return "-inf"
    return f"{value:+.1f}"
