"""Suites of the agent profile: certified position categories, the file format, and making one.

A suite file is JSON (see docs/GRADER.md, "Agent profile"):

    {"format": "arena-agent-suite", "version": 1, "public": true,
     "exact_seed": 1804289383, "game_seed": 846930886,
     "legal_positions": [{"name": "position 1 (multi-jump)", "player": "black",
                          "board": ["........", ...8 rows, row 0 at the top...]}, ...],
     "example_positions": [{"name": "example 1 (crowning)", "player": "red",
                            "board": [...]}, ...], "example_points": 5.0,
     "legal_depth": 2, "exact_depths": [1, 2, 3], ..., "opponents": [{"spec": "random",
     "games": 6, "threshold": 0.8, "points": 10.0}, ...]}

Every field of `AgentSuite` is written; on reading, `format`, `version`,
`public`, `legal_positions`, `exact_seed` and `game_seed` are required and any other field
left out takes its default (a file written before `example_positions` existed has none).
`public` says whether students may see the results before the grades are published (a private
suite's tests are `after_published`); the `example_positions` are public legal-move examples,
whose test students always see, also in a private suite.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from itertools import pairwise
from pathlib import Path
from typing import Any, Final

from bots.spec import BotSpecError, parse_bot_spec, refuse_local
from games.base import InvalidPositionError
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
from grader.course import course_board, side_name, side_to_move
from grader.suite_file import read_suite_json, write_suite_json

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


# -- making a suite -------------------------------------------------------------------------------


def _random_positions(rng: random.Random) -> list[tuple[CheckersState, frozenset[str]]]:
    """Return the positions of seeded random games (course boards, no history), categorised.

    Games are played until every (category, player) is found, and at least MIN_GAMES.
    """
    needed = {(c, p) for c in CATEGORIES for p in PLAYERS}
    seen: set[tuple[str, str]] = set()
    pool: list[tuple[CheckersState, frozenset[str]]] = []
    for games in range(1, MAX_GAMES + 1):
        state = GAME.initial_state()
        for _ in range(MAX_GAME_PLIES):
            moves = state.legal_moves()
            if not moves or state.is_terminal():
                break
            board = format_board(state)
            if (board, side_to_move(state)) not in seen:
                seen.add((board, side_to_move(state)))
                fresh = parse_board(GAME, board, to_move=side_to_move(state))
                categories = position_categories(fresh)
                pool.append((fresh, categories))
                needed -= {(c, side_to_move(fresh)) for c in categories}
            state = state.apply_unchecked(rng.choice(moves))
        if not needed and games >= MIN_GAMES:
            return pool
    missing = ", ".join(f"{c} ({p})" for c, p in sorted(needed))
    raise AgentSuiteError(f"{MAX_GAMES} random games found no position for: {missing}")


def _name(stem: str, number: int, categories: frozenset[str]) -> str:
    listed = ", ".join(c for c in CATEGORIES if c in categories) or "no special rule"
    return f"{stem} {number} ({listed})"


def _draw_varied(
    pool: list[tuple[CheckersState, frozenset[str]]],
    rng: random.Random,
    chosen: list[tuple[CheckersState, frozenset[str]]],
    count: int,
) -> None:
    """Move random positions from `pool` to `chosen` until it holds `count` (or `pool` is
    empty), taking each category (and no special rule) in turn."""
    kinds: list[str | None] = [*CATEGORIES, None]  # None: a position with no special rule
    while len(chosen) < count and pool:
        kind = kinds[len(chosen) % len(kinds)]
        fitting = [e for e in pool if (kind in e[1] if kind else not e[1])] or pool
        pick = rng.choice(fitting)
        chosen.append(pick)
        pool.remove(pick)


def make_agent_suite(
    seed: int,
    count: int = DEFAULT_COUNT,
    *,
    examples: int = 0,
    public: bool = False,
    base: AgentSuite | None = None,
) -> AgentSuite:
    """Return an agent suite drawn from `seed`: legal-move positions, examples and fresh seeds.

    The `count` legal-move positions come from seeded random games under Arena's rules: first
    the fewest positions (greedily) that together cover every category of `CATEGORIES` with
    red to move and with black to move, as certified by `position_categories`; then random
    others, taking each category (and no special rule) in turn. The `examples` public
    examples ("example N (...)", see `AgentSuite.example_positions`) are further positions of
    the same games, certified and named the same way, taking each category in turn from
    forced capture on; they need not cover every category, and none is a legal-move position.
    `exact_seed` and `game_seed` are drawn from `seed` too (the games' defaults are set so
    that a correct agent passes with any game seed; see grader.agent); every other field comes
    from `base` (default `AgentSuite()`). Asking for examples changes nothing else: a seed
    gives the positions and seeds it gave before examples existed. Raises AgentSuiteError if
    `count` positions cannot cover the categories, or if the games hold too few positions.
    """
    rng = random.Random(seed)
    exact_seed = rng.randrange(2**31)
    pool = _random_positions(rng)
    rng.shuffle(pool)
    uncovered = {(c, p) for c in CATEGORIES for p in PLAYERS}
    chosen: list[tuple[CheckersState, frozenset[str]]] = []

    def gain(entry: tuple[CheckersState, frozenset[str]]) -> int:
        return len(uncovered & {(c, side_to_move(entry[0])) for c in entry[1]})

    while uncovered:
        best = max(pool, key=gain)  # the first of the best, in shuffled order
        chosen.append(best)
        pool.remove(best)
        uncovered -= {(c, side_to_move(best[0])) for c in best[1]}
    if count < len(chosen):
        raise AgentSuiteError(
            f"{count} positions cannot cover every category with both colours; "
            f"seed {seed} needs {len(chosen)}"
        )
    _draw_varied(pool, rng, chosen, count)
    game_seed = rng.randrange(2**31)  # drawn after the positions: a seed keeps what it gave
    shown: list[tuple[CheckersState, frozenset[str]]] = []
    _draw_varied(pool, rng, shown, examples)  # last, so that examples change nothing else
    if len(chosen) < count or len(shown) < examples:
        raise AgentSuiteError(
            f"the random games of seed {seed} hold {len(chosen) + len(shown)} positions, "
            f"fewer than the {count + examples} asked for"
        )

    def entries(
        stem: str, drawn: list[tuple[CheckersState, frozenset[str]]]
    ) -> tuple[tuple[str, str, str], ...]:
        return tuple(
            (_name(stem, number, categories), format_board(state), side_to_move(state))
            for number, (state, categories) in enumerate(drawn, 1)
        )

    return replace(
        base or AgentSuite(),
        legal_positions=entries("position", chosen),
        example_positions=entries(EXAMPLE_STEM, shown),
        exact_seed=exact_seed,
        game_seed=game_seed,
        public=public,
    )


# -- the file format ------------------------------------------------------------------------------

_INTEGERS: Final = {
    "legal_depth": 1,
    "exact_positions": 0,
    "game_depth": 1,
    "opening_plies": 0,
    "max_plies": 1,
    "max_timeouts": 1,
}
"""Integer fields and their least value."""
_SEEDS: Final = ("exact_seed", "game_seed")
_NUMBERS: Final = {
    "time_limit": 0.001,
    "slack": 0.0,
    "startup_seconds": 0.0,
    "legal_points": 0.0,
    "exact_points": 0.0,
    "time_points": 0.0,
    "example_points": 0.0,
}
"""Number fields (seconds or points) and their least value."""
_REQUIRED: Final = ("format", "version", "public", "legal_positions", *_SEEDS)
_KNOWN: Final = {
    *_REQUIRED,
    *_INTEGERS,
    *_NUMBERS,
    "exact_depths",
    "opponents",
    "example_positions",
}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def load_agent_suite(path: Path | str) -> AgentSuite:
    """Read a suite file; raise AgentSuiteError naming the file and the problem if it is not one."""
    source = Path(path)
    data = read_suite_json(
        source,
        format_name=SUITE_FORMAT,
        version=SUITE_VERSION,
        kind="agent suite",
        error=AgentSuiteError,
    )
    missing = [key for key in _REQUIRED if key not in data]
    if missing:
        raise AgentSuiteError(f"{source}: missing {', '.join(missing)}")
    unknown = sorted(set(data) - _KNOWN)
    if unknown:
        raise AgentSuiteError(f"{source}: unknown field(s) {', '.join(unknown)}")

    def check(ok: bool, key: str, expected: str) -> None:
        if not ok:
            raise AgentSuiteError(f'{source}: "{key}" must be {expected}, not {data[key]!r}')

    fields: dict[str, Any] = {}  # AgentSuite's keyword arguments
    check(isinstance(data["public"], bool), "public", "true or false")
    fields["public"] = data["public"]
    for key in _SEEDS:
        check(_is_int(data[key]), key, "an integer")
        fields[key] = data[key]
    for key, least in _INTEGERS.items():
        if key in data:
            check(_is_int(data[key]) and data[key] >= least, key, f"an integer >= {least}")
            fields[key] = data[key]
    for key, bound in _NUMBERS.items():
        if key in data:
            check(_is_number(data[key]) and data[key] >= bound, key, f"a number >= {bound:g}")
            fields[key] = float(data[key])
    if "exact_depths" in data:
        depths = data["exact_depths"]
        check(
            isinstance(depths, list) and all(_is_int(d) and d >= 1 for d in depths),
            "exact_depths",
            "a list of integers >= 1",
        )
        fields["exact_depths"] = tuple(depths)
    if "opponents" in data:
        entries = data["opponents"]
        check(isinstance(entries, list), "opponents", "a list")
        fields["opponents"] = tuple(
            _read_opponent(f"{source}: opponent {i}", entry) for i, entry in enumerate(entries, 1)
        )
    positions = data["legal_positions"]
    check(isinstance(positions, list) and bool(positions), "legal_positions", "a non-empty list")
    fields["legal_positions"] = tuple(
        _read_position(f"{source}: position {i}", entry) for i, entry in enumerate(positions, 1)
    )
    if "example_positions" in data:
        examples = data["example_positions"]
        check(isinstance(examples, list), "example_positions", "a list")
        fields["example_positions"] = tuple(
            _read_position(f"{source}: example {i}", entry) for i, entry in enumerate(examples, 1)
        )
        graded = {(b, p): i for i, (_, b, p) in enumerate(fields["legal_positions"], 1)}
        for i, (_, board, player) in enumerate(fields["example_positions"], 1):
            if (board, player) in graded:
                raise AgentSuiteError(
                    f"{source}: example {i} is position {graded[board, player]} of "
                    "legal_positions: a public example must not give a graded position away"
                )
    return AgentSuite(**fields)


def _read_opponent(where: str, entry: Any) -> Opponent:
    if not isinstance(entry, dict) or set(entry) != {"spec", "games", "threshold", "points"}:
        raise AgentSuiteError(f"{where}: expected an object with spec, games, threshold, points")
    spec, games, threshold, points = (entry[k] for k in ("spec", "games", "threshold", "points"))
    if not isinstance(spec, str):
        raise AgentSuiteError(f'{where}: "spec" must be a bot spec such as "alphabeta:depth=2"')
    try:
        # A suite is read by the grading server: it never names a program for it to run.
        refuse_local(parse_bot_spec(spec))
    except BotSpecError as error:
        raise AgentSuiteError(f"{where}: {error}") from error
    if not _is_int(games) or games < 1:
        raise AgentSuiteError(f'{where}: "games" must be a positive integer')
    if not _is_number(threshold) or not 0 <= threshold <= 1:
        raise AgentSuiteError(f'{where}: "threshold" must be a number from 0 to 1')
    if not _is_number(points) or points < 0:
        raise AgentSuiteError(f'{where}: "points" must be a number >= 0')
    return Opponent(spec, games, float(threshold), float(points))


def _read_position(where: str, entry: Any) -> tuple[str, str, str]:
    if not isinstance(entry, dict) or set(entry) != {"name", "player", "board"}:
        raise AgentSuiteError(f"{where}: expected an object with name, player, board")
    name, player, board = entry["name"], entry["player"], entry["board"]
    if not isinstance(name, str) or not name.strip():
        raise AgentSuiteError(f'{where}: "name" must be a non-empty string')
    if player not in PLAYERS:
        raise AgentSuiteError(f'{where}: "player" must be "red" or "black", not {player!r}')
    if not isinstance(board, list) or not all(isinstance(row, str) for row in board):
        raise AgentSuiteError(f'{where}: "board" must be a list of 8 row strings')
    try:
        state = parse_board(GAME, "\n".join(board), to_move=player)
    except InvalidPositionError as error:
        raise AgentSuiteError(f"{where}: the board is not a course board: {error}") from error
    if not state.legal_moves():
        raise AgentSuiteError(f"{where}: {player} has no legal move (the game is over)")
    return (name, format_board(state), player)


def _opponent_json(opponent: Opponent) -> dict[str, Any]:
    return {
        "spec": opponent.spec,
        "games": opponent.games,
        "threshold": opponent.threshold,
        "points": opponent.points,
    }


def _positions_json(positions: tuple[tuple[str, str, str], ...]) -> list[dict[str, Any]]:
    return [
        {"name": name, "player": player, "board": board.splitlines()}
        for name, board, player in positions
    ]


_WRITERS: Final[Mapping[str, Callable[[Any], Any]]] = {
    "exact_depths": list,
    "opponents": lambda opponents: [_opponent_json(o) for o in opponents],
}


def save_agent_suite(path: Path | str, suite: AgentSuite) -> None:
    """Write a suite file; a private suite is created readable by its owner only.

    A suite without its own positions (the built-in default) is written with `LEGAL_SUITE`.
    """
    positions = suite.legal_positions or LEGAL_SUITE
    data: dict[str, Any] = {
        "format": SUITE_FORMAT,
        "version": SUITE_VERSION,
        "public": suite.public,
        "exact_seed": suite.exact_seed,
        "game_seed": suite.game_seed,
        "legal_positions": _positions_json(positions),
        "example_positions": _positions_json(suite.example_positions),
    }
    for key in (*_INTEGERS, *_NUMBERS, *_WRITERS):
        value = getattr(suite, key)
        data[key] = _WRITERS[key](value) if key in _WRITERS else value
    write_suite_json(path, data, public=suite.public)


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
