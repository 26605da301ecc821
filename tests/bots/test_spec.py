"""Bot specs: parsing, errors that list what exists, and bots built for every game."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable
from typing import Any

import pytest

import bots.spec
from bots.common import STOP_EVERY
from bots.result import SearchResult, SearchStopped
from bots.spec import (
    MAX_NUMBER_LENGTH,
    BotSpecError,
    SearchLimits,
    check_limits,
    create_bot,
    parse_bot_spec,
)
from games import game_names, get_game


def test_defaults_are_filled_in() -> None:
    spec = parse_bot_spec("alphabeta")
    assert spec.options == {"depth": 6, "eval": None, "tt": True, "ordering": True, "egdb": False}
    assert str(spec) == "alphabeta"


def test_options_are_typed_and_canonical() -> None:
    spec = parse_bot_spec(" AlphaBeta : depth=4 , tt=off,ordering=no ")
    assert spec.options["depth"] == 4
    assert spec.options["tt"] is False and spec.options["ordering"] is False
    assert str(spec) == "alphabeta:depth=4,tt=off,ordering=off"
    assert parse_bot_spec(str(spec)) == spec
    assert parse_bot_spec("id:time=0.5").options["time"] == 0.5
    assert parse_bot_spec("mcts:simulations=2000").options["simulations"] == 2000


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty bot spec"),
        ("alphabeat", "unknown bot 'alphabeat' (bots: random, greedy, minimax, alphabeta"),
        ("alphabeta:deep=3", "has no option 'deep' (options: depth (default 6)"),
        ("alphabeta:depth=x", "depth must be a whole number"),
        ("alphabeta:depth=0", "at least 1"),
        ("alphabeta:tt=maybe", "tt must be on or off"),
        ("alphabeta:depth", "needs a value"),
        ("alphabeta:depth=2,depth=3", "given twice"),
        ("id:time=nan", "must be a number"),
        ("mcts:c=-1", "at least 0"),
        ("alphabeta:depth=3,,", "has an empty option"),
        ("alphabeta:,depth=3", "has an empty option"),
        ("alphabeta:", "has an empty option"),
    ],
)
def test_bad_specs_say_what_exists(text: str, message: str) -> None:
    with pytest.raises(BotSpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_bot_spec(text)


def test_unknown_evaluation_lists_the_game_evaluations() -> None:
    with pytest.raises(BotSpecError, match="has no evaluation 'nope'"):
        create_bot("alphabeta:eval=nope", get_game("checkers"))


@pytest.mark.parametrize("name", game_names())
@pytest.mark.parametrize(
    "spec",
    [
        "random",
        "greedy",
        "minimax:depth=2",
        "alphabeta:depth=3",
        "alphabeta:depth=3,tt=off,ordering=off",
        "id:time=0.05,depth=4",
        "mcts:simulations=50",
        "alphabeta_lecture:depth=2",
        "negamax:depth=2",
    ],
)
def test_every_spec_plays_every_game(name: str, spec: str) -> None:
    game = get_game(name)
    bot = create_bot(spec, game)
    state = game.initial_state()
    for _ in range(4):
        if state.is_terminal():
            break
        result = bot.choose(state)
        assert result.move in state.legal_moves()
        state = state.apply(result.move)


def test_choose_refuses_a_finished_game() -> None:
    game = get_game("checkers")
    with pytest.raises(ValueError, match="game is over"):
        create_bot("random", game).choose(game.parse_position("W:W29:B25,22"))


def test_the_random_bot_is_reproducible_by_seed() -> None:
    game = get_game("connect4")
    state = game.initial_state()
    picks = {create_bot(f"random:seed={s}", game).choose(state).move for s in range(20)}
    assert len(picks) > 1
    again = [create_bot("random:seed=3", game).choose(state).move for _ in range(3)]
    assert len(set(again)) == 1


# -- limits ----------------------------------------------------------------------------------

HOST = SearchLimits(depth=8, simulations=20_000, seconds=10.0, nodes=1_000_000)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("alphabeta:depth=40", "alphabeta option depth is 40, more than this host's maximum of 8"),
        ("minimax:depth=9", "minimax option depth is 9, more than this host's maximum of 8"),
        ("negamax:depth=9", "negamax option depth is 9, more than this host's maximum of 8"),
        ("alphabeta_lecture:depth=9", "alphabeta_lecture option depth is 9, more than"),
        ("id:time=0,depth=30", "id option depth is 30, more than this host's maximum of 8"),
        ("id:time=11", "id option time is 11.0, more than this host's maximum of 10"),
        ("id:nodes=2000000", "nodes is 2000000, more than this host's maximum of 1,000,000"),
        ("mcts:simulations=20001", "simulations is 20001, more than this host's maximum of 20,000"),
        ("mcts:time=60", "mcts option time is 60.0, more than this host's maximum of 10"),
    ],
)
def test_a_host_refuses_searches_beyond_its_maxima(text: str, message: str) -> None:
    with pytest.raises(BotSpecError, match=re.escape(message)):
        check_limits(parse_bot_spec(text), HOST)


@pytest.mark.parametrize(
    "text",
    # id's depth (64 by default) is bounded by its time or its nodes; mcts:time by the time.
    [
        "alphabeta:depth=8",
        "id",
        "id:time=0,nodes=1000",
        "mcts:time=5,simulations=10000000",
        "random",
    ],
)
def test_a_host_accepts_searches_within_its_maxima(text: str) -> None:
    check_limits(parse_bot_spec(text), HOST)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("alphabeta:depth=" + "9" * 100, "depth is a number of 100 characters; at most 128"),
        ("alphabeta:depth=" + "9" * 10_000, "depth is a number of 10000 characters"),
        ("alphabeta:depth=129", "depth must be at most 128, not 129"),
        ("mcts:simulations=1" + "0" * 20, "simulations must be at most 1,000,000,000"),
        ("id:time=1e300", "time must be at most 86,400"),
        ("random:seed=" + "9" * 30, "seed must be at most"),
    ],
)
def test_huge_numbers_are_refused_at_once(
    text: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At once: a number longer than MAX_NUMBER_LENGTH never reaches int() or float()."""
    converted: list[str] = []

    def converter(kind: type) -> Callable[[str], object]:
        def convert(raw: str) -> object:
            converted.append(raw)
            return kind(raw)

        return convert

    monkeypatch.setattr(bots.spec, "int", converter(int), raising=False)
    monkeypatch.setattr(bots.spec, "float", converter(float), raising=False)
    with pytest.raises(BotSpecError, match=re.escape(message)):
        parse_bot_spec(text)
    assert all(len(raw) <= MAX_NUMBER_LENGTH for raw in converted), converted


# -- stopping --------------------------------------------------------------------------------


CHECKS_BEFORE_THE_STOP = 20
"""How many times the stop answers False before it answers True."""


@pytest.mark.parametrize(
    ("game", "spec"),
    [
        ("checkers", "minimax:depth=12"),
        # The engine's bots in Python (checkers searches on the compiled core, whose stop is
        # asked by the calling thread while it runs: tests/bots/engine/test_compiled_engine.py).
        ("connect4", "alphabeta:depth=30,tt=off,ordering=off"),
        ("checkers", "alphabeta_lecture:depth=12"),
        ("checkers", "negamax:depth=12"),
        ("connect4", "id:time=0,depth=40"),
        ("connect4", "mcts:simulations=100000000"),
        ("connect4", "mcts:time=3600"),
    ],
)
def test_a_stopped_search_ends_at_its_next_stop_check(
    game: str, spec: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stop is asked every STOP_EVERY nodes (every simulation for mcts), and the search
    ends at the first check that sees it set, searching no node more.

    Nodes are counted as calls of the state's `outcome`, which every search makes once per
    node it visits. How long that takes in seconds is measured in bench/search.py.
    """
    state = get_game(game).initial_state()
    nodes = 0
    original = type(state).outcome

    def counted(self: Any) -> Any:
        nonlocal nodes
        nodes += 1
        # A search that never asks, or ignores the answer, fails here instead of running on.
        assert nodes <= (CHECKS_BEFORE_THE_STOP + 2) * STOP_EVERY, "the stop is not obeyed"
        return original(self)

    monkeypatch.setattr(type(state), "outcome", counted)
    asked_at: list[int] = []  # the node count at each check

    def stop() -> bool:
        asked_at.append(nodes)
        assert len(asked_at) <= CHECKS_BEFORE_THE_STOP + 1, "asked again after the stop was set"
        return len(asked_at) > CHECKS_BEFORE_THE_STOP

    try:
        result = create_bot(spec, get_game(game)).choose(state, stop=stop)
    except SearchStopped:
        assert spec.startswith(("minimax", "alphabeta", "negamax")), "only fixed-depth bots raise"
    else:
        assert result.move in state.legal_moves()
        if spec.startswith("mcts"):
            assert result.stats.simulations == len(asked_at)
    assert len(asked_at) == CHECKS_BEFORE_THE_STOP + 1
    gaps = [after - before for before, after in itertools.pairwise([0, *asked_at])]
    assert max(gaps) <= STOP_EVERY, f"{max(gaps)} nodes between two checks of the stop"
    assert nodes == asked_at[-1], f"{nodes - asked_at[-1]} nodes searched after the stop"


def test_a_bot_accepts_a_draw_when_its_search_scores_a_draw_or_worse_for_it() -> None:
    bot = create_bot("alphabeta:depth=2", get_game("tictactoe"))
    # The score is the root's mover's: the bot's own when it was to move, else its opponent's.
    for score, to_move, accepts in [
        (0.0, True, True),
        (-40.0, True, True),
        (40.0, True, False),
        (40.0, False, True),
        (-40.0, False, False),
        (math.nan, True, False),
    ]:
        assert bot.accepts_draw(SearchResult(None, score), to_move=to_move) is accepts
    # A random mover's score (always 0) judges nothing: it plays on.
    randomly = create_bot("random", get_game("tictactoe"))
    assert not randomly.accepts_draw(SearchResult(None, -40.0), to_move=True)
