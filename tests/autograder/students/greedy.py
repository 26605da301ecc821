"""A student's 1-ply "search": each side takes the move that leaves it the most material."""

from __future__ import annotations

from rules import Board, material, moves, play


def choose(board: Board, side: str) -> Board:
    return max(moves(board, side), key=lambda child: material(child, side))


if __name__ == "__main__":
    play(choose)
