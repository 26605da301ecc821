"""A Swiss tournament's standings: score, then Buchholz, then Sonneborn-Berger.

- **Score**: the points of every board played plus the byes' (competition.swiss.SwissRules).
- **Buchholz** (first tie-break): the sum of the final scores of the player's opponents, one
  term per board. A bye counts as a board against an opponent with the player's own final
  score (FIDE's rule for an unplayed round, simplified), so a bye neither helps nor hurts.
- **Sonneborn-Berger** (second tie-break): the sum over boards of the share of the board's
  points the player won (1, 1/2 or 0 for a single game) times that opponent's final score. Byes
  add nothing.

Players still equal keep the order of their pairing numbers (rating, then lot). Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from competition.swiss import (
    Entrant,
    PlayedRound,
    PlayerRecord,
    SwissRules,
    pairing_numbers,
    player_records,
)


@dataclass(frozen=True, slots=True)
class SwissStanding:
    """One player's place, score and tie-breaks."""

    rank: int
    player: str
    score: float
    buchholz: float
    sonneborn_berger: float
    boards: int
    byes: int


def swiss_standings(
    entrants: Sequence[Entrant], rounds: Sequence[PlayedRound], rules: SwissRules | None = None
) -> tuple[SwissStanding, ...]:
    """Return the standings of `entrants` after `rounds`, first place first (rank from 1)."""
    rules = rules or SwissRules()
    numbers = pairing_numbers(entrants, rules.seed)
    records = player_records(rounds, rules)
    for entrant in entrants:
        records.setdefault(entrant.id, PlayerRecord())
    games = rules.games_per_board
    buchholz = {name: records[name].byes * records[name].score for name in numbers}
    berger = dict.fromkeys(numbers, 0.0)
    for played in rounds:
        for board in played.results:
            for player, opponent, points in (
                (board.first, board.second, board.first_points),
                (board.second, board.first, board.second_points),
            ):
                if player in numbers:
                    buchholz[player] += records[opponent].score
                    berger[player] += points / games * records[opponent].score
    order = sorted(
        numbers,
        key=lambda name: (-records[name].score, -buchholz[name], -berger[name], numbers[name]),
    )
    return tuple(
        SwissStanding(
            rank=place,
            player=name,
            score=records[name].score,
            buchholz=buchholz[name],
            sonneborn_berger=berger[name],
            boards=len(records[name].opponents),
            byes=records[name].byes,
        )
        for place, name in enumerate(order, 1)
    )
