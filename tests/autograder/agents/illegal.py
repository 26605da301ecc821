"""Returns a step of its first piece even when a capture is compulsory (or the step is blocked)."""


def select_move(
    board: list[str], player: str, depth_limit: int | None, time_limit: float
) -> object:
    mine = "rR" if player == "red" else "bB"
    forward = -1 if player == "red" else 1
    for row, line in enumerate(board):
        for col, piece in enumerate(line):
            if piece in mine:
                return [(row, col), (row + forward, col + 1)], 0
    return [], 0
