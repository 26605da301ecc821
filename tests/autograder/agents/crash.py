"""Raises on every call."""


def select_move(
    board: list[str], player: str, depth_limit: int | None, time_limit: float
) -> object:
    raise RuntimeError("not implemented yet")
