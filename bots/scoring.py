"""How a finished game scores in a search, from the point of view of the side to move."""

from __future__ import annotations

from dataclasses import dataclass

from games import Outcome

WIN = 1_000_000
"""The score of a win at the root in engine searches; evaluations stay far below it."""


@dataclass(frozen=True, slots=True)
class Scoring:
    """Terminal scores: `win` for a win, `-win` for a loss, 0 for a draw.

    With `by_distance`, a win found `ply` plies below the root scores `win - ply` (and a loss
    `ply - win`), so the search prefers faster wins and slower losses.
    """

    win: float = WIN
    by_distance: bool = True

    def terminal(self, outcome: Outcome, player: int, ply: int) -> float:
        """Return the score of a finished game for `player`, `ply` plies below the root."""
        if outcome.winner is None:
            return 0
        value = self.win - ply if self.by_distance else self.win
        return value if outcome.winner == player else -value

    def is_win(self, score: float) -> bool:
        """True when `score` means a forced win (not an evaluation)."""
        return score >= self.win - 10_000 if self.by_distance else score >= self.win

    def is_loss(self, score: float) -> bool:
        """True when `score` means a forced loss."""
        return self.is_win(-score)


ENGINE = Scoring()
"""Engine scoring: wins worth 1,000,000 less their distance in plies."""

LECTURE = Scoring(win=1, by_distance=False)
"""The lectures' scoring: COMPUTER_WIN = 1, DRAW = 0, HUMAN_WIN = -1."""
