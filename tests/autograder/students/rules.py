"""A student's own checkers module: boards, legal moves, reading and writing the files.

Shared by the test's student programs (copied beside each one as `rules.py`, as a student's
own module would be). Standard library only, as the grader's sandbox requires.
"""

from __future__ import annotations

import argparse

RED, BLACK = "red", "black"
OWN = {RED: "rR", BLACK: "bB"}
AHEAD = {RED: -1, BLACK: 1}
CROWN = {RED: 0, BLACK: 7}
VALUE = {"r": 1, "b": 1, "R": 2, "B": 2, ".": 0}
MAX_PLIES = 120
"""The longest line written: a program without progress stops there."""

Board = tuple[str, ...]  # 64 characters, row * 8 + column


def other(side: str) -> str:
    return BLACK if side == RED else RED


def steps_of(piece: str, side: str) -> list[tuple[int, int]]:
    rows = (-1, 1) if piece.isupper() else (AHEAD[side],)
    return [(dr, dc) for dr in rows for dc in (-1, 1)]


def moves(board: Board, side: str) -> list[Board]:
    """Every board one legal move of `side` leads to; captures are compulsory."""
    jumps: list[Board] = []
    for square, piece in enumerate(board):
        if piece in OWN[side]:
            start = list(board)
            start[square] = "."
            _jumps(start, square, piece, side, set(), jumps)
    if jumps:
        return jumps
    result = []
    for square, piece in enumerate(board):
        if piece not in OWN[side]:
            continue
        row, col = divmod(square, 8)
        for dr, dc in steps_of(piece, side):
            r, c = row + dr, col + dc
            if 0 <= r < 8 and 0 <= c < 8 and board[r * 8 + c] == ".":
                cells = list(board)
                cells[square] = "."
                cells[r * 8 + c] = piece.upper() if r == CROWN[side] else piece
                result.append(tuple(cells))
    return result


def _jumps(
    cells: list[str], square: int, piece: str, side: str, taken: set[int], out: list[Board]
) -> None:
    row, col = divmod(square, 8)
    went_on = False
    for dr, dc in steps_of(piece, side):
        r1, c1, r2, c2 = row + dr, col + dc, row + 2 * dr, col + 2 * dc
        if not (0 <= r2 < 8 and 0 <= c2 < 8):
            continue
        over, land = r1 * 8 + c1, r2 * 8 + c2
        if over in taken or cells[over] not in OWN[other(side)] or cells[land] != ".":
            continue
        went_on = True
        if piece.islower() and r2 == CROWN[side]:
            done = list(cells)
            for square_taken in taken | {over}:
                done[square_taken] = "."
            done[land] = piece.upper()
            out.append(tuple(done))
        else:
            _jumps(cells, land, piece, side, taken | {over}, out)
    if not went_on and taken:
        done = list(cells)
        for square_taken in taken:
            done[square_taken] = "."
        done[square] = piece
        out.append(tuple(done))


def material(board: Board, side: str) -> int:
    """Men 1, kings 2: `side`'s minus the other side's."""
    mine = sum(VALUE[p] for p in board if p in OWN[side])
    theirs = sum(VALUE[p] for p in board if p in OWN[other(side)])
    return mine - theirs


def read_board(text: str) -> Board:
    rows = [line.strip() for line in text.splitlines() if line.strip()]
    return tuple("".join(rows))


def write_line(path: str, line: list[Board]) -> None:
    texts = ["\n".join("".join(b[r * 8 : r * 8 + 8]) for r in range(8)) for b in line]
    with open(path, "w", encoding="utf-8") as file:
        file.write("\n\n".join(texts) + "\n")


def play(choose: object) -> None:
    """Read --inputfile, let `choose(board, side)` pick each move, write --outputfile."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--inputfile", required=True)
    parser.add_argument("--outputfile", required=True)
    args = parser.parse_args()
    with open(args.inputfile, encoding="utf-8") as file:
        board = read_board(file.read())
    line = [board]
    side = RED
    while len(line) <= MAX_PLIES and moves(board, side):
        board = choose(board, side)  # type: ignore[operator]
        line.append(board)
        side = other(side)
    write_line(args.outputfile, line)
