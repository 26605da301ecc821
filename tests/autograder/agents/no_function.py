"""Names its function wrongly: there is no select_move to call."""


def choose_move(board: list[str], player: str, depth_limit: int | None, time_limit: float) -> None:
    return None
