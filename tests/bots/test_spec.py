"""Bot specs: parsing, errors that list what exists, and bots built for every game."""

from __future__ import annotations

import pytest

from bots.spec import BotSpecError, create_bot, parse_bot_spec
from games import game_names, get_game


def test_defaults_are_filled_in() -> None:
    spec = parse_bot_spec("alphabeta")
    assert spec.options == {"depth": 6, "eval": None, "tt": True, "ordering": True}
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
