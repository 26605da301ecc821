"""The named decks of openings shipped with Arena: which exist, and the data files beside this.

Light on purpose (no rules, no search): the command line reads `DECKS` for its help text.
`competition.openings.deck` reads and plays a deck's file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["DECKS", "DEFAULT_DECKS", "Deck"]


@dataclass(frozen=True, slots=True)
class Deck:
    """A named list of openings shipped with Arena: its game, what it is, and its data file.

    `description` says in a few words, for help texts, the game and what the deck holds.
    `file` is the name of an openings file (the format of `load_openings`) in
    competition/decks/, read as package data so an installed Arena finds it too.
    """

    name: str
    game: str
    description: str
    file: str


DECKS: Mapping[str, Deck] = MappingProxyType(
    {
        "acf-3move": Deck(
            name="acf-3move",
            game="checkers",
            description="checkers, the ACF three-move deck: 156 openings",
            file="acf-3move.txt",
        ),
    }
)
"""Every named deck, by name."""

DEFAULT_DECKS: Mapping[str, str] = MappingProxyType({"checkers": "acf-3move"})
"""The deck a game's tournaments use when given no openings (games not listed: random ones)."""
