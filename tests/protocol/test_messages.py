"""The wire contract: round trips, discrimination, rejection of bad input, schema, CLI, docs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, get_args

import pytest
import typer
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError
from typer.testing import CliRunner

from cli import protocol as protocol_cli
from games.match import ResultCode as RefereeResultCode
from protocol import (
    CLIENT_MESSAGES,
    CLOSE_DESCRIPTIONS,
    ERROR_DESCRIPTIONS,
    HTTP_STATUS,
    MAX_MESSAGE_BYTES,
    MAX_MOVE_LENGTH,
    MAX_OPTIONS,
    MAX_POSITION_LENGTH,
    PROTOCOL_VERSION,
    REST_MODELS,
    SERVER_MESSAGES,
    Abort,
    AcceptChallenge,
    AcceptDraw,
    BotAvailable,
    BotInfo,
    BotLimits,
    BotList,
    BotOptionInfo,
    BotPoints,
    BotRating,
    Challenge,
    Clocks,
    CloseCode,
    DeclineChallenge,
    DeclineDraw,
    DrawDeclined,
    DrawOffered,
    ErrorCode,
    ErrorMessage,
    ErrorResponse,
    GradingJob,
    GradingProfile,
    GradingProfiles,
    HeadToHead,
    Hello,
    HouseBot,
    Leaderboard,
    MatchCreate,
    MatchEnded,
    MatchFilter,
    MatchJoin,
    MatchList,
    MatchRecord,
    MatchResult,
    MatchStarted,
    MatchState,
    MatchSummary,
    Move,
    MoveMade,
    MoveRequest,
    OfferDraw,
    OnlineBot,
    OnlineBots,
    Ping,
    PlayerCreate,
    PlayerCreated,
    PlayerProfile,
    PlayerRating,
    Pong,
    ProtocolError,
    RecordedMove,
    Resign,
    SeatInfo,
    SprtEloEstimate,
    SprtSettings,
    SprtState,
    TimeControl,
    TournamentCreate,
    TournamentFinished,
    TournamentGame,
    TournamentGameFinished,
    TournamentList,
    TournamentStandings,
    TournamentState,
    TournamentSummary,
    Welcome,
    dump_client_message,
    dump_server_message,
    is_compatible,
    json_schema,
    parse_client_message,
    parse_server_message,
    parse_version,
)
from protocol.messages import (
    MAX_JSON_DEPTH,
    MAX_NUMBER_DIGITS,
    MAX_OPENING_LENGTH,
    MAX_PV_MOVES,
    MAX_SAFE_INTEGER,
    MAX_SEARCH_DEPTH,
    MAX_SPRT_PAIRS,
    MAX_TOURNAMENT_OPENINGS,
    RESULT_REASONS,
    HostedBot,
    HostedBotCreate,
    HostedBotFailure,
    HostedBotFailures,
    HostedBotList,
    HostedBotUpdate,
    HostedBotVersion,
    Pool,
    PoolEntry,
    PoolGameSummary,
    PoolJoin,
    PoolList,
    PoolSummary,
    ResultCodeText,
    SearchInfo,
    json_for_version,
    newer_fields,
)
from protocol.version import spoken_version

DOCS = Path(__file__).resolve().parents[2] / "docs" / "PROTOCOL.md"

SEATS = (
    SeatInfo(seat=0, side="black", player="alice"),
    SeatInfo(seat=1, side="white", player="house-alphabeta", bot="alphabeta:depth=4"),
)
TIME_CONTROL = TimeControl(base_ms=60_000, increment_ms=1_000, move_cap_ms=10_000)
CLOCKS = Clocks(remaining_ms=(59_000, 60_000), running=1, server_time_ms=1_700_000_000_000)
RESULT = MatchResult(winner=0, code="no_moves", description="white has no legal move")
TOURNAMENT = TournamentCreate(game="tictactoe", bots=("alphabeta:depth=2", "greedy"), seed=7)
TOURNAMENT_GAME = TournamentGame(
    index=0,
    pair=0,
    first="alphabeta:depth=2",
    second="greedy",
    opening="5 1",
    match_id="m1",
    result=0.5,
    reason="ply cap",
)
POINTS = (
    BotPoints(bot="alphabeta:depth=2", points=0.5, games=1, wins=0, draws=1, losses=0),
    BotPoints(bot="greedy", points=0.5, games=1, wins=0, draws=1, losses=0),
)
STANDINGS = TournamentStandings(
    points=POINTS,
    ratings=(
        BotRating(bot="greedy", elo=0.0, lower=None, upper=None, games=1, points=0.5, score=0.5),
    ),
    first_move_advantage=0.0,
    crosstable={
        "greedy": {"alphabeta:depth=2": HeadToHead(games=1, wins=0, draws=1, losses=0, points=0.5)}
    },
    los={"greedy": {"greedy": 0.5}},
)

CLIENT_EXAMPLES: list[BaseModel] = [
    Hello(protocol_version="1.0", client="mybot/0.1"),
    Move(match_id="m1", move="11-15", expected_seq=3),
    Resign(match_id="m1"),
    OfferDraw(match_id="m1"),
    AcceptDraw(match_id="m1"),
    DeclineDraw(match_id="m1"),
    Abort(match_id="m1"),
    Ping(time_ms=1_700_000_000_000),
    AcceptChallenge(match_id="m1"),
    DeclineChallenge(match_id="m1"),
    BotAvailable(games=("checkers", "connect4")),
]
SERVER_EXAMPLES: list[BaseModel] = [
    Welcome(player="alice", server_time_ms=1_700_000_000_000),
    MatchStarted(
        match_id="m1", game="checkers", seats=SEATS, your_seat=0, time_control=TIME_CONTROL, seq=1
    ),
    MatchState(
        match_id="m1",
        game="nim",
        options={"heaps": "3,4,5", "misere": "false"},
        start_position="3,4,5",
        position="3,4,2",
        moves=("3:3",),
        to_move=1,
        seats=SEATS,
        your_seat=0,
        time_control=TIME_CONTROL,
        clocks=CLOCKS,
        legal_moves=("1:1", "1:2"),
        status="active",
        draw_offer=0,
        seq=2,
    ),
    MoveMade(
        match_id="m1",
        seq=2,
        ply=1,
        seat=0,
        move="11-15",
        position="W:W21,22:B1,15",
        to_move=1,
        legal_moves=("22-18",),
        clocks=CLOCKS,
    ),
    DrawOffered(match_id="m1", seq=3, seat=1),
    DrawDeclined(match_id="m1", seq=4, seat=0),
    MatchEnded(match_id="m1", seq=9, result=RESULT, clocks=CLOCKS),
    ErrorMessage(
        code=ErrorCode.ILLEGAL_MOVE,
        message="illegal move '9-14': a capture is available",
        match_id="m1",
        legal_moves=("15x24",),
        details={"illegal_moves": 1, "limit": 3},
    ),
    Pong(time_ms=1_700_000_000_000, server_time_ms=1_700_000_000_005),
    TournamentState(
        tournament_id="t1",
        spec=TOURNAMENT,
        status="running",
        games_done=1,
        games_total=2,
        standings=STANDINGS,
        games=(TOURNAMENT_GAME,),
        created_time_ms=1,
    ),
    TournamentGameFinished(
        tournament_id="t1", game=TOURNAMENT_GAME, games_done=1, games_total=2, points=POINTS
    ),
    TournamentFinished(tournament_id="t1", games_done=2, games_total=2, standings=STANDINGS),
    Challenge(
        match_id="m1",
        game="checkers",
        start_position="B:W21,22:B1,2",
        seats=(
            SeatInfo(seat=0, side="black", player="alice"),
            SeatInfo(seat=1, side="white", challenged="bob"),
        ),
        your_seat=1,
        challenger="alice",
        time_control=TIME_CONTROL,
        seq=0,
    ),
]
REST_EXAMPLES: list[BaseModel] = [
    PlayerCreate(name="alice"),
    PlayerCreated(id="p1", name="alice", token="t" * 40),
    MatchCreate(
        game="connect4",
        options={},
        start_position="44",
        time_control=TIME_CONTROL,
        seats=("alice", HouseBot(bot="alphabeta:depth=4")),
    ),
    MatchJoin(seat=1),
    MoveRequest(move="4", expected_seq=7),
    MatchFilter(status="active", game="checkers", player="alice", limit=10, offset=20),
    MatchSummary(
        match_id="m1",
        game="checkers",
        status="finished",
        seats=SEATS,
        ply=42,
        result=RESULT,
        created_time_ms=1_700_000_000_000,
    ),
    MatchList(
        matches=(
            MatchSummary(
                match_id="m2",
                game="tictactoe",
                status="waiting",
                seats=(SeatInfo(seat=0, side="X", player="bob"), SeatInfo(seat=1, side="O")),
                created_time_ms=1,
            ),
        ),
        next_offset=50,
    ),
    MatchRecord(
        match_id="m1",
        game="checkers",
        seats=SEATS,
        start_position="B:W21,22:B1,2",
        time_control=TimeControl(base_ms=60_000),
        max_illegal_moves=3,
        status="finished",
        result=RESULT,
        position="W:W21,22:B1,6",
        clocks_ms=(59_000, 60_000),
        moves=(
            RecordedMove(ply=1, seat=0, move="2-6", elapsed_ms=1_000, clocks_ms=(59_000, 60_000)),
        ),
        illegal_counts=(0, 1),
        seq=2,
    ),
    TOURNAMENT,
    TournamentSummary(
        tournament_id="t1",
        spec=TOURNAMENT,
        status="created",
        games_done=0,
        games_total=2,
        created_time_ms=1,
    ),
    TournamentList(tournaments=(), next_offset=None),
    GradingProfiles(
        profiles=(
            GradingProfile(
                name="endgame",
                description="Endgame solver",
                main_file="checkers.py",
                max_upload_bytes=2_097_152,
            ),
        ),
        max_files=50,
        queue_limit=100,
        sandboxed=True,
    ),
    GradingJob(
        job_id="j1",
        profile="endgame",
        status="done",
        files=("checkers.py", "board.py"),
        score=8.75,
        max_score=10.0,
        summary="8 of 10 puzzles solved with full marks",
        created_time_ms=1,
        started_time_ms=2,
        finished_time_ms=3,
        results_url="/grader/jobs/j1/results.json",
        report_url="/grader/jobs/j1/report.html",
    ),
    BotList(
        bots=(
            BotInfo(
                name="id",
                description="iterative deepening alpha-beta under a time budget per move",
                options=(
                    BotOptionInfo(
                        name="depth",
                        kind="int",
                        default="64",
                        help="maximum depth",
                        minimum=1,
                        maximum=128,
                        server_maximum=10,
                        server_setting="ARENA_BOT_MAX_DEPTH",
                        unless=("time", "nodes"),
                    ),
                ),
            ),
        ),
        limits=BotLimits(
            max_depth=10,
            max_simulations=100_000,
            max_seconds=30.0,
            max_nodes=10_000_000,
            threads=2,
            searches_per_player=1,
        ),
    ),
    OnlineBots(
        bots=(
            OnlineBot(name="deep-blue", games=("checkers",), playing=0),
            OnlineBot(name="c4bot", games=None, playing=2),
        )
    ),
    Leaderboard(
        game="checkers",
        ratings=(
            PlayerRating(
                game="checkers",
                bot="alphabeta:depth=6",
                rating=1662.31,
                deviation=181.4,
                volatility=0.059998,
                games=3,
            ),
        ),
        next_offset=50,
    ),
    PlayerProfile(
        name="ada",
        ratings=(
            PlayerRating(
                game="checkers",
                player="ada",
                rating=1337.69,
                deviation=181.4,
                volatility=0.059998,
                games=3,
            ),
        ),
    ),
    HostedBotCreate(name="rnd", game="checkers"),
    HostedBotUpdate(active=2),
    HostedBot(
        owner="ada",
        name="rnd",
        game="checkers",
        description="",
        spec="hosted:ada/rnd",
        active=1,
        paused=None,
        versions=(
            HostedBotVersion(
                number=1,
                kind="engine",
                entry="bot.py",
                size=10_452,
                sha256="9c" * 32,
                status="ready",
                note="Random (Python) 1.0",
                spec="hosted:ada/rnd@1",
                created_ms=1,
            ),
        ),
        created_ms=1,
    ),
    HostedBotList(bots=()),
    HostedBotFailures(
        failures=(
            HostedBotFailure(version=1, match_id="m1", words="crashed: exit 3", created_ms=1),
        )
    ),
    PoolJoin(bot="ada/rnd"),
    Pool(
        name="checkers",
        game="checkers",
        base_ms=60_000,
        increment_ms=1000,
        ladder=(
            PoolEntry(
                bot="ada/rnd",
                spec="hosted:ada/rnd@1",
                rating=1500.0,
                deviation=350.0,
                games=0,
                paused=None,
                playing=False,
                joined_ms=1,
            ),
        ),
        live=(),
        recent=(
            PoolGameSummary(
                match_id="m1",
                first="hosted:ada/rnd@1",
                second="hosted:bob/c4@2",
                status="finished",
                winner=0,
                created_ms=1,
            ),
        ),
    ),
    PoolList(
        pools=(
            PoolSummary(
                name="checkers", game="checkers", base_ms=60_000, increment_ms=0, members=2
            ),
        )
    ),
    ErrorResponse(code=ErrorCode.UNKNOWN_MATCH, message="no match has id 'm9'", match_id="m9"),
]


def tag(model: BaseModel | type[BaseModel]) -> str:
    """Return the `type` tag of a model or model class."""
    cls = model if isinstance(model, type) else type(model)
    return str(cls.model_fields["type"].default)


def reject_client(data: Any) -> ProtocolError:
    """Return the ProtocolError raised by parsing `data` (a dict is dumped to JSON first)."""
    text = data if isinstance(data, str | bytes) else json.dumps(data)
    with pytest.raises(ProtocolError) as caught:
        parse_client_message(text)
    return caught.value


def move_with(**fields: Any) -> dict[str, Any]:
    """Return a valid `move` message as a dict, with `fields` replaced or added."""
    return {"type": "move", "match_id": "m1", "move": "11-15", **fields}


# Coverage of the examples themselves --------------------------------------------------------------


def test_examples_cover_every_model_once() -> None:
    assert [type(m) for m in CLIENT_EXAMPLES] == list(CLIENT_MESSAGES)
    assert [type(m) for m in SERVER_EXAMPLES] == list(SERVER_MESSAGES)
    assert [type(m) for m in REST_EXAMPLES] == list(REST_MODELS)


def test_tags_are_unique_within_each_union() -> None:
    for models in (CLIENT_MESSAGES, SERVER_MESSAGES):
        tags = [tag(m) for m in models]
        assert len(tags) == len(set(tags))
    assert not {tag(m) for m in CLIENT_MESSAGES} & {tag(m) for m in SERVER_MESSAGES}


# Round trips and discrimination -------------------------------------------------------------------


@pytest.mark.parametrize("message", CLIENT_EXAMPLES, ids=tag)
def test_client_message_round_trips_to_its_own_class(message: Any) -> None:
    text = dump_client_message(message)
    assert json.loads(text)["type"] == tag(message)
    parsed = parse_client_message(text)
    assert type(parsed) is type(message)
    assert parsed == message
    assert parse_client_message(text.encode()) == message


@pytest.mark.parametrize("message", SERVER_EXAMPLES, ids=tag)
def test_server_message_round_trips_to_its_own_class(message: Any) -> None:
    text = dump_server_message(message)
    assert json.loads(text)["type"] == tag(message)
    parsed = parse_server_message(text)
    assert type(parsed) is type(message)
    assert parsed == message


@pytest.mark.parametrize("body", REST_EXAMPLES, ids=tag)
def test_rest_body_round_trips(body: BaseModel) -> None:
    assert type(body).model_validate_json(body.model_dump_json()) == body


def test_dumped_messages_carry_every_field() -> None:
    data = json.loads(dump_client_message(Move(match_id="m1", move="4")))
    assert data == {
        "type": "move",
        "match_id": "m1",
        "move": "4",
        "expected_seq": None,
        "search": None,
    }


def test_rest_request_may_omit_its_tag_but_not_use_a_wrong_one() -> None:
    assert MoveRequest.model_validate_json('{"move": "4"}') == MoveRequest(move="4")
    with pytest.raises(ValidationError):
        MoveRequest.model_validate_json('{"type": "move", "move": "4"}')


def test_seat_requests_tell_names_from_house_bots() -> None:
    body = MatchCreate.model_validate_json(
        '{"game": "checkers", "seats": ["open", {"bot": "mcts:simulations=500"}]}'
    )
    assert body.seats == ("open", HouseBot(bot="mcts:simulations=500"))


def test_error_message_from_protocol_error_keeps_code_and_details() -> None:
    error = reject_client(move_with(expected_seq=-1))
    message = ErrorMessage.from_error(error, match_id="m1")
    assert message.code is ErrorCode.VALIDATION_ERROR
    assert message.match_id == "m1"
    assert set(message.details) == {"expected_seq"}
    assert parse_server_message(dump_server_message(message)) == message


def test_one_translation_of_an_error_for_the_websocket_and_rest() -> None:
    error = ProtocolError(
        ErrorCode.ILLEGAL_MOVE,
        "x" * 5000,
        {"move": "9-14"},
        match_id="m_1",
        legal_moves=["11-15", "12-16"],
    )
    message = ErrorMessage.from_error(error)
    body = ErrorResponse.from_error(error)
    assert message.model_dump() == body.model_dump()
    assert message.match_id == "m_1"
    assert message.legal_moves == ("11-15", "12-16")
    assert message.details == {"move": "9-14"}
    assert len(message.message) == 2000  # cut to what the wire takes, never refused


# Rejection of bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize("message", CLIENT_EXAMPLES + SERVER_EXAMPLES, ids=tag)
def test_extra_fields_are_rejected(message: BaseModel) -> None:
    data = json.loads(message.model_dump_json())
    data["surprise"] = 1
    parse = parse_client_message if type(message) in CLIENT_MESSAGES else parse_server_message
    with pytest.raises(ProtocolError) as caught:
        parse(json.dumps(data))
    assert caught.value.code is ErrorCode.VALIDATION_ERROR
    assert "surprise" in caught.value.details


@pytest.mark.parametrize("body", REST_EXAMPLES, ids=tag)
def test_rest_bodies_reject_extra_fields(body: BaseModel) -> None:
    data = json.loads(body.model_dump_json())
    data["surprise"] = 1
    with pytest.raises(ValidationError, match="surprise"):
        type(body).model_validate(data)


def test_nested_models_reject_extra_fields() -> None:
    with pytest.raises(ValidationError, match="colour"):
        TimeControl.model_validate({"base_ms": 1000, "colour": "red"})


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"expected_seq": "3"}, "expected_seq"),
        ({"expected_seq": True}, "expected_seq"),
        ({"expected_seq": 1.5}, "expected_seq"),
        ({"expected_seq": -1}, "expected_seq"),
        ({"match_id": 5}, "match_id"),
        ({"match_id": "has space"}, "match_id"),
        ({"move": None}, "move"),
        ({"move": ["11", "15"]}, "move"),
    ],
)
def test_wrong_field_types_are_validation_errors(fields: dict[str, Any], field: str) -> None:
    error = reject_client(move_with(**fields))
    assert error.code is ErrorCode.VALIDATION_ERROR
    assert field in error.details
    assert field in error.message


@pytest.mark.parametrize(
    ("model", "data"),
    [
        (Clocks, {"remaining_ms": ["1000", 5], "server_time_ms": 0}),
        (Clocks, {"remaining_ms": [1000.5, 5], "server_time_ms": 0}),
        (Clocks, {"remaining_ms": [1000], "server_time_ms": 0}),
        (Clocks, {"remaining_ms": [-1, 5], "server_time_ms": 0}),
        (Ping, {"type": "ping", "time_ms": "now"}),
        (MatchResult, {"winner": 0, "reason": "boredom", "description": ""}),
        (MatchResult, {"winner": 0, "code": "boredom", "description": ""}),
        (MatchResult, {"winner": 0, "reason": "rules", "code": "ply_cap", "description": ""}),
        (MatchCreate, {"game": "nim", "seats": ["a", "b"], "max_plies": -1}),
        (MatchCreate, {"game": "nim", "seats": ["a", "b"], "max_plies": 100_001}),
        (MoveMade, {**json.loads(SERVER_EXAMPLES[3].model_dump_json()), "ply": 0}),
        (MatchState, {**json.loads(SERVER_EXAMPLES[2].model_dump_json()), "status": "paused"}),
    ],
)
def test_wrong_values_in_other_models_are_rejected(
    model: type[BaseModel], data: dict[str, Any]
) -> None:
    with pytest.raises(ValidationError):
        model.model_validate_json(json.dumps(data))


def test_missing_field_is_named() -> None:
    error = reject_client({"type": "move", "match_id": "m1"})
    assert error.code is ErrorCode.VALIDATION_ERROR
    assert error.details == {"move": "Field required"}


@pytest.mark.parametrize(
    "data",
    [
        {"type": "castle", "match_id": "m1"},
        {"type": "welcome", "player": "a", "server_time_ms": 1},
        {"type": None},
        {"type": ["move"]},
        {"match_id": "m1", "move": "4"},
        [{"type": "ping", "time_ms": 1}],
        "not json",
        b"\xff\xfe",
        "42",
    ],
)
def test_unknown_type_and_non_objects_are_bad_messages(data: Any) -> None:
    assert reject_client(data).code is ErrorCode.BAD_MESSAGE


def test_unknown_type_error_lists_the_known_types() -> None:
    error = reject_client({"type": "castle"})
    assert "castle" in error.message
    assert all(tag(m) in error.message for m in CLIENT_MESSAGES)


def test_server_parser_refuses_client_messages() -> None:
    with pytest.raises(ProtocolError) as caught:
        parse_server_message(dump_client_message(Ping(time_ms=1)))
    assert caught.value.code is ErrorCode.BAD_MESSAGE


def test_oversize_strings_are_rejected() -> None:
    assert reject_client(move_with(move="1" * (MAX_MOVE_LENGTH + 1))).details.keys() == {"move"}
    parse_client_message(json.dumps(move_with(move="1" * MAX_MOVE_LENGTH)))
    assert "match_id" in reject_client(move_with(match_id="m" * 65)).details
    assert (
        "client"
        in reject_client({"type": "hello", "protocol_version": "1.0", "client": "c" * 129}).details
    )
    with pytest.raises(ValidationError, match="start_position"):
        MatchCreate(game="nim", start_position="1" * (MAX_POSITION_LENGTH + 1), seats=("a", "b"))


def test_oversize_message_is_refused_before_parsing() -> None:
    text = json.dumps(move_with(move="4", padding="x" * MAX_MESSAGE_BYTES))
    error = reject_client(text)
    assert error.code is ErrorCode.MESSAGE_TOO_LARGE
    assert error.details["limit"] == MAX_MESSAGE_BYTES


def test_option_count_and_keys_are_bounded() -> None:
    options = {f"k{i}": "v" for i in range(MAX_OPTIONS)}
    assert len(MatchCreate(game="nim", options=options, seats=("a", "b")).options) == MAX_OPTIONS
    with pytest.raises(ValidationError, match="options"):
        MatchCreate(game="nim", options={**options, "extra": "v"}, seats=("a", "b"))
    with pytest.raises(ValidationError, match="options"):
        MatchCreate(game="nim", options={"Bad Key": "v"}, seats=("a", "b"))


@pytest.mark.parametrize(
    "fields",
    [
        {"base_ms": 0},
        {"base_ms": 1000, "increment_ms": -1},
        {"base_ms": 1000, "move_cap_ms": 0},
        {"base_ms": "1000"},
        {"base_ms": 8 * 86_400_000},
    ],
)
def test_time_control_bounds(fields: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        TimeControl.model_validate(fields)


@pytest.mark.parametrize("seat", [2, -1, True, "0"])
def test_seats_are_zero_or_one(seat: Any) -> None:
    with pytest.raises(ValidationError):
        MatchJoin.model_validate({"seat": seat})


def test_match_create_needs_exactly_two_seats() -> None:
    for seats in (["alice"], ["alice", "bob", "carol"]):
        with pytest.raises(ValidationError, match="seats"):
            MatchCreate.model_validate({"game": "nim", "seats": seats})


def test_tournament_openings_are_a_deck_name_or_a_list() -> None:
    body = {"game": "checkers", "bots": ["greedy", "random"]}
    assert TournamentCreate.model_validate(body).openings is None
    named = TournamentCreate.model_validate({**body, "openings": "acf-3move"})
    listed = TournamentCreate.model_validate(
        {**body, "openings": ["11-15 23-19 8-11", "fen:B:W18,22:B9,13"]}
    )
    assert named.openings == "acf-3move"
    assert listed.openings == ("11-15 23-19 8-11", "fen:B:W18,22:B9,13")
    for parsed in (named, listed):
        assert TournamentCreate.model_validate_json(parsed.model_dump_json()) == parsed


@pytest.mark.parametrize(
    ("openings", "location"),
    [
        ("11-15 23-19", ("openings", "deck")),
        ([], ("openings", "list")),
        (["4"] * (MAX_TOURNAMENT_OPENINGS + 1), ("openings", "list")),
        ({"deck": "acf-3move"}, ("openings", "list")),
        (["4", ""], ("openings", "list", 1)),
        (["4", "4\n0"], ("openings", "list", 1)),
        (["x" * (MAX_OPENING_LENGTH + 1)], ("openings", "list", 0)),
    ],
)
def test_tournament_openings_are_bounded(openings: Any, location: tuple[Any, ...]) -> None:
    body = {"game": "tictactoe", "bots": ["greedy", "random"], "openings": openings}
    with pytest.raises(ValidationError) as caught:
        TournamentCreate.model_validate(body)
    assert caught.value.errors()[0]["loc"] == location


@pytest.mark.parametrize("name", ["open", "OPEN", "", "-dash", "has space", "n" * 33])
def test_player_names_are_checked(name: str) -> None:
    with pytest.raises(ValidationError, match="name"):
        PlayerCreate(name=name)


def test_bad_bot_spec_is_rejected() -> None:
    with pytest.raises(ValidationError, match="bot"):
        HouseBot(bot="Alpha Beta")


def test_error_code_must_be_known() -> None:
    with pytest.raises(ValidationError, match="code"):
        ErrorResponse.model_validate({"code": "OOPS", "message": "x"})


@pytest.mark.parametrize("message", CLIENT_EXAMPLES + SERVER_EXAMPLES + REST_EXAMPLES, ids=tag)
def test_models_are_frozen(message: BaseModel) -> None:
    with pytest.raises(ValidationError, match="frozen"):
        message.type = "other"  # type: ignore[attr-defined]


# Hypothesis round trips ---------------------------------------------------------------------------

ids = st.from_regex(r"\A[A-Za-z0-9_\-]{1,64}\Z")
moves = st.text(min_size=1, max_size=MAX_MOVE_LENGTH)
seqs = st.none() | st.integers(min_value=0, max_value=MAX_SAFE_INTEGER)
ms = st.integers(min_value=0, max_value=MAX_SAFE_INTEGER)


@given(match_id=ids, move=moves, expected_seq=seqs)
def test_move_round_trips_for_any_valid_fields(
    match_id: str, move: str, expected_seq: int | None
) -> None:
    message = Move(match_id=match_id, move=move, expected_seq=expected_seq)
    assert parse_client_message(dump_client_message(message)) == message


@given(
    match_id=ids,
    seq=st.integers(min_value=0, max_value=MAX_SAFE_INTEGER),
    ply=st.integers(min_value=1, max_value=10_000),
    seat=st.sampled_from([0, 1]),
    move=moves,
    position=st.text(max_size=200),
    legal=st.lists(moves, max_size=10).map(tuple),
    clocks=st.none() | st.builds(Clocks, remaining_ms=st.tuples(ms, ms), server_time_ms=ms),
)
def test_move_made_round_trips_for_any_valid_fields(
    match_id: str,
    seq: int,
    ply: int,
    seat: int,
    move: str,
    position: str,
    legal: tuple[str, ...],
    clocks: Clocks | None,
) -> None:
    message = MoveMade(
        match_id=match_id,
        seq=seq,
        ply=ply,
        seat=seat,
        move=move,
        position=position,
        to_move=1 - seat,
        legal_moves=legal,
        clocks=clocks,
    )
    assert parse_server_message(dump_server_message(message)) == message


# Error and close codes, version -------------------------------------------------------------------


def test_every_error_code_is_described_and_is_its_own_wire_text() -> None:
    assert set(ERROR_DESCRIPTIONS) == set(ErrorCode)
    assert all(code.value == code.name for code in ErrorCode)
    assert all(ERROR_DESCRIPTIONS[code].strip() for code in ErrorCode)


def test_every_error_code_has_an_http_error_status() -> None:
    assert set(HTTP_STATUS) == set(ErrorCode)
    assert all(400 <= status <= 599 for status in HTTP_STATUS.values())
    assert HTTP_STATUS[ErrorCode.UNKNOWN_MATCH] == 404
    assert HTTP_STATUS[ErrorCode.UNAUTHORIZED] == 401


def test_close_codes_are_the_documented_numbers() -> None:
    assert set(CLOSE_DESCRIPTIONS) == set(CloseCode)
    assert {code.name: int(code) for code in CloseCode} == {
        "NORMAL": 1000,
        "GOING_AWAY": 1001,
        "POLICY_VIOLATION": 1008,
        "MESSAGE_TOO_BIG": 1009,
        "SERVER_ERROR": 1011,
        "BAD_PROTOCOL": 4000,
        "UNAUTHORIZED": 4001,
        "REPLACED": 4002,
        "UNSUPPORTED_VERSION": 4003,
        "TOO_SLOW": 4008,
        "HELLO_TIMEOUT": 4004,
        "TOO_MANY_CONNECTIONS": 4009,
    }


def test_version_compatibility_follows_the_major_version() -> None:
    assert PROTOCOL_VERSION == "1.5"
    assert parse_version("1.12") == (1, 12)
    assert is_compatible("1.9")
    assert not is_compatible("2.0")
    with pytest.raises(ValueError, match=r"MAJOR\.MINOR"):
        parse_version("1")
    assert "protocol_version" in reject_client({"type": "hello", "protocol_version": "v1"}).details
    # The server speaks the older of the two versions with a compatible client.
    assert [spoken_version(v) for v in ("1.0", "001.00", "1.1", "1.2", "1.3", "1.4", "1.9")] == [
        "1.0",
        "1.0",
        "1.1",
        "1.2",
        "1.3",
        "1.4",
        "1.5",
    ]


# Result codes and minor versions ------------------------------------------------------------------


def test_every_result_code_has_its_broad_reason_and_is_the_referees() -> None:
    codes = set(get_args(ResultCodeText))
    assert codes == set(RESULT_REASONS) == {code.value for code in RefereeResultCode}
    for code in RefereeResultCode:
        expected = "rules" if code.is_rules else code.value
        if code in (RefereeResultCode.PLY_CAP, RefereeResultCode.BOT_FAILURE):
            expected = "adjudication"  # what 1.0 clients were sent for them
        assert RESULT_REASONS[code.value] == expected, code


def test_a_result_built_from_its_code_gets_the_broad_reason() -> None:
    result = MatchResult(winner=None, code="repetition", description="draw: threefold repetition")
    assert (result.reason, result.code) == ("rules", "repetition")
    assert MatchResult.model_validate_json(result.model_dump_json()) == result
    old = MatchResult.model_validate({"winner": 1, "reason": "rules", "description": "x"})
    assert old.code is None  # a result from before 1.1 keeps only its reason


def test_a_client_of_an_older_minor_version_gets_only_the_fields_it_knows() -> None:
    ended = MatchEnded(
        match_id="m1", seq=9, result=MatchResult(winner=None, code="ply_cap", description="cap")
    )
    now = json.loads(dump_server_message(ended))
    assert now["result"]["code"] == "ply_cap"
    older = json.loads(dump_server_message(ended, "1.0"))
    assert older["result"] == {"winner": None, "reason": "adjudication", "description": "cap"}
    assert older == {**now, "result": older["result"]}
    state = SERVER_EXAMPLES[2].model_copy(update={"max_plies": 40, "result": RESULT})
    assert isinstance(state, MatchState)
    older_state = json.loads(dump_server_message(state, "1.0"))
    assert "max_plies" not in older_state and "code" not in older_state["result"]
    assert parse_server_message(json.dumps(older_state)) == state.model_copy(
        update={"max_plies": None, "result": RESULT.model_copy(update={"code": None})}
    )
    assert json.loads(dump_server_message(state, "1.7")) == json.loads(dump_server_message(state))
    # The fields a 1.0 client does not know are exactly those marked with their version.
    assert newer_fields(MatchState, (1, 0)) == {"max_plies": True, "result": {"code": True}}
    assert newer_fields(MatchList, (1, 0)) == {"matches": {"__all__": {"result": {"code": True}}}}
    assert newer_fields(MatchState, (1, 1)) is None
    assert newer_fields(MatchState, (1, 2)) is None
    # A REST answer already dumped loses the same fields, lists of models included.
    summary = MatchSummary(
        match_id="m1",
        game="nim",
        status="finished",
        seats=SEATS,
        result=MatchResult.of_code(1, "last_object", "first took the last object"),
        created_time_ms=0,
    )
    listed = json.loads(MatchList(matches=(summary, summary)).model_dump_json())
    older_list = json_for_version(listed, MatchList, (1, 0))
    assert [m["result"] for m in older_list["matches"]] == [
        {"winner": 1, "reason": "rules", "description": "first took the last object"}
    ] * 2
    assert json_for_version(listed, MatchList, (1, 1)) == listed
    assert MatchList.model_validate(older_list).matches[0].result == summary.result.model_copy(
        update={"code": None}
    )
    defs = json_schema()["$defs"]
    assert defs["MatchResult"]["properties"]["code"]["x-since"] == "1.1"


# Search statistics (since 1.2) --------------------------------------------------------------------

SEARCH = SearchInfo(
    depth=6,
    nodes=15_234,
    score=-35,
    pv=("11-15", "23-19", "8-11"),
    seldepth=9,
    time_ms=412,
    nps=36_975,
)

scores = st.floats(
    min_value=-MAX_SAFE_INTEGER, max_value=MAX_SAFE_INTEGER, allow_nan=False, allow_infinity=False
)
searches = st.builds(
    SearchInfo,
    depth=st.integers(min_value=0, max_value=MAX_SEARCH_DEPTH),
    nodes=st.integers(min_value=0, max_value=MAX_SAFE_INTEGER),
    score=st.none() | scores | st.integers(min_value=-MAX_SAFE_INTEGER, max_value=MAX_SAFE_INTEGER),
    outcome=st.none(),
    pv=st.lists(moves, max_size=MAX_PV_MOVES).map(tuple),
    seldepth=st.none() | st.integers(min_value=0, max_value=MAX_SEARCH_DEPTH),
    time_ms=st.none() | ms,
    nps=st.none() | ms,
) | st.builds(
    SearchInfo,
    depth=st.integers(min_value=0, max_value=MAX_SEARCH_DEPTH),
    nodes=st.integers(min_value=0, max_value=MAX_SAFE_INTEGER),
    outcome=st.sampled_from(["win", "draw", "loss"]),
    outcome_plies=st.none() | st.integers(min_value=0, max_value=MAX_SEARCH_DEPTH),
)


@given(search=searches, seq=st.none() | ms)
def test_search_statistics_round_trip_on_every_message_that_carries_them(
    search: SearchInfo, seq: int | None
) -> None:
    move = Move(match_id="m1", move="11-15", expected_seq=seq, search=search)
    assert parse_client_message(dump_client_message(move)) == move
    request = MoveRequest(move="11-15", search=search)
    assert MoveRequest.model_validate_json(request.model_dump_json()) == request
    made = MoveMade(
        match_id="m1", seq=2, ply=1, seat=0, move="11-15", position="", to_move=1, search=search
    )
    assert parse_server_message(dump_server_message(made)) == made
    recorded = RecordedMove(ply=1, seat=0, move="11-15", elapsed_ms=5, search=search)
    assert RecordedMove.model_validate_json(recorded.model_dump_json()) == recorded


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"depth": -1}, ("depth",)),
        ({"depth": MAX_SEARCH_DEPTH + 1}, ("depth",)),
        ({"depth": 2.5}, ("depth",)),
        ({"depth": "6"}, ("depth",)),
        ({"nodes": MAX_SAFE_INTEGER + 1}, ("nodes",)),
        ({"nodes": True}, ("nodes",)),
        ({"score": MAX_SAFE_INTEGER * 2.0}, ("score",)),
        ({"score": "12"}, ("score",)),
        ({"pv": ["11-15"] * (MAX_PV_MOVES + 1)}, ("pv",)),
        ({"pv": [""]}, ("pv", 0)),
        ({"pv": ["x" * (MAX_MOVE_LENGTH + 1)]}, ("pv", 0)),
        ({"outcome": "mate"}, ("outcome",)),
        ({"outcome_plies": 3}, ()),
        ({"time_ms": -1}, ("time_ms",)),
        ({"nps": MAX_SAFE_INTEGER + 1}, ("nps",)),
        ({"seldepth": MAX_SEARCH_DEPTH + 1}, ("seldepth",)),
        ({"comment": "hi"}, ("comment",)),
    ],
)
def test_search_statistics_are_bounded(fields: dict[str, Any], where: tuple[Any, ...]) -> None:
    search = {"depth": 4, "nodes": 100, **fields}
    with pytest.raises(ProtocolError) as caught:
        parse_client_message(json.dumps(move_with(search=search)))
    assert caught.value.code is ErrorCode.VALIDATION_ERROR
    assert list(caught.value.details) == [".".join(map(str, ("search", *where)))]


def test_search_statistics_need_depth_and_nodes_and_refuse_non_finite_scores() -> None:
    for search in ({"nodes": 1}, {"depth": 1}):
        with pytest.raises(ProtocolError):
            parse_client_message(json.dumps(move_with(search=search)))
    for text in ("NaN", "Infinity", "-Infinity"):
        raw = json.dumps(move_with(search={"depth": 1, "nodes": 1})).replace(
            '"nodes": 1', f'"nodes": 1, "score": {text}'
        )
        with pytest.raises(ProtocolError):
            parse_client_message(raw)


def test_clients_older_than_1_2_never_see_search_statistics() -> None:
    made = MoveMade(
        match_id="m1",
        seq=2,
        ply=1,
        seat=0,
        move="11-15",
        position="",
        to_move=1,
        elapsed_ms=830,
        search=SEARCH,
    )
    newest = json.loads(dump_server_message(made))
    assert newest["search"]["nodes"] == 15_234 and newest["elapsed_ms"] == 830
    for version in ("1.0", "1.1"):
        older = json.loads(dump_server_message(made, version))
        assert "search" not in older and "elapsed_ms" not in older
        assert parse_server_message(json.dumps(older)) == made.model_copy(
            update={"search": None, "elapsed_ms": None}
        )
    assert newer_fields(MoveMade, (1, 1)) == {"elapsed_ms": True, "search": True}
    assert newer_fields(MatchRecord, (1, 1)) == {"moves": {"__all__": {"search": True}}}
    record = next(m for m in REST_EXAMPLES if isinstance(m, MatchRecord)).model_copy(
        update={"moves": (RecordedMove(ply=1, seat=0, move="9", elapsed_ms=1, search=SEARCH),)}
    )
    dumped = json.loads(record.model_dump_json())
    assert dumped["moves"][0]["search"]["pv"] == ["11-15", "23-19", "8-11"]
    for version in ((1, 0), (1, 1)):
        assert "search" not in json_for_version(dumped, MatchRecord, version)["moves"][0]
    assert json_for_version(dumped, MatchRecord, (1, 2)) == dumped
    # A client speaking to an older server leaves the field out: that server would refuse it.
    move = Move(match_id="m1", move="4", search=SEARCH)
    assert "search" not in json.loads(dump_client_message(move, "1.1"))
    assert json.loads(dump_client_message(move, "1.2"))["search"]["depth"] == 6
    defs = json_schema()["$defs"]
    for model in ("Move", "MoveMade", "MoveRequest", "RecordedMove"):
        assert defs[model]["properties"]["search"]["x-since"] == "1.2", model


# JSON Schema and CLI ------------------------------------------------------------------------------


def test_schema_names_every_message_in_its_union() -> None:
    schema = json_schema()
    defs = schema["$defs"]
    for union, models in (("ClientMessage", CLIENT_MESSAGES), ("ServerMessage", SERVER_MESSAGES)):
        mapping = defs[union]["discriminator"]["mapping"]
        assert mapping == {tag(m): f"#/$defs/{m.__name__}" for m in models}
    for model in (*CLIENT_MESSAGES, *SERVER_MESSAGES, *REST_MODELS):
        assert model.__name__ in defs
        assert defs[model.__name__]["additionalProperties"] is False
    assert schema["x-protocol-version"] == PROTOCOL_VERSION


def test_schema_requires_the_tag_of_every_websocket_message() -> None:
    defs = json_schema()["$defs"]
    for model in (*CLIENT_MESSAGES, *SERVER_MESSAGES):
        assert "type" in defs[model.__name__]["required"], model.__name__


@pytest.mark.parametrize("message", CLIENT_EXAMPLES + SERVER_EXAMPLES + REST_EXAMPLES, ids=tag)
def test_dumped_examples_agree_with_their_schema_fields(message: BaseModel) -> None:
    schema = json_schema()["$defs"][type(message).__name__]
    data = json.loads(message.model_dump_json())
    assert set(data) == set(schema["properties"])
    assert set(schema.get("required", [])) <= set(data)
    assert data["type"] == schema["properties"]["type"]["const"]


def test_cli_prints_the_schema_as_json() -> None:
    app = typer.Typer()
    protocol_cli.register(app)
    result = CliRunner().invoke(app, ["protocol", "schema"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == json_schema()
    assert result.stdout.startswith('{\n  "')


# The documentation --------------------------------------------------------------------------------


REST_REQUESTS: tuple[type[BaseModel], ...] = (PlayerCreate, MatchCreate, MatchJoin, MoveRequest)


def doc_examples() -> list[dict[str, Any]]:
    """Return every JSON object in the ```json blocks of docs/PROTOCOL.md, in order."""
    if not DOCS.is_file():
        pytest.fail(f"{DOCS} is missing")
    decoder = json.JSONDecoder()
    examples = []
    for block in re.findall(r"```json\n(.*?)```", DOCS.read_text(), flags=re.DOTALL):
        position = 0
        while block[position:].strip():
            position += len(block[position:]) - len(block[position:].lstrip())
            value, position = decoder.raw_decode(block, position)
            assert isinstance(value, dict), value
            examples.append(value)
    return examples


def test_every_json_example_in_the_docs_is_valid() -> None:
    # ErrorMessage and ErrorResponse share the tag "error" and their fields.
    by_tag: dict[str, type[BaseModel]] = {
        tag(m): m for m in (*CLIENT_MESSAGES, *SERVER_MESSAGES, *REST_MODELS)
    }
    seen: set[str] = set()
    for example in doc_examples():
        if "type" in example:
            model = by_tag.get(example["type"])
            assert model is not None, f"docs example with an unknown type: {example}"
            model.model_validate_json(json.dumps(example))
        else:
            # A REST request body may omit its tag: it must be one of the request bodies.
            fits = [m for m in REST_REQUESTS if _is_valid(m, example)]
            assert len(fits) == 1, f"docs example fits {fits}: {example}"
            seen.add(tag(fits[0]))
        seen |= _tags_within(example)
    # MatchFilter travels as query parameters, which the docs show as a URL.
    missing = set(by_tag) - {tag(MatchFilter)} - seen
    assert not missing, f"types without an example in PROTOCOL.md: {sorted(missing)}"


def _tags_within(value: Any) -> set[str]:
    """Return the `type` tags of `value` and of every object nested in it."""
    if isinstance(value, list):
        return set().union(*(_tags_within(item) for item in value))
    if not isinstance(value, dict):
        return set()
    found = {value["type"]} if isinstance(value.get("type"), str) else set()
    return found.union(*(_tags_within(item) for item in value.values()))


def _is_valid(model: type[BaseModel], data: dict[str, Any]) -> bool:
    """Return whether `data` is a valid `model`."""
    try:
        model.model_validate_json(json.dumps(data))
    except ValidationError:
        return False
    return True


def test_docs_list_every_error_and_close_code() -> None:
    text = DOCS.read_text()
    for code in ErrorCode:
        assert f"`{code.value}`" in text, code
    for close in CloseCode:
        assert f"`{close.value}`" in text, close


@pytest.mark.parametrize(
    "text",
    [
        "[" * 30_000,
        '{"type": "ping", "time_ms": ' + "[" * 30_000,
        '{"a": ' * 10_000,
        "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1),
    ],
)
def test_deep_nesting_is_a_bad_message_not_a_recursion_error(text: str) -> None:
    error = reject_client(text)
    assert error.code is ErrorCode.BAD_MESSAGE and "nested" in error.message
    assert error.details["limit"] == MAX_JSON_DEPTH


def test_nesting_up_to_the_limit_is_diagnosed_as_usual() -> None:
    text = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert reject_client(text).message == "message must be a JSON object, not list"
    # Brackets inside strings are text, not nesting.
    error = reject_client({"type": "resign", "match_id": "[" * 60})
    assert error.code is ErrorCode.VALIDATION_ERROR


@pytest.mark.parametrize("digits", [MAX_NUMBER_DIGITS + 1, 4_301, 10_000, 60_000])
def test_absurdly_long_integers_are_bad_messages(digits: int) -> None:
    error = reject_client('{"type": "ping", "time_ms": ' + "9" * digits + "}")
    assert error.code is ErrorCode.BAD_MESSAGE
    assert error.details == {"digits": digits, "limit": MAX_NUMBER_DIGITS}


@pytest.mark.parametrize(
    "message",
    [
        {"type": "ping", "time_ms": MAX_SAFE_INTEGER + 1},
        {"type": "ping", "time_ms": 10**30},
        {"type": "move", "match_id": "m_1", "move": "4", "expected_seq": MAX_SAFE_INTEGER + 1},
    ],
)
def test_integers_of_client_messages_are_bounded(message: dict[str, Any]) -> None:
    assert reject_client(message).code is ErrorCode.VALIDATION_ERROR
    bounded = {k: MAX_SAFE_INTEGER if isinstance(v, int) else v for k, v in message.items()}
    parse_client_message(json.dumps(bounded))


def test_the_depth_scan_is_linear_on_unclosed_strings() -> None:
    # A string pattern that needs its closing quote fails at every quote of an unclosed string
    # and starts again from the next one: quadratic, seconds for this text. The scan reads an
    # unclosed string to the end of the text as one string instead, each character once (its
    # time is measured by bench/protocol.py).
    text = '"' + '\\"' * 30_000
    assert reject_client(text).code is ErrorCode.BAD_MESSAGE
    # So the brackets after the quote that opens an unclosed string are that string's text:
    # the message is refused as bad JSON, not as nested too deep.
    error = reject_client('{"type": "ping", "pad": "' + "[" * (MAX_JSON_DEPTH + 10))
    assert error.code is ErrorCode.BAD_MESSAGE and "not valid JSON" in error.message, error


# SPRT tournaments (since 1.3) ---------------------------------------------------------------------

SPRT_BODY = {"game": "tictactoe", "bots": ["alphabeta:depth=4", "random"]}


def test_sprt_settings_default_to_fishtest_error_rates_and_round_trip() -> None:
    body = TournamentCreate.model_validate({**SPRT_BODY, "sprt": {"elo0": 0, "elo1": 5}})
    assert body.sprt == SprtSettings(elo0=0, elo1=5, alpha=0.05, beta=0.05, max_pairs=1000)
    assert body.sprt.model == "normalized"
    assert TournamentCreate.model_validate_json(body.model_dump_json()) == body
    assert TournamentCreate.model_validate(SPRT_BODY).sprt is None


@pytest.mark.parametrize(
    ("sprt", "location", "words"),
    [
        ({"elo0": 5, "elo1": 5}, ("sprt",), "elo1 (5) must be greater than elo0 (5)"),
        ({"elo0": 5, "elo1": 0}, ("sprt",), "greater than elo0"),
        ({"elo0": 0, "elo1": 5, "alpha": 0}, ("sprt", "alpha"), "greater than 0"),
        ({"elo0": 0, "elo1": 5, "beta": 0.5}, ("sprt", "beta"), "less than 0.5"),
        ({"elo0": 0, "elo1": 5, "alpha": "nan"}, ("sprt", "alpha"), "finite"),
        ({"elo0": 0, "elo1": 5, "max_pairs": 0}, ("sprt", "max_pairs"), "greater than or equal"),
        ({"elo0": 0, "elo1": 5, "max_pairs": MAX_SPRT_PAIRS + 1}, ("sprt", "max_pairs"), "less"),
        ({"elo0": 0, "elo1": 5, "max_pairs": 10.0}, ("sprt", "max_pairs"), "integer"),
        ({"elo0": -201, "elo1": 5}, ("sprt", "elo0"), "greater than or equal"),
        ({"elo0": 0, "elo1": 250}, ("sprt", "elo1"), "less than or equal"),
        ({"elo0": 0, "elo1": 5, "model": "bayes"}, ("sprt", "model"), "normalized"),
        ({"elo0": 0}, ("sprt", "elo1"), "required"),
        ({"elo0": 0, "elo1": 5, "h0": 1}, ("sprt", "h0"), "not permitted"),
    ],
)
def test_bad_sprt_settings_are_refused_by_their_field(
    sprt: dict[str, Any], location: tuple[str, ...], words: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        TournamentCreate.model_validate({**SPRT_BODY, "sprt": sprt})
    problem = caught.value.errors()[0]
    assert problem["loc"] == location and words in problem["msg"], problem


def test_a_client_older_than_1_3_gets_no_sprt_fields() -> None:
    sprt = SprtState(
        llr=1.5,
        lower_bound=-2.94,
        upper_bound=2.94,
        pairs=3,
        max_pairs=10,
        pentanomial=(0, 0, 1, 1, 1),
        wins=4,
        draws=1,
        losses=1,
        elo=SprtEloEstimate(elo=240.0, lower=None, upper=None, nelo=150.0),
    )
    finished = TournamentGameFinished(
        tournament_id="t_1",
        game=TournamentGame(
            index=0, pair=0, first="a", second="b", opening="o", match_id="m", result=1.0
        ),
        games_done=6,
        games_total=20,
        points=(),
        sprt=sprt,
    )
    now = json.loads(dump_server_message(finished))
    assert now["sprt"]["pentanomial"] == [0, 0, 1, 1, 1] and now["sprt"]["verdict"] is None
    older = json.loads(dump_server_message(finished, "1.2"))
    game_then = {k: v for k, v in now["game"].items() if k != "round"}
    assert "sprt" not in older
    assert older == {k: v for k, v in now.items() if k != "sprt"} | {"game": game_then}
    assert newer_fields(TournamentState, (1, 2)) == {
        "spec": {"sprt": True, "swiss": True},
        "standings": {"swiss": True},
        "games": {"__all__": {"round": True}},
        "sprt": True,
    }
    defs = json_schema()["$defs"]
    for model in ("TournamentState", "TournamentSummary", "TournamentCreate"):
        assert defs[model]["properties"]["sprt"]["x-since"] == "1.3", model


def test_a_client_older_than_1_4_gets_no_swiss_fields() -> None:
    game = TournamentGame(
        index=3, pair=1, first="a", second="b", opening="o", match_id="m", result=0.5, round=0
    )
    finished = TournamentGameFinished(
        tournament_id="t_1", game=game, games_done=4, games_total=8, points=()
    )
    now = json.loads(dump_server_message(finished))
    assert now["game"]["round"] == 0
    older = json.loads(dump_server_message(finished, "1.3"))
    assert older == now | {"game": {k: v for k, v in now["game"].items() if k != "round"}}
    assert newer_fields(TournamentState, (1, 3)) == {
        "spec": {"swiss": True},
        "standings": {"swiss": True},
        "games": {"__all__": {"round": True}},
    }
    assert newer_fields(TournamentState, (1, 4)) is None
    defs = json_schema()["$defs"]
    assert defs["TournamentCreate"]["properties"]["swiss"]["x-since"] == "1.4"
    assert defs["TournamentStandings"]["properties"]["swiss"]["x-since"] == "1.4"
