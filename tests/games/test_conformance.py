"""The conformance suite: every registered game obeys the games interface.

Random playouts end; legal moves are empty exactly at terminal states; `apply` never changes
its input; move and position text round-trips; equal states have equal keys; illegal input is
rejected with the package's own errors.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games import (
    Ending,
    Game,
    IllegalMoveError,
    InvalidMoveError,
    InvalidOptionError,
    InvalidPositionError,
    State,
    UnknownGameError,
    game_names,
    get_game,
)

VARIANTS: list[tuple[str, dict[str, str]]] = [(name, {}) for name in game_names()] + [
    ("nim", {"misere": "false"}),
    ("nim", {"heaps": "3,2"}),
]
IDS = [name + "".join(f",{k}={v}" for k, v in opts.items()) for name, opts in VARIANTS]
# A playout longer than this is a rules bug (checkers ends by the 80-ply rule at the latest).
MAX_PLIES = 5000


@pytest.fixture(params=VARIANTS, ids=IDS)
def game(request: pytest.FixtureRequest) -> Game:
    name, options = request.param
    return get_game(name, options)


def snapshot(state: State[Any]) -> tuple[Any, ...]:
    return (
        state.key(),
        state.game.format_position(state),
        tuple(state.legal_moves()),
        state.to_move,
        state.outcome(),
    )


def playout(game: Game, seed: int) -> list[State[Any]]:
    rng = random.Random(seed)
    state = game.initial_state()
    states = [state]
    for _ in range(MAX_PLIES):
        moves = state.legal_moves()
        if not moves:
            return states
        state = state.apply_unchecked(rng.choice(list(moves)))
        states.append(state)
    raise AssertionError(f"{game.name}: a random playout did not end in {MAX_PLIES} plies")


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**32 - 1))
def test_playouts_end_and_obey_the_interface(game: Game, seed: int) -> None:
    states = playout(game, seed)
    final = states[-1]
    assert final.is_terminal()
    outcome = final.outcome()
    assert outcome is not None and outcome.reason
    assert outcome.ending in Ending
    assert outcome.winner in (None, 0, 1)
    for state in states:
        moves = state.legal_moves()
        assert (len(moves) == 0) == state.is_terminal()
        assert state.to_move in (0, 1)
        assert len(set(moves)) == len(moves), "duplicate legal moves"
        text = game.format_position(state)
        again = game.parse_position(text)
        assert again == state
        assert again.key() == state.key()
        assert hash(again) == hash(state)
        assert game.format_position(again) == text
        assert again.to_move == state.to_move
        outcome_here = state.outcome()
        if outcome_here is not None and outcome_here.winner is None and not again.is_terminal():
            # A draw by history (repetition, move counters): position text carries no history.
            assert game.name == "checkers"
        else:
            assert set(again.legal_moves()) == set(moves)
        assert state.render()
        before = snapshot(state)
        for move in moves:
            written = state.format_move(move)
            assert state.parse_move(written) == move
            child = state.apply(move)
            assert child.to_move == 1 - state.to_move
        assert snapshot(state) == before, "apply changed its input"


def test_turns_alternate(game: Game) -> None:
    state = game.initial_state()
    for seed in range(5):
        for parent, child in zip(playout(game, seed), playout(game, seed)[1:], strict=False):
            assert child.to_move == 1 - parent.to_move
    assert state.to_move == 0


def test_transpositions_have_equal_keys(game: Game) -> None:
    """Two move orders reaching one position give equal states with equal keys."""
    rng = random.Random(1)
    found = 0
    for _ in range(200):
        state = game.initial_state()
        seen: dict[Any, list[str]] = {}
        history: list[str] = []
        for _ply in range(6):
            moves = state.legal_moves()
            if not moves:
                break
            move = rng.choice(list(moves))
            history.append(state.format_move(move))
            state = state.apply_unchecked(move)
        key = state.key()
        seen.setdefault(key, history)
        replay = game.initial_state().play(*seen[key])
        assert replay == state and replay.key() == key
        found += 1
    assert found


def test_apply_rejects_a_foreign_move(game: Game) -> None:
    state = game.initial_state()
    for foreign in ("not a move", (99, 99), 10**6, None):
        with pytest.raises(IllegalMoveError) as info:
            state.apply(foreign)
        assert info.value.legal_moves, "the error lists the legal moves"


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(max_size=25))
def test_any_move_text_parses_or_fails_cleanly(game: Game, text: str) -> None:
    start = game.initial_state()
    for state in (start, start.apply(start.legal_moves()[-1])):
        try:
            move = state.parse_move(text)
        except (InvalidMoveError, IllegalMoveError) as exc:
            assert str(exc)
        else:
            assert move in state.legal_moves()


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(max_size=40))
def test_any_position_text_parses_or_fails_cleanly(game: Game, text: str) -> None:
    try:
        state = game.parse_position(text)
    except InvalidPositionError as exc:
        assert str(exc)
    else:
        assert game.parse_position(game.format_position(state)) == state


def test_moves_after_the_end_are_rejected(game: Game) -> None:
    final = playout(game, 3)[-1]
    assert final.legal_moves() == () or list(final.legal_moves()) == []
    first = game.initial_state().legal_moves()[0]
    with pytest.raises(IllegalMoveError, match="game is over"):
        final.apply(first)


def test_unknown_game_lists_the_games() -> None:
    with pytest.raises(UnknownGameError) as info:
        get_game("chess")
    for name in game_names():
        assert name in str(info.value)


@pytest.mark.parametrize("name", game_names())
def test_unknown_option_is_named(name: str) -> None:
    with pytest.raises(InvalidOptionError, match="no option colour"):
        get_game(name, {"colour": "red"})


def test_registry_names() -> None:
    assert game_names() == ["checkers", "connect4", "nim", "tictactoe"]
    assert get_game("Connect-Four").name == "connect4"
