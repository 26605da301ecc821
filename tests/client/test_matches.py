"""What the client knows of a match, without a network: the time budget, whose turn it is, the
state rebuilt from `match_state` and moved on by `move_made`."""

from __future__ import annotations

import pytest

from client.matches import (
    apply_move_made,
    rebuild_state,
    seat_to_move_is,
    time_budget,
    view_from_state,
)
from games import get_game
from protocol.messages import Clocks, MoveMade, TimeControl
from tests.client.servers import TC, match_state


def test_time_budget_from_the_clock() -> None:
    # remaining/20 + 0.8 * increment
    assert time_budget(60_000, TC) == pytest.approx(3.8)
    untimed_cap = TimeControl(base_ms=60_000, increment_ms=0)
    assert time_budget(60_000, untimed_cap) == pytest.approx(3.0)
    # capped by the per-move cap less the margin
    tight = TimeControl(base_ms=600_000, increment_ms=5000, move_cap_ms=2000)
    assert time_budget(600_000, tight, margin_ms=100) == pytest.approx(1.9)
    # never more than what is left, never below 10 ms
    assert time_budget(300, TimeControl(base_ms=1, increment_ms=2000), margin_ms=100) == (
        pytest.approx(0.2)
    )
    assert time_budget(50, TC) == pytest.approx(0.01)


def test_turn_detection() -> None:
    assert seat_to_move_is(0, "active", 0)
    assert not seat_to_move_is(0, "active", 1)
    assert not seat_to_move_is(None, "active", 0)  # a spectator
    assert not seat_to_move_is(0, "waiting", 0)
    assert not seat_to_move_is(1, "finished", None)
    game = get_game("connect4")
    assert view_from_state(match_state(game, ["4"], your_seat=1), game).our_turn
    assert not view_from_state(match_state(game, ["4"], your_seat=0), game).our_turn
    assert not view_from_state(match_state(game, [], your_seat=0, status="waiting"), game).our_turn


@pytest.mark.parametrize(
    ("name", "moves"),
    [
        ("checkers", ["11-15", "23-19", "8-11", "22-17"]),
        ("connect4", ["4", "4", "3", "5"]),
        ("tictactoe", ["4", "0", "8"]),
    ],
)
def test_rebuild_state_replays_the_moves(name: str, moves: list[str]) -> None:
    game = get_game(name)
    message = match_state(game, moves)
    state = rebuild_state(game, message)
    assert state == game.initial_state().play(*moves)
    assert game.format_position(state) == message.position
    assert sorted(state.format_move(m) for m in state.legal_moves()) == sorted(message.legal_moves)


def test_rebuild_state_falls_back_to_the_position() -> None:
    game = get_game("tictactoe")
    target = game.initial_state().play("0", "1", "2")
    # The move list disagrees with the position (a server bug or a lost history): trust the
    # position, which is what the server plays on.
    message = match_state(game, ["4"], position=game.format_position(target), seq=9)
    assert rebuild_state(game, message) == target
    message = match_state(game, ["4", "4"][:1], position=game.format_position(target))
    assert rebuild_state(game, message) == target


def test_move_made_updates_the_view_and_the_clock() -> None:
    game = get_game("connect4")
    clocks = Clocks(remaining_ms=(60_000, 50_000), running=0, server_time_ms=1)
    view = view_from_state(match_state(game, [], clocks=clocks), game)
    assert view.our_turn and view.ply == 0
    assert view.budget(view.received, 100) == pytest.approx(3.8)
    # our clock runs: time since the message counts against us
    assert view.remaining_ms(view.received + 2.0) == 58_000
    after = game.initial_state().play("4")
    apply_move_made(
        view,
        MoveMade(
            match_id="m_1",
            seq=2,
            ply=1,
            seat=0,
            move="4",
            position=game.format_position(after),
            to_move=1,
            legal_moves=tuple(after.format_move(m) for m in after.legal_moves()),
            clocks=Clocks(remaining_ms=(59_000, 50_000), running=1, server_time_ms=2),
        ),
    )
    assert view.state == after and view.seq == 2 and view.ply == 1
    assert not view.our_turn
    # the opponent's clock runs, not ours
    assert view.remaining_ms(view.received + 5.0) == 59_000
