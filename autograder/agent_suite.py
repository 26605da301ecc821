"""Suites of the agent profile: what a suite holds, and the position categories Arena certifies.

Its file format is autograder/agent_suite_file.py's; making one from a seed is
autograder/agent_suite_maker.py's.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import Final

from autograder.course import course_board, side_name, side_to_move
from games.checkers import (
    BLACK,
    WHITE,
    Checkers,
    CheckersMove,
    CheckersState,
    format_board,
    parse_board,
    square_at,
    square_column,
    square_row,
)

SUITE_FORMAT: Final = "arena-agent-suite"
SUITE_VERSION: Final = 1
DEFAULT_COUNT: Final = 10
"""Legal-move positions in a generated suite (the hand-made default has 9)."""
EXAMPLE_STEM: Final = "example"
"""How a generated suite names its public examples ("example 1 (crowning)"); the graded
positions are "position N (...)"."""

FORCED_CAPTURE: Final = "forced capture"
MULTI_JUMP: Final = "multi-jump"
CROWNING: Final = "crowning"
CROWNING_ENDS_JUMP: Final = "crowning ends a jump"
KING_BACKWARDS: Final = "king backwards"
CATEGORIES: Final = (FORCED_CAPTURE, MULTI_JUMP, CROWNING, CROWNING_ENDS_JUMP, KING_BACKWARDS)
"""What a generated suite covers, each with red and with black to move."""
PLAYERS: Final = (side_name(WHITE), side_name(BLACK))
"""The sides to move a generated suite covers, red first."""

MAX_GAMES: Final = 200
"""Random games played at most while looking for a position of every category and colour."""
MIN_GAMES: Final = 12
"""Random games played at least, so the positions beyond the covering ones vary."""
MAX_GAME_PLIES: Final = 200

GAME: Final = Checkers()


@dataclass(frozen=True)
class Opponent:
    """A reference bot the agent must score at least `threshold` (win 1, draw 1/2) against."""

    spec: str
    games: int
    threshold: float
    points: float = 10.0


DEFAULT_OPPONENTS: Final = (
    Opponent("random", 6, 0.8),
    Opponent("greedy", 6, 0.6),
    Opponent("alphabeta:depth=2", 8, 0.25),
    Opponent("alphabeta:depth=4", 4, 0.0),
)


@dataclass(frozen=True)
class AgentSuite:
    """What the grading runs and what each part is worth; times in seconds."""

    legal_positions: tuple[tuple[str, str, str], ...] = ()
    """(name, course board, player); empty means `LEGAL_SUITE`."""
    example_positions: tuple[tuple[str, str, str], ...] = ()
    """Public legal-move examples, as `legal_positions`: their own test, always "visible"."""
    example_points: float = 5.0
    """What the examples' test is worth (only a suite with examples has that test)."""
    legal_depth: int = 2
    exact_depths: tuple[int, ...] = (1, 2, 3)
    exact_positions: int = 6
    exact_seed: int = 384
    opponents: tuple[Opponent, ...] = DEFAULT_OPPONENTS
    game_depth: int = 4
    opening_plies: int = 4
    max_plies: int = 40
    game_seed: int = 0
    time_limit: float = 2.0
    slack: float = 0.5
    startup_seconds: float = 1.0
    max_timeouts: int = 2
    legal_points: float = 20.0
    exact_points: float = 10.0
    time_points: float = 10.0
    public: bool = True
    """Whether students see the results at once ("visible") or when published (a private
    suite); the examples' test is visible either way."""


OPENING: Final = ".b.b.b.b\nb.b.b.b.\n.b.b.b.b\n........\n........\nr.r.r.r.\n.r.r.r.r\nr.r.r.r."
LEGAL_SUITE: Final = (
    ("opening, red to move", OPENING, "red"),
    (
        "forced capture, red",
        course_board({(5, 2): "r", (6, 5): "r", (4, 3): "b", (1, 4): "b"}),
        "red",
    ),
    (
        "double jump, red",
        course_board({(6, 1): "r", (7, 6): "r", (5, 2): "b", (3, 4): "b", (0, 7): "b"}),
        "red",
    ),
    (
        "crowning ends the jump, red",
        course_board({(2, 1): "r", (6, 5): "r", (1, 2): "b", (1, 4): "b"}),
        "red",
    ),
    (
        "king jumps backwards, red",
        course_board({(2, 3): "R", (7, 0): "r", (3, 4): "b", (0, 7): "b"}),
        "red",
    ),
    (
        "forced capture, black",
        course_board({(3, 4): "b", (1, 0): "b", (4, 3): "r", (7, 6): "r"}),
        "black",
    ),
    (
        "triple jump, black",
        course_board({(1, 0): "b", (2, 1): "r", (4, 3): "r", (6, 5): "r", (7, 0): "r"}),
        "black",
    ),
    ("crowning step, black", course_board({(6, 3): "b", (5, 0): "r", (7, 0): "r"}), "black"),
    (
        "two kings, black",
        course_board({(2, 3): "B", (6, 3): "B", (4, 5): "r", (7, 0): "r"}),
        "black",
    ),
)
"""(name, course board, side to move): captures, multi-jumps, crowning and kings, both colours."""


class AgentSuiteError(Exception):
    """An agent suite file that cannot be read, or a suite that cannot be made."""


# -- categories, certified by Arena's rules ------------------------------------------------------


def _is_king(state: CheckersState, square: int) -> bool:
    return state.piece_at(square).isupper()


def _can_step(state: CheckersState, square: int, forward: int) -> bool:
    """True when the piece on `square` has an empty neighbour it may step to (ignoring jumps)."""
    rows = (forward, -forward) if _is_king(state, square) else (forward,)
    row, column = square_row(square), square_column(square)
    for dr in rows:
        for dc in (-1, 1):
            target = square_at(row + dr, column + dc)
            if target is not None and state.piece_at(target) == ".":
                return True
    return False


def position_categories(state: CheckersState) -> frozenset[str]:
    """Return the categories of `CATEGORIES` that the side to move's legal moves exercise.

    - forced capture: every legal move is a capture, and some piece could have stepped;
    - multi-jump: a legal move jumps two pieces or more;
    - crowning: a man's legal move (step or capture) ends on the far row;
    - crowning ends a jump: a man's capture crowns where the new king could jump on (it may
      not: crowning ends the move);
    - king backwards: a king's legal move goes (at least once) away from its colour's forward.
    """
    moves = state.legal_moves()
    forward = -1 if state.turn == WHITE else 1  # red (White) moves up, toward row 0
    crown_row = 0 if state.turn == WHITE else 7
    mine = "w" if state.turn == WHITE else "b"
    found = set()
    if moves and all(m.is_capture for m in moves):
        pieces = [s for s in range(1, 33) if state.piece_at(s).lower() == mine]
        if any(_can_step(state, s, forward) for s in pieces):
            found.add(FORCED_CAPTURE)
    for move in moves:
        if len(move.path) >= 3:
            found.add(MULTI_JUMP)
        if _is_king(state, move.path[0]):
            if any((square_row(b) - square_row(a)) * forward < 0 for a, b in pairwise(move.path)):
                found.add(KING_BACKWARDS)
        elif square_row(move.path[-1]) == crown_row:
            found.add(CROWNING)
            if move.is_capture and _could_jump_on(state, move):
                found.add(CROWNING_ENDS_JUMP)
    return frozenset(found)


def _could_jump_on(state: CheckersState, move: CheckersMove) -> bool:
    """True when the piece `move` lands, if it moved again at once, would have a capture."""
    after = format_board(state.apply_unchecked(move))
    again = parse_board(GAME, after, to_move=side_to_move(state))
    return any(m.is_capture and m.path[0] == move.path[-1] for m in again.legal_moves())


def describe_agent_suite(suite: AgentSuite) -> str:
    """Return a one-line summary: positions, what they cover, examples, seeds and visibility."""
    positions = suite.legal_positions or LEGAL_SUITE
    states = [parse_board(GAME, board, to_move=p) for _, board, p in positions]
    covered = {(c, side_to_move(s)) for s in states for c in position_categories(s)}
    missing = [f"{c} ({p})" for c in CATEGORIES for p in PLAYERS if (c, p) not in covered]
    coverage = f"missing {', '.join(missing)}" if missing else "every category with both colours"
    kind = "public" if suite.public else "private"
    examples = len(suite.example_positions)
    shown = f", {examples} public example{'s' if examples != 1 else ''}" if examples else ""
    return (
        f"{kind} agent suite: {len(states)} legal-move positions ({coverage}){shown}, "
        f"exact_seed {suite.exact_seed}, game_seed {suite.game_seed}"
    )
