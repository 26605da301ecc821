"""`arena grader make-puzzles`: make a test suite for a profile, the endgame's puzzles with
their generation's options and progress."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from autograder.profiles import PROFILES
from cli.common import fail

if TYPE_CHECKING:
    from autograder.endgame_puzzle_options import Progress as GenerationProgress
    from autograder.endgame_puzzle_options import PuzzleOptions

console = Console(highlight=False)


def make_puzzles_command(
    out: Annotated[Path, typer.Option("--out", help="The suite file to write (JSON).")],
    profile: Annotated[
        str, typer.Option("--profile", help=f"The assignment profile: {', '.join(PROFILES)}.")
    ] = "endgame",
    count: Annotated[
        int | None,
        typer.Option("--count", help="Puzzles (endgame) or legal-move positions (agent); 10."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random positions.")] = 0,
    pieces: Annotated[
        str | None,
        typer.Option(
            "--pieces",
            help="Endgame: pieces on the board, a count or a range; every split where neither "
            "side is more than two pieces ahead. 3-8.",
        ),
    ] = None,
    material: Annotated[
        list[str] | None,
        typer.Option(
            "--material",
            help="Endgame: red's pieces against black's, e.g. 3v5 (repeat for several mixes; "
            "replaces --pieces).",
        ),
    ] = None,
    kings: Annotated[
        float | None,
        typer.Option("--kings", help="Endgame: chance that a piece is a king (0: men only); 0.25."),
    ] = None,
    min_plies: Annotated[
        int | None, typer.Option("--min-plies", help="Endgame: shortest forced win kept; 3.")
    ] = None,
    max_plies: Annotated[
        int | None, typer.Option("--max-plies", help="Endgame: longest forced win kept; 11.")
    ] = None,
    min_choices: Annotated[
        int | None,
        typer.Option("--min-choices", help="Endgame: fewest legal first moves for red; 2."),
    ] = None,
    max_best: Annotated[
        int | None,
        typer.Option(
            "--max-best", help="Endgame: most first moves keeping the fastest win; no limit."
        ),
    ] = None,
    min_branching: Annotated[
        float | None,
        typer.Option(
            "--min-branching",
            help="Endgame: least mean legal moves per ply along the main line; 0.",
        ),
    ] = None,
    max_nodes: Annotated[
        int | None,
        typer.Option(
            "--max-nodes",
            help="Endgame: most proof-search nodes to certify the win and to decide each "
            "other first move (what the judge spends); 20000.",
        ),
    ] = None,
    tries: Annotated[
        int | None,
        typer.Option("--tries", help="Endgame: most positions drawn before giving up; 50000."),
    ] = None,
    public: Annotated[
        bool,
        typer.Option(
            "--public/--private",
            help="Public examples (visible to students) or a private graded suite (file 0600).",
        ),
    ] = False,
    egdb: Annotated[
        bool,
        typer.Option(
            "--egdb",
            help="Require the endgame database ($ARENA_EGDB_DIR; arena egdb build) to "
            "certify the puzzles it holds; without it, it is used where built.",
        ),
    ] = False,
) -> None:
    """Write a suite certified by Arena: solved endgame puzzles, or agent positions by category.

    Endgame puzzles are random positions of the chosen material, red to move, kept when
    Arena's proof search proves a red win in the plies range within --max-nodes (and the
    endgame database, where built and holding them, agrees), then filtered by their
    difficulty. The same seed and options make the same suite. Progress goes to stderr.
    """
    from autograder.endgame_judge import built_database
    from autograder.endgame_suite import PuzzleError
    from autograder.grade import GradeError, write_suite

    if profile not in PROFILES:
        fail(f"unknown profile {profile!r}: choose one of {', '.join(PROFILES)}")
    given = {
        "--pieces": pieces,
        "--material": material,
        "--kings": kings,
        "--min-plies": min_plies,
        "--max-plies": max_plies,
        "--min-choices": min_choices,
        "--max-best": max_best,
        "--min-branching": min_branching,
        "--max-nodes": max_nodes,
        "--tries": tries,
    }
    if profile != "endgame":
        named = [name for name, value in given.items() if value] + (["--egdb"] if egdb else [])
        if named:
            fail(f"{', '.join(named)} apply to the endgame profile only")
    options = None
    database = None
    if profile == "endgame":
        try:
            options = _puzzle_options(given)
            options.check()
        except PuzzleError as error:
            fail(str(error))
        database = built_database()
        if egdb and database is None:
            from bots.egdb.probe import default_directory

            fail(
                f"no endgame database in {default_directory()}: build one with "
                "`arena egdb build --pieces 4`, or leave out --egdb"
            )
    try:
        with _generation_progress() as progress:
            summary = write_suite(
                profile,
                out,
                seed,
                public=public,
                count=count,
                options=options,
                database=database,
                progress=progress if profile == "endgame" else None,
            )
    except GradeError as error:
        fail(str(error))
    console.print(escape(summary), soft_wrap=True)


def _puzzle_options(given: dict[str, Any]) -> PuzzleOptions:
    """Return the puzzle options of the command line, the defaults where none is given."""
    from autograder.endgame_puzzle_options import PuzzleOptions, parse_material, parse_pieces

    options = PuzzleOptions()
    changes: dict[str, Any] = {}
    if given["--material"]:
        changes["materials"] = tuple(parse_material(text) for text in given["--material"])
        if given["--pieces"] is not None:
            from autograder.endgame_suite import PuzzleError

            raise PuzzleError("give --pieces or --material, not both")
    if given["--pieces"] is not None:
        changes["pieces"] = parse_pieces(given["--pieces"])
    fields = {
        "--kings": "kings",
        "--min-plies": "min_plies",
        "--max-plies": "max_plies",
        "--min-choices": "min_choices",
        "--max-best": "max_best",
        "--min-branching": "min_branching",
        "--max-nodes": "max_nodes",
        "--tries": "max_tries",
    }
    changes.update(
        {field: given[name] for name, field in fields.items() if given[name] is not None}
    )
    return replace(options, **changes)


@contextmanager
def _generation_progress() -> Iterator[Callable[[GenerationProgress], None]]:
    """Yield a callback showing a generation's progress on stderr (puzzles found, positions
    drawn), removed once it ends."""
    from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bar

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total} puzzles"),
        TextColumn("{task.fields[tries]}"),
        TimeElapsedColumn(),
    )
    with Bar(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("certifying puzzles", total=None, tries="")

        def show(progress: GenerationProgress) -> None:
            bar.update(
                task,
                total=progress.count,
                completed=progress.found,
                tries=f"{progress.tries:,} of at most {progress.max_tries:,} positions",
            )

        yield show
