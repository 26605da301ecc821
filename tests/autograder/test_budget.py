"""A grading's wall-time budget: once spent, no run starts and each test left says why; a run
is cut at what is left of it. The budget's clock is the test's."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

from autograder.agent_runner import Request, Runner
from autograder.agent_suite import AgentSuite
from autograder.budget import Budget
from autograder.endgame import grade_endgame
from autograder.endgame_suite import load_puzzles
from autograder.job import Job, read_job
from games.checkers import Checkers, format_board
from sandbox import MIB, Limits

REPO = Path(__file__).resolve().parents[2]
PUBLIC_SUITE = REPO / "autograder" / "examples" / "endgame-puzzles.json"
PYTHON = "/usr/bin/python3"
LIMITS = Limits(cpu_seconds=5, wall_seconds=20.0, memory_bytes=256 * MIB)


def clock(*readings: float) -> Callable[[], float]:
    """A clock giving `readings` in turn, then the last one for ever."""
    values: Iterator[float] = iter(readings)
    last = [readings[-1]]

    def read() -> float:
        last[0] = next(values, last[0])
        return last[0]

    return read


def test_a_hanging_program_is_cut_at_the_budget_and_the_tests_after_it_are_not_run(
    tmp_path: Path,
) -> None:
    submission = tmp_path / "hang"
    submission.mkdir()
    (submission / "checkers.py").write_text("import time\ntime.sleep(3600)\n")
    puzzles = load_puzzles(PUBLIC_SUITE)[:3]
    # Made at 0 with 0.5 s; still 0 when the first run's limit is set; spent after it.
    budget = Budget(0.5, clock=clock(0, 0, 0, 100))
    report = grade_endgame(submission, puzzles, limits=LIMITS, python=PYTHON, budget=budget)
    first, *rest = report.tests
    assert first.score == 0
    assert first.output.startswith(
        "stopped when the grading's time budget of 0.5 s ran out during this test"
    ), first.output
    assert len(rest) == 2
    for test in rest:
        assert test.score == 0 and test.max_score == 1
        assert test.output.startswith(
            "not run: the grading's time budget of 0.5 s was spent on the tests before this one"
        )
    assert [t.name for t in report.tests] == [f"{p.name} ({p.plies} plies)" for p in puzzles]


def test_a_run_that_fails_on_its_own_is_not_blamed_on_the_budget(tmp_path: Path) -> None:
    submission = tmp_path / "crash"
    submission.mkdir()
    (submission / "checkers.py").write_text("import sys\nsys.exit(3)\n")
    puzzles = load_puzzles(PUBLIC_SUITE)[:2]
    budget = Budget(5.0, clock=clock(0, 0, 0, 100))
    report = grade_endgame(submission, puzzles, limits=LIMITS, python=PYTHON, budget=budget)
    assert "time budget" not in report.tests[0].output
    assert report.tests[1].output.startswith("not run: the grading's time budget of 5 s")


def test_no_budget_cuts_nothing() -> None:
    budget = Budget(None)
    assert budget.left() is None and not budget.is_spent() and budget.wall(20.0) == 20.0
    cut = Budget(3.0, clock=clock(0, 1))
    assert cut.wall(20.0) == 2.0


def test_an_agents_calls_after_the_budget_are_not_run() -> None:
    runner = Runner(
        files={"agent.py": b"def select_move(*args):\n    pass\n"},
        python=PYTHON,
        limits=Limits(),
        suite=AgentSuite(),
        budget=Budget(1.0, clock=clock(0, 5)),
    )
    board = format_board(Checkers().initial_state())
    replies = runner.run([Request(board, "red", 1, 1.0)] * 2, ["a", "b"])
    assert runner.sessions == 0  # nothing was started
    assert all(
        r.not_run and r.error.startswith("not run: the grading's time budget") for r in replies
    )


def test_the_budget_travels_in_job_json(tmp_path: Path) -> None:
    job = Job(profile="endgame", suite=None, python=PYTHON, uid=1, gid=1, budget_s=42.0)
    (tmp_path / "job.json").write_text(json.dumps(job.to_json()))
    assert read_job(tmp_path) == job
    older = {k: v for k, v in job.to_json().items() if k != "budget_s"}
    (tmp_path / "job.json").write_text(json.dumps(older))
    assert read_job(tmp_path).budget_s is None
