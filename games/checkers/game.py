"""The game of checkers: its start, and its positions read and written as text."""

from __future__ import annotations

from games.base import Game, InvalidPositionError, State
from games.checkers.board import BLACK, START_BLACK, START_WHITE
from games.checkers.moves import CheckersMove
from games.checkers.positions import format_fen, parse_board, parse_fen
from games.checkers.state import CheckersState


class Checkers(Game):
    """English draughts (American checkers): 8x8, no flying kings, free choice of capture."""

    name = "checkers"
    player_names = ("black", "white")
    description = "English draughts / American checkers (Black moves first)"

    __slots__ = ()

    def initial_state(self) -> CheckersState:
        return CheckersState(self, START_BLACK, START_WHITE, 0, BLACK)

    def parse_position(self, text: str) -> CheckersState:
        """Read a PDN FEN, or a course-format board (8 lines; red to move)."""
        if not isinstance(text, str):
            raise InvalidPositionError(f"a position must be text, not {type(text).__name__}")
        if text.strip().lower() in ("start", "initial"):
            return self.initial_state()
        if ":" in text:
            return parse_fen(self, text)
        if "\n" in text.strip():
            return parse_board(self, text)
        raise InvalidPositionError(
            f"cannot read checkers position {text!r}: expected a PDN FEN such as "
            "B:W21,22:B1,2 or a course board of 8 lines of . r b R B"
        )

    def format_position(self, state: State[CheckersMove]) -> str:
        if not isinstance(state, CheckersState):
            raise TypeError(f"not a checkers state: {state!r}")
        return format_fen(state)
