"""A match's vocabulary and its REST bodies: status, results and their codes, clocks, seats,
and the bodies that create, join, list and record matches.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self

from pydantic import Field, Strict, model_validator

from protocol.messages.base import (
    MAX_DAY_MS,
    MAX_OFFSET,
    MAX_PAGE_LIMIT,
    BotSpecText,
    Count,
    EpochMs,
    GameName,
    MatchId,
    MoveText,
    Ms,
    Options,
    PlayerName,
    PositionText,
    Seat,
    Seq,
    Text,
    WireModel,
)
from protocol.messages.search import SearchField
from protocol.messages.versioning import SINCE

MatchStatus = Literal["waiting", "active", "finished", "aborted"]
"""`waiting`: a seat is open; `active`: being played; `finished`: has a result; `aborted`."""

ResultReason = Literal[
    "rules", "resign", "timeout", "forfeit", "agreement", "aborted", "adjudication"
]
"""Why a match ended, broadly: by the game's rules (`description` says how), a resignation, a
flag fall or an exceeded per-move cap, a forfeit after too many illegal moves, a draw by
agreement, an abort, or an adjudication by the server (a ply cap, a house bot that failed, a
tournament stopped). `ResultCodeText` says which precisely; `RESULT_REASONS` maps it to this."""

ResultCodeText = Literal[
    "no_moves",
    "repetition",
    "move_rule",
    "line",
    "board_full",
    "last_object",
    "ply_cap",
    "resign",
    "timeout",
    "forfeit",
    "bot_failure",
    "agreement",
    "aborted",
    "adjudication",
]
"""How a match ended, precisely (since protocol 1.1; the values of `games.match.ResultCode`).

By the rules: `no_moves` (the side to move had no legal move, or no pieces: it lost),
`repetition` and `move_rule` (draws; checkers: threefold repetition, 80 plies without a capture
or a man move), `line` (three or four in a row), `board_full` (a draw), `last_object` (Nim: the
last object taken, a loss under misère rules). By the match: `ply_cap` (drawn at the match's
`max_plies`), `resign`, `timeout`, `forfeit`, `bot_failure` (a house bot crashed, returned no
move or was stopped: it lost), `agreement`, `aborted`, `adjudication` (the server decided, e.g.
a tournament stopped)."""

RESULT_REASONS: dict[str, ResultReason] = {
    "no_moves": "rules",
    "repetition": "rules",
    "move_rule": "rules",
    "line": "rules",
    "board_full": "rules",
    "last_object": "rules",
    "ply_cap": "adjudication",
    "resign": "resign",
    "timeout": "timeout",
    "forfeit": "forfeit",
    "bot_failure": "adjudication",
    "agreement": "agreement",
    "aborted": "aborted",
    "adjudication": "adjudication",
}
"""The broad `ResultReason` of each `ResultCodeText`: what a 1.0 client was sent for it.

`ply_cap` and `bot_failure` are `adjudication`, as the server reported them before 1.1."""

MAX_PLIES = 100_000
"""The largest ply cap a match (`max_plies`) or tournament (`ply_cap`) may have."""


MaxPlies = Annotated[
    int,
    Strict(),
    Field(
        ge=0,
        le=MAX_PLIES,
        description="A ply cap: the number of moves that draws a match (0: drawn at the start).",
    ),
]


class TimeControl(WireModel):
    """Each side's time: `base_ms` at the start, `increment_ms` added after each of its moves.

    With `move_cap_ms`, a single move taking longer than the cap also loses on time.
    """

    base_ms: Annotated[int, Strict(), Field(ge=1, le=7 * MAX_DAY_MS)]
    increment_ms: Annotated[int, Strict(), Field(ge=0, le=MAX_DAY_MS)] = 0
    move_cap_ms: Annotated[int, Strict(), Field(ge=1, le=MAX_DAY_MS)] | None = None


class Clocks(WireModel):
    """Both seats' remaining time in ms, as measured at `server_time_ms`.

    Only the clock of seat `running` is running (None when both are stopped); subtract the
    time elapsed since `server_time_ms` from it to know the time left now.
    """

    remaining_ms: tuple[Ms, Ms]
    running: Seat | None = None
    server_time_ms: EpochMs


class SeatInfo(WireModel):
    """Who sits in a seat: a player, a house bot, or nobody yet (both None: the seat is open).

    `challenged` names the player a challenge invites to this seat, until they accept (then
    they are its `player`) or decline (the match is aborted). An open seat has none of the three.
    """

    seat: Seat
    side: Annotated[str, Field(min_length=1, max_length=32)] = Field(
        description="The game's name for this side, e.g. `black`."
    )
    player: PlayerName | None = None
    bot: BotSpecText | None = None
    challenged: PlayerName | None = None


class HouseBot(WireModel):
    """A seat request for a bot run by the server itself."""

    bot: BotSpecText


OPEN_SEAT = "open"
"""The seat request meaning: anyone may join this seat."""

SeatRequest = Annotated[
    PlayerName | HouseBot,
    Field(description="A player name, `open` (anyone may join), or {'bot': SPEC}."),
]


class MatchResult(WireModel):
    """How a match ended: the winning seat (None for a draw or an abort) and why.

    `reason` is broad and `code` precise (since 1.1; None for a match finished on a server of
    an older version, which kept only `reason`). Built with a `code` and no `reason`, the
    reason is filled in from RESULT_REASONS; given both, they must agree.
    """

    winner: Seat | None
    reason: ResultReason
    code: ResultCodeText | None = Field(
        default=None, json_schema_extra={SINCE: "1.1"}, description="How it ended, precisely."
    )
    description: Text = Field(description="The reason in words, e.g. `four in a row`.")

    @classmethod
    def of_code(cls, winner: int | None, code: str, description: str) -> Self:
        """Return the result with `code` (a `ResultCodeText`) and its broad reason."""
        return cls.model_validate({"winner": winner, "code": code, "description": description})

    @model_validator(mode="before")
    @classmethod
    def _reason_from_code(cls, data: Any) -> Any:
        if isinstance(data, dict) and "reason" not in data:
            code = data.get("code")
            if isinstance(code, str) and code in RESULT_REASONS:
                return {**data, "reason": RESULT_REASONS[code]}
        return data

    @model_validator(mode="after")
    def _code_agrees_with_reason(self) -> Self:
        if self.code is not None and RESULT_REASONS[self.code] != self.reason:
            raise ValueError(
                f"result code {self.code!r} has the reason {RESULT_REASONS[self.code]!r}, "
                f"not {self.reason!r}"
            )
        return self


class MatchCreate(WireModel):
    """Create a match (request body): the game, its setup, the clocks and who sits where.

    `start_position` defaults to the game's standard start; no `time_control` means untimed.
    `max_plies` (since 1.1; None: no cap) draws the match when that many moves have been
    played from the start position, with result code `ply_cap`.
    """

    type: Literal["match_create"] = "match_create"
    game: GameName
    options: Options = Field(default_factory=dict)
    start_position: PositionText | None = None
    time_control: TimeControl | None = None
    max_plies: MaxPlies | None = Field(default=None, json_schema_extra={SINCE: "1.1"})
    seats: tuple[SeatRequest, SeatRequest]


class MatchJoin(WireModel):
    """Take an open seat in a match (request body); `seat` None means any open seat."""

    type: Literal["match_join"] = "match_join"
    seat: Seat | None = None


class MoveRequest(WireModel):
    """Play a move over REST (request body); `expected_seq` as in the `move` message."""

    type: Literal["move_request"] = "move_request"
    move: MoveText
    expected_seq: Seq | None = None
    search: SearchField = None


class MatchFilter(WireModel):
    """Which matches to list; every filter given must hold. Newest first, `limit` at a time."""

    type: Literal["match_filter"] = "match_filter"
    status: MatchStatus | None = None
    game: GameName | None = None
    player: PlayerName | None = None
    limit: Annotated[int, Strict(), Field(ge=1, le=MAX_PAGE_LIMIT)] = 50
    offset: Annotated[int, Strict(), Field(ge=0, le=MAX_OFFSET)] = 0


class MatchSummary(WireModel):
    """One line of a match list."""

    type: Literal["match_summary"] = "match_summary"
    match_id: MatchId
    game: GameName
    options: Options = Field(default_factory=dict)
    status: MatchStatus
    seats: tuple[SeatInfo, SeatInfo]
    time_control: TimeControl | None = None
    to_move: Seat | None = None
    ply: Annotated[int, Strict(), Field(ge=0)] = 0
    result: MatchResult | None = None
    created_time_ms: EpochMs


class MatchList(WireModel):
    """A page of matches; `next_offset` is None on the last page."""

    type: Literal["match_list"] = "match_list"
    matches: tuple[MatchSummary, ...] = ()
    next_offset: Annotated[int, Strict(), Field(ge=0)] | None = None


class RecordedMove(WireModel):
    """One move of a match record: who played it, how long it took, the clocks after it."""

    ply: Annotated[int, Strict(), Field(ge=1)]
    seat: Seat
    move: MoveText
    elapsed_ms: Ms = Field(description="The mover's thinking time, as the server measured it.")
    clocks_ms: tuple[Ms, Ms] | None = Field(
        default=None, description="Both seats' remaining time after the move (None: untimed)."
    )
    search: SearchField = None


class MatchRecord(WireModel):
    """A whole match (GET /matches/{id}/record): set-up, seats, every move with its time, result.

    The words mean what they mean in `match_state`: `seats` says who played each side,
    `result` is a `MatchResult`, `to_move` is None once the match is over. `illegal_counts`
    are each seat's rejected moves; `clocks_ms` the remaining time now (None: untimed).
    """

    type: Literal["match_record"] = "match_record"
    match_id: MatchId
    game: GameName
    options: Options = Field(default_factory=dict)
    seats: tuple[SeatInfo, SeatInfo]
    start_position: PositionText
    time_control: TimeControl | None = None
    max_illegal_moves: Annotated[int, Strict(), Field(ge=1)]
    max_plies: MaxPlies | None = Field(default=None, json_schema_extra={SINCE: "1.1"})
    status: MatchStatus
    result: MatchResult | None = None
    position: PositionText
    to_move: Seat | None = None
    clocks_ms: tuple[Ms, Ms] | None = None
    moves: tuple[RecordedMove, ...] = ()
    illegal_counts: tuple[Count, Count]
    draw_offer: Seat | None = None
    seq: Seq
