"""English draughts (American checkers) on bitboards.

The rules are those of the ACF/WCDF (docs/GAMES.md): Black moves first from squares 1-12 toward
higher numbers; captures are compulsory but any capture may be chosen; men capture forward only;
a whole multi-jump is one move, identified by its full path; a man that reaches the far row is
crowned and its move ends there; a side with no legal move loses; threefold repetition and 80
plies without a capture or a man move are draws.

Board layout: square s (1-32) lives on bit ``(s - 1) + (s - 1) // 8``. The three "ghost" bits
8, 17 and 26 are never occupied, which makes every diagonal step a shift by 4 or 5 and every
jump a shift by 8 or 10 on all rows; a step off the board lands on a ghost bit or outside the
35 used bits and is masked away.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from games.base import (
    Ending,
    Game,
    IllegalMoveError,
    InvalidMoveError,
    InvalidPositionError,
    Outcome,
    State,
)

BLACK: Final = 0
WHITE: Final = 1
COLOUR_NAMES: Final = ("Black", "White")

NUM_SQUARES: Final = 32
DRAW_PLIES: Final = 80
REPETITIONS: Final = 3
_MOVE_RULE_DRAW: Final = Outcome(
    None, f"draw: {DRAW_PLIES} plies without a capture or a man move", Ending.MOVE_RULE
)
_REPETITION_DRAW: Final = Outcome(None, "draw: threefold repetition", Ending.REPETITION)

BIT_OF_SQUARE: Final = tuple([-1] + [(s - 1) + (s - 1) // 8 for s in range(1, 33)])
SQUARE_OF_BIT: Final = tuple(
    BIT_OF_SQUARE.index(b) if b in BIT_OF_SQUARE[1:] else 0 for b in range(35)
)
VALID: Final = sum(1 << BIT_OF_SQUARE[s] for s in range(1, 33))
BLACK_CROWN: Final = sum(1 << BIT_OF_SQUARE[s] for s in range(29, 33))
WHITE_CROWN: Final = sum(1 << BIT_OF_SQUARE[s] for s in range(1, 5))
CROWN_ROW: Final = (BLACK_CROWN, WHITE_CROWN)
START_BLACK: Final = sum(1 << BIT_OF_SQUARE[s] for s in range(1, 13))
START_WHITE: Final = sum(1 << BIT_OF_SQUARE[s] for s in range(21, 33))

# Directions as bit offsets: +4/+5 go down the board (toward square 32), -4/-5 go up.
DOWN: Final = (4, 5)
UP: Final = (-4, -5)
ALL_DIRECTIONS: Final = (4, 5, -4, -5)
FORWARD: Final = (DOWN, UP)  # men's directions, indexed by colour


def square_row(square: int) -> int:
    """Return the row (0 at the top, seen from White) of a square 1-32."""
    return (square - 1) // 4


def square_column(square: int) -> int:
    """Return the column (0 at the left, seen from White) of a square 1-32."""
    row = square_row(square)
    return 2 * ((square - 1) % 4) + (1 if row % 2 == 0 else 0)


def square_at(row: int, column: int) -> int | None:
    """Return the square number at (row, column), or None on a light square."""
    if not (0 <= row < 8 and 0 <= column < 8) or (row + column) % 2 == 0:
        return None
    return row * 4 + column // 2 + 1


class CheckersMove:
    """A move: its full path of squares, and the bit masks that apply it.

    Equal moves have equal paths. `captured` is the mask of captured pieces (0 for a step).
    """

    __slots__ = ("captured", "frm", "path", "to")

    def __init__(self, path: tuple[int, ...], captured: int) -> None:
        self.path = path
        self.frm = 1 << BIT_OF_SQUARE[path[0]]
        self.to = 1 << BIT_OF_SQUARE[path[-1]]
        self.captured = captured

    @property
    def is_capture(self) -> bool:
        """True for a jump or multi-jump."""
        return self.captured != 0

    @property
    def captured_squares(self) -> tuple[int, ...]:
        """The squares of the captured pieces, in ascending order."""
        return _squares_of(self.captured)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CheckersMove):
            return NotImplemented
        return self.path == other.path

    def __hash__(self) -> int:
        return hash(self.path)

    def __str__(self) -> str:
        sep = "x" if self.captured else "-"
        return sep.join(map(str, self.path))

    def __repr__(self) -> str:
        return f"<CheckersMove {self}>"


def sorted_texts(moves: Sequence[CheckersMove]) -> list[str]:
    """Return the moves' texts ordered by their paths (for messages and listings)."""
    return [str(m) for m in sorted(moves, key=lambda m: m.path)]


def _squares_of(mask: int) -> tuple[int, ...]:
    squares = []
    while mask:
        low = mask & -mask
        squares.append(SQUARE_OF_BIT[low.bit_length() - 1])
        mask ^= low
    return tuple(sorted(squares))


def _build_steps() -> dict[int, list[CheckersMove | None]]:
    """Every simple step, by direction and destination bit, so generation allocates nothing."""
    table: dict[int, list[CheckersMove | None]] = {}
    for d in ALL_DIRECTIONS:
        row: list[CheckersMove | None] = [None] * 64
        for s in range(1, 33):
            to_bit = BIT_OF_SQUARE[s] + d
            if 0 <= to_bit < 35 and (VALID >> to_bit) & 1:
                row[to_bit] = CheckersMove((s, SQUARE_OF_BIT[to_bit]), 0)
        table[d] = row
    return table


def _build_jumps() -> tuple[tuple[tuple[int, int, int], ...], ...]:
    """For each bit and direction index: (mid mask, landing mask, landing bit), if on board."""
    table = []
    for b in range(35):
        entries = []
        for d in ALL_DIRECTIONS:
            mid, land = b + d, b + 2 * d
            if (VALID >> b) & 1 and 0 <= land < 35 and (VALID >> mid) & 1 and (VALID >> land) & 1:
                entries.append((1 << mid, 1 << land, land))
            else:
                entries.append((0, 0, -1))
        table.append(tuple(entries))
    return tuple(table)


STEPS: Final = _build_steps()
JUMPS: Final = _build_jumps()
# Direction indexes into JUMPS entries: men of each colour use only their forward pair.
FORWARD_INDEXES: Final = ((0, 1), (2, 3))
KING_INDEXES: Final = (0, 1, 2, 3)


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
            moves = () if self._draw() is not None else self._generate()
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
        return _any_jump(mine, mine & kings, theirs, empty, self.turn)

    def _generate(self) -> tuple[CheckersMove, ...]:
        black, white, kings = self.black, self.white, self.kings
        empty = VALID & ~(black | white)
        turn = self.turn
        if turn == BLACK:
            mine, theirs = black, white
        else:
            mine, theirs = white, black
        my_kings = mine & kings
        jumpers = _jumpers(mine, my_kings, theirs, empty, turn)
        if jumpers:
            return _generate_jumps(mine, my_kings, theirs, empty, turn, jumpers)
        moves: list[CheckersMove] = []
        append = moves.append
        for d in FORWARD[turn]:
            targets = ((mine << d) if d > 0 else (mine >> -d)) & empty
            row = STEPS[d]
            while targets:
                low = targets & -targets
                targets ^= low
                move = row[low.bit_length() - 1]
                if move is not None:
                    append(move)
        if my_kings:
            for d in FORWARD[1 - turn]:
                targets = ((my_kings << d) if d > 0 else (my_kings >> -d)) & empty
                row = STEPS[d]
                while targets:
                    low = targets & -targets
                    targets ^= low
                    move = row[low.bit_length() - 1]
                    if move is not None:
                        append(move)
        return tuple(moves)

    def perft(self, depth: int) -> int:
        """Count the leaf nodes to `depth` plies on the raw bitboards (same rules, no objects)."""
        if depth < 0:
            raise ValueError(f"perft depth must be >= 0, not {depth}")
        if depth == 0:
            return 1
        history: History = None
        for node in reversed(list(self._ancestors())):
            history = (node.black, node.white, node.kings, history)
        return _perft(self.black, self.white, self.kings, self.turn, depth, self.quiet, history)

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
        return f"<CheckersState {format_fen(self)!r}>"


def _jumpers(mine: int, my_kings: int, theirs: int, empty: int, turn: int) -> int:
    """Return the mask of pieces of `mine` that can jump: bulk shifts, no per-piece work.

    A piece at bit b jumps in direction d when b+d holds an enemy and b+2d is empty.
    """
    down = (theirs >> 4) & (empty >> 8) | (theirs >> 5) & (empty >> 10)
    up = (theirs << 4) & (empty << 8) | (theirs << 5) & (empty << 10)
    if turn == BLACK:
        return mine & down | my_kings & up
    return mine & up | my_kings & down


def _any_jump(mine: int, my_kings: int, theirs: int, empty: int, turn: int) -> bool:
    """True when some piece of `mine` can jump (and so every move must be a capture)."""
    return _jumpers(mine, my_kings, theirs, empty, turn) != 0


def _generate_jumps(
    mine: int, my_kings: int, theirs: int, empty: int, turn: int, jumpers: int | None = None
) -> tuple[CheckersMove, ...]:
    moves: list[CheckersMove] = []
    crown = CROWN_ROW[turn]
    pieces = _jumpers(mine, my_kings, theirs, empty, turn) if jumpers is None else jumpers
    while pieces:
        low = pieces & -pieces
        pieces ^= low
        b = low.bit_length() - 1
        king = bool(my_kings & low)
        _extend_jump(
            b,
            king,
            theirs,
            empty | low,  # the jumping piece leaves its square (ring captures may end there)
            [SQUARE_OF_BIT[b]],
            0,
            crown,
            KING_INDEXES if king else FORWARD_INDEXES[turn],
            moves,
        )
    return tuple(moves)


def _extend_jump(
    b: int,
    king: bool,
    theirs: int,
    empty: int,
    path: list[int],
    captured: int,
    crown: int,
    indexes: tuple[int, ...],
    out: list[CheckersMove],
) -> None:
    entries = JUMPS[b]
    extended = False
    for i in indexes:
        mid, land, land_bit = entries[i]
        if theirs & mid and empty & land:
            extended = True
            path.append(SQUARE_OF_BIT[land_bit])
            if not king and land & crown:
                out.append(CheckersMove(tuple(path), captured | mid))
            else:
                _extend_jump(
                    land_bit, king, theirs & ~mid, empty, path, captured | mid, crown, indexes, out
                )
            path.pop()
    if not extended and captured:
        out.append(CheckersMove(tuple(path), captured))


def _count_jumps(jumpers: int, my_kings: int, theirs: int, empty: int, turn: int) -> int:
    """Return how many capture moves the pieces in `jumpers` have, building none of them."""
    crown = CROWN_ROW[turn]
    man_indexes = FORWARD_INDEXES[turn]
    count = 0
    while jumpers:
        low = jumpers & -jumpers
        jumpers ^= low
        if my_kings & low:
            count += _count_paths(low.bit_length() - 1, theirs, empty | low, 0, KING_INDEXES)
        else:
            count += _count_paths(low.bit_length() - 1, theirs, empty | low, crown, man_indexes)
    return count


def _count_paths(b: int, theirs: int, empty: int, crown: int, indexes: tuple[int, ...]) -> int:
    """Count the complete jump paths from bit `b`; `crown` is 0 for a king (never crowns)."""
    entries = JUMPS[b]
    count = 0
    for i in indexes:
        mid, land, land_bit = entries[i]
        if theirs & mid and empty & land:
            if land & crown:
                count += 1
            else:
                count += _count_paths(land_bit, theirs & ~mid, empty, crown, indexes)
    return count or 1


# -- perft -------------------------------------------------------------------------------------
# A private fast path: the same move generator on raw bitboards, with no state objects, bulk
# counting at the last ply, and the draw rules tracked exactly (`quiet` plies since the last
# irreversible move and `history`, the positions since then, nearest first).

History = tuple[int, int, int, "History"] | None


def _repeats(black: int, white: int, kings: int, history: History) -> int:
    count = 1
    odd = True
    while history is not None:
        hb, hw, hk, history = history
        if not odd and hb == black and hw == white and hk == kings:
            count += 1
        odd = not odd
    return count


def _count(black: int, white: int, kings: int, turn: int) -> int:
    """Return the number of legal moves, draws aside, without building any of them."""
    empty = VALID ^ (black | white)
    if turn == BLACK:
        my_kings = black & kings
        jumpers = black & ((white >> 4) & (empty >> 8) | (white >> 5) & (empty >> 10))
        if my_kings:
            jumpers |= my_kings & ((white << 4) & (empty << 8) | (white << 5) & (empty << 10))
        if jumpers:
            return _count_jumps(jumpers, my_kings, white, empty, BLACK)
        count = ((black << 4) & empty).bit_count() + ((black << 5) & empty).bit_count()
        if my_kings:
            count += ((my_kings >> 4) & empty).bit_count() + ((my_kings >> 5) & empty).bit_count()
        return count
    my_kings = white & kings
    jumpers = white & ((black << 4) & (empty << 8) | (black << 5) & (empty << 10))
    if my_kings:
        jumpers |= my_kings & ((black >> 4) & (empty >> 8) | (black >> 5) & (empty >> 10))
    if jumpers:
        return _count_jumps(jumpers, my_kings, black, empty, WHITE)
    count = ((white >> 4) & empty).bit_count() + ((white >> 5) & empty).bit_count()
    if my_kings:
        count += ((my_kings << 4) & empty).bit_count() + ((my_kings << 5) & empty).bit_count()
    return count


def _is_drawn(black: int, white: int, kings: int, quiet: int, history: History) -> bool:
    return quiet >= 2 * REPETITIONS + 2 and (
        quiet >= DRAW_PLIES or _repeats(black, white, kings, history) >= REPETITIONS
    )


def _perft(
    black: int, white: int, kings: int, turn: int, depth: int, quiet: int, history: History
) -> int:
    """Perft on raw bitboards; `depth` >= 1."""
    if _is_drawn(black, white, kings, quiet, history):
        return 0
    if depth == 1:
        return _count(black, white, kings, turn)
    empty = VALID ^ (black | white)
    if turn == BLACK:
        mine, theirs = black, white
    else:
        mine, theirs = white, black
    my_kings = mine & kings
    child_depth = depth - 1
    other = 1 - turn
    total = 0
    jumpers = _jumpers(mine, my_kings, theirs, empty, turn)
    if jumpers:
        crown = CROWN_ROW[turn]
        for move in _generate_jumps(mine, my_kings, theirs, empty, turn, jumpers):
            frm, to, captured = move.frm, move.to, move.captured
            new_kings = kings & ~captured
            if new_kings & frm:
                new_kings ^= frm ^ to
            elif to & crown:
                new_kings |= to
            if turn == BLACK:
                b, w = black ^ frm ^ to, white & ~captured
            else:
                b, w = black & ~captured, white ^ frm ^ to
            if child_depth == 1:
                total += _count(b, w, new_kings, other)
            else:
                total += _perft(b, w, new_kings, other, child_depth, 0, None)
        return total
    crown = CROWN_ROW[turn]
    here: History = (black, white, kings, history)
    men = mine & ~kings
    for pieces, directions, is_king in (
        (men, FORWARD[turn], False),
        (my_kings, ALL_DIRECTIONS, True),
    ):
        if not pieces:
            continue
        for d in directions:
            targets = ((pieces << d) if d > 0 else (pieces >> -d)) & empty
            while targets:
                to = targets & -targets
                targets ^= to
                moved = to | ((to >> d) if d > 0 else (to << -d))
                if turn == BLACK:
                    b, w = black ^ moved, white
                else:
                    b, w = black, white ^ moved
                if is_king:
                    new_kings = kings ^ moved
                    if child_depth == 1 and quiet + 1 < 2 * REPETITIONS + 2:
                        total += _count(b, w, new_kings, other)
                    else:
                        total += _perft(b, w, new_kings, other, child_depth, quiet + 1, here)
                else:
                    new_kings = kings | to if to & crown else kings
                    if child_depth == 1:
                        total += _count(b, w, new_kings, other)
                    else:
                        total += _perft(b, w, new_kings, other, child_depth, 0, None)
    return total


# -- move text ---------------------------------------------------------------------------------

_MOVE_RE: Final = re.compile(r"^\s*(\d{1,2})((?:\s*[-xX:\u00d7]\s*\d{1,2})+)\s*$")
_PART_RE: Final = re.compile(r"([-xX:\u00d7])\s*(\d{1,2})")


def parse_move_text(text: str) -> tuple[tuple[int, ...], str]:
    """Return (path of squares, "-" or "x") for move text like `11-15`, `22x15`, `11x18x25`.

    Raises InvalidMoveError naming what is wrong; legality is checked by CheckersState.
    """
    if not isinstance(text, str):
        raise InvalidMoveError(f"a checkers move must be text, not {type(text).__name__}")
    match = _MOVE_RE.match(text)
    if match is None:
        raise InvalidMoveError(
            f"cannot read checkers move {text!r}: expected squares 1-32 joined by '-' for a "
            "step or 'x' for a capture, e.g. 11-15, 22x15, 11x18x25"
        )
    squares = [int(match.group(1))]
    separators = set()
    for sep, number in _PART_RE.findall(match.group(2)):
        separators.add("x" if sep in "xX\u00d7:" else "-")
        squares.append(int(number))
    bad = [s for s in squares if not 1 <= s <= NUM_SQUARES]
    if bad:
        raise InvalidMoveError(
            f"cannot read checkers move {text!r}: square {bad[0]} is off the board (1-32)"
        )
    if len(separators) > 1:
        raise InvalidMoveError(
            f"cannot read checkers move {text!r}: mixes '-' and 'x' (use x throughout a capture)"
        )
    separator = separators.pop()
    if separator == "-" and len(squares) > 2:
        raise InvalidMoveError(
            f"cannot read checkers move {text!r}: a step joins two squares; "
            "write a multi-jump with x, e.g. 11x18x25"
        )
    return tuple(squares), separator


# -- positions ---------------------------------------------------------------------------------

_FEN_SIDE_RE: Final = re.compile(r"^[BW]$")


def _mask_of(squares: Sequence[int]) -> int:
    mask = 0
    for s in squares:
        mask |= 1 << BIT_OF_SQUARE[s]
    return mask


def _parse_fen_squares(field: str, text: str) -> tuple[list[int], list[int]]:
    """Return (men, kings) of one FEN colour field body like `K1,5-7,12`."""
    men: list[int] = []
    kings: list[int] = []
    if not field.strip():
        return men, kings
    for raw in field.split(","):
        item = raw.strip()
        king = item[:1].upper() == "K"
        if king:
            item = item[1:].strip()
        if "-" in item:
            lo_text, _, hi_text = item.partition("-")
            if not (lo_text.strip().isdigit() and hi_text.strip().isdigit()):
                raise InvalidPositionError(f"bad square range {raw.strip()!r} in FEN {text!r}")
            lo, hi = int(lo_text), int(hi_text)
            if lo > hi:
                raise InvalidPositionError(f"empty square range {raw.strip()!r} in FEN {text!r}")
            squares = list(range(lo, hi + 1))
        elif item.isdigit():
            squares = [int(item)]
        else:
            raise InvalidPositionError(
                f"bad square {raw.strip()!r} in FEN {text!r}: expected a number 1-32, "
                "optionally after K for a king"
            )
        for s in squares:
            if not 1 <= s <= NUM_SQUARES:
                raise InvalidPositionError(f"square {s} in FEN {text!r} is off the board (1-32)")
        (kings if king else men).extend(squares)
    return men, kings


def parse_fen(game: Checkers, text: str) -> CheckersState:
    """Return the state of a PDN FEN such as `B:W21,22,K30:B1,2,3` (side to move first).

    Accepts ranges (`B1-12`), either colour field first, an optional `[FEN "..."]` wrapper
    and a trailing period.
    """
    body = text.strip()
    wrapped = re.match(r'^\[\s*FEN\s+"(.*)"\s*\]$', body, re.IGNORECASE)
    if wrapped:
        body = wrapped.group(1).strip()
    body = body.strip('"').rstrip(".").strip()
    fields = [f.strip() for f in body.split(":")]
    if len(fields) != 3:
        raise InvalidPositionError(
            f"cannot read FEN {text!r}: expected three fields separated by ':' "
            "(side to move, then the White and Black pieces), e.g. B:W21,22:B1,2"
        )
    side = fields[0].upper()
    if not _FEN_SIDE_RE.match(side):
        raise InvalidPositionError(
            f"cannot read FEN {text!r}: side to move must be B or W, not {fields[0]!r}"
        )
    pieces: dict[str, tuple[list[int], list[int]]] = {}
    for field in fields[1:]:
        colour = field[:1].upper()
        if colour not in ("B", "W"):
            raise InvalidPositionError(
                f"cannot read FEN {text!r}: each piece field starts with W or B, not {field!r}"
            )
        if colour in pieces:
            raise InvalidPositionError(f"cannot read FEN {text!r}: two {colour} piece fields")
        pieces[colour] = _parse_fen_squares(field[1:], text)
    black_men, black_kings = pieces["B"]
    white_men, white_kings = pieces["W"]
    seen: dict[int, str] = {}
    for name, squares in (
        ("Black", black_men + black_kings),
        ("White", white_men + white_kings),
    ):
        for s in squares:
            if s in seen:
                raise InvalidPositionError(
                    f"cannot read FEN {text!r}: square {s} is given twice ({seen[s]} and {name})"
                )
            seen[s] = name
    for s in black_men:
        if s >= 29:
            raise InvalidPositionError(
                f"impossible FEN {text!r}: a Black man on {s} would have been crowned"
            )
    for s in white_men:
        if s <= 4:
            raise InvalidPositionError(
                f"impossible FEN {text!r}: a White man on {s} would have been crowned"
            )
    black = _mask_of(black_men + black_kings)
    white = _mask_of(white_men + white_kings)
    kings = _mask_of(black_kings + white_kings)
    return CheckersState(game, black, white, kings, BLACK if side == "B" else WHITE)


_MAN_TEXT: Final = tuple(str(SQUARE_OF_BIT[b]) if SQUARE_OF_BIT[b] else "" for b in range(35))
_KING_TEXT: Final = tuple("K" + text for text in _MAN_TEXT)


def format_fen(state: CheckersState) -> str:
    """Return the PDN FEN of `state`: side to move, White's pieces, Black's pieces."""
    kings = state.kings

    def field(mask: int) -> str:
        # Bits ascend with square numbers, so the lowest bit first lists squares in order.
        items = []
        while mask:
            low = mask & -mask
            bit = low.bit_length() - 1
            items.append(_KING_TEXT[bit] if kings & low else _MAN_TEXT[bit])
            mask ^= low
        return ",".join(items)

    side = "B" if state.turn == BLACK else "W"
    return f"{side}:W{field(state.white)}:B{field(state.black)}"


_BOARD_CHARS: Final = set(".rbRB")


def parse_board(game: Checkers, text: str, to_move: str = "red") -> CheckersState:
    """Return the state of a course-format board (8 lines of `. r b R B`, row 0 at the top).

    Red starts at the bottom and moves up, so red's pieces are White's pieces of the standard
    numbering and black's are Black's; `to_move` ("red" or "black") is a separate fact.
    """
    side = to_move.strip().lower()
    if side not in ("red", "black"):
        raise InvalidPositionError(f"side to move must be 'red' or 'black', not {to_move!r}")
    rows = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if len(rows) != 8:
        raise InvalidPositionError(
            f"a course board has 8 rows of 8 characters, got {len(rows)} rows"
        )
    black = white = kings = 0
    for r, line in enumerate(rows):
        if len(line) != 8:
            raise InvalidPositionError(
                f"row {r} of the board has {len(line)} characters, expected 8: {line!r}"
            )
        for c, char in enumerate(line):
            if char not in _BOARD_CHARS:
                raise InvalidPositionError(
                    f"row {r} column {c}: unexpected {char!r} (use . r b R B)"
                )
            if char == ".":
                continue
            square = square_at(r, c)
            if square is None:
                raise InvalidPositionError(
                    f"row {r} column {c}: a piece on a light square (pieces stand where "
                    "row+column is odd)"
                )
            bit = 1 << BIT_OF_SQUARE[square]
            if char in "rR":
                if char == "r" and r == 0:
                    raise InvalidPositionError(
                        f"row 0 column {c}: a red man on row 0 is a king (R)"
                    )
                white |= bit
            else:
                if char == "b" and r == 7:
                    raise InvalidPositionError(
                        f"row 7 column {c}: a black man on row 7 is a king (B)"
                    )
                black |= bit
            if char in "RB":
                kings |= bit
    return CheckersState(game, black, white, kings, WHITE if side == "red" else BLACK)


def format_board(state: CheckersState) -> str:
    """Return the course-format board of `state` (8 lines; red = White's pieces, at the bottom)."""
    to_char = {"b": "b", "B": "B", "w": "r", "W": "R", ".": "."}
    lines = []
    for r in range(8):
        line = []
        for c in range(8):
            square = square_at(r, c)
            line.append("." if square is None else to_char[state.piece_at(square)])
        lines.append("".join(line))
    return "\n".join(lines)


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
