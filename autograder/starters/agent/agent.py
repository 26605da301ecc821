"""Checkers agent: starter code for the assignment (standard library only).

The grader imports this file as ``agent`` and calls `select_move` on positions and in games
against Arena's bots. Keep no state between calls: each call must stand alone.

A board is a list of 8 strings of 8 characters from ``. r b R B`` (``r``/``b`` men, ``R``/``B``
kings), row 0 at the top. Red moves up (toward row 0), black down; men move and jump forward
only, kings both ways; captures are compulsory (any capture may be chosen), a multi-jump must
be completed, and a man reaching the far row is crowned and its move ends there.
"""

from __future__ import annotations

Square = tuple[int, int]  # (row, column)


def select_move(
    board: list[str], player: str, depth_limit: int | None, time_limit: float
) -> tuple[list[Square], float]:
    """Return the move of `player` ("red" or "black") and its minimax value.

    The move is the list of squares the piece visits: its start, then every landing square
    (a multi-jump lists each landing). The value is the minimax value of `board` searched
    `depth_limit` plies deep from `player`'s point of view: at the depth limit a position scores
    its material (men 1, kings 2, `player`'s minus the opponent's); a side to move with no
    legal move has lost (-1000 for it, +1000 for the other). Return within `time_limit`
    seconds. With `depth_limit` None, search as deep as the time allows.
    """
    raise NotImplementedError("select_move is not written yet: generate the moves, then search")
