"""The verdict of the "Endgame solver" profile on one puzzle: its scoring and its words.

A `PuzzleVerdict` has three components, each worth `WEIGHTS[name]` of the puzzle's
score (a number in [0, 1]); a component earns all of its weight or none, and only a legal
line that ends in a red win earns any (docs/GRADER.md gives the reason for each weight):

- ``red forces the win`` (0.5): every red move keeps a forced win, at most `WIN_SLACK` plies
  slower than the fastest one from its position, so the win is red's doing and not the
  fruit of black's mistakes.
- ``red wins fastest`` (0.25): red forces the win and every red move keeps the fastest win.
- ``black resists longest`` (0.25): red forces the win and every black move is a best defence.

A line that cannot be read (malformed board, garbage, empty file) scores 0 with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

from autograder.course import (
    PDN_NOTE,
    format_move,
    format_moves,
    format_position,
)
from autograder.results import Reason
from games.checkers import CheckersMove, CheckersState

RED_FORCES_WIN: Final = "red forces the win"
RED_FASTEST: Final = "red wins fastest"
BLACK_RESISTS: Final = "black resists longest"
WEIGHTS: Final = {RED_FORCES_WIN: 0.5, RED_FASTEST: 0.25, BLACK_RESISTS: 0.25}
"""The share of a puzzle's score earned by each component; the shares sum to 1."""

WIN_SLACK: Final = 4
"""How many plies slower than the fastest win a red move may make the win and still keep it.

A draw cannot be proved by the proof search, so whether a slow move keeps any win at all is
asked within a bound: the fastest win from the move's position plus this slack. A move that
delays the win by more counts as giving it away. The bound keeps that one search affordable
(it is the longest the judge runs) and the same with the endgame database as without it."""
DEFAULT_MAX_PLIES: Final = 30
"""How deep the solver looks for the puzzle's own win, and the longest win a red move may
leave (a line that keeps delaying its win is not followed further)."""

Side = Literal["red", "black"]


@dataclass(frozen=True, slots=True)
class Misplay:
    """The first move of one side that did not keep the exact value of its position.

    `ply` is the move's 1-based ply in the line (state `ply + 1` of the output is the board it
    made, `line` the line of the output where the board before it starts); `before` the
    position it was played from (a fresh board: no history). For red, `value` is red's
    fastest win from `before` in plies and `after` the plies of red's fastest win after the
    move counted from `before` (None: no forced win within `bound` plies of `before`); for
    black, `value` is black's longest resistance from `before` and `after` what the move left,
    counted the same way. `best` are the moves that keep `value`.
    """

    side: Side
    ply: int
    line: int
    move: CheckersMove
    before: CheckersState
    value: int
    after: int | None
    bound: int
    best: tuple[CheckersMove, ...]

    @property
    def gives_up(self) -> bool:
        """True for a red move after which no forced win ends within the bound."""
        return self.after is None


@dataclass(slots=True)
class PuzzleVerdict:
    """The judgement of one puzzle: the earned components, the line's facts, and the reasons.

    `plies` is the length of the student's line (None if it could not be read),
    `optimal_plies` the length of the fastest forced win. `legal` and `wins` say whether the
    line is legal and ends in a red win; `red` and `black` are the first misplay of each side
    (None when every move of that side that was judged kept the exact value), `gave_up` the
    red move that gave the win away (it may come after `red`, a slow move that kept the win;
    nothing after it is judged). `messages`
    explain every point lost (and what was right); `score` is the weighted sum of
    `components` (see the module docstring).
    """

    components: dict[str, bool] = field(default_factory=lambda: dict.fromkeys(WEIGHTS, False))
    plies: int | None = None
    optimal_plies: int | None = None
    legal: bool = False
    wins: bool = False
    red: Misplay | None = None
    black: Misplay | None = None
    gave_up: Misplay | None = None
    messages: list[str] = field(default_factory=list)
    unreadable: bool = False
    """The output could not be read as boards."""

    @property
    def score(self) -> float:
        """The puzzle's score in [0, 1]."""
        return sum(WEIGHTS[name] for name, earned in self.components.items() if earned)

    @property
    def is_full_marks(self) -> bool:
        """True when every component is earned."""
        return all(self.components.values())

    @property
    def reason(self) -> Reason | None:
        """Why points were lost, in a word that says nothing of the puzzle; None for full marks."""
        if self.is_full_marks:
            return None
        if self.unreadable:
            return "unreadable output"
        if not self.legal:
            return "illegal move"
        return "wrong answer"


def explain_misplay(misplay: Misplay) -> str:
    """Say what the move threw away: the move and the position it was played from, in both
    notations, then every distance counted from that position."""
    best = format_moves(misplay.best)
    value = f"{misplay.value} {_plies(misplay.value)}"
    if misplay.side == "red" and misplay.after is None:
        head = f"gives up the win, or delays it by more than {WIN_SLACK} plies"
        limit = f"a red move may delay the win by at most {WIN_SLACK} plies"
        if misplay.bound > DEFAULT_MAX_PLIES:
            limit += f", and leave it at most {DEFAULT_MAX_PLIES + 1} plies away"
        facts = [
            f"from there red's fastest forced win takes {value}, by {best}",
            f"after this move red has no forced win ending within {misplay.bound} plies of "
            f"that position ({limit})",
        ]
    elif misplay.side == "red":
        head = "is not a fastest win"
        facts = [
            f"from there red's fastest forced win takes {value}, by {best}",
            f"after this move, with black resisting, the win ends {misplay.after} plies from "
            "that position",
        ]
    else:
        head = "gives up early"
        facts = [
            f"from there black, resisting longest, lasts {value}, by {best}",
            f"after this move red's fastest win ends {misplay.after} plies from that position; "
            "red's later moves are judged against that faster win",
        ]
    where = (
        f"played from state {misplay.ply} of your output (line {misplay.line}): "
        f"{format_position(misplay.before)}"
    )
    lines = [f"ply {misplay.ply}: {misplay.side}'s move {format_move(misplay.move)} {head}"]
    lines.extend(f"    {line}" for line in (where, *facts))
    return "\n".join(lines)


def _plies(count: int) -> str:
    return "ply" if count == 1 else "plies"


def summarise(verdict: PuzzleVerdict) -> None:
    """Explain each component, earned or not."""
    red, black, gave_up = verdict.red, verdict.black, verdict.gave_up
    if red is not None:
        verdict.messages.append(explain_misplay(red))
    elif verdict.wins:
        verdict.messages.append(
            "every red move keeps the fastest win from its position (after a black mistake, "
            "the faster win it allows)"
        )
    if gave_up is not None and gave_up is not red:
        verdict.messages.append(explain_misplay(gave_up))
    if black is not None:
        verdict.messages.append(explain_misplay(black))
    elif verdict.wins and gave_up is None:
        verdict.messages.append("every black move resists as long as possible")
    if verdict.wins and gave_up is not None:
        verdict.messages.append(
            "the line still ends in a red win only because black's later moves gave it back: "
            "the win is not red's doing, and black's moves after that are not judged"
        )
    if red is not None or black is not None:
        verdict.messages.append(PDN_NOTE)
