"""Search knowledge by game: evaluations, move ordering, quiescence and symmetries.

Searches name no game; they ask `knowledge_for(state.game)` for what they may know about it.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from bots.evaluation import Knowledge
from bots.evaluation import checkers_endings as checkers_evaluation
from bots.evaluation import connect4 as connect4_evaluation
from bots.evaluation import nim as nim_evaluation
from bots.evaluation import tictactoe as tictactoe_evaluation
from games import Game, GameError, get_game

KNOWLEDGE: Final[Mapping[str, Knowledge]] = MappingProxyType(
    {
        module.KNOWLEDGE.game: module.KNOWLEDGE
        for module in (
            checkers_evaluation,
            connect4_evaluation,
            nim_evaluation,
            tictactoe_evaluation,
        )
    }
)
"""Each game's Knowledge, by game name."""


def knowledge_for(game: Game | str) -> Knowledge:
    """Return the search knowledge of `game` (a Game, or a game name or alias).

    Raises ValueError naming the games that have knowledge.
    """
    name = game.name if isinstance(game, Game) else game.strip().lower()
    knowledge = KNOWLEDGE.get(name)
    if knowledge is None and isinstance(game, str):
        try:
            knowledge = KNOWLEDGE.get(get_game(game).name)
        except GameError:
            knowledge = None
    if knowledge is None:
        raise ValueError(
            f"no search knowledge for game {name!r} (games: {', '.join(sorted(KNOWLEDGE))})"
        )
    return knowledge
