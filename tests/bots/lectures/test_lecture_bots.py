"""The lecture searches as bots: built from specs, played through the same Bot interface."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest

from bots.result import SearchStopped
from bots.spec import create_bot
from games import Game, State, game_names, get_game

LECTURE_SPECS = (
    "minimax:depth=3",
    "minimax:depth=3,prune=on",
    "alphabeta_lecture:depth=3",
    "alphabeta_lecture:depth=3,soft=on",
    "negamax:depth=3",
)


def ticking_clock() -> Any:
    """A fake clock that moves one millisecond each time it is read."""
    ticks = itertools.count()
    return lambda: next(ticks) / 1000


@pytest.mark.parametrize("name", game_names())
@pytest.mark.parametrize("spec", LECTURE_SPECS)
def test_each_lecture_bot_plays_legal_moves_and_reports_its_statistics(
    name: str, spec: str
) -> None:
    game = get_game(name)
    bot = create_bot(spec, game, clock=ticking_clock())
    state = game.initial_state()
    for _ in range(3):
        if state.is_terminal():
            break
        result = bot.choose(state)
        assert result.move in state.legal_moves()
        stats = result.stats
        assert stats.depth == 3
        assert stats.nodes > len(state.legal_moves())
        assert stats.evaluations > 0
        assert stats.seconds > 0 and stats.nps > 0
        assert stats.pv[0] == state.format_move(result.move)
        assert stats.as_dict()["nodes"] == stats.nodes
        state = state.apply(result.move)


def random_position(game: Game, seed: int, plies: int) -> State[Any]:
    rng = random.Random(seed)
    state = game.initial_state()
    for _ in range(plies):
        if state.is_terminal():
            break
        state = state.apply_unchecked(rng.choice(list(state.legal_moves())))
    return state


GAMES_AND_DEPTHS = [("tictactoe", 4), ("connect4", 4), ("nim", 3), ("checkers", 3)]


@pytest.mark.parametrize(("name", "depth"), GAMES_AND_DEPTHS)
@pytest.mark.parametrize("seed", range(3))
def test_the_lecture_bots_return_the_minimax_value_at_the_same_depth(
    name: str, depth: int, seed: int
) -> None:
    game = get_game(name)
    state = random_position(game, seed, plies=2 + 2 * seed)
    if state.is_terminal():
        pytest.skip("the random game ended")
    plain = create_bot(f"minimax:depth={depth}", game).choose(state)
    for spec in ("alphabeta_lecture", "alphabeta_lecture:soft=on", "negamax"):
        text = f"{spec}{',' if ':' in spec else ':'}depth={depth}"
        result = create_bot(text, game).choose(state)
        assert result.score == plain.score, text
        assert result.stats.nodes <= plain.stats.nodes, text
        # The move chosen is worth the value: searching it one ply less agrees (unless the
        # value is a forced result, whose distance to the end counts from another root).
        child = state.apply(result.move)
        if not child.is_terminal() and abs(plain.score) < 10_000:
            reply = create_bot(f"minimax:depth={depth - 1}", game).choose(child)
            assert -reply.score == plain.score, text


def test_the_lecture_alphabeta_prunes_what_minimax_searches() -> None:
    game = get_game("connect4")
    state = game.initial_state()
    plain = create_bot("minimax:depth=4", game).choose(state)
    pruned = create_bot("alphabeta_lecture:depth=4", game).choose(state)
    assert pruned.score == plain.score
    assert pruned.stats.cutoffs > 0 and plain.stats.cutoffs == 0
    assert pruned.stats.nodes < plain.stats.nodes


@pytest.mark.parametrize("spec", ["alphabeta_lecture:depth=6", "negamax:depth=6"])
def test_a_stopped_lecture_search_raises_search_stopped(spec: str) -> None:
    game = get_game("checkers")
    asked = itertools.count(1)
    with pytest.raises(SearchStopped):
        create_bot(spec, game).choose(game.initial_state(), stop=lambda: next(asked) >= 3)
    assert next(asked) == 4  # asked three times, every 64 nodes, then stopped at once
