"""The course's way of writing checkers, shared by both profiles: sides, squares, moves, boards.

The course (docs/GAMES.md, "Course board format") writes a board as 8 rows of ``. r b R B``,
row 0 at the top; red is Arena's White and moves up, black is Arena's Black. A square is
written (row,column), a move its squares joined by ``-`` (a step) or ``x`` (a capture).
Arena's own tools (`arena solve`, the explorer) speak PDN: White and Black, squares 1-32. So
a move is shown in both, ``(5,2)-(4,3) [22-18]``, and a position also as its PDN FEN, which
`arena solve checkers --position` reads.

Both profiles speak to students through this module, so a side, a move, the end of a game and
an illegal move read the same in the endgame and the agent profiles. An illegal move is first
classified from what the rules say (`IllegalMove`: the legal moves, the captures, the pieces
that changed) and then put in words once (`explain_illegal`); no prose from games/ is parsed.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from games.checkers import (
    BIT_OF_SQUARE,
    WHITE,
    CheckersMove,
    CheckersState,
    format_board,
    format_fen,
    square_at,
    square_column,
    square_row,
)

SIDE_NAMES: Final = ("black", "red")
"""The course's name of each games.checkers colour: Black 0 is black, White 1 is red."""
PDN_SIDE_NAMES: Final = ("Black", "White")
"""The PDN name of each colour, as `arena solve` writes it."""
PDN_NOTE: Final = (
    "a move in [brackets] is the same move in PDN squares 1-32, as arena solve writes it "
    "(PDN calls red White)"
)
"""Says once, where moves are listed, what the bracketed PDN moves are."""
BOARD_CHARS: Final = frozenset(".rbRB")
MAX_STATES: Final = 400
"""More boards than any puzzle line needs: a longer output is rejected before it is checked."""


def side_name(colour: int) -> str:
    """Return "red" or "black", the course's name of a games.checkers colour."""
    return SIDE_NAMES[colour]


def side_to_move(state: CheckersState) -> str:
    """Return "red" or "black", the side to move in the course's words."""
    return SIDE_NAMES[state.turn]


def format_coordinates(row: int, column: int) -> str:
    """Return a place on the board as the course writes it: (row,column), row 0 at the top."""
    return f"({row},{column})"


def format_square(square: int) -> str:
    """Return a square (1-32) as the course writes it: (row,column), row 0 at the top."""
    return format_coordinates(square_row(square), square_column(square))


def format_path(path: Sequence[int], separator: str = "-") -> str:
    """Return squares (1-32) in course coordinates joined by `separator`."""
    return separator.join(format_square(s) for s in path)


def format_move(move: CheckersMove) -> str:
    """Return a move in course coordinates, then in PDN squares: ``(5,2)-(4,3) [22-18]``."""
    return f"{format_path(move.path, 'x' if move.is_capture else '-')} [{move}]"


def format_moves(moves: Sequence[CheckersMove]) -> str:
    """Return moves as `format_move` writes them, ordered by their paths, joined by commas."""
    return ", ".join(format_move(m) for m in sorted(moves, key=lambda m: m.path))


def format_position(state: CheckersState) -> str:
    """Return a position's PDN FEN and its side to move in both words.

    ``PDN W:W18,22:B5 (red, PDN's White, to move)``: the FEN is what `arena solve checkers
    --position` reads.
    """
    side = f"{SIDE_NAMES[state.turn]}, PDN's {PDN_SIDE_NAMES[state.turn]}"
    return f"PDN {format_fen(state)} ({side}, to move)"


def course_board(pieces: Mapping[tuple[int, int], str]) -> str:
    """Return the course board with `pieces` ((row, col) -> r/R/b/B), all else empty."""
    return "\n".join("".join(pieces.get((row, col), ".") for col in range(8)) for row in range(8))


def describe_outcome(state: CheckersState) -> str:
    """Return why the game ended at `state` in the course's words ("" when it is not over).

    A win is told from the rules' facts (the side to move has no pieces or no legal move),
    named by the course's sides; a draw keeps the rules' reason, which names no side.
    """
    outcome = state.outcome()
    if outcome is None:
        return ""
    if outcome.winner is None:
        return outcome.reason
    mine = state.white if state.turn == WHITE else state.black
    why = "has no pieces left" if not mine else "has no legal move"
    return f"{side_to_move(state)} {why}"


# -- reading boards ------------------------------------------------------------------------------


class OutputError(ValueError):
    """Text that is not a sequence of course-format boards.

    `state` is the 1-based number of the board, `line` the 1-based line of the file (None when
    the whole file is at fault), `reason` the problem in words.
    """

    def __init__(self, reason: str, state: int | None = None, line: int | None = None) -> None:
        self.reason = reason
        self.state = state
        self.line = line
        where = []
        if state is not None:
            where.append(f"state {state}")
        if line is not None:
            where.append(f"line {line}")
        prefix = f"{', '.join(where)}: " if where else ""
        super().__init__(prefix + reason)


@dataclass(frozen=True, slots=True)
class Board:
    """One course-format board as read from a file: 8 rows of 8 characters, row 0 at the top.

    `line` is the 1-based line of the file where the board starts.
    """

    rows: tuple[str, ...]
    line: int = 1

    @property
    def text(self) -> str:
        """The board as 8 lines (no trailing newline), comparable with `format_board`."""
        return "\n".join(self.rows)


def read_states(text: str) -> list[Board]:
    """Read course-format boards separated by blank lines (a puzzle, or a student's line).

    Raises OutputError (with the state number and line) for an empty file, more than
    MAX_STATES boards, a board without 8 rows of 8 characters, an unknown character, a piece
    on a light square, or an uncrowned man on its far row.
    """
    if "\x00" in text:
        raise OutputError("the output contains NUL bytes: it is not a text file of boards")
    groups: list[tuple[int, list[str]]] = []
    current: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            if current:
                groups.append((start, current))
                current = []
            continue
        if not current:
            start = number
        current.append(line)
    if current:
        groups.append((start, current))
    if not groups:
        raise OutputError(
            "the output file is empty: expected the puzzle's board, then one board after each "
            "move, separated by blank lines"
        )
    if len(groups) > MAX_STATES:
        raise OutputError(f"{len(groups)} boards: more than the {MAX_STATES} any puzzle needs")
    return [_read_board(rows, index, start) for index, (start, rows) in enumerate(groups, 1)]


def _read_board(rows: list[str], state: int, start: int) -> Board:
    if len(rows) != 8:
        hint = (
            " (separate boards with a blank line)" if len(rows) > 8 and len(rows) % 8 == 0 else ""
        )
        raise OutputError(
            f"a board has 8 rows of 8 characters, this one has {len(rows)} rows{hint}",
            state,
            start,
        )
    for r, row in enumerate(rows):
        line = start + r
        if len(row) != 8:
            raise OutputError(
                f"row {r} has {len(row)} characters, expected 8: {row[:40]!r}", state, line
            )
        for c, char in enumerate(row):
            if char not in BOARD_CHARS:
                raise OutputError(
                    f"row {r} column {c}: unexpected {char!r} (use . r b R B)", state, line
                )
            if char != "." and (r + c) % 2 == 0:
                raise OutputError(
                    f"row {r} column {c}: a piece on a light square (pieces stand where "
                    "row+column is odd)",
                    state,
                    line,
                )
            if char == "r" and r == 0:
                raise OutputError(
                    f"row 0 column {c}: a red man that reaches row 0 is crowned (R)", state, line
                )
            if char == "b" and r == 7:
                raise OutputError(
                    f"row 7 column {c}: a black man that reaches row 7 is crowned (B)",
                    state,
                    line,
                )
    return Board(tuple(rows), start)


# -- illegal moves -------------------------------------------------------------------------------


class Illegal(enum.Enum):
    """Why a student's move is not one legal move of the side to move, as the rules decide."""

    UNCHANGED = "unchanged"
    """A board: nothing moved."""
    WRONG_SIDE = "wrong side"
    """A board: the other side's pieces moved or appeared."""
    INCOMPLETE_JUMP = "incomplete multi-jump"
    """The move stops where a legal multi-jump goes on (`IllegalMove.path` is where it stops)."""
    MOVE_ENDED = "move ended"
    """A path: it goes on after a legal move ended (`IllegalMove.path` is that legal move's)."""
    CAPTURE_COMPULSORY = "capture compulsory"
    """A capture is available and the move captures nothing."""
    NOT_LEGAL = "not legal"
    """None of the above."""


@dataclass(frozen=True)
class IllegalMove:
    """A move that is not legal: the reason, the side to move, its legal moves, the path meant."""

    reason: Illegal
    colour: int
    legal: tuple[CheckersMove, ...]
    path: tuple[int, ...] = ()
    capture: bool = False
    """Whether `path` is a capture's (shown with x)."""
    crowned: bool = False
    """Whether the legal move of `path` crowns its man (MOVE_ENDED: why it ended)."""


def illegal_path(state: CheckersState, path: tuple[int, ...]) -> IllegalMove:
    """Classify `path` (squares 1-32), which is not a legal move's path of `state`."""
    legal = state.legal_moves()
    for move in legal:
        if move.path[: len(path)] == path and len(move.path) > len(path):
            return IllegalMove(Illegal.INCOMPLETE_JUMP, state.turn, legal, path, capture=True)
    for move in legal:
        if path[: len(move.path)] == move.path:
            crown_row = 0 if state.turn == WHITE else 7
            crowned = state.piece_at(move.path[0]).islower() and (
                square_row(move.path[-1]) == crown_row
            )
            return IllegalMove(
                Illegal.MOVE_ENDED, state.turn, legal, move.path, move.is_capture, crowned
            )
    if state.has_capture():
        return IllegalMove(Illegal.CAPTURE_COMPULSORY, state.turn, legal)
    return IllegalMove(Illegal.NOT_LEGAL, state.turn, legal)


def illegal_board(state: CheckersState, board: str) -> IllegalMove:
    """Classify `board` (course format), which does not follow `state` by one legal move."""
    legal = state.legal_moves()
    if board == format_board(state):
        return IllegalMove(Illegal.UNCHANGED, state.turn, legal)
    before = _pieces(format_board(state))
    after = _pieces(board)
    mine = "rR" if state.turn == WHITE else "bB"
    changed = [sq for sq in before if before[sq] != after[sq]]
    moved_mine = any(before[sq] in mine or after[sq] in mine for sq in changed)
    moved_theirs = any(after[sq] not in mine and after[sq] != "." for sq in changed)
    if not moved_mine or moved_theirs:
        return IllegalMove(Illegal.WRONG_SIDE, state.turn, legal)
    for move in legal:
        for end in range(2, len(move.path)):
            if _partial_jump(state, move.path[:end]) == board:
                return IllegalMove(
                    Illegal.INCOMPLETE_JUMP, state.turn, legal, move.path[:end], capture=True
                )
    if state.has_capture():
        captured = sum(1 for sq in before if before[sq] != "." and before[sq] not in mine) - sum(
            1 for sq in after if after[sq] != "." and after[sq] not in mine
        )
        if captured <= 0:
            return IllegalMove(Illegal.CAPTURE_COMPULSORY, state.turn, legal)
    return IllegalMove(Illegal.NOT_LEGAL, state.turn, legal)


def explain_illegal(illegal: IllegalMove) -> str:
    """Say why the move is illegal, then list the legal moves, in the course's words."""
    side = side_name(illegal.colour)
    listed = f"legal moves for {side}: {format_moves(illegal.legal)}"
    path = format_path(illegal.path, "x" if illegal.capture else "-")
    match illegal.reason:
        case Illegal.UNCHANGED:
            why = f"the board did not change; {side} must move"
        case Illegal.WRONG_SIDE:
            other = side_name(1 - illegal.colour)
            why = f"it is {side}'s turn, but {other}'s pieces moved or appeared"
        case Illegal.INCOMPLETE_JUMP:
            why = f"incomplete multi-jump: after {path} the piece can jump again and must"
        case Illegal.MOVE_ENDED:
            why = f"the move ends after {path}: {_why_ended(illegal)}"
        case Illegal.CAPTURE_COMPULSORY:
            why = "a capture is available and captures are compulsory"
        case Illegal.NOT_LEGAL:
            why = f"not one legal move of {side}"
    return f"{why} ({listed})"


def _why_ended(illegal: IllegalMove) -> str:
    if illegal.crowned:
        return "crowning ends a move"
    if illegal.capture:
        return "no further jump is possible"
    return "a step is one square"


def _pieces(text: str) -> dict[tuple[int, int], str]:
    rows = text.splitlines()
    return {(r, c): rows[r][c] for r in range(8) for c in range(8)}


def _partial_jump(state: CheckersState, path: Sequence[int]) -> str:
    """The board after the first jumps of a multi-jump (no crowning: it happens at the end)."""
    captured = 0
    for a, b in itertools.pairwise(path):
        middle = square_at(
            (square_row(a) + square_row(b)) // 2, (square_column(a) + square_column(b)) // 2
        )
        assert middle is not None
        captured |= 1 << BIT_OF_SQUARE[middle]
    frm = 1 << BIT_OF_SQUARE[path[0]]
    to = 1 << BIT_OF_SQUARE[path[-1]]
    kings = state.kings & ~captured
    if kings & frm:
        kings ^= frm ^ to
    if state.turn == WHITE:
        white, black = state.white ^ frm ^ to, state.black & ~captured
    else:
        black, white = state.black ^ frm ^ to, state.white & ~captured
    return format_board(CheckersState(state.game, black, white, kings, 1 - state.turn))
