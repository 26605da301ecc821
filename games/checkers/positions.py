"""Checkers positions as text: PDN FEN (`B:W21,22,K30:B1,2,3`) and the course's board."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from games.base import InvalidPositionError
from games.checkers.board import (
    BIT_OF_SQUARE,
    BLACK,
    NUM_SQUARES,
    SQUARE_OF_BIT,
    WHITE,
    mask_of,
    square_at,
)
from games.checkers.state import CheckersState

if TYPE_CHECKING:
    from games.checkers.game import Checkers

_FEN_SIDE_RE: Final = re.compile(r"^[BW]$")


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
    black = mask_of(black_men + black_kings)
    white = mask_of(white_men + white_kings)
    kings = mask_of(black_kings + white_kings)
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
