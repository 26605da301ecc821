"""The registry of games by name."""

from __future__ import annotations

from collections.abc import Mapping

from games.base import Game, UnknownGameError
from games.checkers import Checkers
from games.connect4 import ConnectFour
from games.nim import Nim
from games.tictactoe import TicTacToe

GAME_CLASSES: Mapping[str, type[Game]] = {
    cls.name: cls for cls in (TicTacToe, Nim, ConnectFour, Checkers)
}


def game_names() -> list[str]:
    """Return the names of every registered game, sorted."""
    return sorted(GAME_CLASSES)


def get_game(name: str, options: Mapping[str, str] | None = None) -> Game:
    """Return the game called `name` with `options` (text values) applied.

    Raises UnknownGameError naming the games that exist, or InvalidOptionError.
    """
    key = name.strip().lower().replace("-", "").replace("_", "")
    aliases = {"connectfour": "connect4", "draughts": "checkers", "englishdraughts": "checkers"}
    key = aliases.get(key, key)
    cls = GAME_CLASSES.get(key)
    if cls is None:
        raise UnknownGameError(f"unknown game {name!r} (games: {', '.join(game_names())})")
    return cls(options)
