"""Puzzle suites of the endgame profile: the file format, and the generator's puzzles, each
certified as the judge certifies it and of the material, kind and difficulty asked for."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.endgame_judge import check_solution, exact_solver, fresh
from autograder.endgame_puzzle_options import Material, PuzzleOptions, parse_material, parse_pieces
from autograder.endgame_puzzles import describe_puzzles, make_puzzle_suite, make_puzzles, mixes
from autograder.endgame_suite import Difficulty, Puzzle, PuzzleError, load_puzzles, save_puzzles
from bots.solvers.solve import Solver
from games.checkers import Checkers, CheckersMove, format_board, parse_board, square_row

GAME = Checkers()
PUBLIC_SUITE = (
    Path(__file__).resolve().parents[2] / "autograder" / "examples" / "endgame-puzzles.json"
)
BOARD = "\n".join(
    ["........", "........", "...b....", "......R.", "...R....", "........", ".....b..", "........"]
)
SMALL = PuzzleOptions(pieces=(3, 5), max_plies=9)
"""Options whose puzzles are found in a second or two: the default run stays fast."""


def assert_certified(puzzle: Puzzle, options: PuzzleOptions) -> None:
    """The puzzle is what the options asked for, and its win is the judge's."""
    state = parse_board(GAME, puzzle.board, "red")  # a course board, red to move
    assert puzzle.material is not None and puzzle.difficulty is not None
    material = parse_material(puzzle.material)
    assert (state.white.bit_count(), state.black.bit_count()) == (material.red, material.black)
    assert material in mixes(options)
    for square in range(1, 33):
        piece = state.piece_at(square)
        assert not (piece == "w" and square_row(square) == 0), puzzle.board  # red man crowned
        assert not (piece == "b" and square_row(square) == 7), puzzle.board
    assert options.min_plies <= puzzle.plies <= options.max_plies
    assert len(state.legal_moves()) >= options.min_choices
    # An independent re-solve (a fresh table), and the judge's own certification.
    again = Solver().solve(state, max_plies=puzzle.plies)
    assert (again.value, again.plies) == ("win", puzzle.plies)
    assert puzzle.difficulty.best == len(again.best_moves)
    judged = check_solution(puzzle.board, "", exact_solver())
    assert judged.optimal_plies == puzzle.plies
    # The branching again, along the main line as a fresh solver gives it.
    counts, position = [], state
    for left in range(puzzle.plies, 0, -1):
        counts.append(len(position.legal_moves()))
        line = Solver().solve(position, max_plies=left)
        assert line.plies == left, (format_board(position), left)
        move = line.best_moves[0]
        assert isinstance(move, CheckersMove)
        position = fresh(position.apply_unchecked(move))
    assert puzzle.difficulty.branching == round(sum(counts) / len(counts), 2)


def test_generated_puzzles_are_certified_and_of_the_material_asked_for() -> None:
    suite = make_puzzle_suite(5, 4, SMALL, public=True)
    assert [p.name for p in suite] == ["puzzle 1", "puzzle 2", "puzzle 3", "puzzle 4"]
    assert len({p.board for p in suite}) == 4 and all(p.public for p in suite)
    for puzzle in suite:
        assert_certified(puzzle, SMALL)
    # Easiest first: by plies, then branching.
    keys = [(p.plies, p.difficulty.branching) for p in suite if p.difficulty]
    assert keys == sorted(keys)
    # Spread over the totals of pieces: no total holds more than its share.
    totals = [parse_material(p.material or "").pieces for p in suite]
    assert max(totals.count(n) for n in set(totals)) <= 2


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), kings=st.sampled_from([0.0, 0.5, 1.0]))
def test_every_generated_puzzle_is_certified(seed: int, kings: float) -> None:
    options = PuzzleOptions(
        materials=(Material(2, 1), Material(2, 2), Material(3, 1)), kings=kings, min_plies=1
    )
    (puzzle,) = make_puzzle_suite(seed, 1, options)
    assert_certified(puzzle, options)
    kinds = set(puzzle.board) - {".", "\n"}
    if kings == 0.0:
        assert kinds <= {"r", "b"}
    if kings == 1.0:
        assert kinds <= {"R", "B"}


def test_puzzles_where_red_is_behind_are_grown_and_certified_like_the_others() -> None:
    # Random placement almost never gives red a forced win with fewer pieces; grown from a win
    # with fewer black pieces, the puzzle is certified in full all the same.
    options = PuzzleOptions(materials=(Material(2, 3), Material(2, 4)), max_plies=9)
    suite = make_puzzle_suite(1, 2, options)
    assert sorted(p.material or "" for p in suite) == ["2v3", "2v4"]
    for puzzle in suite:
        assert_certified(puzzle, options)
    assert suite == make_puzzle_suite(1, 2, options)  # the walk is drawn from the seed too


@pytest.mark.slow
def test_the_handouts_three_against_five_with_men() -> None:
    options = PuzzleOptions(materials=(Material(3, 5),), kings=0.0)
    (puzzle,) = make_puzzle_suite(1, 1, options)
    assert_certified(puzzle, options)
    assert set(puzzle.board) <= set(".rb\n")


@pytest.mark.slow
def test_default_suites_are_certified_across_three_to_eight_pieces() -> None:
    options = PuzzleOptions()
    suite = make_puzzle_suite(11, 10, options)
    for puzzle in suite:
        assert_certified(puzzle, options)
    assert len({parse_material(p.material or "").pieces for p in suite}) >= 4


def test_a_seed_makes_one_suite_and_other_seeds_others() -> None:
    first = make_puzzle_suite(7, 2, SMALL)
    assert first == make_puzzle_suite(7, 2, SMALL)
    assert first != make_puzzle_suite(8, 2, SMALL)


def test_difficulty_options_filter_the_puzzles() -> None:
    options = PuzzleOptions(pieces=(3, 5), max_plies=9, max_best=1, min_branching=3.0)
    for found in make_puzzles(random.Random(2), 2, options):
        assert found.difficulty.best == 1 and found.difficulty.branching >= 3.0
        state = parse_board(GAME, found.board, "red")
        best = Solver().solve(state, max_plies=found.plies).best_moves
        assert len([m for m in best if isinstance(m, CheckersMove)]) == 1


def test_too_few_puzzles_says_what_to_loosen() -> None:
    options = PuzzleOptions(materials=(Material(1, 3),), kings=0.0, max_tries=30)
    with pytest.raises(PuzzleError, match=r"found 0 of 3 puzzles in 30 positions .* loosen"):
        make_puzzles(random.Random(1), 3, options)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("3x5", "is not RED v BLACK"),
        ("0v3", "each side needs at least one piece"),
        ("7v7", "has 14 pieces; a puzzle has 2 to 12"),
    ],
)
def test_bad_material_is_refused_with_the_reason(text: str, message: str) -> None:
    with pytest.raises(PuzzleError, match=message):
        parse_material(text)


def test_material_and_pieces_are_read() -> None:
    assert parse_material(" 3v5 ") == Material(3, 5) and str(Material(3, 5)) == "3v5"
    assert parse_pieces("3-8") == (3, 8) and parse_pieces("5") == (5, 5)
    with pytest.raises(PuzzleError, match="not a count such as 5 or a range such as 3-8"):
        parse_pieces("three")
    with pytest.raises(PuzzleError, match="need 2 <= fewest <= most <= 12"):
        parse_pieces("8-3")
    assert Material(3, 5) in mixes(PuzzleOptions())  # the handout's mix, red behind
    assert Material(6, 2) not in mixes(PuzzleOptions())  # more than two pieces ahead


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (PuzzleOptions(kings=1.5), "kings is a probability from 0 to 1"),
        (PuzzleOptions(min_plies=5, max_plies=3), "need 1 <= min plies <= max plies <= 30"),
        (PuzzleOptions(min_plies=4, max_plies=4), "odd number of plies"),
        (PuzzleOptions(min_choices=0), "min choices must be at least 1"),
        (PuzzleOptions(max_best=0), "max best must be at least 1"),
        (PuzzleOptions(max_nodes=0), "max nodes must be at least 1"),
        (PuzzleOptions(max_tries=0), "tries must be at least 1"),
    ],
)
def test_bad_options_are_refused_with_the_reason(options: PuzzleOptions, message: str) -> None:
    with pytest.raises(PuzzleError, match=message):
        make_puzzles(random.Random(0), 1, options)


def test_public_suite_is_five_certified_realistic_puzzles() -> None:
    public = load_puzzles(PUBLIC_SUITE)
    assert len(public) == 5
    assert all(p.public and 3 <= p.plies <= 11 for p in public)
    assert [p.plies for p in public] == sorted(p.plies for p in public)
    for puzzle in public:
        state = parse_board(GAME, puzzle.board, "red")
        assert (state.white | state.black).bit_count() >= 3
        solution = Solver().solve(state, max_plies=puzzle.plies)
        assert (solution.value, solution.plies) == ("win", puzzle.plies)


def test_save_then_load_round_trips_and_private_suites_are_owner_only(tmp_path: Path) -> None:
    puzzles = [
        Puzzle("a", BOARD, 3, public=False),
        Puzzle("b", BOARD, 5, material="2v2", difficulty=Difficulty(3.5, 1, 1234)),
    ]
    path = tmp_path / "suite.json"
    save_puzzles(path, puzzles)
    assert load_puzzles(path) == puzzles
    assert path.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "not a JSON puzzle suite"),
        ('{"format": "other"}', "is not a puzzle suite"),
        ('{"format": "arena-endgame-puzzles", "version": 1, "puzzles": []}', "non-empty list"),
        (
            '{"format": "arena-endgame-puzzles", "version": 1, "puzzles": '
            '[{"name": "x", "plies": 3, "public": true, "board": ["rrrrrrrr"]}]}',
            "puzzle 1: the board is not a course board",
        ),
        (
            '{"format": "arena-endgame-puzzles", "version": 1, "puzzles": '
            f'[{{"name": "x", "plies": 3, "public": true, "board": {BOARD.splitlines()!r}, '
            '"difficulty": {"best": 1}}]}'.replace("'", '"'),
            '"difficulty" must be an object with branching, best and nodes',
        ),
    ],
)
def test_load_puzzles_rejects_bad_files_with_the_reason(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "suite.json"
    path.write_text(content)
    with pytest.raises(PuzzleError, match=message):
        load_puzzles(path)


def test_a_suite_is_described_in_one_line_in_the_right_number() -> None:
    examples = load_puzzles(PUBLIC_SUITE)
    one = describe_puzzles(examples[:1], public=False)
    assert one.startswith("1 private endgame puzzle (plies: ")
    assert "branching" in one and "-" not in one.split("branching")[1]
    every = describe_puzzles(examples, public=True)
    assert every.startswith(f"{len(examples)} public endgame puzzles (plies: ")
