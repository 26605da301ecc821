"""The reference solution (shipped beside it as reference.py) with material counted for the
opponent: legal moves, wrong values, poor play."""

import reference

_material = reference.material
reference.material = lambda board, side: -_material(board, side)


def select_move(
    board: list[str], player: str, depth_limit: int | None, time_limit: float
) -> tuple[list[tuple[int, int]], int]:
    return reference.select_move(board, player, depth_limit, time_limit)
