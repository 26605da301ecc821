"""A Python plug-in for Arena (bots/plugin.py): win at once when it can, else move at random.

Play it in any tool that takes a bot spec, for every game:

    arena tournament connect4 py:examples/plugins/first_win.py:FirstWin random
    arena tournament nim 'py:examples/plugins/first_win.py:FirstWin:seed=7' greedy
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, ClassVar

from bots.plugin import Limits, Option, Plugin, Reply


class FirstWin(Plugin):
    """One ply: a move that wins on the spot, else one chosen at random."""

    name = "FirstWin"
    author = "the Arena authors"
    version = "1.0"
    options: ClassVar[Mapping[str, Option]] = {
        "seed": Option(0, "seed of the random generator", 0, 2**31)
    }

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def choose(self, state: Any, limits: Limits) -> Reply:
        """Return a winning move if there is one (score 1), else a random one (score 0)."""
        moves = list(state.legal_moves())
        for move in moves:
            outcome = state.apply(move).outcome()
            if outcome is not None and outcome.winner == state.to_move:
                return Reply(move, score=1.0, depth=1, nodes=len(moves), pv=[move])
        return Reply(self.rng.choice(moves), score=0.0, depth=1, nodes=len(moves))
