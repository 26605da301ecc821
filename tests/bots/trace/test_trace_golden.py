"""Traces pinned node for node: every search, on small positions of every game.

tests/bots/trace/trace_golden.json holds `Trace.as_dict()` of each case below as `bots.trace.tree`
records it; a change to a search or to the recorder that alters any node, value, window, cut-off,
table hit or count fails here. Regenerate the file (only for an intended change of the traces) with
`python -m tests.bots.trace.test_trace_golden`.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from bots.trace.tree import trace
from games import get_game

GOLDEN = Path(__file__).with_name("trace_golden.json")

ALL = ("minimax", "minimax_prune", "alphabeta", "alphabeta_soft", "negamax", "abnodevalue")
CASES: list[tuple[str, int, int | None, dict[str, Any]]] = [
    # (game, plies of seeded random play from the start, depth, trace options)
    *(("tictactoe", 4, None, {"search": s}) for s in ALL),
    *(("tictactoe", 3, None, {"search": s, "scoring": "lecture"}) for s in ALL),
    *(("tictactoe", 2, 2, {"search": s}) for s in ALL),
    ("tictactoe", 4, None, {"search": "alphabeta", "window": (-1.0, 1.0), "scoring": "lecture"}),
    ("tictactoe", 4, None, {"search": "negamax", "window": (-1.0, 0.0), "scoring": "lecture"}),
    ("tictactoe", 4, None, {"search": "abnodevalue", "window": (-1.0, 0.0), "scoring": "lecture"}),
    *(
        ("tictactoe", 3, None, {"search": "engine", "tt": tt, "ordering": o})
        for tt in (True, False)
        for o in (True, False)
    ),
    *(("nim", 4, None, {"search": s}) for s in (*ALL, "engine")),
    *(("connect4", 6, 3, {"search": s}) for s in (*ALL, "engine")),
    ("connect4", 6, 4, {"search": "engine", "tt": False}),
    *(("checkers", 9, 2, {"search": s}) for s in (*ALL, "engine")),
    *(
        ("checkers", 9, 3, {"search": "engine", "tt": tt, "ordering": o})
        for tt in (True, False)
        for o in (True, False)
    ),
]


def position(game_name: str, plies: int) -> str:
    """The position `plies` seeded random moves from the start (stopping at the game's end)."""
    game = get_game(game_name)
    rng = random.Random(plies)
    state = game.initial_state()
    for _ in range(plies):
        moves = list(state.legal_moves())
        if state.is_terminal() or len(moves) == 1:
            break
        state = state.apply_unchecked(rng.choice(moves))
    return game.format_position(state)


def record(game_name: str, text: str, depth: int | None, options: dict[str, Any]) -> Any:
    game = get_game(game_name)
    traced = trace(game.parse_position(text), depth=depth, max_nodes=1_000_000, **options)
    return json.loads(json.dumps(traced.as_dict()))


def generate() -> list[dict[str, Any]]:
    cases = []
    for game_name, plies, depth, options in CASES:
        text = position(game_name, plies)
        cases.append(
            {
                "game": game_name,
                "position": text,
                "depth": depth,
                "options": {k: list(v) if k == "window" else v for k, v in options.items()},
                "trace": record(game_name, text, depth, options),
            }
        )
    return cases


def _load() -> list[dict[str, Any]]:
    loaded: list[dict[str, Any]] = json.loads(GOLDEN.read_text())
    return loaded


@pytest.mark.parametrize("case", _load(), ids=lambda case: f"{case['game']}-{case['options']}")
def test_a_trace_is_the_pinned_one(case: dict[str, Any]) -> None:
    options = dict(case["options"])
    if "window" in options:
        options["window"] = tuple(options["window"])
    got = record(case["game"], case["position"], case["depth"], options)
    expected = case["trace"]
    assert got["stats"] == expected["stats"]
    assert got["counts_by_depth"] == expected["counts_by_depth"]
    for ours, pinned in zip(got["nodes"], expected["nodes"], strict=True):
        assert ours == pinned
    assert got == expected


def test_the_pinned_traces_cover_every_search_and_game() -> None:
    cases = _load()
    assert {case["options"]["search"] for case in cases} == {*ALL, "engine"}
    assert {case["game"] for case in cases} == {"tictactoe", "nim", "connect4", "checkers"}
    assert all(case["trace"]["stats"]["cutoffs"] >= 0 for case in cases)
    assert sum(case["trace"]["stats"]["tt_hits"] for case in cases) > 0
    assert any(node["kind"] == "table" for case in cases for node in case["trace"]["nodes"])


if __name__ == "__main__":
    GOLDEN.write_text(json.dumps(generate(), separators=(",", ":")) + "\n")
