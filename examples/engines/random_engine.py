#!/usr/bin/env python3
"""A complete engine for Arena's engine protocol (docs/ENGINES.md), in plain Python.

It plays a random legal move in each of Arena's four games (tictactoe, nim, connect4,
checkers) and knows their rules itself: it imports nothing of Arena, as an engine written in
any other language would not. Run it as a bot with

    arena tournament connect4 'cmd:python3 examples/engines/random_engine.py' random

Options: `seed` (int): the random generator's seed, set at each new game.
"""

from __future__ import annotations

import itertools
import random
import sys

NAME = "Random (Python)"
VERSION = "1.0"


def send(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


# -- tic-tac-toe: nine cells "X...O...." row by row; a move is the cell 0-8 ------------------


def tictactoe_moves(board: str) -> list[str]:
    return [str(cell) for cell, mark in enumerate(board) if mark == "."]


def tictactoe_play(board: str, move: str) -> str:
    mark = "X" if board.count("X") == board.count("O") else "O"
    cell = int(move)
    return board[:cell] + mark + board[cell + 1 :]


# -- nim: heaps "1,3,5,7" (a "/2" suffix: the second player to move); a move is "H:K" --------


def nim_read(text: str) -> list[int]:
    return [int(h) for h in text.split("/", maxsplit=1)[0].split(",")]


def nim_moves(heaps: list[int]) -> list[str]:
    return [f"{h + 1}:{k}" for h, size in enumerate(heaps) for k in range(1, size + 1)]


def nim_play(heaps: list[int], move: str) -> list[int]:
    heap, count = (int(x) for x in move.split(":"))
    return [size - count if h == heap - 1 else size for h, size in enumerate(heaps)]


# -- connect four: the columns played, 1-based ("4455"); a move is a column "1".."7" ----------


def connect4_moves(played: str) -> list[str]:
    return [str(c) for c in range(1, 8) if played.count(str(c)) < 6]


# -- checkers: FEN "B:W21,22,K30:B1,2" (turn, then each side's squares, K a king) -------------
# Squares 1-32, four a row from Black's side; Black moves first, toward higher numbers.


def square_of(row: int, col: int) -> int | None:
    if 0 <= row < 8 and 0 <= col < 8 and (row + col) % 2 == 1:
        return row * 4 + col // 2 + 1
    return None


def row_col(square: int) -> tuple[int, int]:
    row = (square - 1) // 4
    return row, 2 * ((square - 1) % 4) + (1 if row % 2 == 0 else 0)


def checkers_read(fen: str) -> tuple[str, dict[int, str]]:
    turn, *sides = fen.split(":")
    board: dict[int, str] = {}
    for side in sides:
        colour = side[0].lower()
        for item in filter(None, side[1:].split(",")):
            king = item.startswith("K")
            first, _, last = item.lstrip("K").partition("-")
            for square in range(int(first), int(last or first) + 1):
                board[square] = colour.upper() if king else colour
    return turn.lower(), board


def checkers_moves(turn: str, board: dict[int, str]) -> list[str]:
    forward = 1 if turn == "b" else -1
    jumps: list[str] = []
    steps: list[str] = []

    def directions(piece: str) -> list[tuple[int, int]]:
        rows = (forward, -forward) if piece.isupper() else (forward,)
        return [(dr, dc) for dr in rows for dc in (-1, 1)]

    def extend(path: list[int], piece: str, taken: set[int]) -> None:
        row, col = row_col(path[-1])
        more = False
        for dr, dc in directions(piece):
            over = square_of(row + dr, col + dc)
            to = square_of(row + 2 * dr, col + 2 * dc)
            if over is None or to is None or over in taken:
                continue
            if board.get(over, ".").lower() != ("w" if turn == "b" else "b"):
                continue
            if to in board and to != path[0]:
                continue
            more = True
            crowned = piece.islower() and (to - 1) // 4 == (7 if turn == "b" else 0)
            if crowned:
                jumps.append("x".join(map(str, [*path, to])))
            else:
                extend([*path, to], piece, taken | {over})
        if not more and len(path) > 1:
            jumps.append("x".join(map(str, path)))

    for square, piece in board.items():
        if piece.lower() != turn:
            continue
        extend([square], piece, set())
        row, col = row_col(square)
        for dr, dc in directions(piece):
            to = square_of(row + dr, col + dc)
            if to is not None and to not in board:
                steps.append(f"{square}-{to}")
    return jumps or steps


def checkers_play(turn: str, board: dict[int, str], move: str) -> tuple[str, dict[int, str]]:
    path = [int(s) for s in move.replace("x", "-").split("-")]
    board = dict(board)
    piece = board.pop(path[0])
    for start, end in itertools.pairwise(path):
        if abs(start - end) > 5:  # a jump: take the piece jumped over
            (r1, c1), (r2, c2) = row_col(start), row_col(end)
            over = square_of((r1 + r2) // 2, (c1 + c2) // 2)
            if over is not None:
                board.pop(over, None)
    if (path[-1] - 1) // 4 == (7 if turn == "b" else 0):
        piece = piece.upper()
    board[path[-1]] = piece
    return ("w" if turn == "b" else "b"), board


# -- the protocol -----------------------------------------------------------------------------


def legal_moves(game: str, options: dict[str, str], position: list[str]) -> list[str]:
    """The legal moves after `position ...`'s tokens (startpos | fen TEXT, then moves)."""
    moves = position[position.index("moves") + 1 :] if "moves" in position else []
    text = None if position[0] == "startpos" else position[1]
    if game == "tictactoe":
        board = text or "." * 9
        for move in moves:
            board = tictactoe_play(board, move)
        return tictactoe_moves(board)
    if game == "nim":
        heaps = nim_read(text or options.get("heaps", "1,3,5,7"))
        for move in moves:
            heaps = nim_play(heaps, move)
        return nim_moves(heaps)
    if game == "connect4":
        return connect4_moves((text or "") + "".join(moves))
    turn, board = checkers_read(text or "B:W21-32:B1-12")
    for move in moves:
        turn, board = checkers_play(turn, board, move)
    return checkers_moves(turn, board)


def main() -> None:
    rng = random.Random(0)
    seed = 0
    game, options, position = "", {}, ["startpos"]
    for raw in sys.stdin:
        tokens = raw.split()
        if not tokens:
            continue
        command = tokens[0]
        if command == "arena":
            send(f"id name {NAME}")
            send("id author the Arena authors")
            send(f"id version {VERSION}")
            send("option name seed type int default 0 min 0 max 1000000")
            send("games tictactoe nim connect4 checkers")
            send("arenaok 1")
        elif command == "setoption" and tokens[2] == "seed":
            seed = int(tokens[4])
        elif command == "newgame":
            game = tokens[1]
            options = dict(t.partition("=")[::2] for t in tokens[2:])
            rng = random.Random(seed)
        elif command == "isready":
            send("readyok")
        elif command == "position":
            position = tokens[1:]
        elif command == "go":
            moves = legal_moves(game, options, position)
            if not moves:
                send("error no legal move in this position")
                continue
            send(f"info depth 1 nodes {len(moves)} score 0")
            send(f"bestmove {rng.choice(moves)}")
        elif command == "quit":
            break
        # `stop` needs nothing: this engine answers `go` at once.


if __name__ == "__main__":
    main()
