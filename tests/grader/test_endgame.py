"""The endgame-solver profile: the reference solution scores full marks, broken lines lose points
for the right reasons."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from bots.solve import Solver
from games.checkers import Checkers, CheckersMove, CheckersState, format_board, parse_board
from grader.endgame import (
    BLACK_RESISTS,
    LEGAL_LINE,
    OPTIMAL_LENGTH,
    REACHES_WIN,
    WEIGHTS,
    check_solution,
)
from grader.endgame_suite import PuzzleError

REFERENCE = Path(__file__).parents[2] / "grader" / "reference" / "endgame_solver.py"
GAME = Checkers()


def mirrored(board: str) -> str:
    """Turn the board 180 degrees and swap the colours (Black to move becomes red to move)."""
    swap = str.maketrans("rbRB", "brBR")
    return "\n".join(line[::-1].translate(swap) for line in reversed(board.splitlines()))


def course_board(fen: str) -> str:
    """The course board of a certified position, its side to move playing red."""
    state = GAME.parse_position(fen)
    board = format_board(state)
    return board if fen.startswith("W") else mirrored(board)


# tests/bots/test_solve.py FORCED_WINS (certified there by full-width search), as red to move,
# and 9-ply wins found by make_puzzles (certified here by the solver).
PUZZLES = {
    course_board("B:W26:B22"): 1,
    course_board("B:WK20:BK13,K26,K24"): 3,
    course_board("B:W18:BK2,K16"): 5,
    course_board("W:WK2,K9,K1:BK8"): 5,
    course_board("W:WK23,K28:B3"): 7,
    course_board("B:WK4:BK17,K31,K24"): 7,
    ".....b..\n....R...\n........\n....R...\n........\n........\n........\n..B.....": 9,
    "........\n..R.....\n...r.b..\n....B...\n........\n........\n........\n........": 9,
}
SEVEN = course_board("W:WK23,K28:B3")
CROWNING = "\n".join(
    ["........", "..b.b...", ".r......", "........", "........", "..R.....", "........", "........"]
)
PUZZLES[CROWNING] = 9  # red's man must crown by a jump and stop there


def run_reference(board: str, tmp_path: Path) -> str:
    infile, outfile = tmp_path / "in.txt", tmp_path / "out.txt"
    infile.write_text(board + "\n")
    subprocess.run(
        [sys.executable, str(REFERENCE), "--inputfile", str(infile), "--outputfile", str(outfile)],
        check=True,
        timeout=60,
        cwd=tmp_path,
    )
    return outfile.read_text()


def boards(*states: CheckersState) -> str:
    return "\n\n".join(format_board(s) for s in states) + "\n"


Chooser = Callable[[CheckersState, int, list[CheckersMove]], CheckersMove]


def optimal(state: CheckersState, ply: int, best: list[CheckersMove]) -> CheckersMove:
    return best[0]


def play(board: str, choose: Chooser = optimal) -> str:
    """A line from `board` played by Arena's solver, `choose` picking among the optimal moves."""
    solver = Solver()
    state = parse_board(GAME, board, "red")
    line = [state]
    while not state.is_terminal():
        solution = solver.solve(state)
        best = [m for m in solution.best_moves if isinstance(m, CheckersMove)]
        state = state.apply_unchecked(choose(state, len(line) - 1, best))
        line.append(state)
    return boards(*line)


@pytest.mark.parametrize("puzzle", sorted(PUZZLES))
def test_the_reference_solution_scores_full_marks(puzzle: str, tmp_path: Path) -> None:
    verdict = check_solution(puzzle, run_reference(puzzle, tmp_path))
    assert verdict.optimal_plies == PUZZLES[puzzle]
    assert verdict.plies == PUZZLES[puzzle]
    assert verdict.is_full_marks, verdict.messages
    assert verdict.score == 1.0


def test_the_weights_sum_to_one() -> None:
    assert sum(WEIGHTS.values()) == pytest.approx(1.0)


def test_a_line_of_the_solver_scores_full_marks() -> None:
    assert check_solution(SEVEN, play(SEVEN)).is_full_marks


def test_garbage_and_empty_files_score_zero() -> None:
    for text, reason in [
        ("", "empty"),
        ("\n \n\n", "empty"),
        ("Traceback (most recent call last):\n  oops\n", "8 rows"),
        ("\x00\x01binary", "NUL"),
    ]:
        verdict = check_solution(SEVEN, text)
        assert verdict.score == 0.0
        assert verdict.plies is None
        assert reason in verdict.messages[0]


def test_the_output_must_start_with_the_puzzle() -> None:
    line = play(SEVEN)
    verdict = check_solution(SEVEN, line.split("\n\n", 1)[1])
    assert verdict.score == 0.0
    assert "not the puzzle" in verdict.messages[0]


def test_an_illegal_jump_loses_everything() -> None:
    # Red's king on (5,4) leaps two squares over an empty square: not a jump.
    after_rows = SEVEN.splitlines()
    after_rows[5], after_rows[3] = "........", "..R....."
    after = "\n".join(after_rows)
    verdict = check_solution(SEVEN, SEVEN + "\n\n" + after)
    assert verdict.components == dict.fromkeys(WEIGHTS, False)
    assert "ply 1" in verdict.messages[0]
    assert "not one legal move of red" in verdict.messages[0]
    assert "(5,4)-(4,3)" in verdict.messages[0]  # the legal moves are listed


def test_black_moving_at_reds_turn_is_explained() -> None:
    rows = SEVEN.splitlines()
    rows[0], rows[1] = "........", "......b."
    verdict = check_solution(SEVEN, SEVEN + "\n\n" + "\n".join(rows))
    assert verdict.score == 0.0
    assert "red's turn, but black's pieces moved" in verdict.messages[0]


def test_a_skipped_capture_is_explained() -> None:
    puzzle = course_board("B:W26:B22")  # red must jump and wins at once
    state = parse_board(GAME, puzzle, "red")
    (jump,) = state.legal_moves()
    assert jump.is_capture
    rows = puzzle.splitlines()
    row = next(r for r, line in enumerate(rows) if "r" in line)
    column = rows[row].index("r")
    target = column - 1 if rows[row - 1][column - 1] == "." else column + 1
    rows[row] = "........"
    rows[row - 1] = rows[row - 1][:target] + "r" + rows[row - 1][target + 1 :]
    verdict = check_solution(puzzle, puzzle + "\n\n" + "\n".join(rows))
    assert verdict.score == 0.0
    assert "captures are compulsory" in verdict.messages[0]


def test_an_incomplete_multi_jump_is_explained() -> None:
    puzzle = "\n".join(
        [
            "........",
            "........",
            "........",
            "....b...",
            "........",
            "..b.....",
            ".r......",
            "........",
        ]
    )
    assert check_solution(puzzle, play(puzzle)).is_full_marks  # the double jump wins at once
    half = puzzle.replace("..b.....", "........").replace(".r......", "........")
    half = half.splitlines()
    half[4] = "...r...."
    verdict = check_solution(puzzle, puzzle + "\n\n" + "\n".join(half))
    assert verdict.score == 0.0
    assert "incomplete multi-jump" in verdict.messages[0]
    assert "(6,1)x(4,3)" in verdict.messages[0]


def test_a_man_that_crowns_must_stop() -> None:
    # Red's man crowns on (0,3) by its jump; jumping on over (1,4) as a king is not that move.
    jumped_on = "\n".join(
        [
            "........",
            "........",
            ".....R..",
            "........",
            "........",
            "..R.....",
            "........",
            "........",
        ]
    )
    verdict = check_solution(CROWNING, CROWNING + "\n\n" + jumped_on)
    assert verdict.score == 0.0
    assert "not one legal move of red" in verdict.messages[0]
    assert "(2,1)x(0,3)" in verdict.messages[0]


def test_a_line_that_stops_before_the_win() -> None:
    line = play(SEVEN).split("\n\n")
    verdict = check_solution(SEVEN, "\n\n".join(line[:4]))
    assert verdict.components[LEGAL_LINE]
    assert not verdict.components[REACHES_WIN]
    assert verdict.score == WEIGHTS[LEGAL_LINE]
    assert "stops after 3 plies" in " ".join(verdict.messages)


def test_moves_after_the_end_are_illegal() -> None:
    puzzle = course_board("B:W26:B22")
    line = play(puzzle)
    verdict = check_solution(puzzle, line + "\n" + line.split("\n\n")[-1])
    assert verdict.score == 0.0
    assert "already over" in verdict.messages[0]


def slow_red(state: CheckersState, ply: int, best: list[CheckersMove]) -> CheckersMove:
    """Red's first move keeps the win but delays it; then optimal play."""
    if ply != 0:
        return best[0]
    solver = Solver()
    fastest = solver.solve(state).plies
    for move in state.legal_moves():
        child = solver.solve(state.apply_unchecked(move))
        if move not in best and child.value == "loss" and child.plies is not None:
            assert fastest is not None and child.plies + 1 > fastest
            return move
    raise AssertionError("no slower winning move")


def test_a_longer_legal_win_loses_the_length_points() -> None:
    puzzle = course_board("B:W18:BK2,K16")
    verdict = check_solution(puzzle, play(puzzle, slow_red))
    assert verdict.components == {
        LEGAL_LINE: True,
        REACHES_WIN: True,
        OPTIMAL_LENGTH: False,
        BLACK_RESISTS: True,
    }
    assert verdict.score == pytest.approx(0.75)
    assert verdict.plies is not None and verdict.plies > 5
    text = " ".join(verdict.messages)
    assert f"your line wins in {verdict.plies} plies; the fastest forced win takes 5" in text
    assert "ply 1: red's move" in text


def weak_black(state: CheckersState, ply: int, best: list[CheckersMove]) -> CheckersMove:
    """Black gives up sooner at its first move where it can; otherwise optimal play."""
    if ply % 2 == 1:
        worse = [m for m in state.legal_moves() if m not in best]
        if worse and ply == 1:
            return worse[0]
    return best[0]


def test_black_not_resisting_is_found() -> None:
    verdict = check_solution(SEVEN, play(SEVEN, weak_black))
    assert verdict.components[LEGAL_LINE]
    assert verdict.components[REACHES_WIN]
    assert not verdict.components[BLACK_RESISTS]
    assert not verdict.components[OPTIMAL_LENGTH]
    text = " ".join(verdict.messages)
    assert "ply 2: black's move" in text
    assert "sooner than the 7 plies" in text


def test_a_puzzle_without_a_forced_win_is_the_graders_error() -> None:
    with pytest.raises(PuzzleError):
        check_solution(mirrored(SEVEN), SEVEN)
    with pytest.raises(PuzzleError):
        check_solution("not a board", SEVEN)
