"""Bot specs: parsing, errors that list what exists, and bots built for every game."""

from __future__ import annotations

import math
import re
import threading
import time

import pytest

from bots.result import SearchResult, SearchStopped
from bots.spec import BotSpecError, SearchLimits, check_limits, create_bot, parse_bot_spec
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
def test_huge_numbers_are_refused_at_once(text: str, message: str) -> None:
    started = time.perf_counter()
    with pytest.raises(BotSpecError, match=re.escape(message)):
        parse_bot_spec(text)
    assert time.perf_counter() - started < 0.1


# -- stopping --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "spec"),
    [
        ("checkers", "minimax:depth=12"),
        ("checkers", "alphabeta:depth=30,tt=off,ordering=off"),
        ("checkers", "alphabeta_lecture:depth=12"),
        ("checkers", "negamax:depth=12"),
        ("checkers", "id:time=0,depth=40"),
        ("connect4", "mcts:simulations=100000000"),
        ("connect4", "mcts:time=3600"),
    ],
)
def test_a_stopped_search_ends_within_a_fraction_of_a_second(game: str, spec: str) -> None:
    bot = create_bot(spec, get_game(game))
    flag = threading.Event()
    timer = threading.Timer(0.3, flag.set)
    timer.start()
    started = time.perf_counter()
    try:
        bot.choose(get_game(game).initial_state(), stop=flag.is_set)
    except SearchStopped:
        assert spec.startswith(("minimax", "alphabeta", "negamax")), "only fixed-depth bots raise"
    finally:
        timer.cancel()
    assert flag.is_set()
    assert time.perf_counter() - started < 1.0


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
