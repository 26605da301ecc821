"""Reading an agent's replies: a move as (row, col) pairs, a value, or the problem in words."""

from __future__ import annotations

from autograder.agent_runner import Reply, read_answer
from games.checkers import Checkers, format_board, parse_board

GAME = Checkers()
OPENING = parse_board(GAME, format_board(GAME.initial_state()), "red")


def test_a_legal_move_with_its_value() -> None:
    answer = read_answer(OPENING, Reply(ok=True, result=[[[5, 0], [4, 1]], 0.5]))
    assert answer.move is not None and answer.value == 0.5 and not answer.problem
    alone = read_answer(OPENING, Reply(ok=True, result=[[5, 0], [4, 1]]))
    assert alone.move == answer.move and alone.value is None


def test_problems_are_told_in_the_courses_words() -> None:
    def problem(result: object) -> str:
        return read_answer(OPENING, Reply(ok=True, result=result)).problem

    assert "not a move" in problem("e3-d4")
    assert problem([[5, 1], [4, 2]]) == "(5,1) is not a dark square of the board"
    assert problem([[5, 0], [3, 2]]).startswith(
        "(5,0)-(3,2): not one legal move of red (legal moves for red: (5,0)-(4,1) [21-17], "
    )
    assert read_answer(OPENING, Reply(ok=False, error="boom")).problem == "boom"
