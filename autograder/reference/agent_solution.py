"""Reference solution of the checkers agent assignment (standard library only).

Submit as ``agent.py``. `select_move(board, player, depth_limit, time_limit)` returns
``(move, value)``: `move` is a list of (row, col) squares (start, then every landing square),
`value` the minimax value of the position searched `depth_limit` plies deep, from `player`'s
point of view, with the material evaluation (man 1, king 2, mine minus theirs) at the depth
limit and -1000 for a side to move that has no legal move (it has lost).

Alpha-beta returns the same value and move as plain minimax; the first best move in generation
order is kept. With `depth_limit` None it deepens one ply at a time until a quarter of
`time_limit` has passed.
"""

from __future__ import annotations

import time

Board = tuple[str, ...]  # 64 characters, index row * 8 + column
Move = tuple[tuple[int, int], ...]

RED = "red"
BLACK = "black"
LOSS = -1000
OWN = {RED: "rR", BLACK: "bB"}
FORWARD = {RED: ((-1, -1), (-1, 1)), BLACK: ((1, -1), (1, 1))}
ALL_DIRECTIONS = ((-1, -1), (-1, 1), (1, -1), (1, 1))
CROWN_ROW = {RED: 0, BLACK: 7}
VALUES = {"r": 1, "R": 2, "b": 1, "B": 2, ".": 0}


class OutOfTime(Exception):  # noqa: N818 - a control-flow signal
    """Raised inside a search when the deadline passes."""


def other(side: str) -> str:
    """Return the opponent of `side`."""
    return BLACK if side == RED else RED


def material(board: Board, side: str) -> int:
    """Return men + 2 * kings of `side` minus those of its opponent."""
    score = 0
    for piece in board:
        if piece in OWN[side]:
            score += VALUES[piece]
        elif piece != ".":
            score -= VALUES[piece]
    return score


def legal_moves(board: Board, side: str) -> list[tuple[Move, Board]]:
    """Return every legal move of `side` with the board after it (captures are compulsory)."""
    jumps: list[tuple[Move, Board]] = []
    for square, piece in enumerate(board):
        if piece in OWN[side]:
            cells = list(board)
            cells[square] = "."
            row, col = divmod(square, 8)
            _jump(cells, ((row, col),), piece, side, jumps)
    if jumps:
        return jumps
    steps: list[tuple[Move, Board]] = []
    for square, piece in enumerate(board):
        if piece not in OWN[side]:
            continue
        row, col = divmod(square, 8)
        for dr, dc in _directions(piece, side):
            r, c = row + dr, col + dc
            if 0 <= r < 8 and 0 <= c < 8 and board[r * 8 + c] == ".":
                cells = list(board)
                cells[square] = "."
                cells[r * 8 + c] = piece.upper() if r == CROWN_ROW[side] else piece
                steps.append((((row, col), (r, c)), tuple(cells)))
    return steps


def _directions(piece: str, side: str) -> tuple[tuple[int, int], ...]:
    return ALL_DIRECTIONS if piece.isupper() else FORWARD[side]


def _jump(
    cells: list[str], path: Move, piece: str, side: str, out: list[tuple[Move, Board]]
) -> None:
    """Extend a jump along `path`; `cells` has the jumper lifted and captures marked 'x'."""
    row, col = path[-1]
    extended = False
    for dr, dc in _directions(piece, side):
        mr, mc, lr, lc = row + dr, col + dc, row + 2 * dr, col + 2 * dc
        if not (0 <= lr < 8 and 0 <= lc < 8):
            continue
        middle, land = mr * 8 + mc, lr * 8 + lc
        if cells[middle] in OWN[other(side)] and cells[land] == ".":
            extended = True
            taken = cells[middle]
            cells[middle] = "x"  # captured: cannot be jumped again, nor landed on
            longer = (*path, (lr, lc))
            if piece.islower() and lr == CROWN_ROW[side]:  # crowning ends the move
                done = list(cells)
                done[land] = piece.upper()
                out.append((longer, tuple("." if cell == "x" else cell for cell in done)))
            else:
                _jump(cells, longer, piece, side, out)
            cells[middle] = taken
    if not extended and len(path) > 1:
        done = list(cells)
        done[row * 8 + col] = piece
        out.append((path, tuple("." if cell == "x" else cell for cell in done)))


def search(
    board: Board, side: str, depth: int, alpha: float, beta: float, deadline: float | None
) -> float:
    """Return the negamax alpha-beta value of `board` for `side` to move."""
    if deadline is not None and time.perf_counter() > deadline:
        raise OutOfTime
    moves = legal_moves(board, side)
    if not moves:
        return LOSS
    if depth == 0:
        return material(board, side)
    best = -float("inf")
    for _, child in moves:
        best = max(best, -search(child, other(side), depth - 1, -beta, -alpha, deadline))
        alpha = max(alpha, best)
        if alpha >= beta:
            break
    return best


def best_move(board: Board, side: str, depth: int, deadline: float | None) -> tuple[Move, float]:
    """Return the first best move and the exact minimax value at `depth`."""
    best: tuple[Move, float] | None = None
    alpha = -float("inf")
    for move, child in legal_moves(board, side):
        # A window just below alpha keeps ties exact but never lets a later tie win.
        value = -search(child, other(side), depth - 1, -float("inf"), -alpha, deadline)
        if best is None or value > best[1]:
            best = (move, value)
            alpha = value
    if best is None:
        raise ValueError(f"{side} has no legal move: the game is over")
    return best


def select_move(
    board: list[str], player: str, depth_limit: int | None, time_limit: float
) -> tuple[list[tuple[int, int]], int]:
    """Return (move, value) for `player` to move on `board` (see the module docstring)."""
    cells: Board = tuple("".join(board))
    if depth_limit is not None:
        move, value = best_move(cells, player, max(1, depth_limit), None)
        return list(move), int(value)
    deadline = time.perf_counter() + time_limit / 4
    move, value = best_move(cells, player, 1, None)
    for depth in range(2, 30):
        try:
            move, value = best_move(cells, player, depth, deadline)
        except OutOfTime:
            break
    return list(move), int(value)
