"""English draughts (American checkers) on bitboards.

The rules are those of the ACF/WCDF (docs/GAMES.md): Black moves first from squares 1-12 toward
higher numbers; captures are compulsory but any capture may be chosen; men capture forward only;
a whole multi-jump is one move, identified by its full path; a man that reaches the far row is
crowned and its move ends there; a side with no legal move loses; threefold repetition and 80
plies without a capture or a man move are draws.

The package by job: `board` (squares, the bit layout, the rule constants), `moves` (the move
and its text), `generation` (legal moves on the bitboards), `perft` (counting on the raw
bitboards), `state` (a position: moves, outcome, draws), `positions` (FEN and the course's
board) and `game` (the `Checkers` game).
"""

from games.checkers.board import (
    BIT_OF_SQUARE,
    BLACK,
    BLACK_CROWN,
    COLOUR_NAMES,
    DRAW_PLIES,
    JUMPS,
    NUM_SQUARES,
    REPETITIONS,
    SQUARE_OF_BIT,
    VALID,
    WHITE,
    WHITE_CROWN,
    square_at,
    square_column,
    square_row,
)
from games.checkers.game import Checkers
from games.checkers.moves import CheckersMove, parse_move_text, sorted_texts
from games.checkers.positions import format_board, format_fen, parse_board, parse_fen
from games.checkers.state import CheckersState

__all__ = [
    "BIT_OF_SQUARE",
    "BLACK",
    "BLACK_CROWN",
    "COLOUR_NAMES",
    "DRAW_PLIES",
    "JUMPS",
    "NUM_SQUARES",
    "REPETITIONS",
    "SQUARE_OF_BIT",
    "VALID",
    "WHITE",
    "WHITE_CROWN",
    "Checkers",
    "CheckersMove",
    "CheckersState",
    "format_board",
    "format_fen",
    "parse_board",
    "parse_fen",
    "parse_move_text",
    "sorted_texts",
    "square_at",
    "square_column",
    "square_row",
]
