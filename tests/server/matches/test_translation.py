"""The translation of the referee's effects into protocol messages and errors, without a network."""

from __future__ import annotations

from games import match
from games.referee import Referee
from games.registry import get_game
from protocol import messages as wire
from protocol.errors import ErrorCode
from server.matches import translation
from server.matches.live import LiveMatch


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


def summary_from_state(live: LiveMatch, now_ms: int) -> wire.MatchSummary:
    """The summary as the full state tells it (what `live_summary` once built it from)."""
    state = translation.match_state(live, None, now_ms, 1_000)
    return wire.MatchSummary(
        match_id=live.id,
        game=state.game,
        options=state.options,
        status=state.status,
        seats=state.seats,
        time_control=state.time_control,
        to_move=state.to_move,
        ply=len(state.moves),
        result=state.result,
        created_time_ms=live.created_ms,
    )


def test_a_live_summary_reads_the_referee_as_the_full_state_does() -> None:
    """The lobby's cheap summary (no position, moves or legal moves built) says what the full
    state says, at every stage: waiting, each move, and over (a win and a resignation)."""
    clock = match.TimeControl(60_000, 1_000, None)
    for ending in ("rules", "resign"):
        referee = Referee(match.MatchConfig(get_game("tictactoe", {}), None, clock, 3))
        live = LiveMatch(
            id="m_summary",
            referee=referee,
            options={},
            players=[1, None],
            names=["alice", None],
            bot_specs=[None, None],
            created_ms=5,
            challenged=[None, 2],
            challenged_names=[None, "bob"],
        )
        assert translation.live_summary(live) == summary_from_state(live, 0)
        live.players[1], live.names[1] = 2, "bob"
        live.challenged, live.challenged_names = [None, None], [None, None]
        referee.start(0)
        now = 0
        moves = ("4", "0", "3", "6", "5") if ending == "rules" else ("4",)
        for move in moves:
            assert translation.live_summary(live) == summary_from_state(live, now)
            now += 100
            referee.move(referee.state.to_move, move, now)
        if ending == "resign":
            referee.resign(1, now + 1)
        summary = translation.live_summary(live)
        assert summary == summary_from_state(live, now + 1)
        assert summary.status == "finished" and summary.to_move is None
        assert summary.ply == len(moves) and summary.result is not None
        assert summary.result.winner == 0
        assert summary.time_control == wire.TimeControl(base_ms=60_000, increment_ms=1_000)
