"""The file format of agent suites: reading and writing them.

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

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from autograder.agent_suite import (
    GAME,
    LEGAL_SUITE,
    PLAYERS,
    SUITE_FORMAT,
    SUITE_VERSION,
    AgentSuite,
    AgentSuiteError,
    Opponent,
)
from autograder.suite_file import read_suite_json, write_suite_json
from bots.spec import BotSpecError, parse_bot_spec, refuse_local
from games.base import InvalidPositionError
from games.checkers import (
    format_board,
    parse_board,
)

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
