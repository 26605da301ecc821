"""What `arena tournament` and `arena match` share: their console, options and openings."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from competition.decks import DECKS

if TYPE_CHECKING:
    from competition.openings import Opening
    from games import Game

console = Console(highlight=False)

OPENINGS_HELP = "A deck ({}) or an openings file, one opening per line.".format(
    "; ".join(f"{d.name}: {d.description}" for d in DECKS.values())
)


SPRT_HELP = (
    "Play pairs until a sequential probability ratio test decides: KEY=VALUE settings "
    "elo0, elo1 (H0: the first bot is elo0 Elo stronger; H1: elo1), alpha, beta (0.05) and "
    "model (normalized or logistic), e.g. --sprt elo0=0 elo1=5 alpha=0.05 beta=0.05."
)


GameOpt = Annotated[str, typer.Option("--game", "-g", help="The game.")]
ConcurrencyOpt = Annotated[int, typer.Option("--concurrency", "-j", help="Worker processes.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of the openings.")]
PlyCapOpt = Annotated[int, typer.Option("--ply-cap", help="Plies after which a game is drawn.")]
MoveTimeOpt = Annotated[
    float | None,
    typer.Option("--move-time", help="Seconds per move (default: the bots' own limits)."),
]
OpeningsOpt = Annotated[
    str | None, typer.Option("--openings", metavar="DECK|FILE", help=OPENINGS_HELP)
]
JournalOpt = Annotated[
    Path | None,
    typer.Option("--journal", help="Journal file: resume from it, append each game to it."),
]
RecordsOpt = Annotated[
    Path | None,
    typer.Option(
        "--records", help="Write each game as JSON (and checkers games as PDN) in this folder."
    ),
]
"""The options `arena tournament` and `arena match` share."""


def openings(rules: Game, choice: str | None, needed: int, seed: int) -> list[Opening]:
    """Return the named deck, the file's openings, or the game's default openings."""
    from competition.openings import OpeningError, deck, default_openings, load_openings

    if choice is None:
        return default_openings(rules, needed, seed)
    # A deck name wins over a file of the same name: write ./NAME for the file.
    if choice in DECKS:
        return deck(choice, rules)
    if not Path(choice).is_file():
        decks = ", ".join(DECKS)
        raise OpeningError(f"--openings {choice!r} is neither a deck ({decks}) nor a file")
    return load_openings(choice, rules)
