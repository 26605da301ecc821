"""Nim: options, moves, notation, and the game values against the nim-sum theory."""

from __future__ import annotations

import functools
import itertools
import operator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from games.base import (
    Ending,
    IllegalMoveError,
    InvalidMoveError,
    InvalidOptionError,
    InvalidPositionError,
    Outcome,
    State,
)
from games.nim import Nim, NimState

MISERE = Nim()
NORMAL = Nim({"misere": "false"})


def _side_to_move_wins(state: NimState) -> bool:
    """Solve `state` by brute force over the game's own moves and outcomes."""

    @functools.cache
    def solve(heaps: tuple[int, ...], to_move: int) -> bool:
        node = NimState(state.game, heaps, to_move)
        outcome = node.outcome()
        if outcome is not None:
            return outcome.winner == to_move
        return any(
            not solve(child.heaps, child.to_move)
            for child in (node.apply_unchecked(move) for move in node.legal_moves())
        )

    return solve(state.heaps, state.to_move)


def _theory_side_to_move_wins(heaps: tuple[int, ...], misere: bool) -> bool:
    nim_sum = functools.reduce(operator.xor, heaps, 0)
    if misere and all(size <= 1 for size in heaps):
        return heaps.count(1) % 2 == 0
    return nim_sum != 0


def _outcome(state: State[Any]) -> Outcome:
    outcome = state.outcome()
    assert outcome is not None
    return outcome


def test_default_options() -> None:
    assert Nim.option_defaults() == {"heaps": "1,3,5,7", "misere": "true"}
    assert MISERE.heaps == (1, 3, 5, 7)
    assert MISERE.misere is True
    assert NORMAL.misere is False
    assert MISERE.initial_state().heaps == (1, 3, 5, 7)
    assert MISERE.initial_state().to_move == 0


def test_heaps_option_is_parsed_with_whitespace_and_zero_heaps() -> None:
    game = Nim({"heaps": " 2, 0 ,4", "misere": "no"})
    assert game.heaps == (2, 0, 4)
    assert game.misere is False
    assert game.initial_state().legal_moves() == ((0, 1), (0, 2), (2, 1), (2, 2), (2, 3), (2, 4))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"piles": "3"}, "nim has no option piles"),
        ({"heaps": ""}, r"heap 1 is ''"),
        ({"heaps": "1,,3"}, r"heap 2 is ''"),
        ({"heaps": "1,3,"}, r"heap 3 is ''"),
        ({"heaps": "1,-3"}, r"heap 2 is '-3'"),
        ({"heaps": "1,x"}, r"heap 2 is 'x'"),
        ({"heaps": "1,2000000"}, "more than the limit of 1000000"),
        ({"heaps": "9" * 5000}, r"expected a whole number"),
        ({"misere": "maybe"}, "nim option misere must be true or false"),
    ],
)
def test_bad_options(options: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidOptionError, match=message):
        Nim(options)


def test_move_generation_order_and_counts() -> None:
    state = MISERE.initial_state()
    moves = state.legal_moves()
    assert len(moves) == 1 + 3 + 5 + 7
    assert moves[:5] == ((0, 1), (1, 1), (1, 2), (1, 3), (2, 1))
    assert moves[-1] == (3, 7)
    assert [state.format_move(m) for m in moves[:3]] == ["1:1", "2:1", "2:2"]
    assert len(MISERE.parse_position("0,0,4,0").legal_moves()) == 4


def test_apply_takes_from_one_heap_and_passes_the_turn() -> None:
    state = MISERE.initial_state().play("4:7", "2:1")
    assert state.to_move == 0
    assert MISERE.format_position(state) == "1,2,5,0"
    assert MISERE.format_position(state.apply((2, 5))) == "1,2,0,0/2"


def test_misere_last_object_loses_normal_last_object_wins() -> None:
    misere_end = MISERE.parse_position("0,1").play("2:1")
    outcome = _outcome(misere_end)
    assert outcome.winner == 1
    assert "first took the last object" in outcome.reason
    assert misere_end.legal_moves() == ()

    normal_end = NORMAL.parse_position("0,1").play("2:1")
    outcome = _outcome(normal_end)
    assert outcome.winner == 0
    assert outcome.reason == "first took the last object"
    assert outcome.ending is Ending.LAST_OBJECT

    second_took_last = NORMAL.parse_position("0,0,3/2").play("3:3")
    assert _outcome(second_took_last).winner == 1
    assert _outcome(MISERE.parse_position("0,0,3/2").play("3:3")).winner == 0


def test_not_terminal_while_objects_remain() -> None:
    assert MISERE.parse_position("0,0,1").outcome() is None
    assert not MISERE.parse_position("0,0,1").is_terminal()


@given(st.lists(st.integers(0, 4), min_size=1, max_size=4), st.integers(0, 1), st.booleans())
def test_legal_moves_empty_exactly_when_terminal(heaps: list[int], side: int, misere: bool) -> None:
    game = MISERE if misere else NORMAL
    state = NimState(game, tuple(heaps), side)
    assert (len(state.legal_moves()) == 0) == (state.outcome() is not None)
    assert len(state.legal_moves()) == sum(heaps)


@pytest.mark.parametrize("game", [MISERE, NORMAL], ids=["misere", "normal"])
def test_brute_force_values_match_the_nim_sum_theory(game: Nim) -> None:
    checked = 0
    for count in range(1, 4):
        for heaps in itertools.product(range(6), repeat=count):
            for side in (0, 1):
                state = NimState(game, heaps, side)
                expected = _theory_side_to_move_wins(heaps, game.misere)
                assert _side_to_move_wins(state) == expected, (heaps, side)
                checked += 1
    assert checked == 2 * (6 + 36 + 216)


def test_misere_1357_is_a_loss_for_the_side_to_move() -> None:
    assert not _side_to_move_wins(MISERE.initial_state())
    # 1 ^ 3 ^ 5 ^ 7 == 0, so normal play is a loss too; two single objects tell the rules apart.
    assert not _side_to_move_wins(NORMAL.initial_state())
    assert _side_to_move_wins(MISERE.parse_position("1,1"))
    assert not _side_to_move_wins(NORMAL.parse_position("1,1"))


def test_parse_move() -> None:
    state = MISERE.initial_state()
    assert state.parse_move("4:7") == (3, 7)
    assert state.parse_move(" 2 : 3 ") == (1, 3)
    assert state.parse_move("1:1") == (0, 1)


@pytest.mark.parametrize("text", ["", "47", "4-7", "4:", ":7", "a:b", "4:7:1", "-1:1", "1:1.0"])
def test_unparseable_moves(text: str) -> None:
    with pytest.raises(InvalidMoveError, match=r"expected H:K"):
        MISERE.initial_state().parse_move(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0:1", "numbered 1-4"),
        ("5:1", "names heap 5, but the heaps are numbered 1-4"),
        ("1:0", "take at least 1 object"),
        ("1:" + "9" * 5000, "expected H:K"),
    ],
)
def test_moves_off_the_board(text: str, message: str) -> None:
    with pytest.raises(InvalidMoveError, match=message):
        MISERE.initial_state().parse_move(text)


def test_taking_too_many_is_illegal_with_reason_and_legal_moves() -> None:
    state = MISERE.parse_position("1,3,0")
    with pytest.raises(IllegalMoveError) as info:
        state.parse_move("2:4")
    assert info.value.reason == "heap 2 has only 3 objects"
    assert info.value.legal_moves == ("1:1", "2:1", "2:2", "2:3")
    with pytest.raises(IllegalMoveError, match="heap 1 has only 1 object "):
        state.parse_move("1:2")
    with pytest.raises(IllegalMoveError, match="heap 3 is empty"):
        state.parse_move("3:1")


def test_moving_after_the_end_is_illegal() -> None:
    state = MISERE.parse_position("0,0")
    with pytest.raises(IllegalMoveError) as info:
        state.parse_move("1:1")
    assert info.value.reason == "the game is over"
    assert info.value.legal_moves == ()


def test_parse_and_format_position() -> None:
    first = MISERE.parse_position("1,3,5,7")
    assert (first.heaps, first.to_move) == ((1, 3, 5, 7), 0)
    second = MISERE.parse_position(" 1, 3,5 ,6 / 2 ")
    assert (second.heaps, second.to_move) == ((1, 3, 5, 6), 1)
    assert MISERE.format_position(second) == "1,3,5,6/2"
    assert MISERE.parse_position("1,3/1") == MISERE.parse_position("1,3")
    assert MISERE.parse_position("1,3/2") != MISERE.parse_position("1,3")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", r"heap 1 is ''"),
        ("1,3/3", r"after '/' is '3', expected 1 or 2"),
        ("1,3/", r"after '/' is '', expected 1 or 2"),
        ("1,3/2/2", r"after '/' is '2/2'"),
        ("1,a", r"heap 2 is 'a'"),
        ("1;3", r"heap 1 is '1;3'"),
        ("1,1000001", "more than the limit"),
    ],
)
def test_malformed_positions(text: str, message: str) -> None:
    with pytest.raises(InvalidPositionError, match=message):
        MISERE.parse_position(text)


@given(st.lists(st.integers(0, 12), min_size=1, max_size=5), st.integers(0, 1))
def test_position_and_move_text_round_trip(heaps: list[int], side: int) -> None:
    state = NimState(MISERE, tuple(heaps), side)
    again = MISERE.parse_position(MISERE.format_position(state))
    assert again == state
    assert again.to_move == side
    for move in state.legal_moves():
        assert state.parse_move(state.format_move(move)) == move


def test_transpositions_are_equal_states() -> None:
    a = MISERE.initial_state().play("2:1", "3:2")
    b = MISERE.initial_state().play("3:2", "2:1")
    c = MISERE.initial_state().play("2:1", "3:2", "4:1")
    assert a == b
    assert hash(a) == hash(b)
    assert a != c


def test_game_metadata_and_render() -> None:
    assert Nim.name == "nim"
    assert Nim.player_names == ("first", "second")
    assert "misère" in Nim.description.lower()
    picture = MISERE.parse_position("1,0,3/2").render()
    assert picture.splitlines() == ["heap 1: 1 |", "heap 2: 0", "heap 3: 3 |||", "second to move"]
    assert MISERE.parse_position("0,0").render().splitlines()[-1].startswith("first wins")
    assert "heap 1: 1000000" in Nim({"heaps": "1000000"}).initial_state().render()


@given(st.from_regex(r"[0-9]{1,2}:[0-9]{1,2}", fullmatch=True))
def test_well_formed_move_text_is_legal_or_explained(move_text: str) -> None:
    state = MISERE.parse_position("0,2,1")
    try:
        move = state.parse_move(move_text)
    except InvalidMoveError as exc:
        assert "numbered 1-3" in str(exc) or "take at least 1" in str(exc)
    except IllegalMoveError as exc:
        assert exc.legal_moves == ("2:1", "2:2", "3:1")
    else:
        heap, count = map(int, move_text.split(":"))
        assert move == (heap - 1, count)
        assert move in state.legal_moves()


def test_total_objects_are_bounded() -> None:
    from games import InvalidOptionError, get_game

    with pytest.raises(InvalidOptionError, match="objects in all"):
        get_game("nim", {"heaps": ",".join(["1000000"] * 2)})
