"""A checkers position: its legal moves, making them, the outcome and the draw rules, move
text checked against the position, and display."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from games.base import Ending, IllegalMoveError, Outcome, State
from games.checkers.board import (
    BIT_OF_SQUARE,
    BLACK,
    COLOUR_NAMES,
    CROWN_ROW,
    DRAW_PLIES,
    REPETITIONS,
    VALID,
    square_at,
    square_column,
    square_row,
)
from games.checkers.generation import any_jump, generate_moves
from games.checkers.moves import CheckersMove, parse_move_text, sorted_texts
from games.checkers.perft import History, perft_bitboards

if TYPE_CHECKING:
    from games.checkers.game import Checkers

_MOVE_RULE_DRAW: Final = Outcome(
    None, f"draw: {DRAW_PLIES} plies without a capture or a man move", Ending.MOVE_RULE
)
_REPETITION_DRAW: Final = Outcome(None, "draw: threefold repetition", Ending.REPETITION)


class CheckersState(State[CheckersMove]):
    """A checkers position: bitboards of Black, White and kings, the side to move, and the
    history since the last irreversible move (for repetition and the 80-ply rule)."""

    __slots__ = ("_game", "_moves", "_outcome", "black", "kings", "prev", "quiet", "turn", "white")

    def __init__(
        self,
        game: Checkers,
        black: int,
        white: int,
        kings: int,
        turn: int,
        quiet: int = 0,
        prev: CheckersState | None = None,
    ) -> None:
        self._game = game
        self.black = black
        self.white = white
        self.kings = kings
        self.turn = turn
        self.quiet = quiet  # plies since the last capture or man move
        self.prev = prev  # the previous state if the last move was reversible, else None
        self._moves: tuple[CheckersMove, ...] | None = None
        self._outcome: Outcome | None = None

    @property
    def game(self) -> Checkers:
        return self._game

    @property
    def to_move(self) -> int:
        return self.turn

    def key(self) -> tuple[int, int, int, int]:
        return (self.black, self.white, self.kings, self.turn)

    # -- move generation -------------------------------------------------------------------

    def legal_moves(self) -> tuple[CheckersMove, ...]:
        moves = self._moves
        if moves is None:
            moves = (
                ()
                if self._draw() is not None
                else generate_moves(self.black, self.white, self.kings, self.turn)
            )
            self._moves = moves
        return moves

    def has_capture(self) -> bool:
        """True when the side to move has a capture (and so must capture)."""
        black, white, kings = self.black, self.white, self.kings
        empty = VALID & ~(black | white)
        if self.turn == BLACK:
            mine, theirs = black, white
        else:
            mine, theirs = white, black
        return any_jump(mine, mine & kings, theirs, empty, self.turn)

    def perft(self, depth: int) -> int:
        """Count the leaf nodes to `depth` plies on the raw bitboards (same rules, no objects)."""
        if depth < 0:
            raise ValueError(f"perft depth must be >= 0, not {depth}")
        if depth == 0:
            return 1
        history: History = None
        for node in reversed(list(self._ancestors())):
            history = (node.black, node.white, node.kings, history)
        return perft_bitboards(
            self.black, self.white, self.kings, self.turn, depth, self.quiet, history
        )

    def _ancestors(self) -> list[CheckersState]:
        """The states since the last irreversible move, nearest first (this one excluded)."""
        chain = []
        node = self.prev
        while node is not None:
            chain.append(node)
            node = node.prev
        return chain

    # -- making moves ----------------------------------------------------------------------

    def apply_unchecked(self, move: CheckersMove) -> CheckersState:
        frm, to, captured = move.frm, move.to, move.captured
        kings = self.kings
        turn = self.turn
        if captured:
            kings &= ~captured
        if kings & frm:
            kings ^= frm ^ to
            reversible = not captured
        else:
            if to & CROWN_ROW[turn]:
                kings |= to
            reversible = False
        if turn == BLACK:
            black = self.black ^ frm ^ to
            white = self.white & ~captured
        else:
            white = self.white ^ frm ^ to
            black = self.black & ~captured
        if reversible:
            return CheckersState(self._game, black, white, kings, 1 - turn, self.quiet + 1, self)
        return CheckersState(self._game, black, white, kings, 1 - turn)

    # -- outcome ---------------------------------------------------------------------------

    def _draw(self) -> Outcome | None:
        if self.quiet < 2 * REPETITIONS + 2:
            return None
        if self.quiet >= DRAW_PLIES:
            return _MOVE_RULE_DRAW
        if self.repetitions() >= REPETITIONS:
            return _REPETITION_DRAW
        return None

    def repetitions(self) -> int:
        """Return how often this position (same side to move) has occurred, this time included.

        Only positions since the last capture or man move can repeat.
        """
        count = 1
        node = self.prev
        black, white, kings = self.black, self.white, self.kings
        odd = True
        while node is not None:
            if not odd and node.black == black and node.white == white and node.kings == kings:
                count += 1
            odd = not odd
            node = node.prev
        return count

    def outcome(self) -> Outcome | None:
        if self._outcome is not None:
            return self._outcome
        draw = self._draw()
        if draw is not None:
            self._outcome = draw
        elif not self.legal_moves():
            loser = COLOUR_NAMES[self.turn]
            mine = self.black if self.turn == BLACK else self.white
            why = "has no pieces left" if not mine else "has no legal move"
            self._outcome = Outcome(1 - self.turn, f"{loser} {why}", Ending.NO_MOVES)
        return self._outcome

    # -- notation --------------------------------------------------------------------------

    def format_move(self, move: CheckersMove) -> str:
        return str(move)

    def parse_move(self, text: str) -> CheckersMove:
        path, separator = parse_move_text(text)
        legal = self.legal_moves()
        shown = "x".join(map(str, path)) if separator == "x" else "-".join(map(str, path))
        if not legal:
            outcome = self.outcome()
            reason = outcome.reason if outcome else "no legal moves"
            raise IllegalMoveError(shown, f"the game is over ({reason})")
        exact = [m for m in legal if m.path == path and (m.is_capture == (separator == "x"))]
        if exact:
            return exact[0]
        if len(path) == 2:
            # The short form names only the start and end of a capture; the printed deck also
            # writes captures with "-".
            ends = [
                m for m in legal if m.is_capture and m.path[0] == path[0] and m.path[-1] == path[1]
            ]
            if len(ends) == 1:
                return ends[0]
            if len(ends) > 1:
                raise IllegalMoveError(
                    shown,
                    "ambiguous: several captures go from "
                    f"{path[0]} to {path[1]}; write the whole path",
                    sorted_texts(ends),
                )
        raise IllegalMoveError(shown, self._explain(path, separator, legal), sorted_texts(legal))

    def _explain(self, path: tuple[int, ...], separator: str, legal: Sequence[CheckersMove]) -> str:
        """Say in words why `path` is not a legal move here."""
        start = path[0]
        bit = 1 << BIT_OF_SQUARE[start]
        me = COLOUR_NAMES[self.turn]
        mine = self.black if self.turn == BLACK else self.white
        theirs = self.white if self.turn == BLACK else self.black
        if not mine & bit:
            if theirs & bit:
                return (
                    f"square {start} holds a {COLOUR_NAMES[1 - self.turn]} piece; {me} is to move"
                )
            return f"there is no {me} piece on square {start}"
        captures = [m for m in legal if m.is_capture]
        if separator == "-" and captures:
            return "a capture is available, and capturing is compulsory"
        if separator == "x" and any(m.path[: len(path)] == path for m in captures):
            return "a multi-jump must be completed"
        if separator == "x" and not captures:
            return "there is no capture in this position"
        end = path[-1]
        if separator == "-":
            if (
                abs(square_row(end) - square_row(start)) != 1
                or abs(square_column(end) - square_column(start)) != 1
            ):
                return f"{end} is not a diagonal neighbour of {start}"
            if (self.black | self.white) & (1 << BIT_OF_SQUARE[end]):
                return f"square {end} is occupied"
            if not self.kings & bit:
                return "a man moves only forward"
        return "no such move for that piece"

    # -- display ---------------------------------------------------------------------------

    def piece_at(self, square: int) -> str:
        """Return the piece on `square` as `b`/`B` (Black man/king), `w`/`W`, or `.` if empty."""
        bit = 1 << BIT_OF_SQUARE[square]
        if self.black & bit:
            return "B" if self.kings & bit else "b"
        if self.white & bit:
            return "W" if self.kings & bit else "w"
        return "."

    def render(self) -> str:
        """Return the board seen from White (square 1 top left), with the square numbers."""
        lines = []
        for row in range(8):
            cells = []
            numbers = []
            for column in range(8):
                square = square_at(row, column)
                cells.append(" " if square is None else self.piece_at(square))
                numbers.append("  " if square is None else f"{square:2d}")
            lines.append(" ".join(cells) + "    " + " ".join(numbers))
        lines.append(f"{COLOUR_NAMES[self.turn]} to move (b/B Black man/king, w/W White)")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<CheckersState {self._game.format_position(self)!r}>"
