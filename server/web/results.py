"""How the match page words a match's end: who won, from where the reader sits, and how.

The outcome reads "You won by resignation" to a player, "White won by resignation" to a
spectator, then the result code's words (`RESULT_WORDS`). The page's script (static/match.js)
words a result that arrives live the same way, from the same table, which the page carries.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from protocol.messages import MatchResult, SeatInfo

RESULT_WORDS: Mapping[str, str] = MappingProxyType(
    {
        "no_moves": ": no legal move left",
        "repetition": " by repetition",
        "move_rule": " by the move rule (no progress)",
        "line": " by {description}",
        "board_full": ": the board is full",
        "last_object": ": the last object was taken",
        "ply_cap": " at the ply cap",
        "resign": " by resignation",
        "timeout": " on time",
        "forfeit": " by forfeit (too many rejected moves)",
        "bot_failure": ": the bot failed to move",
        "agreement": " by agreement",
        "aborted": "",
        "adjudication": " by adjudication",
    }
)
"""What follows the outcome ("White won", "You drew") for each result code (its words);
`{description}` is the result's own description (a line: "three in a row")."""

OTHERWISE = ": {description}"
"""The words of a result without a code (a match stored before codes were kept)."""


def side_title(side: str) -> str:
    """Return a seat's side as a title: `black` -> `Black`, `X` -> `X`."""
    return side[:1].upper() + side[1:]


def outcome_text(
    result: MatchResult, seats: tuple[SeatInfo, SeatInfo], aborted: bool, your_seat: int | None
) -> str:
    """Return how the match ended as its reader says it: "You lost on time" to the player in
    `your_seat` (None: a spectator), "Black won by resignation" to a spectator, "Drawn by
    agreement", "Aborted"."""
    if aborted:
        return "Aborted"
    if result.winner is None:
        who = "Drawn" if your_seat is None else "You drew"
    elif your_seat is None:
        who = f"{side_title(seats[result.winner].side)} won"
    else:
        who = "You won" if result.winner == your_seat else "You lost"
    words = RESULT_WORDS.get(result.code or "", OTHERWISE)
    return who + words.replace("{description}", result.description)
