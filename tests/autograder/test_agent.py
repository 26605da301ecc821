"""The agent profile: the reference scores full marks; broken agents lose the right points."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from autograder.agent import grade_agent
from autograder.agent_checks import EXAMPLES_TEST, reference_values
from autograder.agent_suite import LEGAL_SUITE, AgentSuite, Opponent
from autograder.agent_suite_maker import make_agent_suite
from autograder.results import TestResult
from games.checkers import Checkers, parse_board
from sandbox import can_isolate, sandbox_support

AGENTS = Path(__file__).parent / "agents"
REFERENCE = Path(__file__).parents[2] / "autograder" / "reference" / "agent_solution.py"
PYTHON = "/usr/bin/python3"
GAME = Checkers()

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox needs root to drop to uid 65534"),
    pytest.mark.skipif(not can_isolate(), reason=f"no sandbox here: {sandbox_support().reason}"),
    pytest.mark.skipif(not os.path.exists(PYTHON), reason=f"{PYTHON} is missing"),
]

# Small but complete: every part runs; games are short (adjudicated on material).
SUITE = AgentSuite(
    exact_positions=3,
    opponents=(
        Opponent("random", 2, 0.8),
        Opponent("greedy", 1, 0.5),
        Opponent("alphabeta:depth=2", 1, 0.0),
        Opponent("alphabeta:depth=4", 1, 0.0),
    ),
    game_depth=2,
    max_plies=30,
    time_limit=1.0,
    slack=0.5,
    startup_seconds=1.0,
)


def grade(agent: Path, tmp_path: Path, *, with_reference: bool = False) -> dict[str, TestResult]:
    """Grade `agent` as agent.py (with the reference beside it as reference.py if asked)."""
    submission = tmp_path / "submission"
    submission.mkdir()
    shutil.copy(agent, submission / "agent.py")
    if with_reference:
        shutil.copy(REFERENCE, submission / "reference.py")
    results = grade_agent(submission, python=PYTHON, suite=SUITE).tests
    return {result.name: result for result in results}


def shown_board(board: str) -> str:
    """A board as a failed example's explanation shows it (its rows, indented)."""
    return "\n".join(f"    {row}" for row in board.splitlines())


def test_reference_scores_full_marks(tmp_path: Path) -> None:
    results = grade(REFERENCE, tmp_path)
    assert len(results) == 1 + 3 + 4 + 1
    lost = {name: r.output for name, r in results.items() if r.score != r.max_score}
    assert not lost
    assert sum(r.max_score for r in results.values()) == 100


@pytest.mark.parametrize(
    "seed", [3, *(pytest.param(seed, marks=pytest.mark.slow) for seed in (4, 5, 6, 7, 8))]
)
def test_reference_passes_the_default_games_with_a_fresh_game_seed(seed: int) -> None:
    # The default opponents, thresholds and game length, with the game seed a suite draws.
    suite = make_agent_suite(seed, base=AgentSuite(exact_depths=()), public=True)
    assert suite.game_seed != AgentSuite().game_seed
    results = grade_agent(REFERENCE, python=PYTHON, suite=suite).tests
    games = {r.name: r for r in results if r.name.startswith("games vs")}
    assert len(games) == 4
    lost = {name: r.output for name, r in games.items() if r.score != r.max_score}
    assert not lost


def test_agent_file_alone_is_a_submission() -> None:
    tiny = AgentSuite(
        legal_positions=LEGAL_SUITE[:2], exact_depths=(1,), exact_positions=1, opponents=()
    )
    results = grade_agent(REFERENCE, python=PYTHON, suite=tiny).tests
    assert [(r.name, r.score) for r in results] == [
        ("legal moves", 20.0),
        ("exact minimax, depth 1", 10.0),
        ("time", 10.0),
    ]


def test_a_generated_private_suite_is_graded_and_shown_after_publication() -> None:
    base = AgentSuite(exact_depths=(1,), exact_positions=1, opponents=())
    suite = make_agent_suite(2, base=base, public=False)
    results = grade_agent(REFERENCE, python=PYTHON, suite=suite).tests
    assert [(r.name, r.score) for r in results] == [
        ("legal moves", 20.0),
        ("exact minimax, depth 1", 10.0),
        ("time", 10.0),
    ]
    assert {r.visibility for r in results} == {"after_published"}
    illegal = grade_agent(AGENTS / "illegal.py", python=PYTHON, suite=suite).tests[0]
    assert illegal.score < illegal.max_score
    assert "forced capture" in illegal.output  # the generated positions' names say what they test


def test_a_private_suites_examples_are_a_visible_test_of_their_own() -> None:
    base = AgentSuite(exact_depths=(1,), exact_positions=1, opponents=(), example_points=6.0)
    suite = make_agent_suite(2, count=6, examples=3, base=base, public=False)
    report = grade_agent(REFERENCE, python=PYTHON, suite=suite)
    assert [(r.name, r.score, r.max_score, r.visibility) for r in report.tests] == [
        (EXAMPLES_TEST, 6.0, 6.0, "visible"),
        ("legal moves", 20.0, 20.0, "after_published"),
        ("exact minimax, depth 1", 10.0, 10.0, "after_published"),
        ("time", 10.0, 10.0, "after_published"),
    ]
    assert report.score == report.max_score == 46.0
    # An agent that steps where it must capture fails the forced-capture examples (the first
    # example is one), and the failed boards are shown: the examples are public.
    graded = grade_agent(AGENTS / "illegal.py", python=PYTHON, suite=suite)
    illegal = {r.name: r for r in graded.tests}
    examples = illegal[EXAMPLES_TEST]
    assert examples.visibility == "visible"
    failed = [name for name, _, _ in suite.example_positions if name in examples.output]
    assert failed and suite.example_positions[0][0] in failed
    passed = len(suite.example_positions) - len(failed)
    assert examples.score == pytest.approx(6.0 * passed / 3)
    assert examples.output.startswith(f"{passed}/3 earned.")
    assert "captures are compulsory" in examples.output
    assert shown_board(suite.example_positions[0][1]) in examples.output
    # The graded positions' boards are not shown, even in their private test.
    legal = illegal["legal moves"]
    assert legal.visibility == "after_published" and legal.score < legal.max_score
    assert "forced capture" in legal.output
    assert not any(shown_board(board) in legal.output for _, board, _ in suite.legal_positions)
    crash = grade_agent(AGENTS / "crash.py", python=PYTHON, suite=suite).tests[0]
    assert (crash.name, crash.score, crash.visibility) == (EXAMPLES_TEST, 0.0, "visible")
    assert "RuntimeError: not implemented yet" in crash.output


def test_a_public_suites_examples_are_visible_and_a_suite_without_has_no_such_test(
    tmp_path: Path,
) -> None:
    suite = AgentSuite(
        legal_positions=LEGAL_SUITE[:2],
        example_positions=LEGAL_SUITE[2:4],
        exact_depths=(),
        opponents=(),
    )
    results = grade_agent(REFERENCE, python=PYTHON, suite=suite).tests
    assert [(r.name, r.score, r.visibility) for r in results] == [
        (EXAMPLES_TEST, 5.0, "visible"),
        ("legal moves", 20.0, "visible"),
        ("time", 10.0, "visible"),
    ]
    assert EXAMPLES_TEST not in grade(REFERENCE, tmp_path)


def test_illegal_moves_lose_legal_exact_games_and_their_share_of_time(tmp_path: Path) -> None:
    results = grade(AGENTS / "illegal.py", tmp_path)
    legal = results["legal moves"]
    assert legal.score < legal.max_score
    assert "captures are compulsory" in legal.output
    assert "forced capture, red" in legal.output
    assert results["games vs random"].score == 0
    assert "forfeited" in results["games vs random"].output
    # Time is earned by the calls that answered with a legal move: some, not all.
    time = results["time"]
    assert 0 < time.score < time.max_score
    assert "calls answered with a legal move in time" in time.output
    assert time.reasons == ("illegal move",)


def test_wrong_side_evaluation_loses_values_not_legality(tmp_path: Path) -> None:
    results = grade(AGENTS / "wrong_side.py", tmp_path, with_reference=True)
    assert results["legal moves"].score == results["legal moves"].max_score
    depth_one = results["exact minimax, depth 1"]
    assert depth_one.score < depth_one.max_score
    assert "expected" in depth_one.output
    assert results["time"].score == results["time"].max_score


def test_move_without_value_earns_half_of_the_exact_checks(tmp_path: Path) -> None:
    results = grade(AGENTS / "move_only.py", tmp_path, with_reference=True)
    for depth in (1, 2, 3):
        exact = results[f"exact minimax, depth {depth}"]
        assert exact.score == pytest.approx(exact.max_score / 2)
        assert "no value returned" in exact.output
    assert results["games vs random"].score == results["games vs random"].max_score


@pytest.mark.parametrize(
    ("agent", "reason"),
    [
        ("crash.py", "RuntimeError: not implemented yet"),
        ("garbage.py", "not a move"),
        ("no_function.py", "could not be imported"),
    ],
)
def test_broken_agents_score_nothing_not_even_time(tmp_path: Path, agent: str, reason: str) -> None:
    results = grade(AGENTS / agent, tmp_path)
    for name, result in results.items():
        assert result.score == 0, name
        if name == "time":
            continue
        assert reason in result.output, name
        if name.startswith("games"):
            assert "forfeited" in result.output, name
    # No call answered: nothing shows the agent keeps to its time limit.
    assert results["time"].output.startswith("0 of ")
    assert "calls answered with a legal move in time" in results["time"].output


def test_infinite_loop_times_out_and_stops_the_grading(tmp_path: Path) -> None:
    results = grade(AGENTS / "infinite_loop.py", tmp_path)
    assert all(r.score == 0 for r in results.values())
    assert "time limit" in results["legal moves"].output
    assert "2 call(s) over time_limit" in results["time"].output
    assert "rest of the grading was skipped" in results["exact minimax, depth 3"].output


def test_reference_values_use_material_and_loss_values() -> None:
    # Red (to move) jumps the lone black man: black then has no pieces, a loss worth 1000.
    board = "\n".join(["........"] * 3 + ["....b...", "...r...."] + ["........"] * 3)
    state = parse_board(GAME, board, "red")
    assert set(reference_values(state, 1).values()) == {1000}
    # A quiet position: one man each, value 0 at depth 1 and 2.
    quiet = parse_board(GAME, "\n".join([".b......"] + ["........"] * 6 + ["......r."]), "red")
    assert set(reference_values(quiet, 1).values()) == {0}
