"""`arena egdb`: build, inspect and probe the checkers endgame database."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from cli.common import fail, game_errors, plural

DirOpt = Annotated[
    Path | None,
    typer.Option(
        "--dir",
        help="The database directory (default: $ARENA_EGDB_DIR, else "
        "~/.local/share/arena/egdb or $XDG_DATA_HOME/arena/egdb).",
    ),
]


def register(app: typer.Typer) -> None:
    """Add the `egdb` command group to `app`."""
    group = typer.Typer(
        name="egdb",
        help="The checkers endgame database: retrograde analysis of every position with few "
        "pieces (see docs/BOTS.md, 'Endgame database').",
        no_args_is_help=True,
    )
    group.command("build")(build_command)
    group.command("status")(status_command)
    group.command("probe")(probe_command)
    app.add_typer(group, name="egdb")


def _directory(directory: Path | None) -> Path:
    from bots.egdb.probe import default_directory

    return directory if directory is not None else default_directory()


def build_command(
    pieces: Annotated[
        int, typer.Option("--pieces", "-n", help="Build every position of 1 to N pieces.")
    ],
    directory: DirOpt = None,
) -> None:
    """Build (or resume building) the database of every position with up to N pieces."""
    from bots.egdb import DatabaseError
    from bots.egdb.store import MAX_BUILD_PIECES, BuildEvent, build

    if not 1 <= pieces <= MAX_BUILD_PIECES:
        fail(f"--pieces must be 1 to {MAX_BUILD_PIECES}, not {pieces}")
    where = _directory(directory)
    console = Console(stderr=True)
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.percentage:>5.1f}%"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=False) as progress:
        task = progress.add_task("starting", total=1)

        def show(event: BuildEvent) -> None:
            text = f"{event.signature.name}"
            if event.kind == "layer":
                text += f" layer {event.layer}, {event.left:,} open"
            elif event.kind == "kept":
                text += " kept"
            progress.update(task, total=event.total, completed=event.done, description=text)

        try:
            manifest = build(where, pieces, progress=show)
        except (DatabaseError, OSError) as exc:
            fail(str(exc))
    positions = sum(info.positions for info in manifest.signatures.values())
    seconds = sum(info.seconds for info in manifest.signatures.values())
    print(
        f"{where}: {plural(len(manifest.signatures), 'signature')}, "
        f"{plural(positions, 'position')} (up to {manifest.pieces} pieces), "
        f"built in {seconds:.1f} s of solving"
    )


SHORT_CHECKSUM = 12
"""Hex digits of a table's SHA-256 shown in the status table (--json gives all 64)."""


def status_command(
    directory: DirOpt = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the manifest, full checksums and checks as JSON.")
    ] = False,
    check: Annotated[
        bool,
        typer.Option(
            "--verify/--no-verify",
            help="Re-hash every table and compare it with the manifest's SHA-256 (the default; "
            "about a second per 100 MB), or show the recorded checksums unchecked.",
        ),
    ] = True,
) -> None:
    """Show each built signature: counts of wins, losses and draws, longest distance, checksum.

    Every table's SHA-256 is recomputed and compared with the one the build recorded, unless
    --no-verify; the table says "ok" or "DAMAGED" for each, and the command exits 1 naming
    the damaged ones.
    """
    from bots.egdb import DatabaseError
    from bots.egdb.store import check_tables, read_manifest

    where = _directory(directory)
    try:
        manifest = read_manifest(where)
        checked = check_tables(where) if check else {}
    except DatabaseError as exc:
        fail(str(exc))
    damaged = sorted(name for name, ok in checked.items() if not ok)
    if as_json:
        entries = {
            s.name: {**i.as_json(), "verified": checked.get(s.name)}
            for s, i in sorted(manifest.signatures.items())
        }
        print(
            json.dumps(
                {
                    "directory": str(where),
                    "pieces": manifest.pieces,
                    "verified": check,
                    "signatures": entries,
                    "damaged": damaged,
                },
                indent=1,
            )
        )
        if damaged:
            raise typer.Exit(1)
        return
    if not manifest.signatures:
        print(f"{where}: no database yet (arena egdb build --pieces 4)")
        return
    table = Table(title=f"{where}: complete up to {plural(manifest.pieces, 'piece')}")
    columns = ("signature", "positions", "wins", "losses", "draws", "longest", "seconds")
    for column in (*columns, "sha256", "checksum"):
        table.add_column(column, justify="right" if column in columns[1:] else "left")
    for sig, info in sorted(
        manifest.signatures.items(), key=lambda item: (item[0].pieces, item[0])
    ):
        ok = checked.get(sig.name)
        table.add_row(
            sig.name,
            f"{info.positions:,}",
            f"{info.wins:,}",
            f"{info.losses:,}",
            f"{info.draws:,}",
            str(info.max_plies),
            f"{info.seconds:.2f}",
            info.sha256[:SHORT_CHECKSUM],
            "not checked" if ok is None else "ok" if ok else "DAMAGED",
        )
    Console(width=140).print(table)
    if not check:
        print("checksums not verified (--no-verify): the recorded SHA-256 of each table is shown")
    elif damaged:
        fail(f"damaged tables (checksum differs): {', '.join(damaged)}; rebuild them", code=1)
    else:
        print(f"verified: every table's SHA-256 equals the manifest's ({len(checked)} tables)")


def probe_command(
    position: Annotated[
        str, typer.Argument(help="A checkers position: PDN FEN, e.g. W:WK18:BK1,K5.")
    ],
    directory: DirOpt = None,
) -> None:
    """Print a position's value and distance for the side to move, and its best moves."""
    from bots.egdb import DatabaseError
    from bots.egdb.probe import Database
    from games import get_game
    from games.checkers import CheckersState

    with game_errors():
        state = get_game("checkers").parse_position(position)
    assert isinstance(state, CheckersState)
    try:
        database = Database(_directory(directory))
    except DatabaseError as exc:
        fail(str(exc))
    pieces = (state.black | state.white).bit_count()
    entry = database.probe(state)
    if entry is None:
        raise fail(
            f"the position has {plural(pieces, 'piece')}; the database holds up to "
            f"{plural(database.pieces, 'piece')}"
        )
    side = "Black" if state.turn == 0 else "White"
    if entry.plies is None:
        print(f"{side} to move: draw")
    else:
        print(f"{side} to move: {entry.value} in {plural(entry.plies, 'ply', 'plies')}")
    best = database.best_moves(state)
    if best:
        print("best: " + ", ".join(sorted(str(m) for m in best)))
