"""Reference solution of the endgame-solver assignment (standard library only).

Run as ``python3 checkers.py --inputfile IN --outputfile OUT``. IN is a board of 8 lines of
``. r b R B`` (row 0 at the top; red moves up, black moves down; red to move). OUT receives the
states from IN to the end of the game, separated by blank lines, with red winning as fast as
possible and black resisting as long as possible.

The search is iterative-deepening negamax with alpha-beta and mate-distance scores: a win at
ply p scores WIN - p, a position not decided at the depth limit scores 0, and the first depth
whose score is a win gives the shortest forced win. Captures are compulsory, a multi-jump is
completed, and a man that reaches the far row is crowned and ends its move.
"""

from __future__ import annotations

import argparse
import sys

Board = tuple[str, ...]  # 64 characters, index row * 8 + column

RED = "red"
BLACK = "black"
WIN = 1000
MAX_DEPTH = 40
OWN = {RED: "rR", BLACK: "bB"}
FORWARD = {RED: ((-1, -1), (-1, 1)), BLACK: ((1, -1), (1, 1))}
ALL_DIRECTIONS = ((-1, -1), (-1, 1), (1, -1), (1, 1))
CROWN_ROW = {RED: 0, BLACK: 7}


def other(side: str) -> str:
    """Return the opponent of `side`."""
    return BLACK if side == RED else RED


def read_board(text: str) -> Board:
    """Read 8 lines of 8 characters into a board."""
    rows = [line.strip() for line in text.splitlines() if line.strip()]
    if len(rows) != 8 or any(len(row) != 8 for row in rows):
        raise ValueError("a board has 8 lines of 8 characters")
    return tuple("".join(rows))


def format_board(board: Board) -> str:
    """Return the board as 8 lines."""
    return "\n".join("".join(board[r * 8 : r * 8 + 8]) for r in range(8))


def directions(piece: str, side: str) -> tuple[tuple[int, int], ...]:
    """Return the directions a piece may move or jump in."""
    return ALL_DIRECTIONS if piece.isupper() else FORWARD[side]


def successors(board: Board, side: str) -> list[Board]:
    """Return the boards after each legal move of `side` (captures first and compulsory)."""
    jumps: list[Board] = []
    for square, piece in enumerate(board):
        if piece in OWN[side]:
            cells = list(board)
            cells[square] = "."
            _jump(cells, square // 8, square % 8, piece, side, False, jumps)
    if jumps:
        return jumps
    steps: list[Board] = []
    for square, piece in enumerate(board):
        if piece not in OWN[side]:
            continue
        row, col = divmod(square, 8)
        for dr, dc in directions(piece, side):
            r, c = row + dr, col + dc
            if 0 <= r < 8 and 0 <= c < 8 and board[r * 8 + c] == ".":
                cells = list(board)
                cells[square] = "."
                cells[r * 8 + c] = _crowned(piece, side, r)
                steps.append(tuple(cells))
    return steps


def _crowned(piece: str, side: str, row: int) -> str:
    return piece.upper() if row == CROWN_ROW[side] else piece


def _jump(
    cells: list[str], row: int, col: int, piece: str, side: str, jumped: bool, out: list[Board]
) -> None:
    """Extend a jump from (row, col); `cells` has the jumper lifted and captures marked 'x'."""
    extended = False
    for dr, dc in directions(piece, side):
        mr, mc, lr, lc = row + dr, col + dc, row + 2 * dr, col + 2 * dc
        if not (0 <= lr < 8 and 0 <= lc < 8):
            continue
        middle, land = mr * 8 + mc, lr * 8 + lc
        if cells[middle] in OWN[other(side)] and cells[land] == ".":
            extended = True
            taken = cells[middle]
            cells[middle] = "x"  # captured: cannot be jumped again, nor landed on
            if piece.islower() and lr == CROWN_ROW[side]:
                done = list(cells)
                done[land] = piece.upper()
                out.append(tuple("." if cell == "x" else cell for cell in done))
            else:
                _jump(cells, lr, lc, piece, side, True, out)
            cells[middle] = taken
    if not extended and jumped:
        done = list(cells)
        done[row * 8 + col] = piece
        out.append(tuple("." if cell == "x" else cell for cell in done))


class Search:
    """Negamax alpha-beta with mate-distance scores and a best-move table for ordering."""

    def __init__(self) -> None:
        self.best: dict[tuple[Board, str], Board] = {}
        self.moves: dict[tuple[Board, str], list[Board]] = {}

    def children(self, board: Board, side: str) -> list[Board]:
        """Return the successors, the best one found earlier first."""
        key = (board, side)
        children = self.moves.get(key)
        if children is None:
            children = successors(board, side)
            self.moves[key] = children
        first = self.best.get(key)
        if first is not None and children[0] != first:
            children = [first] + [c for c in children if c != first]
            self.moves[key] = children
        return children

    def negamax(self, board: Board, side: str, depth: int, alpha: int, beta: int, ply: int) -> int:
        """Return the score for `side` to move: WIN - p for a win at ply p, 0 if undecided."""
        children = self.children(board, side)
        if not children:
            return -(WIN - ply)
        if depth == 0:
            return 0
        alpha = max(alpha, -(WIN - ply))  # nothing is worse than losing right now
        beta = min(beta, WIN - ply - 1)  # nothing is better than winning with the next ply
        if alpha >= beta:
            return alpha
        best = -WIN - 1
        for child in children:
            score = -self.negamax(child, other(side), depth - 1, -beta, -alpha, ply + 1)
            if score > best:
                best = score
                self.best[(board, side)] = child
            alpha = max(alpha, score)
            if alpha >= beta:
                break
        return best

    def best_child(self, board: Board, side: str, depth: int) -> tuple[Board, int]:
        """Return the best successor and its score, searching `depth` plies."""
        best_score = -WIN - 1
        best_board = board
        alpha = -WIN - 1
        for child in self.children(board, side):
            score = -self.negamax(child, other(side), depth - 1, -WIN - 1, -alpha, 1)
            if score > best_score:
                best_score, best_board = score, child
                self.best[(board, side)] = child
            alpha = max(alpha, score)
        return best_board, best_score


def solve(board: Board) -> list[Board]:
    """Return the line from `board` (red to move) to red's fastest win, or [board] if none."""
    search = Search()
    for depth in range(1, MAX_DEPTH + 1):
        if search.negamax(board, RED, depth, -WIN - 1, WIN + 1, 0) >= WIN - MAX_DEPTH:
            break
    else:
        return [board]
    line = [board]
    side = RED
    remaining = depth
    while remaining > 0 and search.children(line[-1], side):
        child, _ = search.best_child(line[-1], side, remaining)
        line.append(child)
        side = other(side)
        remaining -= 1
    return line


def main(argv: list[str] | None = None) -> int:
    """Read the input board, solve it, write the line of states."""
    parser = argparse.ArgumentParser(description="Solve a checkers endgame (red to move).")
    parser.add_argument("--inputfile", required=True)
    parser.add_argument("--outputfile", required=True)
    args = parser.parse_args(argv)
    with open(args.inputfile, encoding="utf-8") as file:
        board = read_board(file.read())
    line = solve(board)
    with open(args.outputfile, "w", encoding="utf-8") as file:
        file.write("\n\n".join(format_board(b) for b in line) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
