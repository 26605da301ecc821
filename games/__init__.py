"""The rules of Arena's games: immutable states, moves, notation, outcomes and perft.

Standard library only; no I/O, no clocks, no global randomness.
"""

from games.base import (
    Ending,
    Game,
    GameError,
    IllegalMoveError,
    InvalidMoveError,
    InvalidOptionError,
    InvalidPositionError,
    Outcome,
    State,
    UnknownGameError,
)
from games.perft import divide, perft
from games.registry import game_names, get_game

__all__ = [
    "Ending",
    "Game",
    "GameError",
    "IllegalMoveError",
    "InvalidMoveError",
    "InvalidOptionError",
    "InvalidPositionError",
    "Outcome",
    "State",
    "UnknownGameError",
    "divide",
    "game_names",
    "get_game",
    "perft",
]
