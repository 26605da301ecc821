"""The compiled checkers search against bots.engine.search.AlphaBetaEngine, node for node, and the
driver's limits and stops on either game's core.

Differential tests: on positions from random games (from the start, from the ACF openings,
from king endings), with pending multi-jumps and near the draw rules, at depths 1-6, with the
table and the ordering on and off and every evaluation the core implements, both engines must
return the same score, move, principal variation, depth and counts of nodes, evaluations,
table hits and cut-offs; over a whole game with their tables and histories kept; and under
iterative deepening with node limits. The pieces the search is made of (the table's slot, the
evaluations) are compared with Python's on their own first. Node limits and stops end a search
of checkers or Connect Four (one driver) as they end the Python engine's.
"""

from __future__ import annotations

import functools
import itertools
import random
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from types import ModuleType
from typing import Any

import pytest

from bots.common import SearchTimeout
from bots.engine.compiled import CompiledEngine, compiled_engine
from bots.engine.search import AlphaBetaEngine
from bots.evaluation import Knowledge, checkers_endings, checkers_engine
from bots.evaluation.knowledge import knowledge_for
from bots.result import SearchStopped
from bots.scoring import ENGINE
from bots.spec import BotSpecError, create_bot
from competition.openings import deck
from games import Game, State, get_game
from games.checkers import CheckersState
from tests.bots.engine import compiled_engines
from tests.bots.engine.compiled_engines import Countdown, summary
from tests.games.test_checkers import _king_walk

GAME = get_game("checkers")
KNOWLEDGE = knowledge_for(GAME)
EVALUATIONS = ("material", "positional", "positional_v1", "positional_tuned", "endings", "engine")
KING_FENS = (
    "B:WK29,K30,K31,K32:BK1,K2,K3,K4",
    "W:WK32,K28:BK1,K5",
    "W:WK18:B1,15,16,23,24",
    "B:WK14,K15:BK5",
    "W:WK18,K19,27:BK1,K3,10",
)
MULTI_JUMP_FENS = (
    "W:WK18:B1,15,16,23,24",  # a king's ring of captures
    "B:W6,7,14,15,22,23,30:B2,K3",
    "W:W21,25,29,K31:B5,6,13,14,22,K27",
    "B:W10,11,18,19,26,27:B1,2,3,K4",
)


@pytest.fixture(scope="module")
def core() -> ModuleType:
    return compiled_engines.load_core("checkers_search")


def parse(fen: str) -> CheckersState:
    state = GAME.parse_position(fen)
    assert isinstance(state, CheckersState)
    return state


def playout(state: CheckersState, plies: int, rng: random.Random) -> CheckersState:
    for _ in range(plies):
        moves = state.legal_moves()
        if not moves:
            break
        state = state.apply_unchecked(rng.choice(moves))
    return state


@functools.cache
def long_walks() -> list[list[CheckersState]]:
    """King walks of 79 plies without a capture or a repeated position."""
    walks = []
    for seed in range(12):
        try:
            walks.append(_king_walk("B:WK29,K30,K31,K32:BK1,K2,K3,K4", 79, seed=seed))
        except AssertionError:
            continue  # this walk ran out of fresh positions
    assert len(walks) >= 3
    return walks


def positions(seed: int, count: int) -> list[CheckersState]:
    """`count` non-terminal positions of every kind the search meets, their histories kept."""
    rng = random.Random(seed)
    openings = [o.start_state(GAME) for o in deck("acf-3move", GAME)]
    found: list[CheckersState] = []
    kinds = itertools.cycle(range(6))
    while len(found) < count:
        kind = next(kinds)
        if kind == 0:
            state = playout(GAME.initial_state(), rng.randint(0, 70), rng)
        elif kind == 1:
            state = playout(rng.choice(openings), rng.randint(0, 40), rng)  # type: ignore[arg-type]
        elif kind == 2:
            state = playout(parse(rng.choice(KING_FENS)), rng.randint(0, 30), rng)
        elif kind == 3:
            state = playout(parse(rng.choice(MULTI_JUMP_FENS)), rng.randint(0, 2), rng)
        elif kind == 4:
            # Near the 80-ply rule: kings walked to 70-79 quiet plies.
            state = rng.choice(long_walks())[rng.randint(66, 79)]
        else:
            # Repetitions in the history: kings shuffled back and forth.
            state = parse(rng.choice(("W:WK32,K28:BK1,K5", "B:WK14,K15:BK5")))
            for _ in range(rng.randint(2, 9)):
                moves = [m for m in state.legal_moves() if not m.is_capture]
                if not moves:
                    break
                state = state.apply_unchecked(moves[rng.randrange(min(2, len(moves)))])
        if not state.is_terminal():
            found.append(state)
    return found


pair = functools.partial(compiled_engines.pair, KNOWLEDGE)


def assert_same_searches(seed: int, count: int, configurations: int) -> None:
    rng = random.Random(seed)
    combos = list(itertools.product(EVALUATIONS, (True, False), (True, False)))
    for state in positions(seed, count):
        for evaluation, tt, ordering in rng.sample(combos, configurations):
            depth = rng.randint(1, 6)
            python, compiled = pair(evaluation, tt, ordering)
            expected = summary(python.search(state, depth))
            assert summary(compiled.search(state, depth)) == expected, (
                GAME.format_position(state),
                state.quiet,
                depth,
                evaluation,
                tt,
                ordering,
            )


# -- the pieces ---------------------------------------------------------------------------------


def test_table_slots_are_pythons(core: ModuleType) -> None:
    """The core's slot of a position is `hash(table_key) & mask`, as bots.engine.table's."""
    for state in positions(1, 300):
        key = checkers_endings.table_key(state)
        quiet = core._table_quiet(state.black, state.white, state.kings, state.quiet)
        assert (quiet >= 0) == (len(key) == 5)
        hashed = core.key_hash(state.black, state.white, state.kings, state.turn, quiet)
        assert hashed == hash(key)
        assert hashed & ((1 << 20) - 1) == hash(key) & ((1 << 20) - 1)


def test_evaluations_are_pythons(core: ModuleType) -> None:
    for name in EVALUATIONS:
        function = KNOWLEDGE.evaluation(name).function
        engine = compiled_engine(KNOWLEDGE, function)
        assert engine is not None
        buf = engine.buffer
        for state in positions(2, 400):
            expected = function(state)
            found = core.evaluate(
                buf, state.black, state.white, state.kings, state.turn, state.quiet
            )
            assert found == expected, (name, GAME.format_position(state), state.quiet)


def test_only_what_the_core_computes_is_compiled() -> None:
    function = KNOWLEDGE.evaluation().function
    assert compiled_engine(KNOWLEDGE, function) is not None
    assert compiled_engine(KNOWLEDGE, lambda state: 0.0) is None  # a user's evaluation
    assert compiled_engine(KNOWLEDGE, function, exact=lambda state: None) is None
    tictactoe = knowledge_for(get_game("tictactoe"))
    assert compiled_engine(tictactoe, tictactoe.evaluation().function) is None


VARIANT_WEIGHTS = {
    **checkers_engine.ENGINE_WEIGHTS,
    "kings": 170,
    "back_rank": 4,
    "runaway_men": 90,
    "capture_threat": 5,
    "men_row_2": 3,
    "men_row_3": -4,
    "men_row_4": 5,
    "men_row_5": 7,
    "men_row_6": 11,
    "dog_holes": 13,
    "king_centre": 17,
    "crowded_advancement": -6,
}


def test_an_engine_variant_is_compiled_under_its_own_weights(core: ModuleType) -> None:
    variant = checkers_endings.engine_evaluation("variant", VARIANT_WEIGHTS)
    assert checkers_endings.engine_evaluation("variant", dict(VARIANT_WEIGHTS)) is variant
    knowledge = replace(KNOWLEDGE, evaluations={**KNOWLEDGE.evaluations, "variant": variant})
    engine = compiled_engine(knowledge, variant.function)
    assert engine is not None
    buf = engine.buffer
    differs = 0
    for state in positions(5, 300):
        expected = variant(state)
        assert expected == variant.weighted_sum(state)
        found = core.evaluate(buf, state.black, state.white, state.kings, state.turn, state.quiet)
        assert found == expected, GAME.format_position(state)
        differs += expected != KNOWLEDGE.evaluation("engine")(state)
    assert differs > 100
    for state in positions(6, 12):
        python = AlphaBetaEngine(knowledge, variant.function)
        expected = summary(python.search(state, 4))
        assert summary(compiled_engine(knowledge, variant.function).search(state, 4)) == expected


def test_a_spec_names_an_added_evaluation() -> None:
    variant = checkers_endings.engine_evaluation("variant", VARIANT_WEIGHTS)
    knowledge = replace(KNOWLEDGE, evaluations={**KNOWLEDGE.evaluations, "variant": variant})
    bot = create_bot("id:time=0,nodes=3000,eval=variant", GAME, knowledge=knowledge)
    plain = create_bot("id:time=0,nodes=3000,eval=engine", GAME)
    state = deck("acf-3move", GAME)[0].start_state(GAME)
    assert bot.choose(state).stats.nodes == 3000
    assert bot.choose(state).score != plain.choose(state).score
    with pytest.raises(BotSpecError):
        create_bot("id:time=0,nodes=3000,eval=variant", GAME)


# -- searches -----------------------------------------------------------------------------------


def test_searches_equal_the_python_engines() -> None:
    assert_same_searches(seed=3, count=72, configurations=3)


@pytest.mark.slow
def test_searches_equal_the_python_engines_on_many_positions() -> None:
    assert_same_searches(seed=4, count=400, configurations=16)


@pytest.mark.parametrize(("tt", "ordering"), [(True, True), (True, False), (False, True)])
def test_a_whole_game_keeps_the_same_table_and_history(tt: bool, ordering: bool) -> None:
    """Both engines play both sides of a game at depth 5: every search the same, so the
    tables, generations, killers and history carried from move to move are the same."""
    python, compiled = pair("endings", tt, ordering)
    state = GAME.initial_state()
    for _ in range(70):
        if state.is_terminal():
            break
        expected = python.search(state, 5)
        assert summary(compiled.search(state, 5)) == summary(expected)
        state = state.apply(expected.move)


@pytest.mark.parametrize("max_nodes", [1, 2, 63, 64, 65, 500, 3000, 20_000, None])
def test_iterative_deepening_with_a_node_limit_is_the_python_engines(
    max_nodes: int | None,
) -> None:
    rng = random.Random(max_nodes)
    for state in positions(5, 6):
        evaluation = rng.choice(EVALUATIONS)
        python, compiled = pair(evaluation, True, True)
        depth = 40 if max_nodes else 7
        expected = python.iterative_deepening(state, max_depth=depth, max_nodes=max_nodes)
        found = compiled.iterative_deepening(state, max_depth=depth, max_nodes=max_nodes)
        assert summary(found) == summary(expected), (GAME.format_position(state), evaluation)


def test_a_proven_win_ends_iterative_deepening_as_in_python() -> None:
    # A win in 11 plies, a loss in 18, a win at once, and a limit reached first.
    for fen in ("B:WK29:BK3,K4", "B:WK14,K15:BK5", "B:W6:BK1,K3", "W:WK18,K19:BK5"):
        python, compiled = pair("endings", True, True)
        state = parse(fen)
        expected = python.iterative_deepening(state, max_depth=30, max_nodes=60_000)
        found = compiled.iterative_deepening(state, max_depth=30, max_nodes=60_000)
        assert summary(found) == summary(expected)
        assert fen == "W:WK18,K19:BK5" or ENGINE.is_win(abs(found.score))


# -- stopping, on either game's core ------------------------------------------------------------


@dataclass(frozen=True)
class Stopping:
    """A game's case of the driver's limits and stops."""

    game: Game
    knowledge: Knowledge
    evaluation: str
    position: Callable[[], State[Any]]
    """A position searched before it is stopped, so that killers and history order its moves."""
    tt: bool
    max_depth: int
    """Of the search a stop ends."""
    bot: str
    """A fixed-depth bot that would search for years."""


def _connect4_position() -> State[Any]:
    state = get_game("connect4").initial_state()
    for column in (3, 3, 2, 4):
        state = state.apply_unchecked(column)
    return state


STOPPING = {
    "checkers": Stopping(
        GAME,
        KNOWLEDGE,
        "endings",
        lambda: playout(GAME.initial_state(), 12, random.Random(6)),
        tt=True,
        max_depth=60,
        bot="alphabeta:depth=40",
    ),
    "connect4": Stopping(
        get_game("connect4"),
        knowledge_for(get_game("connect4")),
        "threats",
        _connect4_position,
        tt=False,
        max_depth=42,
        bot="alphabeta:depth=40,tt=off",
    ),
}


@pytest.mark.parametrize("game", STOPPING)
def test_a_node_limit_ends_a_fixed_depth_search_as_in_python(game: str) -> None:
    case = STOPPING[game]
    state = case.game.initial_state()
    python, compiled = compiled_engines.pair(case.knowledge, case.evaluation, True, True)
    with pytest.raises(SearchTimeout) as expected:
        python.search(state, 9, max_nodes=777)
    with pytest.raises(SearchTimeout) as found:
        compiled.search(state, 9, max_nodes=777)
    assert expected.value.args[0] == found.value.args[0]


@pytest.mark.parametrize("game", STOPPING)
def test_a_stop_set_before_the_search_ends_it_at_the_first_node_as_in_python(game: str) -> None:
    case = STOPPING[game]
    state = case.position()
    python, compiled = compiled_engines.pair(case.knowledge, case.evaluation, True, True)
    # Histories and killers first, so that the fallback order has something to order by.
    python.search(state, 6)
    compiled.search(state, 6)
    expected = python.iterative_deepening(state, stop=lambda: True)
    found = compiled.iterative_deepening(state, stop=lambda: True)
    assert summary(found) == summary(expected)
    assert found.stats.nodes == 1 and found.stats.depth == 0


@pytest.mark.parametrize("game", STOPPING)
def test_a_stopped_search_returns_its_last_iteration_and_is_asked_no_more(game: str) -> None:
    """The calling thread asks the stop while the core searches; once it says True the
    search ends, the stop is not asked again, and the last completed depth is returned."""
    case = STOPPING[game]
    _, compiled = compiled_engines.pair(case.knowledge, case.evaluation, case.tt, True)
    state = case.game.initial_state()
    stop = Countdown(after=30)
    result = compiled.iterative_deepening(state, max_depth=case.max_depth, stop=stop)
    assert stop.asked == 30
    assert result.move in state.legal_moves()
    assert 0 <= result.stats.depth < case.max_depth
    # The engine searches again afterwards (the flag is cleared by the next search).
    again = compiled.search(state, 3)
    assert again.stats.nodes > 0 and again.move in state.legal_moves()


@pytest.mark.parametrize("game", STOPPING)
def test_a_fixed_depth_bot_stopped_raises_search_stopped(game: str) -> None:
    case = STOPPING[game]
    bot = create_bot(case.bot, case.game)
    with pytest.raises(SearchStopped):
        bot.choose(case.game.initial_state(), stop=Countdown(after=5))


def test_a_passed_deadline_on_the_engines_clock_stops_the_search() -> None:
    times = iter(itertools.count())

    def clock() -> float:
        return float(next(times))  # one second a read: every look finds time passing

    function = KNOWLEDGE.evaluation().function
    compiled = compiled_engine(KNOWLEDGE, function, clock=clock)
    assert compiled is not None
    state = GAME.initial_state()
    deadline = clock() + 40
    result = compiled.iterative_deepening(state, deadline=deadline, max_depth=60)
    assert result.move in state.legal_moves() and result.stats.depth < 60
    assert clock() >= deadline


INTERRUPTED = """
from bots.engine.compiled import compiled_engine
from bots.evaluation.knowledge import knowledge_for
from games import get_game
game = get_game("checkers")
knowledge = knowledge_for(game)
engine = compiled_engine(knowledge, knowledge.evaluation().function)
engine.search(game.initial_state(), 2)
print("searching", flush=True)
engine.search(game.initial_state(), 60)  # years, unless interrupted
"""


def test_ctrl_c_ends_a_compiled_search() -> None:
    """The search runs on a worker thread: the interrupted calling thread stops it."""
    process = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "searching"
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode != 0 and "KeyboardInterrupt" in stderr


# -- the bots -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "compiled"),
    [
        ("alphabeta:depth=4", True),
        ("alphabeta:depth=4,eval=material,tt=off", True),
        ("id:time=0,nodes=5000,eval=positional_tuned,ordering=off", True),
        ("id:time=1", True),
    ],
)
def test_the_house_bots_search_checkers_on_the_core(spec: str, compiled: bool) -> None:
    bot = create_bot(spec, GAME)
    engine = bot._chooser.__self__.engine  # type: ignore[attr-defined]
    assert isinstance(engine, CompiledEngine) is compiled


def test_other_games_keep_the_python_engine() -> None:
    bot = create_bot("alphabeta:depth=4", get_game("tictactoe"))
    assert isinstance(bot._chooser.__self__.engine, AlphaBetaEngine)  # type: ignore[attr-defined]


def test_threads_loading_the_core_at_once_each_get_it_whole() -> None:
    """A server loads the core on a thread of its own while a bot is built on another: every
    caller must get the module with its functions, never one still being imported."""
    script = (
        "import sys, threading, time\n"
        "from bots.engine.compiled import CORE, load_core\n"
        "found = []\n"
        "def load():\n"
        "    found.append(hasattr(load_core(), 'new_buffer'))\n"
        "first = threading.Thread(target=load)\n"
        "first.start()\n"
        "while CORE not in sys.modules and first.is_alive():\n"
        "    time.sleep(0.0005)\n"
        "others = [threading.Thread(target=load) for _ in range(3)]\n"
        "for thread in others: thread.start()\n"
        "for thread in [first, *others]: thread.join()\n"
        "print(found)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[True, True, True, True]"


def test_the_core_state_says_loading_ready_or_failed() -> None:
    """What a server's /health reports: a load that raised is "failed", not "loading" forever,
    and a later load that succeeds makes it "ready"."""
    script = (
        "import bots.core\n"
        "from bots.engine.compiled import core_state, load_core\n"
        "states = [core_state()]\n"
        "real = bots.core.load\n"
        "def broken(name, announce):\n"
        "    raise OSError('no cache directory')\n"
        "bots.core.load = broken\n"
        "try:\n"
        "    load_core()\n"
        "except OSError:\n"
        "    states.append(core_state())\n"
        "bots.core.load = real\n"
        "load_core()\n"
        "states.append(core_state())\n"
        "print(states)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['loading', 'failed', 'ready']"
