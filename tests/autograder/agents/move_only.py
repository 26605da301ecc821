"""The reference solution's move (reference.py beside it) without its value."""

import reference


def select_move(
    board: list[str], player: str, depth_limit: int | None, time_limit: float
) -> list[tuple[int, int]]:
    move, _ = reference.select_move(board, player, depth_limit, time_limit)
    return move
