"""A student's alpha-beta to a fixed depth, with no "win faster" term.

A won position scores WIN however far away the win is, so every winning move looks alike: red
takes the first move that wins within its horizon, not the fastest, and black, lost whatever
it does, the first move rather than the one that resists longest.
"""

from __future__ import annotations

from rules import Board, material, moves, other, play

DEPTH = 6
WIN = 1000


def negamax(board: Board, side: str, depth: int, alpha: float, beta: float) -> float:
    children = moves(board, side)
    if not children:
        return -WIN
    if depth == 0:
        return material(board, side)
    for child in children:
        alpha = max(alpha, -negamax(child, other(side), depth - 1, -beta, -alpha))
        if alpha >= beta:
            break
    return alpha


def choose(board: Board, side: str) -> Board:
    best, best_score = None, -WIN - 1.0
    for child in moves(board, side):
        score = -negamax(child, other(side), DEPTH - 1, -WIN - 1.0, -best_score)
        if score > best_score:
            best, best_score = child, score
    assert best is not None
    return best


if __name__ == "__main__":
    play(choose)
