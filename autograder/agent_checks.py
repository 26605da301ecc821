"""The agent profile's checks of single calls: legal moves and exact values, and the counts
and scoring they share with the games (autograder/agent_games.py); see autograder/agent.py for the
submission contract."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from autograder.agent_runner import (
    Answer,
    Reply,
    Request,
    Runner,
    read_answer,
)
from autograder.agent_suite import LEGAL_SUITE, AgentSuite
from autograder.course import (
    format_move,
    format_moves,
    side_to_move,
)
from autograder.results import Reason, TestResult, sorted_reasons
from bots.evaluation.checkers import MATERIAL
from bots.lectures.minimax import minimax
from bots.scoring import Scoring
from games import State
from games.checkers import (
    Checkers,
    CheckersMove,
    CheckersState,
    format_board,
    parse_board,
)

LOSS_VALUE: Final = 1000
"""The value of a lost position (no legal move) for its side to move is -LOSS_VALUE."""
AGENT_SCORING: Final = Scoring(win=LOSS_VALUE, by_distance=False)
MAX_LISTED: Final = 12
"""Failures listed in one test's explanation; the rest are counted."""


@dataclass
class Calls:
    """The calls of a grading read so far, and how many answered with a legal move."""

    made: int = 0
    legal: int = 0
    reasons: list[Reason] = field(default_factory=list)
    """Why the other calls gave no legal move."""

    def read(self, state: CheckersState, reply: Reply) -> Answer:
        """Read `reply` against `state` (autograder.agent_runner.read_answer), counting it."""
        answer = read_answer(state, reply)
        self.made += 1
        if answer.move is not None:
            self.legal += 1
        else:
            self.reasons.append(answer.reason or "illegal move")
        return answer


EXAMPLES_TEST: Final = "legal moves: public examples"
"""The name of the examples' test, which students see before the grades are published."""


def material(state: State[Any]) -> float:
    """Return the contract's evaluation: men 1, kings 2, for the side to move."""
    return MATERIAL(state) / 100


GAME: Final = Checkers()


def board_state(board: str, player: str) -> CheckersState:
    return parse_board(GAME, board, to_move=player)


def proportional(
    name: str,
    points: float,
    earned: float,
    total: float,
    lines: list[str],
    reasons: list[Reason],
) -> TestResult:
    score = points * earned / total if total else 0.0
    score = min(points, max(0.0, score))
    head = f"{earned:g}/{total:g} earned."
    shown = lines[:MAX_LISTED]
    if len(lines) > MAX_LISTED:
        shown.append(f"... and {len(lines) - MAX_LISTED} more")
    output = head if not shown else head + " Points lost:\n" + "\n".join(shown)
    lost = sorted_reasons(reasons) if score < points else ()
    return TestResult(name, score, points, output, reasons=lost)


def _legal_test(
    test: str,
    points: float,
    positions: Sequence[tuple[str, str, str]],
    replies: Sequence[Reply],
    calls: Calls,
    *,
    show_boards: bool = False,
) -> TestResult:
    """Score one call per position: a legal move earns it. `show_boards` lists a failed
    position's board (public examples only: the others would be given away)."""
    lines = []
    reasons: list[Reason] = []
    earned = 0
    for (name, board, player), reply in zip(positions, replies, strict=True):
        answer = calls.read(board_state(board, player), reply)
        if answer.move is not None:
            earned += 1
            continue
        line = f"- {name} ({player} to move): {answer.problem}"
        if show_boards:
            line += "\n" + "\n".join(f"    {row}" for row in board.splitlines())
        lines.append(line)
        reasons.append(answer.reason or "illegal move")
    return proportional(test, points, earned, len(positions), lines, reasons)


def _legal_calls(
    runner: Runner,
    suite: AgentSuite,
    positions: Sequence[tuple[str, str, str]],
    *,
    shuffle: bool,
) -> list[Reply]:
    requests = [
        Request(board, player, suite.legal_depth, suite.time_limit)
        for _, board, player in positions
    ]
    labels = [f"legal moves: {name}" for name, _, _ in positions]
    return runner.run(requests, labels, shuffle=shuffle)


def legal_parts(runner: Runner, suite: AgentSuite, calls: Calls) -> list[TestResult]:
    """Return the examples' test (when the suite has examples), then the legal-move test.

    The examples' calls run first, in sessions of their own: a call that shares a session
    with private positions could read them (the harness holds the session's requests), and
    the examples' test shows what went wrong with each call.
    """
    examples = suite.example_positions
    positions = suite.legal_positions or LEGAL_SUITE
    results = []
    if examples:
        replies = _legal_calls(runner, suite, examples, shuffle=False)
        results.append(
            _legal_test(
                EXAMPLES_TEST, suite.example_points, examples, replies, calls, show_boards=True
            )
        )
    replies = _legal_calls(runner, suite, positions, shuffle=not suite.public)
    results.append(_legal_test("legal moves", suite.legal_points, positions, replies, calls))
    return results


def exact_positions(count: int, seed: int) -> list[CheckersState]:
    """Return `count` course positions reached by seeded random play (no history, not over)."""
    rng = random.Random(seed)
    positions: list[CheckersState] = []
    while len(positions) < count:
        state = board_state(format_board(GAME.initial_state()), "red")
        for _ in range(rng.randrange(4, 30)):
            if state.is_terminal():
                break
            state = state.apply_unchecked(rng.choice(state.legal_moves()))
        fresh = board_state(format_board(state), side_to_move(state))
        if not fresh.is_terminal():
            positions.append(fresh)
    return positions


def reference_values(state: CheckersState, depth: int) -> dict[CheckersMove, float]:
    """Return each legal move's minimax value at `depth` for the side to move (Arena's minimax)."""
    values = {}
    for move in state.legal_moves():
        child = state.apply_unchecked(move)
        result = minimax(child, depth=depth - 1, evaluate=material, scoring=AGENT_SCORING)
        values[move] = -result.score
    return values


def exact_parts(runner: Runner, suite: AgentSuite, calls: Calls) -> list[TestResult]:
    positions = exact_positions(suite.exact_positions, suite.exact_seed)
    requests = []
    labels = []
    for depth in suite.exact_depths:
        for number, state in enumerate(positions, 1):
            requests.append(
                Request(format_board(state), side_to_move(state), depth, suite.time_limit)
            )
            labels.append(f"exact minimax, depth {depth}: position {number}")
    replies = iter(runner.run(requests, labels, shuffle=not suite.public))
    results = []
    for depth in suite.exact_depths:
        earned = 0.0
        lines = []
        reasons: list[Reason] = []
        for number, state in enumerate(positions, 1):
            reply = next(replies)
            values = reference_values(state, depth)
            best = max(values.values())
            optimal = format_moves([m for m, v in values.items() if v == best])
            answer = calls.read(state, reply)
            where = f"- position {number} ({side_to_move(state)} to move)"
            if answer.move is None:
                lines.append(f"{where}: {answer.problem}")
                reasons.append(answer.reason or "illegal move")
                continue
            if values[answer.move] == best:
                earned += 0.5
            else:
                lines.append(
                    f"{where}: move {format_move(answer.move)} has value "
                    f"{values[answer.move]:g}, not the best {best:g} "
                    f"(optimal: {optimal})"
                )
                reasons.append("wrong answer")
            if answer.value is None:
                lines.append(f"{where}: no value returned (return (move, value))")
                reasons.append("wrong answer")
            elif answer.value == best:
                earned += 0.5
            else:
                lines.append(f"{where}: value {answer.value:g}, expected {best:g}")
                reasons.append("wrong answer")
        results.append(
            proportional(
                f"exact minimax, depth {depth}",
                suite.exact_points,
                earned,
                len(positions),
                lines,
                reasons,
            )
        )
    return results
