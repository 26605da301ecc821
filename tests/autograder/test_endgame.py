"""The endgame-solver profile: the reference solution scores full marks, broken lines lose points
for the right reasons, every move judged against the exact value of its position."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from autograder.endgame_judge import check_solution, exact_solver, fresh
from autograder.endgame_suite import PuzzleError
from autograder.endgame_verdict import BLACK_RESISTS, RED_FASTEST, RED_FORCES_WIN, WEIGHTS
from bots.egdb.probe import ENV_DIRECTORY, Database, DatabaseSolver
from bots.egdb.store import build
from bots.solvers.solution import Solution
from bots.solvers.solve import Solver
from cli.main import create_cli
from games.checkers import Checkers, CheckersMove, CheckersState, format_board, parse_board

REFERENCE = Path(__file__).parents[2] / "autograder" / "reference" / "endgame_solver.py"
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


# tests/bots/solvers/test_solve.py FORCED_WINS (certified there by full-width search), as red to
# move, and 9-ply wins found by make_puzzles (certified here by the solver).
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


def play(board: str, choose: Chooser = optimal, first: tuple[str, ...] = ()) -> str:
    """A line from `board`: the PDN moves `first`, then play by Arena's solver, `choose`
    picking among the optimal moves."""
    solver = Solver()
    state = parse_board(GAME, board, "red")
    line = [state]
    for text in first:
        state = state.apply_unchecked(state.parse_move(text))
        line.append(state)
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
    assert "(5,4)-(4,3) [23-18]" in verdict.messages[0]  # the legal moves, in both notations


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


def test_a_line_that_stops_before_the_win_earns_nothing() -> None:
    line = play(SEVEN).split("\n\n")
    verdict = check_solution(SEVEN, "\n\n".join(line[:4]))
    assert verdict.legal
    assert not verdict.wins
    assert verdict.score == 0
    assert "stops after 3 plies" in " ".join(verdict.messages)
    assert verdict.reason == "wrong answer"


def test_the_starter_line_earns_nothing() -> None:
    """The starter writes the puzzle alone: a legal line of no move, which wins nothing."""
    verdict = check_solution(SEVEN, SEVEN + "\n")
    assert verdict.legal
    assert verdict.score == 0
    assert "stops after 0 plies but the game is not over" in verdict.messages[-1]


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


def test_a_longer_legal_win_loses_the_fastest_points() -> None:
    puzzle = course_board("B:W18:BK2,K16")
    verdict = check_solution(puzzle, play(puzzle, slow_red))
    assert verdict.components == {RED_FORCES_WIN: True, RED_FASTEST: False, BLACK_RESISTS: True}
    assert verdict.score == pytest.approx(0.75)
    assert verdict.plies is not None and verdict.plies > 5
    text = " ".join(verdict.messages)
    assert f"the line ends in a red win after {verdict.plies} plies" in text
    assert "the puzzle's fastest forced win takes 5" in text
    assert "ply 1: red's move" in text
    assert "is not a fastest win" in text


def weak_black(state: CheckersState, ply: int, best: list[CheckersMove]) -> CheckersMove:
    """Black gives up sooner at its first move where it can; otherwise optimal play."""
    if ply % 2 == 1:
        worse = [m for m in state.legal_moves() if m not in best]
        if worse and ply == 1:
            return worse[0]
    return best[0]


def test_black_not_resisting_is_found_and_red_judged_on_what_it_could_then_force() -> None:
    verdict = check_solution(SEVEN, play(SEVEN, weak_black))
    # Red plays the fastest win from the position black's mistake left: red's part is whole.
    assert verdict.components == {RED_FORCES_WIN: True, RED_FASTEST: True, BLACK_RESISTS: False}
    assert verdict.score == pytest.approx(0.75)
    text = " ".join(verdict.messages)
    assert "ply 2: black's move" in text
    assert "gives up early" in text
    assert "from there black, resisting longest, lasts 6 plies" in text


def test_a_puzzle_without_a_forced_win_is_the_graders_error() -> None:
    with pytest.raises(PuzzleError):
        check_solution(mirrored(SEVEN), SEVEN)
    with pytest.raises(PuzzleError):
        check_solution("not a board", SEVEN)


def test_a_slow_red_move_rescued_by_a_black_mistake_is_not_the_fastest_win() -> None:
    # Red's 9-6 keeps the win but lengthens it (5 plies to 9); black's 8-3 then gives 4 plies
    # back, so the whole line is as short as the fastest win: the length alone cannot tell.
    puzzle = course_board("W:WK2,K9,K1:BK8")
    line = play(puzzle, first=("9-6", "8-3"))
    verdict = check_solution(puzzle, line)
    assert verdict.plies == verdict.optimal_plies == 5
    assert verdict.components == {RED_FORCES_WIN: True, RED_FASTEST: False, BLACK_RESISTS: False}
    assert verdict.score == pytest.approx(0.5)
    text = "\n".join(verdict.messages)
    # The first red move off the fastest win, with its position in both notations.
    assert (
        "ply 1: red's move (2,1)-(1,2) [9-6] is not a fastest win\n"
        "    played from state 1 of your output (line 1): "
        "PDN W:WK1,K2,K9:BK8 (red, PDN's White, to move)\n"
        "    from there red's fastest forced win takes 5 plies, by "
    ) in text
    assert "after this move, with black resisting, the win ends 9 plies from that position" in text
    assert (
        "ply 2: black's move (1,6)-(0,5) [8-3] gives up early\n"
        "    played from state 2 of your output (line 10): "
    ) in text
    assert "[brackets] is the same move in PDN squares 1-32" in text
    assert verdict.red is not None and verdict.red.ply == 1 and not verdict.red.gives_up


def test_a_red_move_that_gives_the_win_up_earns_nothing_though_black_gives_it_back() -> None:
    puzzle = course_board("W:W12,14,21,25:B7")
    verdict = check_solution(puzzle, play(puzzle, first=("12-8", "7-10")))
    assert verdict.legal and verdict.wins  # the line ends in a red win, 2 plies early
    assert verdict.plies == 3 and verdict.optimal_plies == 5
    assert verdict.score == 0
    assert verdict.reason == "wrong answer"
    text = "\n".join(verdict.messages)
    assert (
        "ply 1: red's move (2,7)-(1,6) [12-8] gives up the win, or delays it by more than "
        "4 plies\n"
        "    played from state 1 of your output (line 1): "
        "PDN W:W12,14,21,25:B7 (red, PDN's White, to move)\n"
        "    from there red's fastest forced win takes 5 plies"
    ) in text
    assert "no forced win ending within 9 plies of that position" in text
    assert "only because black's later moves gave it back" in text


def test_a_named_position_is_one_arena_solve_reads_and_agrees_with() -> None:
    puzzle = course_board("W:WK2,K9,K1:BK8")
    verdict = check_solution(puzzle, play(puzzle, first=("9-6", "8-3")))
    assert verdict.red is not None
    fen = re.search(r"PDN (\S+) \(red", "\n".join(verdict.messages))
    assert fen is not None
    outcome = CliRunner().invoke(
        create_cli(), ["solve", "checkers", "--position", fen.group(1), "--json"]
    )
    assert outcome.exit_code == 0, outcome.output
    solved = json.loads(outcome.stdout)
    assert solved["value"] == "win" and solved["plies"] == verdict.red.value
    assert sorted(solved["best_moves"]) == sorted(str(m) for m in verdict.red.best)
    # arena solve names the same moves in the course's coordinates too.
    assert "(2,1)-(1,2)" not in solved["best_moves_course"]  # 9-6, the slow move
    assert len(solved["best_moves_course"]) == len(solved["best_moves"])


def test_moves_after_a_repetition_are_judged_by_the_course_rules() -> None:
    """The assignment has no draw rules: a line that repeats positions is followed on, and
    stops, not won, where it stops."""
    puzzle = course_board("W:WK2,K9,K1:BK8")
    state = parse_board(GAME, puzzle, "red")
    shuffle = ["1-5", "8-12", "5-1", "12-8"] * 3
    line = [state]
    for text in shuffle:
        state = fresh(state)  # Arena's own rules would call the third repetition a draw
        state = state.apply_unchecked(state.parse_move(text))
        line.append(state)
    verdict = check_solution(puzzle, boards(*line))
    assert verdict.legal, verdict.messages
    assert verdict.score == 0
    assert "stops after 12 plies but the game is not over" in "\n".join(verdict.messages)


# -- the endgame database gives the same verdicts as the proof search ---------------------------


class CountingDatabaseSolver(DatabaseSolver):
    """A DatabaseSolver that counts the solves the database answered itself."""

    answered = 0

    def solve(self, state: Any, **limits: Any) -> Solution:
        solution = super().solve(state, **limits)
        if solution.method == "egdb":
            self.answered += 1
        return solution


@pytest.fixture(scope="module")
def egdb3(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database of every position of up to 3 pieces (built in about a second)."""
    directory = tmp_path_factory.mktemp("egdb3")
    build(directory, 3)
    return directory


def random_line(board: str, seed: int) -> str:
    """A legal line of random moves from `board`, to the end or 24 plies."""
    rng = random.Random(seed)
    state = parse_board(GAME, board, "red")
    line = [state]
    while not state.is_terminal() and len(line) <= 24:
        state = fresh(state).apply_unchecked(rng.choice(fresh(state).legal_moves()))
        line.append(state)
    return boards(*line)


def three_piece_puzzles() -> list[str]:
    """Red wins of 3 pieces or fewer: certified ones, and seeded draws the solver proves."""
    puzzles = [course_board("B:W26:B22"), SEVEN, course_board("B:W18:BK2,K16")]
    rng = random.Random(5)
    solver = Solver()
    while len(puzzles) < 8:
        man, king, black = rng.sample(range(1, 33), 3)
        if man <= 4 or black >= 29:  # a man on its far row would have been crowned
            continue
        state = GAME.parse_position(f"W:W{man},K{king}:B{black}")
        if state.is_terminal() or state.has_capture():
            continue
        solution = solver.solve(state, max_plies=11)
        if solution.value == "win" and solution.plies is not None and solution.plies >= 3:
            puzzles.append(format_board(state))
    return puzzles


def verdict_facts(verdict: Any) -> tuple[Any, ...]:
    def misplay(found: Any) -> Any:
        if found is None:
            return None
        return (
            found.side, found.ply, found.move, found.value, found.after, found.bound,
            sorted(m.path for m in found.best), format_board(found.before),
        )  # fmt: skip

    return (
        verdict.components, verdict.legal, verdict.wins, verdict.plies, verdict.optimal_plies,
        misplay(verdict.red), misplay(verdict.black), misplay(verdict.gave_up), verdict.messages,
    )  # fmt: skip


def test_the_endgame_database_gives_the_same_verdicts_as_the_proof_search(egdb3: Path) -> None:
    database = CountingDatabaseSolver(Database(egdb3))
    proof = Solver()
    judged = 0
    kinds = set()
    for puzzle in three_piece_puzzles():
        lines = [play(puzzle), play(puzzle, weak_black)]
        lines += [random_line(puzzle, seed) for seed in range(6)]
        for line in lines:
            by_proof = check_solution(puzzle, line, proof)
            by_database = check_solution(puzzle, line, database)
            assert verdict_facts(by_database) == verdict_facts(by_proof), (puzzle, line)
            judged += 1
            kinds.add((by_proof.score, by_proof.gave_up is not None, by_proof.black is not None))
    assert judged == 64
    assert database.answered > 100  # the database answered, not the proof search behind it
    # Full marks, black's mistakes and red's given-up wins all came up.
    assert (1.0, False, False) in kinds
    assert any(black for _, _, black in kinds)
    assert any(gave_up for _, gave_up, _ in kinds)


def test_the_judge_uses_the_database_where_it_is_built(
    egdb3: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_DIRECTORY, str(egdb3))
    assert isinstance(exact_solver(), DatabaseSolver)
    monkeypatch.setenv(ENV_DIRECTORY, str(tmp_path / "none"))
    solver = exact_solver()
    assert type(solver) is Solver  # no database: the proof search, same verdicts
