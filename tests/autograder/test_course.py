"""The course format both profiles share: sides, (row,column) moves, boards and illegal moves."""

from __future__ import annotations

import pytest

from autograder.course import (
    Illegal,
    OutputError,
    describe_outcome,
    explain_illegal,
    format_move,
    format_moves,
    format_position,
    illegal_board,
    illegal_path,
    read_states,
    side_name,
    side_to_move,
)
from games.checkers import Checkers, CheckersState, format_board, parse_board, square_at

GAME = Checkers()
SEVEN = format_board(GAME.parse_position("W:WK23,K28:B3"))


def board(pieces: dict[tuple[int, int], str]) -> str:
    return "\n".join("".join(pieces.get((r, c), ".") for c in range(8)) for r in range(8))


def red(pieces: dict[tuple[int, int], str]) -> CheckersState:
    return parse_board(GAME, board(pieces), "red")


def path(*squares: tuple[int, int]) -> tuple[int, ...]:
    found = [square_at(r, c) for r, c in squares]
    assert None not in found
    return tuple(s for s in found if s is not None)


FORCED = red({(5, 2): "r", (6, 5): "r", (4, 3): "b", (1, 4): "b"})
DOUBLE = red({(6, 1): "r", (7, 6): "r", (5, 2): "b", (3, 4): "b", (0, 7): "b"})
CROWNS = red({(2, 1): "r", (6, 5): "r", (1, 2): "b", (1, 4): "b"})


def test_sides_and_moves_are_written_as_the_course_writes_them() -> None:
    assert (side_name(0), side_name(1)) == ("black", "red")
    assert side_to_move(FORCED) == "red"
    (jump,) = DOUBLE.legal_moves()
    # In the course's coordinates, then in PDN squares as `arena solve` writes the move.
    assert format_move(jump) == "(6,1)x(4,3)x(2,5) [25x18x11]"
    opening = parse_board(GAME, format_board(GAME.initial_state()), "red")
    listed = format_moves(opening.legal_moves()[::-1])
    assert listed.startswith("(5,0)-(4,1) [21-17], (5,2)-(4,1) [22-17], (5,2)-(4,3) [22-18]")


def test_a_position_is_named_in_pdn_with_both_sides_names() -> None:
    # Red's men on (5,2) and (6,5) are PDN squares 22 and 27; black's on (4,3), (1,4) 18 and 7.
    assert format_position(FORCED) == "PDN W:W22,27:B7,18 (red, PDN's White, to move)"
    black = parse_board(GAME, format_board(FORCED), "black")
    assert format_position(black).endswith("(black, PDN's Black, to move)")
    assert GAME.parse_position(format_position(black).split()[1]).turn == black.turn


def test_the_end_of_a_game_names_the_courses_sides() -> None:
    assert describe_outcome(FORCED) == ""
    gone = parse_board(GAME, board({(5, 2): "r"}), "black")
    assert describe_outcome(gone) == "black has no pieces left"
    blocked = parse_board(GAME, board({(6, 1): "b", (7, 0): "r", (7, 2): "r"}), "black")
    assert describe_outcome(blocked) == "black has no legal move"


def test_a_path_that_skips_a_capture() -> None:
    illegal = illegal_path(FORCED, path((6, 5), (5, 6)))
    assert illegal.reason is Illegal.CAPTURE_COMPULSORY
    assert explain_illegal(illegal) == (
        "a capture is available and captures are compulsory (legal moves for red: "
        "(5,2)x(3,4) [22x15])"
    )


def test_a_path_that_stops_a_multi_jump() -> None:
    illegal = illegal_path(DOUBLE, path((6, 1), (4, 3)))
    assert illegal.reason is Illegal.INCOMPLETE_JUMP
    assert explain_illegal(illegal).startswith(
        "incomplete multi-jump: after (6,1)x(4,3) the piece can jump again and must"
    )


def test_a_path_that_jumps_on_after_crowning() -> None:
    illegal = illegal_path(CROWNS, path((2, 1), (0, 3), (2, 5)))
    assert illegal.reason is Illegal.MOVE_ENDED
    assert "the move ends after (2,1)x(0,3): crowning ends a move" in explain_illegal(illegal)


def test_a_path_that_goes_on_after_a_step_or_a_finished_jump() -> None:
    opening = parse_board(GAME, format_board(GAME.initial_state()), "red")
    step = illegal_path(opening, path((5, 0), (4, 1), (3, 0)))
    assert step.reason is Illegal.MOVE_ENDED
    assert "the move ends after (5,0)-(4,1): a step is one square" in explain_illegal(step)
    jump = illegal_path(FORCED, path((5, 2), (3, 4), (1, 6)))
    assert "the move ends after (5,2)x(3,4): no further jump is possible" in explain_illegal(jump)


def test_a_path_that_is_no_move() -> None:
    opening = parse_board(GAME, format_board(GAME.initial_state()), "red")
    illegal = illegal_path(opening, path((5, 0), (3, 2)))
    assert illegal.reason is Illegal.NOT_LEGAL
    assert explain_illegal(illegal).startswith("not one legal move of red (legal moves for red:")


def test_a_board_is_classified_like_a_path() -> None:
    assert (
        illegal_board(FORCED, board({(5, 2): "r", (6, 5): "r", (4, 3): "b", (1, 4): "b"})).reason
        is Illegal.UNCHANGED
    )
    stepped = board({(5, 2): "r", (5, 6): "r", (4, 3): "b", (1, 4): "b"})
    assert illegal_board(FORCED, stepped).reason is Illegal.CAPTURE_COMPULSORY
    theirs = board({(5, 2): "r", (6, 5): "r", (4, 3): "b", (2, 5): "b"})
    assert "it is red's turn, but black's pieces moved" in explain_illegal(
        illegal_board(FORCED, theirs)
    )
    half = board({(4, 3): "r", (7, 6): "r", (3, 4): "b", (0, 7): "b"})
    illegal = illegal_board(DOUBLE, half)
    assert (illegal.reason, illegal.path) == (Illegal.INCOMPLETE_JUMP, path((6, 1), (4, 3)))


def test_read_states_names_the_state_and_line() -> None:
    good = SEVEN
    with pytest.raises(OutputError) as raised:
        read_states(good + "\n\n" + good.replace("....R...", "....R..."[:7], 1))
    assert (raised.value.state, raised.value.line) == (2, 15)
    assert "7 characters" in raised.value.reason
    with pytest.raises(OutputError) as raised:
        read_states(good + "\n\n" + good.replace(".....b..", "....b...", 1))
    assert raised.value.state == 2
    assert "light square" in raised.value.reason
    with pytest.raises(OutputError) as raised:
        read_states(good + "\n\n" + good.replace(".....b..", ".....x..", 1))
    assert "unexpected 'x'" in str(raised.value)
    with pytest.raises(OutputError) as raised:
        read_states(good + "\n" + good)  # no blank line between the boards
    assert "16 rows" in raised.value.reason
    assert "blank line" in raised.value.reason
    with pytest.raises(OutputError, match="crowned"):
        read_states(".r......\n" + "\n".join(["........"] * 7))
    assert [b.line for b in read_states("\n" + good + "\n\n\n" + good)] == [2, 12]
