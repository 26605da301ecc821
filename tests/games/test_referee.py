"""The match referee: turns, rejected moves, clocks, resign, draws, abort, restore, adjudication,
the ply cap, bot failures, and the result code of every ending.

Every test drives a `Referee` with explicit times; nothing here reads a clock or opens a socket.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from games import Game, State, game_names, get_game
from games.match import (
    MAX_ADJUDICATION_REASON,
    DrawDeclined,
    DrawOffered,
    Effect,
    ErrorCode,
    Event,
    EventKind,
    MatchConfig,
    MatchEnded,
    MatchStarted,
    MatchView,
    MoveAccepted,
    Rejected,
    Result,
    ResultCode,
    Status,
    TimeControl,
)
from games.records import match_record
from games.referee import Referee

CHECKERS = get_game("checkers")
START_FEN = "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12"
OPENING_MOVES = ("9-13", "9-14", "10-14", "10-15", "11-15", "11-16", "12-16")


def referee(
    game: Game = CHECKERS,
    start: State[Any] | str | None = None,
    tc: TimeControl | None = None,
    max_illegal: int = 3,
    started_at: int | None = 0,
) -> Referee:
    """Return a referee for `game`, started at `started_at` unless that is None."""
    ref = Referee(MatchConfig(game, start, tc, max_illegal))
    if started_at is not None:
        ref.start(started_at)
    return ref


def only(effects: list[Effect], kind: type[Any]) -> Any:
    """Return the one effect of type `kind` among `effects`."""
    found = [e for e in effects if isinstance(e, kind)]
    assert len(found) == 1, effects
    return found[0]


def without_counts(view: MatchView) -> MatchView:
    return dataclasses.replace(view, illegal_counts=(0, 0))


# -- whole games ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", game_names())
@pytest.mark.parametrize("seed", range(3))
def test_random_game_through_referee_ends_with_the_rules_result(name: str, seed: int) -> None:
    game = get_game(name)
    rng = random.Random(seed)
    ref = referee(game, tc=TimeControl(10**9, 5))
    state = game.initial_state()
    now = 0
    while state.outcome() is None:
        move = rng.choice(list(state.legal_moves()))
        text = state.format_move(move)
        now += rng.randrange(100)
        effects = ref.move(state.to_move, text, now)
        accepted = only(effects, MoveAccepted)
        state = state.apply(move)
        assert accepted.move == text
        assert accepted.position == game.format_position(state)
        assert accepted.ply == len(ref.move_log)
    outcome = state.outcome()
    assert outcome is not None
    ended = only(effects, MatchEnded)
    code = ResultCode.of_ending(outcome.ending)
    assert code.is_rules
    assert ended.result == Result(outcome.winner, code, outcome.reason)
    view = ref.view(now + 10_000)
    assert view.status is Status.FINISHED
    assert view.result == ended.result
    assert view.legal_moves == ()
    assert view.to_move is None
    assert view.position == game.format_position(state)
    assert view.seq == 1 + len(view.moves)
    # The clocks stopped when the game ended.
    assert view.clocks_ms == ref.view(now).clocks_ms == ended.clocks_ms
    assert ref.move(state.to_move, "1", now + 1)[-1].code is ErrorCode.MATCH_OVER


def test_checkers_win_reason_comes_from_the_rules() -> None:
    # Black's 22x31 would crown; here Black jumps and White is left with no piece.
    ref = referee(start="B:W26:B22")
    effects = ref.move(0, "22x31", 10)
    expected = Result(0, ResultCode.NO_MOVES, "White has no pieces left")
    assert only(effects, MatchEnded).result == expected


def test_a_start_position_that_is_already_over_ends_at_the_start() -> None:
    effects = referee(start="W:W29:B25,22", started_at=None).start(5)
    assert [type(e) for e in effects] == [Event, MatchStarted, MatchEnded]
    assert effects[-1].result == Result(0, ResultCode.NO_MOVES, "White has no legal move")


def test_short_capture_is_stored_in_full() -> None:
    ref = referee(start="B:W14,15,23,24:B9")
    accepted = only(ref.move(0, "9x27", 1), MoveAccepted)
    assert accepted.move == "9x18x27"
    assert ref.view(1).moves == ("9x18x27",)


def test_a_draw_by_repetition_is_the_rules_result() -> None:
    ref = referee(start="B:WK32:BK1")
    shuffle = ["1-5", "32-28", "5-1", "28-32"]
    effects: list[Effect] = []
    for ply, text in enumerate(shuffle * 2):
        effects = ref.move(ply % 2, text, ply)
    assert only(effects, MatchEnded).result == Result(
        None, ResultCode.REPETITION, "draw: threefold repetition"
    )


# -- result codes: how the rules ended it -------------------------------------------------------


def play_through(ref: Referee, moves: list[str] | tuple[str, ...], start: int = 0) -> Effect:
    """Play `moves` in turn through `ref`, one ms apart; return the last move's MatchEnded."""
    effects: list[Effect] = []
    for ply, text in enumerate(moves):
        effects = ref.move(ref.state.to_move, text, start + ply + 1)
        assert any(isinstance(e, MoveAccepted) for e in effects), effects
    ended: Effect = only(effects, MatchEnded)
    return ended


def king_walk(fen: str, plies: int, seed: int) -> list[str]:
    """Return `plies` king moves from `fen` that never repeat a position or allow a capture."""
    rng = random.Random(seed)
    state = CHECKERS.parse_position(fen)
    seen = {state.key()}
    moves = []
    for _ in range(plies):
        fresh = [
            m
            for m in state.legal_moves()
            if state.apply_unchecked(m).key() not in seen
            and not state.apply_unchecked(m).has_capture()  # type: ignore[attr-defined]
        ]
        move = rng.choice(fresh)
        moves.append(state.format_move(move))
        state = state.apply_unchecked(move)
        seen.add(state.key())
    return moves


def test_checkers_eighty_quiet_plies_end_with_the_move_rule_code() -> None:
    moves = king_walk("B:WK29,K30,K31,K32:BK1,K2,K3,K4", 80, seed=7)
    ref = referee(start="B:WK29,K30,K31,K32:BK1,K2,K3,K4")
    for ply, text in enumerate(moves[:79]):
        assert not any(isinstance(e, MatchEnded) for e in ref.move(ply % 2, text, ply))
    ended = only(ref.move(1, moves[79], 80), MatchEnded)
    assert ended.result.code is ResultCode.MOVE_RULE and ended.result.winner is None
    assert "80 plies" in ended.result.reason


def test_checkers_blocked_side_loses_with_the_no_moves_code() -> None:
    # White's man on 21, on the edge, can only step to 17 (Black's) or jump it to 14: Black's
    # 9-14 takes that square, and White, with a piece left, has no move and loses.
    ref = referee(start="B:W21:B9,17")
    assert ref.legal_texts()
    ended = only(ref.move(0, "9-14", 1), MatchEnded)
    assert ended.result == Result(0, ResultCode.NO_MOVES, "White has no legal move")


@pytest.mark.parametrize(
    ("moves", "winner", "code", "reason"),
    [
        ("1212121", 0, ResultCode.LINE, "four in a row"),
        ("44136567533446633544223266151557777121712" + "2", None, ResultCode.BOARD_FULL,
         "board full"),
    ],
)  # fmt: skip
def test_connect4_line_and_full_board_have_their_codes(
    moves: str, winner: int | None, code: ResultCode, reason: str
) -> None:
    ended = play_through(referee(get_game("connect4")), list(moves))
    assert isinstance(ended, MatchEnded)
    assert ended.result == Result(winner, code, reason)


@pytest.mark.parametrize(
    ("misere", "winner", "reason"),
    [
        ("false", 1, "second took the last object"),
        ("true", 0, "second took the last object (misère: that loses)"),
    ],
)
def test_nim_last_object_normal_and_misere(misere: str, winner: int, reason: str) -> None:
    game = get_game("nim", {"heaps": "1,2", "misere": misere})
    ended = play_through(referee(game), ["2:2", "1:1"])
    assert isinstance(ended, MatchEnded)
    assert ended.result == Result(winner, ResultCode.LAST_OBJECT, reason)


def test_every_ending_of_the_rules_has_a_result_code_of_the_same_value() -> None:
    from games.base import Ending

    for ending in Ending:
        code = ResultCode.of_ending(ending)
        assert code.value == ending.value and code.is_rules
    others = [code for code in ResultCode if not code.is_rules]
    assert ResultCode.PLY_CAP in others and ResultCode.BOT_FAILURE in others
    assert len(others) == len(ResultCode) - len(Ending)


# -- the ply cap -----------------------------------------------------------------------------------


def test_the_move_that_reaches_the_ply_cap_draws_the_match() -> None:
    ref = Referee(MatchConfig(CHECKERS, None, TimeControl(10_000), max_plies=3))
    ref.start(0)
    ref.move(0, "11-15", 100)
    ref.move(1, "23-19", 300)
    effects = ref.move(0, "8-11", 600)
    assert [type(e) for e in effects] == [Event, MoveAccepted, MatchEnded]
    ended = only(effects, MatchEnded)
    assert ended.seq == only(effects, MoveAccepted).seq == 4  # the same event ends it
    assert ended.result == Result(None, ResultCode.PLY_CAP, "ply cap")
    assert ended.clocks_ms == (9_600, 9_800)  # Black used 100 + 300 ms, White 200
    assert ref.legal_texts() == ()
    restored = Referee.restore(ref.config, ref.events, 50_000)
    assert restored.view(50_000) == ref.view(600)
    assert only(restored.move(1, "22-18", 50_001), Rejected).code is ErrorCode.MATCH_OVER


def test_a_rules_ending_on_the_capped_ply_is_the_rules_result() -> None:
    ref = Referee(MatchConfig(CHECKERS, "B:W26:B22", max_plies=1))
    ref.start(0)
    ended = only(ref.move(0, "22x31", 1), MatchEnded)
    assert ended.result.code is ResultCode.NO_MOVES


@pytest.mark.parametrize("cap", [-1, True, 2.5])
def test_the_ply_cap_must_be_an_integer_of_0_or_more(cap: Any) -> None:
    with pytest.raises(ValueError, match="max_plies"):
        MatchConfig(CHECKERS, max_plies=cap)


def test_a_ply_cap_of_0_draws_the_match_as_it_starts_and_replays() -> None:
    ref = Referee(MatchConfig(CHECKERS, max_plies=0))
    effects = ref.start(7)
    assert [type(e) for e in effects] == [Event, MatchStarted, MatchEnded]
    assert only(effects, MatchEnded).result == Result(None, ResultCode.PLY_CAP, "ply cap")
    restored = Referee.restore(ref.config, ref.events, 100)
    assert restored.result == ref.result and restored.status is Status.FINISHED


# -- bot failures ---------------------------------------------------------------------------------


def test_a_bot_failure_loses_and_restore_replays_it() -> None:
    ref = referee(tc=TimeControl(10_000))
    ref.move(0, "11-15", 1_000)
    why = "White (house bot random) crashed: RuntimeError: out of cheese"
    effects = ref.fail(1, why, 1_250)
    assert effects[0] == Event(3, EventKind.FAIL, 1, why, 250)
    ended = only(effects, MatchEnded)
    assert ended.result == Result(0, ResultCode.BOT_FAILURE, why)
    assert ended.status is Status.FINISHED and ended.clocks_ms == (9_000, 9_750)
    assert ref.fail(0, "again", 2_000) == []  # a match over is not failed again
    restored = Referee.restore(ref.config, ref.events, 70_000)
    assert restored.events == ref.events
    assert restored.view(70_000) == ref.view(1_250)
    assert match_record(restored, 0)["result"]["code"] == "bot_failure"


def test_a_fallen_flag_ends_the_match_before_a_bot_failure() -> None:
    ref = referee(tc=TimeControl(1_000))
    effects = ref.fail(0, "Black crashed", 5_000)
    assert [e.kind for e in effects if isinstance(e, Event)] == [EventKind.TIMEOUT]
    assert ref.result is not None and ref.result.code is ResultCode.TIMEOUT


def test_a_bot_failure_is_refused_before_the_start_and_checks_its_arguments() -> None:
    ref = referee(started_at=None)
    assert ref.fail(0, "Black crashed", 0) == []
    assert ref.status is Status.WAITING
    ref.start(0)
    with pytest.raises(ValueError, match="player"):
        ref.fail(2, "crashed", 0)
    with pytest.raises(ValueError, match="reason"):
        ref.fail(0, "", 0)
    with pytest.raises(ValueError, match="reason"):
        ref.fail(0, "x" * (MAX_ADJUDICATION_REASON + 1), 0)
    assert ref.status is Status.ACTIVE


# -- rejected moves ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("player", "text", "code", "reason"),
    [
        (1, "22-18", ErrorCode.NOT_YOUR_TURN, "it is Black's turn, not White's"),
        (0, "11-", ErrorCode.INVALID_MOVE, "cannot read checkers move '11-'"),
        (0, "11-33", ErrorCode.INVALID_MOVE, "square 33 is off the board"),
        (0, "21-17", ErrorCode.ILLEGAL_MOVE, "illegal move 21-17: square 21 holds a White"),
        (0, "13-17", ErrorCode.ILLEGAL_MOVE, "there is no Black piece on square 13"),
    ],
)
def test_rejected_moves_say_why_and_change_nothing(
    player: int, text: str, code: ErrorCode, reason: str
) -> None:
    ref = referee(tc=TimeControl(60_000, 1_000))
    ref.move(0, "11-15", 100)
    ref.move(1, "23-19", 200)
    before = ref.view(300)
    events = ref.events
    effects = ref.move(player, text, 300)
    assert len(effects) == 1
    rejected = effects[0]
    assert isinstance(rejected, Rejected)
    assert (rejected.player, rejected.action, rejected.code, rejected.text) == (
        player,
        "move",
        code,
        text,
    )
    assert reason in rejected.reason
    assert sorted(rejected.legal_moves) == sorted(before.legal_moves)
    assert "8-11" in rejected.legal_moves
    after = ref.view(300)
    # Every rejected move counts toward the forfeit, one out of turn too.
    assert rejected.rejections == 1
    assert after.illegal_counts[player] == 1
    assert without_counts(after) == without_counts(before)
    assert ref.events == events
    assert after.seq == before.seq


def test_rejected_move_legal_moves_are_the_positions() -> None:
    rejected = only(referee().move(0, "11-16x", 0), Rejected)
    assert rejected.code is ErrorCode.INVALID_MOVE
    assert sorted(rejected.legal_moves) == sorted(OPENING_MOVES)


def test_moves_before_the_start_are_refused() -> None:
    ref = referee(started_at=None)
    rejected = only(ref.move(0, "11-15", 0), Rejected)
    assert rejected.code is ErrorCode.NOT_STARTED
    assert rejected.legal_moves == ()
    assert ref.view(0).status is Status.WAITING
    assert only(ref.resign(0, 0), Rejected).code is ErrorCode.NOT_STARTED
    assert only(ref.offer_draw(0, 0), Rejected).code is ErrorCode.NOT_STARTED


def test_forfeit_after_the_limit_of_rejected_moves() -> None:
    ref = referee(max_illegal=3)
    for count in (1, 2):
        effects = ref.move(0, "12-17", count)
        assert only(effects, Rejected).rejections == count
        assert ref.status is Status.ACTIVE
    # Out-of-turn moves count toward the limit too, each for its own sender.
    assert only(ref.move(1, "22-18", 3), Rejected).rejections == 1
    assert ref.view(3).illegal_counts == (2, 1)
    seq = ref.seq
    effects = ref.move(0, "xx", 4)
    assert [type(e) for e in effects] == [Event, Rejected, MatchEnded]
    assert effects[0] == Event(seq + 1, EventKind.FORFEIT, 0, "xx", 4)
    result = effects[-1].result
    assert (result.winner, result.code) == (1, ResultCode.FORFEIT)
    assert result.reason == "Black forfeits after 3 rejected moves (the limit is 3)"
    assert ref.view(5).status is Status.FINISHED
    assert ref.view(5).moves == ()


def test_every_counted_rejection_says_how_many_remain_before_the_forfeit() -> None:
    ref = referee(max_illegal=3)
    first = only(ref.move(0, "12-17", 1), Rejected)
    assert first.reason.startswith("illegal move 12-17: ")
    assert first.reason.endswith("(rejected move 1 of 3: 2 more and you forfeit the match)")
    second = only(ref.move(0, "xx", 2), Rejected)
    assert second.reason.endswith("(rejected move 2 of 3: 1 more and you forfeit the match)")
    out_of_turn = only(ref.move(1, "22-18", 3), Rejected)
    assert out_of_turn.reason == (
        "it is Black's turn, not White's (rejected move 1 of 3: 2 more and you forfeit the match)"
    )
    last = only(ref.move(0, "12-17", 4), Rejected)
    assert last.reason.endswith("(rejected move 3 of 3: you forfeit the match)")
    # A slip typed on a page is never counted, so it says nothing of a forfeit.
    ref = referee(max_illegal=3)
    assert "forfeit" not in only(ref.move(0, "12-17", 1, counted=False), Rejected).reason


def test_moves_out_of_turn_forfeit_like_illegal_moves_and_replay() -> None:
    ref = referee(max_illegal=3)
    ref.move(0, "11-15", 10)
    for count in (1, 2):
        rejected = only(ref.move(0, "15-19", 10 + count), Rejected)
        assert (rejected.code, rejected.rejections) == (ErrorCode.NOT_YOUR_TURN, count)
    effects = ref.move(0, "15-19", 20)
    assert [type(e) for e in effects] == [Event, Rejected, MatchEnded]
    assert effects[0] == Event(3, EventKind.FORFEIT, 0, "15-19", 10)
    result = only(effects, MatchEnded).result
    assert (result.winner, result.code) == (1, ResultCode.FORFEIT)
    restored = Referee.restore(ref.config, ref.events, 1_000)
    assert restored.view(1_000) == ref.view(1_000)


def test_a_limit_of_one_forfeits_at_the_first_rejected_move() -> None:
    ref = referee(max_illegal=1)
    ref.move(0, "11-15", 0)
    assert only(ref.move(1, "11-15", 1), MatchEnded).result.winner == 0


def test_uncounted_rejections_never_forfeit_and_leave_the_count_alone() -> None:
    ref = referee(max_illegal=1)
    for text in ("12-17", "xx", "22-18"):
        rejected = only(ref.move(0, text, 0, counted=False), Rejected)
        assert rejected.rejections == 0
    assert only(ref.move(1, "22-18", 0, counted=False), Rejected).code is ErrorCode.NOT_YOUR_TURN
    assert ref.status is Status.ACTIVE
    assert ref.view(0).illegal_counts == (0, 0)
    # A counted one still forfeits at the limit.
    assert only(ref.move(0, "xx", 1), MatchEnded).result.winner == 1


# -- clocks --------------------------------------------------------------------------------------


def test_elapsed_is_charged_and_the_increment_added() -> None:
    ref = referee(tc=TimeControl(10_000, 1_000), started_at=500)
    assert ref.view(500).clocks_ms == (10_000, 10_000)
    assert ref.view(2_500).clocks_ms == (8_000, 10_000)
    accepted = only(ref.move(0, "11-15", 3_500), MoveAccepted)
    assert accepted.elapsed_ms == 3_000
    assert accepted.clocks_ms == (8_000, 10_000)
    assert ref.view(4_500).clocks_ms == (8_000, 9_000)
    accepted = only(ref.move(1, "23-19", 9_500), MoveAccepted)
    assert (accepted.elapsed_ms, accepted.clocks_ms) == (6_000, (8_000, 5_000))
    # A rejected move does not stop the clock.
    ref.move(0, "zz", 10_000)
    assert only(ref.move(0, "8-11", 10_500), MoveAccepted).elapsed_ms == 1_000


def test_untimed_matches_have_no_clocks_but_record_elapsed() -> None:
    ref = referee(started_at=100)
    accepted = only(ref.move(0, "11-15", 10**9), MoveAccepted)
    assert (accepted.clocks_ms, accepted.elapsed_ms) == (None, 10**9 - 100)
    assert ref.view(10**10).clocks_ms is None
    assert ref.tick(10**12) == []


def test_flag_falls_on_tick() -> None:
    ref = referee(tc=TimeControl(1_000))
    ref.move(0, "11-15", 400)
    assert ref.tick(1_400) == []  # exactly 0 ms left is still in time
    assert ref.view(1_400).clocks_ms == (600, 0)
    effects = ref.tick(1_401)
    assert effects[0] == Event(3, EventKind.TIMEOUT, 1, None, 1_001)
    ended = only(effects, MatchEnded)
    assert ended.result == Result(0, ResultCode.TIMEOUT, "White ran out of time")
    assert ended.clocks_ms == (600, 0)
    assert ref.view(5_000).clocks_ms == (600, 0)
    assert ref.tick(5_000) == []


@pytest.mark.parametrize(
    ("tc", "moves"),
    [
        (TimeControl(1_000), [(0, "11-15", 400)]),
        (TimeControl(1_000, 500), [(0, "11-15", 300), (1, "23-19", 900)]),
        (TimeControl(60_000, 0, move_cap_ms=700), [(0, "11-15", 650)]),
        (TimeControl(500, 0, move_cap_ms=5_000), []),
    ],
)
def test_deadline_is_the_first_tick_that_ends_the_match(
    tc: TimeControl, moves: list[tuple[int, str, int]]
) -> None:
    ref = referee(tc=tc)
    for player, move, at in moves:
        ref.move(player, move, at)
    deadline = ref.deadline_ms()
    assert deadline is not None
    assert ref.tick(deadline - 1) == []
    assert only(ref.tick(deadline), MatchEnded).result.code is ResultCode.TIMEOUT
    assert ref.deadline_ms() is None  # over: nothing left to tick


def test_no_deadline_untimed_or_before_the_start() -> None:
    assert referee().deadline_ms() is None
    assert referee(tc=TimeControl(1_000), started_at=None).deadline_ms() is None


def test_a_late_move_loses_on_time_and_is_not_played() -> None:
    ref = referee(tc=TimeControl(1_000, 500))
    assert ref.move(0, "11-15", 1_000)[0].__class__ is Event  # in time, exactly
    effects = ref.move(1, "23-19", 2_501)
    assert [type(e) for e in effects] == [Event, MatchEnded, Rejected]
    assert effects[1].result == Result(0, ResultCode.TIMEOUT, "White ran out of time")
    assert effects[2].code is ErrorCode.MATCH_OVER
    assert "White ran out of time" in effects[2].reason
    assert ref.view(3_000).moves == ("11-15",)


def test_the_cap_per_move_ends_the_match() -> None:
    tc = TimeControl(60_000, 0, move_cap_ms=1_000)
    ref = referee(tc=tc)
    assert ref.tick(1_000) == []
    ended = only(ref.move(0, "11-15", 1_001), MatchEnded)
    assert ended.result == Result(
        1, ResultCode.TIMEOUT, "Black took 1001 ms for one move; the limit is 1000 ms per move"
    )
    assert ended.clocks_ms == (58_999, 60_000)
    ref = referee(tc=tc)
    ref.move(0, "11-15", 999)
    assert only(ref.tick(2_000), MatchEnded).result.winner == 0


def test_an_event_after_a_flag_fall_finds_the_match_over() -> None:
    ref = referee(tc=TimeControl(1_000))
    effects = ref.resign(1, 5_000)
    assert only(effects, MatchEnded).result.code is ResultCode.TIMEOUT
    assert only(effects, Rejected).code is ErrorCode.MATCH_OVER
    assert ref.result is not None and ref.result.winner == 1


def test_time_going_backwards_is_a_caller_error() -> None:
    ref = referee(started_at=1_000)
    with pytest.raises(ValueError, match="time went backwards"):
        ref.move(0, "11-15", 999)
    with pytest.raises(ValueError, match="player must be 0 or 1"):
        ref.move(2, "11-15", 1_000)


# -- resign, draws, abort ------------------------------------------------------------------------


def test_resign() -> None:
    ref = referee(tc=TimeControl(10_000))
    ref.move(0, "11-15", 1_000)
    effects = ref.resign(0, 3_000)
    assert effects[0] == Event(3, EventKind.RESIGN, 0, None, 2_000)
    ended = only(effects, MatchEnded)
    assert ended.result == Result(1, ResultCode.RESIGN, "Black resigned")
    assert ended.clocks_ms == (9_000, 8_000)
    assert only(ref.resign(1, 4_000), Rejected).code is ErrorCode.MATCH_OVER


def test_draw_offer_accepted() -> None:
    ref = referee()
    effects = ref.offer_draw(1, 10)
    assert effects == [Event(2, EventKind.OFFER_DRAW, 1, None, 10), DrawOffered(2, 1)]
    assert ref.view(10).draw_offer == 1
    assert ref.offer_draw(1, 11) == []  # an offer that stands is not repeated
    rejected = only(ref.accept_draw(1, 12), Rejected)
    assert (rejected.code, rejected.reason) == (
        ErrorCode.NO_DRAW_OFFER,
        "your own draw offer is pending; your opponent must answer it",
    )
    ended = only(ref.accept_draw(0, 13), MatchEnded)
    assert ended.result == Result(None, ResultCode.AGREEMENT, "drawn by agreement")
    assert ref.view(13).draw_offer is None
    assert ref.view(13).status is Status.FINISHED


def test_draw_offer_declined() -> None:
    ref = referee()
    assert only(ref.decline_draw(0, 1), Rejected).code is ErrorCode.NO_DRAW_OFFER
    ref.offer_draw(0, 2)
    assert ref.decline_draw(1, 3) == [
        Event(3, EventKind.DECLINE_DRAW, 1, None, 3),
        DrawDeclined(3, 1),
    ]
    assert ref.view(3).draw_offer is None
    assert only(ref.accept_draw(1, 4), Rejected).code is ErrorCode.NO_DRAW_OFFER


def test_an_offer_survives_the_offerers_move_and_lapses_at_the_opponents() -> None:
    ref = referee()
    ref.offer_draw(0, 1)
    ref.move(0, "11-15", 2)
    assert ref.view(2).draw_offer == 0
    ref.move(1, "23-19", 3)
    assert ref.view(3).draw_offer is None
    assert only(ref.accept_draw(1, 4), Rejected).code is ErrorCode.NO_DRAW_OFFER


def test_crossing_offers_agree_a_draw() -> None:
    ref = referee()
    ref.offer_draw(0, 1)
    effects = ref.offer_draw(1, 2)
    assert effects[0] == Event(3, EventKind.OFFER_DRAW, 1, None, 2)
    assert only(effects, MatchEnded).result.code is ResultCode.AGREEMENT


@pytest.mark.parametrize("started", [False, True])
def test_abort_before_the_first_move(started: bool) -> None:
    ref = referee(tc=TimeControl(5_000), started_at=0 if started else None)
    effects = ref.abort(1, 700)
    ended = only(effects, MatchEnded)
    assert ended.status is Status.ABORTED
    assert ended.result == Result(
        None, ResultCode.ABORTED, "aborted by White before the first move"
    )
    view = ref.view(800)
    assert (view.status, view.to_move, view.legal_moves) == (Status.ABORTED, None, ())
    assert view.seq == (2 if started else 1)
    assert only(ref.move(0, "11-15", 900), Rejected).code is ErrorCode.MATCH_OVER
    assert only(ref.abort(0, 900), Rejected).code is ErrorCode.MATCH_OVER


def test_no_abort_after_the_first_move() -> None:
    ref = referee()
    ref.move(0, "11-15", 1)
    before = ref.view(2)
    rejected = only(ref.abort(0, 2), Rejected)
    assert rejected.code is ErrorCode.CANNOT_ABORT
    assert ref.view(2) == before


def test_start_twice_is_a_caller_error() -> None:
    with pytest.raises(ValueError, match="cannot start a match that is active"):
        referee().start(1)


# -- a random match, for seq and restore ---------------------------------------------------------

# Weighted so that matches run long enough to play moves, yet also end every way there is.
ACTIONS = ("move",) * 24 + ("bad", "turn", "tick") * 2 + ("offer", "accept", "decline")
ACTIONS += ("resign", "abort", "fail")


@st.composite
def matches(draw: st.DrawFn) -> tuple[MatchConfig, list[tuple[int, str, int, int]]]:
    """Draw a match set-up and a list of calls (delay ms, action, player, pick)."""
    game = get_game(draw(st.sampled_from(game_names())))
    tc = draw(
        st.none()
        | st.builds(
            TimeControl,
            st.integers(500, 20_000),
            st.integers(0, 300),
            st.none() | st.integers(300, 2_000),
        )
    )
    cap = draw(st.none() | st.integers(0, 40))
    config = MatchConfig(game, None, tc, draw(st.integers(1, 4)), max_plies=cap)
    action = st.sampled_from(ACTIONS)
    call = st.tuples(st.integers(0, 500), action, st.integers(0, 1), st.integers(0, 10**6))
    return config, draw(st.lists(call, max_size=80))


def perform(ref: Referee, call: tuple[int, str, int, int], now: int) -> list[Effect]:
    """Perform one drawn call on `ref` at `now` (the delay in `call` is the caller's)."""
    _, action, player, pick = call
    state = ref.state
    legal = [state.format_move(m) for m in state.legal_moves()]
    mover = state.to_move
    if action == "move":
        return ref.move(mover, legal[pick % len(legal)] if legal else "1", now)
    if action == "bad":
        return ref.move(mover, "??", now)
    if action == "turn":
        return ref.move(1 - mover, legal[0] if legal else "1", now)
    if action == "tick":
        return ref.tick(now)
    if action == "fail":
        return ref.fail(player, f"player {player}'s bot crashed", now)
    method = {
        "offer": ref.offer_draw,
        "accept": ref.accept_draw,
        "decline": ref.decline_draw,
        "resign": ref.resign,
        "abort": ref.abort,
    }[action]
    return method(player, now)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(matches(), st.data())
def test_seq_and_restore_reproduce_the_match(
    match: tuple[MatchConfig, list[tuple[int, str, int, int]]], data: st.DataObject
) -> None:
    config, calls = match
    original = Referee(config)
    original.start(0)
    cut = data.draw(st.integers(0, len(calls)), label="cut")
    peek = data.draw(st.integers(0, 3_000), label="peek")
    now = last_event_at = 0
    snapshot: MatchView | None = None
    for index, call in enumerate(calls):
        if index == cut:
            snapshot = original.view(last_event_at + peek)
            break
        now += call[0]
        seq = original.seq
        events_before = original.events
        effects = perform(original, call, now)
        events = [e for e in effects if isinstance(e, Event)]
        # One accepted event raises seq by exactly one; its effects all carry that seq.
        assert len(events) <= 1
        assert original.seq == seq + len(events)
        assert original.events == events_before + tuple(events)
        for effect in effects:
            if not isinstance(effect, Rejected):
                assert effect.seq == original.seq
        if events:
            last_event_at = now
    if snapshot is None:
        cut = len(calls)
        snapshot = original.view(last_event_at + peek)

    event(f"status at the cut: {snapshot.status.value}")
    event(f"last event: {original.events[-1].kind.value}")
    resume = 10**9
    restored = Referee.restore(
        config, original.events, resume, illegal_counts=snapshot.illegal_counts
    )
    assert restored.view(resume + peek) == snapshot
    assert restored.events == original.events
    # Both play on identically, the restored one on a clock shifted by the restart.
    shift = resume - last_event_at
    for call in calls[cut:]:
        now += call[0]
        assert perform(restored, call, now + shift) == perform(original, call, now)
    assert restored.view(now + shift + peek) == original.view(now + peek)
    assert [e.seq for e in original.events] == list(range(1, original.seq + 1))
    event(f"moves played: {min(len(original.move_log), 10) // 5 * 5}+")
    event(f"final event: {original.events[-1].kind.value}")


def test_restore_charges_the_downtime_it_is_given() -> None:
    ref = referee(tc=TimeControl(10_000))
    ref.move(0, "11-15", 2_000)
    ref.offer_draw(0, 3_000)  # 1 s into White's turn
    restored = Referee.restore(ref.config, ref.events, 50_000)
    assert restored.view(50_000).clocks_ms == (8_000, 9_000)
    assert restored.view(50_000).draw_offer == 0
    charged = Referee.restore(ref.config, ref.events, 50_000, downtime_ms=4_000)
    assert charged.view(50_000).clocks_ms == (8_000, 5_000)
    assert charged.tick(50_000) == []
    assert only(charged.tick(55_001), MatchEnded).result.code is ResultCode.TIMEOUT


def test_restore_rejects_records_that_do_not_replay() -> None:
    ref = referee()
    ref.move(0, "11-15", 10)
    ref.move(1, "23-19", 20)
    events = list(ref.events)
    with pytest.raises(ValueError, match="does not follow"):
        Referee.restore(ref.config, events[:1] + events[2:], 0)
    wrong_player = dataclasses.replace(events[2], player=0)
    with pytest.raises(ValueError, match="replays as"):
        Referee.restore(ref.config, [*events[:2], wrong_player], 0)
    with pytest.raises(ValueError, match="downtime_ms"):
        Referee.restore(ref.config, events, 0, downtime_ms=-1)


def test_restore_a_forfeit_and_a_finished_match() -> None:
    ref = referee(max_illegal=2, tc=TimeControl(5_000))
    ref.move(0, "11-15", 100)
    ref.move(1, "bad", 200)
    ref.move(1, "bad", 300)
    assert ref.status is Status.FINISHED
    restored = Referee.restore(ref.config, ref.events, 7)
    assert restored.view(7) == ref.view(300)


# -- adjudication -------------------------------------------------------------------------------


def test_adjudication_ends_an_active_match_with_the_arbiters_result() -> None:
    ref = referee(tc=TimeControl(10_000))
    ref.move(0, "11-15", 1_000)
    effects = ref.adjudicate(None, "ply cap", 1_500)
    assert effects[0] == Event(3, EventKind.ADJUDICATE, None, "ply cap", 500)
    ended = only(effects, MatchEnded)
    assert ended.result == Result(None, ResultCode.ADJUDICATION, "ply cap")
    assert ended.status is Status.FINISHED and ended.clocks_ms == (9_000, 9_500)
    assert ref.status is Status.FINISHED and ref.legal_texts() == ()
    assert only(ref.move(1, "22-18", 2_000), Rejected).code is ErrorCode.MATCH_OVER
    # A second adjudication of a match over changes nothing.
    assert ref.adjudicate(0, "again", 2_000) == []
    assert ref.result == Result(None, ResultCode.ADJUDICATION, "ply cap")


def test_adjudication_names_a_winner_and_restore_replays_it() -> None:
    ref = referee(tc=TimeControl(10_000))
    ref.move(0, "11-15", 1_000)
    ref.adjudicate(1, "White wins on material", 4_000)
    restored = Referee.restore(ref.config, ref.events, 90_000)
    assert restored.events == ref.events
    assert restored.result == Result(1, ResultCode.ADJUDICATION, "White wins on material")
    assert restored.view(90_000) == ref.view(4_000)
    assert match_record(restored, 0)["result"]["code"] == "adjudication"


def test_a_fallen_flag_ends_the_match_before_an_adjudication() -> None:
    ref = referee(tc=TimeControl(1_000))
    effects = ref.adjudicate(None, "ply cap", 5_000)
    assert [e.kind for e in effects if isinstance(e, Event)] == [EventKind.TIMEOUT]
    assert ref.result is not None and ref.result.code is ResultCode.TIMEOUT


def test_adjudication_is_refused_before_the_start_and_checks_its_arguments() -> None:
    ref = referee(started_at=None)
    assert ref.adjudicate(None, "ply cap", 0) == []
    assert ref.status is Status.WAITING
    ref.start(0)
    with pytest.raises(ValueError, match="winner"):
        ref.adjudicate(2, "ply cap", 0)
    with pytest.raises(ValueError, match="reason"):
        ref.adjudicate(None, "", 0)
    with pytest.raises(ValueError, match="reason"):
        ref.adjudicate(None, "x" * 201, 0)
    assert ref.status is Status.ACTIVE


# -- declining a challenge ------------------------------------------------------------------------


def test_a_waiting_match_declined_is_aborted_and_replays() -> None:
    ref = Referee(MatchConfig(get_game("checkers")))
    effects = ref.decline(1, 500)
    assert effects[0] == Event(1, EventKind.DECLINE, 1, None, 0)
    ended = only(effects, MatchEnded)
    assert ended.result == Result(None, ResultCode.ABORTED, "White declined the challenge")
    assert ref.status is Status.ABORTED
    restored = Referee.restore(ref.config, ref.events, 9_000)
    assert restored.result == ref.result and restored.status is Status.ABORTED
    assert only(ref.decline(0, 600), Rejected).code is ErrorCode.MATCH_OVER


def test_a_started_match_cannot_be_declined() -> None:
    ref = referee()
    assert only(ref.decline(1, 100), Rejected).code is ErrorCode.CANNOT_ABORT
    assert ref.status is Status.ACTIVE
