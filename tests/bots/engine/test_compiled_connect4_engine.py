"""The compiled Connect Four search against bots.engine.search.AlphaBetaEngine, node for node.

Differential tests: on positions from seeded random games, at depths 1-7, with the table and
the ordering on and off and both evaluations, both engines must return the same score, move,
principal variation, depth and counts of nodes, evaluations, table hits and cut-offs; over a
whole game with their tables and histories kept; and under iterative deepening with node
limits. The pieces the search is made of (the table's key, the evaluations) are compared with
Python's on their own first. The driver's limits and stops are tested on both games' cores in
test_compiled_engine.py.
"""

from __future__ import annotations

import itertools
import random
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bots.engine.compiled import CompiledConnectFourEngine, compiled_engine
from bots.engine.search import AlphaBetaEngine
from bots.evaluation import connect4 as evaluation
from bots.evaluation.knowledge import knowledge_for
from bots.scoring import LECTURE
from bots.spec import create_bot
from games import get_game
from games.connect4 import ConnectFourState
from tests.bots.engine import compiled_engines
from tests.bots.engine.compiled_engines import summary

GAME = get_game("connect4")
KNOWLEDGE = knowledge_for(GAME)
EVALUATIONS = ("threats", "lines")


@pytest.fixture(scope="module")
def core() -> ModuleType:
    return compiled_engines.load_core("connect4_search")


def played(columns: list[int]) -> ConnectFourState:
    """The position after the playable ones of `columns`, stopping where the game ends."""
    state = GAME.initial_state()
    for col in columns:
        if not state.legal_moves():
            break
        if state.can_play(col):
            state = state.apply_unchecked(col)
    return state


def positions(seed: int, count: int) -> list[ConnectFourState]:
    """`count` non-terminal positions from random games, 0 to 36 stones in."""
    rng = random.Random(seed)
    found: list[ConnectFourState] = []
    while len(found) < count:
        state = GAME.initial_state()
        for _ in range(rng.randint(0, 36)):
            moves = state.legal_moves()
            if not moves:
                break
            state = state.apply_unchecked(rng.choice(moves))
        if state.outcome() is None:
            found.append(state)
    return found


def pair(
    evaluation_name: str, tt: bool, ordering: bool
) -> tuple[AlphaBetaEngine, CompiledConnectFourEngine]:
    python, compiled = compiled_engines.pair(KNOWLEDGE, evaluation_name, tt, ordering)
    assert isinstance(compiled, CompiledConnectFourEngine)
    return python, compiled


# -- the pieces ---------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 6), max_size=42))
def test_evaluations_and_keys_are_pythons(core: ModuleType, columns: list[int]) -> None:
    state = played(columns)
    key = state.current + state.mask
    assert core.canonical_key(key) == evaluation.canonical_key(state)
    if state.outcome() is None:
        args = (state.current, state.mask, state.ply)
        assert (
            core.threats(*args)
            == evaluation.THREATS(state)
            == evaluation.THREATS.weighted_sum(state)
        )
        assert core.lines(*args) == evaluation.LINES(state) == evaluation.LINES.weighted_sum(state)


def test_only_what_the_core_computes_is_compiled() -> None:
    for name in EVALUATIONS:
        function = KNOWLEDGE.evaluation(name).function
        assert isinstance(compiled_engine(KNOWLEDGE, function), CompiledConnectFourEngine)
        assert compiled_engine(KNOWLEDGE, function, scoring=LECTURE) is None
    assert compiled_engine(KNOWLEDGE, lambda state: 0.0) is None  # a user's evaluation
    slow = evaluation.THREATS.weighted_sum  # the same values, but not the core's function
    assert compiled_engine(KNOWLEDGE, slow) is None


# -- searches -----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_searches_equal_the_python_engines(seed: int) -> None:
    """Two searches per engine pair, so the second meets the first one's table and history."""
    rng = random.Random(seed)
    combos = list(itertools.product(EVALUATIONS, (True, False), (True, False)))
    for state in positions(seed, 60):
        evaluation_name, tt, ordering = rng.choice(combos)
        python, compiled = pair(evaluation_name, tt, ordering)
        for depth in (rng.randint(1, 7), rng.randint(1, 5)):
            expected = summary(python.search(state, depth))
            assert summary(compiled.search(state, depth)) == expected, (
                state.history,
                depth,
                evaluation_name,
                tt,
                ordering,
            )


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(0, 6), max_size=40),
    st.integers(1, 6),
    st.sampled_from(EVALUATIONS),
    st.booleans(),
    st.booleans(),
)
def test_any_reachable_position_is_searched_as_in_python(
    columns: list[int], depth: int, evaluation_name: str, tt: bool, ordering: bool
) -> None:
    state = played(columns)
    python, compiled = pair(evaluation_name, tt, ordering)
    assert summary(compiled.search(state, depth)) == summary(python.search(state, depth))


@pytest.mark.parametrize(("tt", "ordering"), [(True, True), (True, False), (False, True)])
def test_a_whole_game_keeps_the_same_table_and_history(tt: bool, ordering: bool) -> None:
    """Both engines play both sides of a game at depth 6: every search the same, so the
    tables, generations, killers and history carried from move to move are the same."""
    python, compiled = pair("threats", tt, ordering)
    state = GAME.initial_state()
    while state.outcome() is None:
        expected = python.search(state, 6)
        assert summary(compiled.search(state, 6)) == summary(expected), state.history
        state = state.apply(expected.move)


@pytest.mark.parametrize("max_nodes", [1, 2, 63, 64, 65, 500, 5000, 40_000, None])
def test_iterative_deepening_with_a_node_limit_is_the_python_engines(
    max_nodes: int | None,
) -> None:
    rng = random.Random(max_nodes)
    for state in positions(7, 6):
        evaluation_name = rng.choice(EVALUATIONS)
        tt = rng.random() < 0.75
        python, compiled = pair(evaluation_name, tt, True)
        depth = 42 if max_nodes else 6
        expected = python.iterative_deepening(state, max_depth=depth, max_nodes=max_nodes)
        found = compiled.iterative_deepening(state, max_depth=depth, max_nodes=max_nodes)
        assert summary(found) == summary(expected), (state.history, evaluation_name, tt)


def test_a_proven_result_and_a_finished_game_end_the_search_as_in_python() -> None:
    # A win at once, a loss that cannot be stopped, and games already won and drawn.
    for history in ("4455661", "445566", "4444555", "1212121"):
        state = GAME.parse_position(history)
        python, compiled = pair("threats", True, True)
        expected = python.iterative_deepening(state, max_depth=20, max_nodes=200_000)
        found = compiled.iterative_deepening(state, max_depth=20, max_nodes=200_000)
        assert summary(found) == summary(expected), history
    drawn = GAME.parse_position("472424756645422154157737216635626711335331")
    outcome = drawn.outcome()
    assert outcome is not None and outcome.winner is None  # a full board, no four anywhere
    python, compiled = pair("lines", True, True)
    assert summary(compiled.search(drawn, 3)) == summary(python.search(drawn, 3))


# -- the bots -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec",
    [
        "alphabeta:depth=4",
        "alphabeta:depth=4,eval=lines,tt=off",
        "id:time=0,nodes=5000,ordering=off",
        "id:time=1,pvs=on",  # Connect Four has no engine mode: the options change nothing
    ],
)
def test_the_house_bots_search_connect4_on_the_core(spec: str) -> None:
    bot = create_bot(spec, GAME)
    engine = bot._chooser.__self__.engine  # type: ignore[attr-defined]
    assert isinstance(engine, CompiledConnectFourEngine)


def test_a_bot_plays_as_the_python_engine_would() -> None:
    bot = create_bot("id:time=0,nodes=20000", GAME)
    python = AlphaBetaEngine(KNOWLEDGE, KNOWLEDGE.evaluation().function)
    state = GAME.initial_state()
    for _ in range(8):
        expected = python.iterative_deepening(state, max_nodes=20_000)
        assert summary(bot.choose(state)) == summary(expected)
        state = state.apply(expected.move)
