"""The translation of the referee's effects into protocol messages and errors, without a network."""

from __future__ import annotations

from games import match
from games.referee import Referee
from games.registry import get_game
from protocol import messages as wire
from protocol.errors import ErrorCode
from server import translation
from server.live import LiveMatch


def live_match(max_illegal_moves: int = 3) -> LiveMatch:
    referee = Referee(match.MatchConfig(get_game("tictactoe", {}), None, None, max_illegal_moves))
    return LiveMatch(
        id="m_test",
        referee=referee,
        options={},
        players=[1, 2],
        names=["alice", "bob"],
        bot_specs=[None, None],
        created_ms=0,
    )


def test_a_start_is_announced_by_match_started_then_the_state_for_no_seat() -> None:
    live = live_match()
    effects = live.referee.start(0)
    assert any(isinstance(e, match.MatchStarted) for e in effects)
    messages = translation.messages(live, effects, 0, 1_000)
    assert [type(m) for m in messages] == [wire.MatchStarted, wire.MatchState]
    state = messages[1]
    assert isinstance(state, wire.MatchState)
    assert state.your_seat is None
    assert [seat.player for seat in state.seats] == ["alice", "bob"]


def test_an_accepted_move_is_announced_with_the_match_as_it_now_is() -> None:
    live = live_match()
    live.referee.start(0)
    effects = live.referee.move(0, live.referee.legal_texts()[0], 10)
    (made,) = translation.messages(live, effects, 10, 1_000)
    assert isinstance(made, wire.MoveMade)
    assert made.seat == 0
    assert made.to_move == 1
    assert made.legal_moves == live.referee.legal_texts()


def test_a_refused_move_names_the_move_its_count_and_the_legal_moves() -> None:
    live = live_match()
    live.referee.start(0)
    effects = live.referee.move(0, "zz9", 10)
    rejected = next(e for e in effects if isinstance(e, match.Rejected))
    error = translation.refusal(live, rejected)
    assert error.code in (ErrorCode.INVALID_MOVE, ErrorCode.ILLEGAL_MOVE)
    assert error.match_id == "m_test"
    assert error.legal_moves == tuple(live.referee.legal_texts())
    assert error.details["move"] == "zz9"
    assert error.details["rejections"] == 1
    assert error.details["limit"] == 3


def test_a_move_out_of_turn_lists_the_legal_moves_too() -> None:
    live = live_match()
    live.referee.start(0)
    effects = live.referee.move(1, live.referee.legal_texts()[0], 10)
    rejected = next(e for e in effects if isinstance(e, match.Rejected))
    error = translation.refusal(live, rejected)
    assert error.code is ErrorCode.NOT_YOUR_TURN
    assert error.legal_moves == tuple(live.referee.legal_texts())


def test_a_refusal_of_anything_but_a_move_carries_no_legal_moves() -> None:
    live = live_match()
    live.referee.start(0)
    live.referee.resign(0, 20)
    effects = live.referee.resign(1, 30)
    rejected = next(e for e in effects if isinstance(e, match.Rejected))
    error = translation.refusal(live, rejected)
    assert error.code is ErrorCode.MATCH_OVER
    assert error.legal_moves is None
    assert error.details == {"seq": live.referee.seq}


def test_a_result_is_sent_with_its_code_and_broad_reason() -> None:
    referee = Referee(match.MatchConfig(get_game("tictactoe", {}), max_plies=1))
    live = live_match()
    live.referee = referee
    referee.start(0)
    effects = referee.move(0, referee.legal_texts()[0], 10)
    (ended,) = (m for m in translation.messages(live, effects, 10, 0) if m.type == "match_ended")
    assert isinstance(ended, wire.MatchEnded)
    assert ended.result == wire.MatchResult(
        winner=None, reason="adjudication", code="ply_cap", description="ply cap"
    )
    state = translation.match_state(live, None, 20, 0)
    assert (state.max_plies, state.result) == (1, ended.result)


def test_a_stored_result_from_before_the_codes_is_shown_with_its_broad_reason() -> None:
    old = translation.stored_result(0, "rules", "three in a row")
    assert (old.reason, old.code, old.description) == ("rules", None, "three in a row")
    new = translation.stored_result(1, "bot_failure", "Black (house bot x) crashed: boom")
    assert (new.reason, new.code) == ("adjudication", "bot_failure")
