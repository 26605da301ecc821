"""The wire messages: every WebSocket message and REST body as a frozen pydantic model.

Each model has a `type` tag. WebSocket messages are read through the discriminated unions
`ClientMessage` (client to server) and `ServerMessage` (server to client); the tag is required
there. REST bodies carry a tag too, which a request may omit.

Moves and positions are text in each game's own notation; this package never reads them. A seat
is 0 or 1: the player number of the games package (seat 0 moves first from the standard start).
Times are integers in milliseconds; `*_time_ms` fields are Unix epoch milliseconds.
"""

from __future__ import annotations

import functools
import json
import re
from itertools import accumulate
from typing import Annotated, Any, Literal, Self, TypeAlias, get_args, get_origin

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Strict,
    Tag,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from protocol.errors import ErrorCode, ProtocolError, ScalarValue
from protocol.version import PROTOCOL_VERSION, parse_version

MAX_MESSAGE_BYTES = 65_536
"""The largest WebSocket message or REST body, in bytes of UTF-8, that a server must accept."""

MAX_MOVE_LENGTH = 128
MAX_POSITION_LENGTH = 4096
MAX_OPTIONS = 32
MAX_DAY_MS = 86_400_000
MAX_SAFE_INTEGER = 2**53 - 1
"""The largest integer a time or seq may be: every JSON reader (JavaScript's too) holds it
exactly."""
MAX_JSON_DEPTH = 32
"""The deepest nesting of arrays and objects a message may have; deeper is BAD_MESSAGE."""
MAX_NUMBER_DIGITS = 32
"""The most digits an integer of a message may have; longer is BAD_MESSAGE."""

MAX_PAGE_LIMIT = 200
"""The most items one page of a list (`limit`) holds."""
MAX_OFFSET = 1_000_000
"""The largest `offset` of a list: pages further on are not served."""


def next_offset(offset: int, limit: int, fetched: int) -> int | None:
    """Return the `next_offset` of a page read with `limit + 1` rows, `fetched` of them found.

    None on the last page, and where the next page would start past MAX_OFFSET.
    """
    following = offset + limit
    return following if fetched > limit and following <= MAX_OFFSET else None


# Constrained field types. Integers are strict: JSON `"5"`, `5.5` or `true` is not an integer.
Ms = Annotated[
    int, Strict(), Field(ge=0, le=MAX_SAFE_INTEGER, description="A duration in milliseconds.")
]
EpochMs = Annotated[
    int,
    Strict(),
    Field(ge=0, le=MAX_SAFE_INTEGER, description="Unix epoch time in milliseconds."),
]
Seq = Annotated[
    int,
    Strict(),
    Field(
        ge=0,
        le=MAX_SAFE_INTEGER,
        description="The match's event counter: +1 per accepted event of the match.",
    ),
]
Seat = Annotated[
    int,
    Strict(),
    Field(ge=0, le=1, description="A seat: 0 moves first from the standard start, 1 second."),
]
PlayerName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=32,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$",
        description="A player name: letters, digits, `_`, `.`, `-`; starts with a letter or "
        "digit. `open` is reserved.",
    ),
]
MatchId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9_\-]+$",
        description="A match id chosen by the server; treat it as opaque text.",
    ),
]
GameName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=32,
        pattern=r"^[a-z][a-z0-9_]*$",
        description="A game name as `arena games` lists it, e.g. `checkers`.",
    ),
]
OptionKey = Annotated[str, Field(min_length=1, max_length=32, pattern=r"^[a-z][a-z0-9_]*$")]
OptionValue = Annotated[str, Field(min_length=1, max_length=256)]
Options = Annotated[
    dict[OptionKey, OptionValue],
    Field(max_length=MAX_OPTIONS, description="Game options as text, e.g. {'heaps': '3,4,5'}."),
]
MoveText = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_MOVE_LENGTH,
        description="A move in the game's notation, e.g. `11-15` (checkers), `4` (connect4).",
    ),
]
PositionText = Annotated[
    str,
    Field(
        max_length=MAX_POSITION_LENGTH,
        description="A position in the game's notation (may be empty, e.g. connect4's start).",
    ),
]
BotSpecText = Annotated[
    str,
    Field(
        min_length=1,
        max_length=256,
        pattern=r"^[a-z][a-z0-9_]*(:[^\s:]*)?$",
        description="A bot spec as `arena bots` documents it, e.g. `alphabeta:depth=4`.",
    ),
]
VersionText = Annotated[
    str,
    Field(
        min_length=3,
        max_length=16,
        pattern=r"^[0-9]{1,4}\.[0-9]{1,4}$",
        description="A protocol version MAJOR.MINOR.",
    ),
]
ClientName = Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[^\x00-\x1f\x7f]+$")]
MAX_TEXT_LENGTH = 2000
Text = Annotated[str, Field(max_length=MAX_TEXT_LENGTH)]
Details = dict[Annotated[str, Field(max_length=128)], ScalarValue]

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

TournamentId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9_\-]+$",
        description="A tournament id chosen by the server; treat it as opaque text.",
    ),
]
TournamentFormat = Literal["round-robin", "gauntlet"]
"""`round-robin`: every bot against every other; `gauntlet`: the first bot against each other."""
TournamentStatus = Literal["created", "running", "finished", "cancelled", "failed"]
"""`created`: scheduled, not started; `running`: games being played; `finished`: all played;
`cancelled`: stopped by its owner; `failed`: stopped by an error (`reason` says which)."""
InvitationStatus = Literal["pending", "accepted", "declined"]
"""A player's answer to a tournament's invitation."""
MAX_TOURNAMENT_BOTS = 16
MAX_TOURNAMENT_CONCURRENCY = 16
MAX_TOURNAMENT_OPENINGS = 1000
"""The most openings a tournament may list (a pairing plays at most 500 of them)."""
MAX_OPENING_LENGTH = MAX_POSITION_LENGTH + 16
DeckName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        pattern=r"^[a-z0-9][a-z0-9.\-]*$",
        description="A deck of openings that ships with Arena, e.g. `acf-3move` (checkers).",
    ),
]
OpeningText = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_OPENING_LENGTH,
        pattern=r"^[^\x00-\x1f\x7f]+$",
        description="One opening as a line of an openings file: moves from the start separated "
        "by spaces or commas (`11-15 23-19 8-11`), or `fen:` and a position.",
    ),
]


def _openings_kind(value: Any) -> str:
    """Tell a deck name (text) from a list, so an error names `openings.deck` or `.list`."""
    return "deck" if isinstance(value, str) else "list"


TournamentOpenings = Annotated[
    Annotated[DeckName, Tag("deck")]
    | Annotated[
        tuple[OpeningText, ...],
        Field(min_length=1, max_length=MAX_TOURNAMENT_OPENINGS),
        Tag("list"),
    ],
    Discriminator(_openings_kind),
]
"""A tournament's openings: a deck's name, or a list of openings."""
Score = Annotated[float, Field(ge=0, le=1, description="Points of one game: 1, 0.5 or 0.")]
Count = Annotated[int, Strict(), Field(ge=0)]
JobId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9_\-]+$",
        description="A grading job's id, chosen by the server: anyone holding it can read the "
        "job, so keep it as private as the submission.",
    ),
]
GradingProfileName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=32,
        pattern=r"^[a-z][a-z0-9_]*$",
        description="An assignment profile of the autograder, e.g. `endgame` or `agent`.",
    ),
]
JobStatus = Literal["queued", "running", "done", "error"]
"""`queued`: waiting for a grader slot; `running`: being graded; `done`: graded (whatever the
score); `error`: the grader itself failed (its results say so and score 0; not the student's
fault: report it)."""


def _require_type(schema: dict[str, Any]) -> None:
    """Mark `type` required in a message's JSON Schema: the unions cannot work without it."""
    required = schema.setdefault("required", [])
    if "type" not in required:
        required.insert(0, "type")


SINCE = "x-since"
"""The JSON Schema key of a field added in a minor version: its value is that version.

`dump_server_message(message, version)` leaves out the fields a client's version does not
know (docs/PROTOCOL.md, "Versioning")."""

MaxPlies = Annotated[
    int,
    Strict(),
    Field(
        ge=0,
        le=MAX_PLIES,
        description="A ply cap: the number of moves that draws a match (0: drawn at the start).",
    ),
]


class WireModel(BaseModel):
    """Base of every protocol model: immutable, and unknown fields are an error."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class WireMessage(WireModel):
    """Base of the WebSocket messages, whose `type` tag is required on the wire."""

    model_config = ConfigDict(json_schema_extra=_require_type)


# Shared parts -------------------------------------------------------------------------------------


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


MAX_PV_MOVES = 64
"""The most moves a search's principal variation (`SearchInfo.pv`) may list."""
MAX_SEARCH_DEPTH = 10_000
"""The largest depth, in plies, a search may report."""

SearchOutcome = Literal["win", "draw", "loss"]
"""A result a search proved for the mover with best play from both sides."""


class SearchInfo(WireModel):
    """What a bot's search found for the move it played (since protocol 1.2; all optional on
    the wire but `depth` and `nodes`).

    `score` is from the mover's point of view (positive: good for the side that played the
    move), in the bot's own units: compare a bot's scores with each other, not with another
    bot's. Arena's own bots score in their evaluation's units (checkers: a man is 100), a
    forced win as 1,000,000 less the plies to it, and MCTS as its mean reward in [-1, 1].
    `outcome` is set when the search proved the result (then `outcome_plies`, when known, is
    how many plies from the position before the move it takes); otherwise `score` is an
    estimate. `pv` is the principal variation from the move played (its first move), in the
    game's notation. `depth` is the search's depth in plies (iterative deepening: the last
    depth completed; MCTS: the deepest node), `seldepth` the deepest ply any line reached.
    """

    depth: Annotated[int, Strict(), Field(ge=0, le=MAX_SEARCH_DEPTH)]
    nodes: Annotated[int, Strict(), Field(ge=0, le=MAX_SAFE_INTEGER)]
    score: (
        Annotated[
            float,
            Strict(),
            Field(allow_inf_nan=False, ge=-MAX_SAFE_INTEGER, le=MAX_SAFE_INTEGER),
        ]
        | None
    ) = None
    outcome: SearchOutcome | None = None
    outcome_plies: Annotated[int, Strict(), Field(ge=0, le=MAX_SEARCH_DEPTH)] | None = None
    pv: Annotated[tuple[MoveText, ...], Field(max_length=MAX_PV_MOVES)] = ()
    seldepth: Annotated[int, Strict(), Field(ge=0, le=MAX_SEARCH_DEPTH)] | None = None
    time_ms: Ms | None = Field(
        default=None, description="The search's own time, as the bot measured it."
    )
    nps: Annotated[int, Strict(), Field(ge=0, le=MAX_SAFE_INTEGER)] | None = None

    @model_validator(mode="after")
    def _plies_need_an_outcome(self) -> Self:
        if self.outcome_plies is not None and self.outcome is None:
            raise ValueError("outcome_plies needs an outcome: the result the search proved")
        return self


SearchField = Annotated[
    SearchInfo | None,
    Field(
        json_schema_extra={SINCE: "1.2"},
        description="The bot's search statistics for this move (None: not reported).",
    ),
]


# Client to server ---------------------------------------------------------------------------------


class Hello(WireMessage):
    """Open a session: the first message on every connection, naming the protocol version."""

    type: Literal["hello"] = "hello"
    protocol_version: VersionText
    client: ClientName | None = None


class Move(WireMessage):
    """Play `move` in a match; with `expected_seq`, only if the match's seq still equals it."""

    type: Literal["move"] = "move"
    match_id: MatchId
    move: MoveText
    expected_seq: Seq | None = None
    search: SearchField = None


class Resign(WireMessage):
    """Resign a match: the opponent wins."""

    type: Literal["resign"] = "resign"
    match_id: MatchId


class OfferDraw(WireMessage):
    """Offer a draw; it stands until the opponent accepts, declines or moves."""

    type: Literal["offer_draw"] = "offer_draw"
    match_id: MatchId


class AcceptDraw(WireMessage):
    """Accept the opponent's pending draw offer: the match ends drawn."""

    type: Literal["accept_draw"] = "accept_draw"
    match_id: MatchId


class DeclineDraw(WireMessage):
    """Decline the opponent's pending draw offer."""

    type: Literal["decline_draw"] = "decline_draw"
    match_id: MatchId


class Abort(WireMessage):
    """Abort a match before its first move: it ends with no winner and no rating change."""

    type: Literal["abort"] = "abort"
    match_id: MatchId


class AcceptChallenge(WireMessage):
    """Accept a challenge: take the seat it invites you to (the match starts once full)."""

    type: Literal["accept_challenge"] = "accept_challenge"
    match_id: MatchId


class DeclineChallenge(WireMessage):
    """Decline a challenge: the match is aborted and no one plays it."""

    type: Literal["decline_challenge"] = "decline_challenge"
    match_id: MatchId


MAX_BOT_GAMES = 32
"""At most this many games in a `bot_available`."""


class BotAvailable(WireMessage):
    """Say this connection's player is a bot open to challenges (since 1.3).

    While `available` and connected, the player is listed by `GET /bots/online` with `games`
    (the games it accepts challenges to; None: any), so that other bots can challenge it. Send
    it again to change `games`, or with `available` false to leave the list; a connection that
    closes leaves it too. Send it only to a server whose `welcome` says 1.3 or later.
    """

    type: Literal["bot_available"] = "bot_available"
    available: bool = True
    games: Annotated[tuple[GameName, ...], Field(max_length=MAX_BOT_GAMES)] | None = None


class Ping(WireMessage):
    """Ask for a `pong`; `time_ms` is the client's own clock, echoed back to measure latency."""

    type: Literal["ping"] = "ping"
    time_ms: EpochMs


ClientMessage: TypeAlias = Annotated[
    Hello
    | Move
    | Resign
    | OfferDraw
    | AcceptDraw
    | DeclineDraw
    | Abort
    | Ping
    | AcceptChallenge
    | DeclineChallenge
    | BotAvailable,
    Field(discriminator="type"),
]
"""Any message a client sends on a WebSocket, told apart by `type`."""


# Server to client ---------------------------------------------------------------------------------


class Welcome(WireMessage):
    """Accept a `hello`: the server's protocol version and who the token belongs to.

    `player` is None on a spectator connection.
    """

    type: Literal["welcome"] = "welcome"
    protocol_version: VersionText = PROTOCOL_VERSION
    player: PlayerName | None
    server_time_ms: EpochMs


class Challenge(WireMessage):
    """You are challenged: a match invites you to `your_seat`; answer `accept_challenge` or
    `decline_challenge`.

    Sent when the match is created (if you are connected) and on every new connection while
    the challenge waits. `challenger` is the player who created the match. Nothing is played
    and no clock runs until every challenged player has accepted.
    """

    type: Literal["challenge"] = "challenge"
    match_id: MatchId
    game: GameName
    options: Options = Field(default_factory=dict)
    start_position: PositionText
    seats: tuple[SeatInfo, SeatInfo]
    your_seat: Seat
    challenger: PlayerName | None = None
    time_control: TimeControl | None = None
    seq: Seq


class MatchStarted(WireMessage):
    """Announce a match that has begun (both seats filled); a `match_state` follows at once."""

    type: Literal["match_started"] = "match_started"
    match_id: MatchId
    game: GameName
    options: Options = Field(default_factory=dict)
    seats: tuple[SeatInfo, SeatInfo]
    your_seat: Seat | None = None
    time_control: TimeControl | None = None
    seq: Seq


class MatchState(WireMessage):
    """The full state of a match; everything a client needs to resume.

    `position` is the current position, `moves` every move from `start_position`. `to_move`
    and `legal_moves` are None and empty once the match is over. `clocks` is None for an
    untimed match; `max_plies` (since 1.1) is the match's ply cap, None for none.
    `draw_offer` is the seat whose draw offer is pending. `your_seat` is the receiver's seat
    (None for spectators).
    """

    type: Literal["match_state"] = "match_state"
    match_id: MatchId
    game: GameName
    options: Options = Field(default_factory=dict)
    start_position: PositionText
    position: PositionText
    moves: tuple[MoveText, ...] = ()
    to_move: Seat | None
    seats: tuple[SeatInfo, SeatInfo]
    your_seat: Seat | None = None
    time_control: TimeControl | None = None
    max_plies: MaxPlies | None = Field(default=None, json_schema_extra={SINCE: "1.1"})
    clocks: Clocks | None = None
    legal_moves: tuple[MoveText, ...] = ()
    status: MatchStatus
    result: MatchResult | None = None
    draw_offer: Seat | None = None
    seq: Seq


class MoveMade(WireMessage):
    """A move was played in a match (sent to both players and every spectator).

    `ply` counts the moves played so far, this one included (the first move has ply 1).
    `position`, `to_move` and `legal_moves` describe the position after the move; a move that
    ends the match is followed by a `match_ended` with the same `seq`. `elapsed_ms` (since 1.2)
    is the mover's thinking time as the server measured it, as in the match record.
    """

    type: Literal["move_made"] = "move_made"
    match_id: MatchId
    seq: Seq
    ply: Annotated[int, Strict(), Field(ge=1)]
    seat: Seat
    move: MoveText
    position: PositionText
    to_move: Seat | None
    legal_moves: tuple[MoveText, ...] = ()
    clocks: Clocks | None = None
    elapsed_ms: Ms | None = Field(
        default=None,
        json_schema_extra={SINCE: "1.2"},
        description="The mover's thinking time, as the server measured it.",
    )
    search: SearchField = None


class DrawOffered(WireMessage):
    """Seat `seat` offers a draw; answer with `accept_draw` or `decline_draw`, or just move."""

    type: Literal["draw_offered"] = "draw_offered"
    match_id: MatchId
    seq: Seq
    seat: Seat


class DrawDeclined(WireMessage):
    """Seat `seat` declined the pending draw offer."""

    type: Literal["draw_declined"] = "draw_declined"
    match_id: MatchId
    seq: Seq
    seat: Seat


class MatchEnded(WireMessage):
    """A match is over: its result, and the clocks as they stopped."""

    type: Literal["match_ended"] = "match_ended"
    match_id: MatchId
    seq: Seq
    status: Literal["finished", "aborted"] = "finished"
    result: MatchResult
    clocks: Clocks | None = None


class _ErrorFields(WireMessage):
    """The fields of an error, shared by the WebSocket message and the REST body."""

    type: Literal["error"] = "error"
    code: ErrorCode
    message: Text
    match_id: MatchId | None = None
    legal_moves: tuple[MoveText, ...] | None = None
    details: Details = Field(default_factory=dict)

    @classmethod
    def from_error(cls, error: ProtocolError, match_id: str | None = None) -> Self:
        """Return the error answering `error`: its code, message (cut to what the wire takes),
        details, and the match and legal moves it names. The one translation of a refusal,
        for the WebSocket `error` message and the REST `ErrorResponse` alike."""
        return cls(
            code=error.code,
            message=error.message[:MAX_TEXT_LENGTH],
            match_id=match_id or error.match_id,
            legal_moves=error.legal_moves,
            details=error.details,
        )


class ErrorMessage(_ErrorFields):
    """A request was refused; `code` says why and the match, if any, is unchanged.

    `legal_moves` is set on move errors; `details` maps field names or facts to values.
    """


class Pong(WireMessage):
    """Answer a `ping`: the client's `time_ms` echoed, and the server's clock."""

    type: Literal["pong"] = "pong"
    time_ms: EpochMs
    server_time_ms: EpochMs


class TournamentGame(WireModel):
    """One game of a tournament: who played whom from which opening, its match and result.

    `first` sits in seat 0 (the game's first player), `second` in seat 1. `result` is the
    score of `first` (None while the game is being played); `reason` says why it ended.
    """

    index: Count = Field(description="The game's number in the schedule, from 0.")
    pair: Count = Field(description="The pairing's number (the colour-swapped games share it).")
    first: BotSpecText
    second: BotSpecText
    opening: Annotated[str, Field(max_length=MAX_POSITION_LENGTH)]
    match_id: MatchId
    result: Score | None = None
    reason: Text | None = None


class BotPoints(WireModel):
    """One bot's points, wins, draws and losses so far."""

    bot: BotSpecText
    points: Annotated[float, Field(ge=0)]
    games: Count
    wins: Count
    draws: Count
    losses: Count


class HeadToHead(WireModel):
    """One bot's record against one opponent."""

    games: Count
    wins: Count
    draws: Count
    losses: Count
    points: Annotated[float, Field(ge=0)]


class BotRating(WireModel):
    """One bot's Elo (Davidson model, mean 0) with its 95% interval (None: unbounded)."""

    bot: BotSpecText
    elo: float
    lower: float | None = None
    upper: float | None = None
    games: Count
    points: Annotated[float, Field(ge=0)]
    score: Annotated[float, Field(ge=0, le=1)]


class TournamentStandings(WireModel):
    """Points (best first), ratings, the crosstable and the likelihood of superiority.

    `ratings`, `crosstable` and `los` are empty until a game is finished; `rating_note` says
    why no rating could be fitted when that happens. `los[a][b]` is the probability that a is
    stronger than b; `crosstable[a][b]` is a's record against b.
    """

    points: tuple[BotPoints, ...]
    ratings: tuple[BotRating, ...] = ()
    first_move_advantage: float | None = None
    crosstable: dict[BotSpecText, dict[BotSpecText, HeadToHead]] = Field(default_factory=dict)
    los: dict[BotSpecText, dict[BotSpecText, Annotated[float, Field(ge=0, le=1)]]] = Field(
        default_factory=dict
    )
    rating_note: Text | None = None


MAX_SPRT_PAIRS = 5000
"""The most colour-swapped pairs an SPRT tournament may be capped at (10,000 games)."""
MAX_SPRT_ELO = 200
"""The largest Elo difference (either sign) an SPRT hypothesis may name: a test asks about a
few Elo, and beyond about 250 normalized Elo some counts meet no constraint of the test."""

SprtElo = Annotated[float, Field(allow_inf_nan=False, ge=-MAX_SPRT_ELO, le=MAX_SPRT_ELO)]
SprtRate = Annotated[float, Field(allow_inf_nan=False, gt=0, lt=0.5)]
SprtModel = Literal["normalized", "logistic"]
"""How an SPRT reads an Elo difference: `normalized` Elo (fastchess's default: measured in how
many games it takes to see it) or `logistic` Elo (the expected score 1 / (1 + 10^(-elo/400)))."""
SprtVerdict = Literal["H0", "H1", "inconclusive"]
"""What an SPRT concluded: `H1` the first bot is stronger by elo1, `H0` it is not stronger by
elo0, `inconclusive` the cap was reached first."""


class SprtSettings(WireModel):
    """A sequential probability ratio test between a tournament's two bots (since 1.3).

    H0 says the first bot is `elo0` Elo stronger than the second, H1 `elo1` (elo0 < elo1);
    `alpha` is the chance of accepting H1 when H0 holds, `beta` that of accepting H0 when H1
    holds. The bots play colour-swapped pairs until the test decides, or `max_pairs` pairs
    (inconclusive). The settings and maths are those of `arena match --sprt`.
    """

    elo0: SprtElo
    elo1: SprtElo
    alpha: SprtRate = 0.05
    beta: SprtRate = 0.05
    model: SprtModel = "normalized"
    max_pairs: Annotated[int, Strict(), Field(ge=1, le=MAX_SPRT_PAIRS)] = 1000

    @model_validator(mode="after")
    def _elo1_above_elo0(self) -> Self:
        if self.elo1 <= self.elo0:
            raise ValueError(f"elo1 ({self.elo1:g}) must be greater than elo0 ({self.elo0:g})")
        return self


FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
"""A number that is neither infinite nor NaN (JSON has neither)."""


class SprtEloEstimate(WireModel):
    """The Elo difference an SPRT's counted pairs show, with its 95% interval (None:
    unbounded); `nelo` is normalized Elo. A sequential test's estimate leans away from zero
    (it stops on a run of luck); the interval does not correct for that."""

    elo: FiniteFloat | None = None
    lower: FiniteFloat | None = None
    upper: FiniteFloat | None = None
    nelo: FiniteFloat | None = None


class SprtState(WireModel):
    """Where a tournament's SPRT stands (since 1.3), seen from the first bot.

    Pairs count in schedule order, each once both its games have ended and every earlier pair
    has counted; none counts after the verdict (games under way then end, uncounted).
    `pentanomial` counts the pairs scoring 0, 0.5, 1, 1.5 and 2; `wins`, `draws`, `losses` the
    games of those pairs. The test accepts H0 when `llr` <= `lower_bound`, H1 when `llr` >=
    `upper_bound`; `verdict` is None while it runs.
    """

    llr: FiniteFloat
    lower_bound: FiniteFloat
    upper_bound: FiniteFloat
    pairs: Count
    max_pairs: Count
    pentanomial: tuple[Count, Count, Count, Count, Count]
    wins: Count
    draws: Count
    losses: Count
    verdict: SprtVerdict | None = None
    elo: SprtEloEstimate | None = None


SprtStateField = Annotated[
    SprtState | None,
    Field(
        json_schema_extra={SINCE: "1.3"},
        description="The SPRT's state, for a tournament with `sprt` settings (else None).",
    ),
]


class TournamentCreate(WireModel):
    """Create a tournament (request body); every game is a server match.

    `bots` are house bots given by spec, or registered players written `player:NAME`, who play
    their games over the network like any match (a bot connected with `arena bot`, say). The
    creator owns the tournament; every other player named is invited and must accept before
    the owner can start it.
    Each pairing plays `games_per_pairing` games (even: each opening twice, colours swapped)
    from openings drawn with `seed` out of `openings`: a deck's name, a list of openings, or
    None for the game's default (checkers: the `acf-3move` deck; other games: random ones);
    the server refuses a deck or an opening that is not of the game. A game reaching `ply_cap`
    plies (the opening's included) is drawn by adjudication. At most `concurrency` of its
    matches are played at once, each with `time_control` (None: untimed; give one when players
    take part, so an absent player loses on time instead of stalling the tournament).
    With `sprt` (since 1.3) the tournament is a match between exactly two bots played in
    colour-swapped pairs (one opening each, dealt in turn; `format` and `games_per_pairing` do
    not apply) until the test decides or `sprt.max_pairs` pairs are counted.
    """

    type: Literal["tournament_create"] = "tournament_create"
    game: GameName
    options: Options = Field(default_factory=dict)
    bots: tuple[BotSpecText, ...] = Field(min_length=2, max_length=MAX_TOURNAMENT_BOTS)
    format: TournamentFormat = "round-robin"
    games_per_pairing: Annotated[int, Strict(), Field(ge=2, le=1000, multiple_of=2)] = 2
    seed: Annotated[int, Strict(), Field(ge=0, le=2**63 - 1)] = 0
    ply_cap: Annotated[int, Strict(), Field(ge=1, le=MAX_PLIES)] = 200
    concurrency: Annotated[int, Strict(), Field(ge=1, le=MAX_TOURNAMENT_CONCURRENCY)] = 2
    time_control: TimeControl | None = None
    openings: TournamentOpenings | None = None
    sprt: SprtSettings | None = Field(
        default=None,
        json_schema_extra={SINCE: "1.3"},
        description="Play two bots' colour-swapped pairs until this SPRT decides (since 1.3).",
    )


class TournamentState(WireMessage):
    """A tournament: its set-up, status, progress, standings and every game begun so far.

    `owner` created it and alone may start or cancel it; `invitations` holds each invited
    player's answer; `reason` says why a `cancelled` or `failed` tournament stopped.
    """

    type: Literal["tournament_state"] = "tournament_state"
    tournament_id: TournamentId
    spec: TournamentCreate
    status: TournamentStatus
    owner: PlayerName | None = None
    invitations: dict[PlayerName, InvitationStatus] = Field(default_factory=dict)
    reason: Text | None = None
    games_done: Count
    games_total: Count
    standings: TournamentStandings
    games: tuple[TournamentGame, ...] = ()
    created_time_ms: EpochMs
    sprt: SprtStateField = None


class TournamentGameFinished(WireMessage):
    """A game of a tournament is over: the game, the progress and the points table now (and
    the SPRT's state, which this game may have moved)."""

    type: Literal["tournament_game_finished"] = "tournament_game_finished"
    tournament_id: TournamentId
    game: TournamentGame
    games_done: Count
    games_total: Count
    points: tuple[BotPoints, ...]
    sprt: SprtStateField = None


class TournamentFinished(WireMessage):
    """A tournament is over (every game played, its SPRT decided, or stopped): the final
    standings and SPRT state."""

    type: Literal["tournament_finished"] = "tournament_finished"
    tournament_id: TournamentId
    games_done: Count
    games_total: Count
    standings: TournamentStandings
    sprt: SprtStateField = None


ServerMessage: TypeAlias = Annotated[
    Welcome
    | MatchStarted
    | MatchState
    | MoveMade
    | DrawOffered
    | DrawDeclined
    | MatchEnded
    | ErrorMessage
    | Pong
    | TournamentState
    | TournamentGameFinished
    | TournamentFinished
    | Challenge,
    Field(discriminator="type"),
]
"""Any message the server sends on a WebSocket, told apart by `type`."""


# REST bodies --------------------------------------------------------------------------------------


class PlayerCreate(WireModel):
    """Register a player by name (request body)."""

    type: Literal["player_create"] = "player_create"
    name: PlayerName

    @field_validator("name")
    @classmethod
    def _not_reserved(cls, name: str) -> str:
        """Refuse `open`, which means an open seat in `MatchCreate.seats`."""
        if name.lower() == OPEN_SEAT:
            raise ValueError(f"{name!r} is reserved: it means an open seat")
        return name


class PlayerCreated(WireModel):
    """A registered player; `token` is shown this once and stored only as a hash."""

    type: Literal["player_created"] = "player_created"
    id: Annotated[str, Field(min_length=1, max_length=64)]
    name: PlayerName
    token: Annotated[str, Field(min_length=16, max_length=256)]


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


class TournamentSummary(WireModel):
    """One tournament in a list: its set-up, status and progress."""

    type: Literal["tournament_summary"] = "tournament_summary"
    tournament_id: TournamentId
    spec: TournamentCreate
    status: TournamentStatus
    owner: PlayerName | None = None
    games_done: Count
    games_total: Count
    created_time_ms: EpochMs
    sprt: SprtStateField = None


class TournamentList(WireModel):
    """A page of tournaments, newest first; `next_offset` is None on the last page."""

    type: Literal["tournament_list"] = "tournament_list"
    tournaments: tuple[TournamentSummary, ...]
    next_offset: Annotated[int, Strict(), Field(ge=0)] | None = None


RatingValue = Annotated[float, Field(allow_inf_nan=False, ge=-1_000_000, le=1_000_000)]


class PlayerRating(WireModel):
    """A Glicko-2 rating in one game (since 1.1): a registered player's or a house bot's.

    Exactly one of `player` and `bot` is set; a house bot is rated under its canonical spec.
    `rating` and `deviation` (RD) are on the Glicko scale (a newcomer is 1500 and 350);
    `games` counts the rated matches. docs/PROTOCOL.md, "Ratings", says which matches count.
    """

    game: GameName
    player: PlayerName | None = None
    bot: BotSpecText | None = None
    rating: RatingValue
    deviation: RatingValue
    volatility: RatingValue
    games: Count


class Leaderboard(WireModel):
    """A page of a game's ratings, highest first (GET /leaderboard, since 1.1)."""

    type: Literal["leaderboard"] = "leaderboard"
    game: GameName
    ratings: tuple[PlayerRating, ...] = ()
    next_offset: Annotated[int, Strict(), Field(ge=0)] | None = None


class PlayerProfile(WireModel):
    """A registered player and their rating in each game they have played rated matches of
    (GET /players/{name}, since 1.1); games without a rated match are not listed."""

    type: Literal["player_profile"] = "player_profile"
    name: PlayerName
    ratings: tuple[PlayerRating, ...] = ()


class GradingProfile(WireModel):
    """An assignment profile the hosted autograder grades, and what an upload must hold."""

    type: Literal["grading_profile"] = "grading_profile"
    name: GradingProfileName
    description: Annotated[str, Field(max_length=2000)]
    main_file: Annotated[str, Field(min_length=1, max_length=64)]
    """The program every upload must hold at its top level, e.g. `checkers.py`."""
    max_upload_bytes: Count


class GradingProfiles(WireModel):
    """The profiles the server grades, and the limits of an upload."""

    type: Literal["grading_profiles"] = "grading_profiles"
    profiles: tuple[GradingProfile, ...]
    max_files: Count
    queue_limit: Count
    """Jobs that may wait at once; beyond it an upload gets QUEUE_FULL."""
    sandboxed: bool
    """Whether student code runs in the sandbox; when false, uploads get GRADER_UNAVAILABLE
    (unless the operator allowed unsandboxed grading, for trials)."""


BotName = Annotated[str, Field(min_length=1, max_length=32, pattern=r"^[a-z][a-z0-9_]*$")]
Number = Annotated[int | float, Field(allow_inf_nan=False)]


class BotOptionInfo(WireModel):
    """One option of a house bot: its kind, default, bounds, and the server's limit on it.

    `kind` is `int`, `float`, `bool`, `str` or `eval` (one of the game's evaluations by name);
    `default` is written as in a spec (`null`: the help says what is used). `minimum` and
    `maximum` bound the value everywhere; `server_maximum` is this server's smaller limit
    (`null`: none), set by `server_setting`, and checked only while every option of `unless`
    is 0 (those options bound the search instead).
    """

    type: Literal["bot_option"] = "bot_option"
    name: OptionKey
    kind: Literal["int", "float", "bool", "str", "eval"]
    default: Annotated[str, Field(max_length=64)] | None
    help: Annotated[str, Field(max_length=500)]
    minimum: Number | None
    maximum: Number | None
    server_maximum: Number | None
    server_setting: Annotated[str, Field(max_length=64)] | None
    unless: tuple[OptionKey, ...] = ()


class BotInfo(WireModel):
    """A house bot the server runs: its spec name, what it does and its options."""

    type: Literal["bot_info"] = "bot_info"
    name: BotName
    description: Annotated[str, Field(max_length=500)]
    options: tuple[BotOptionInfo, ...]


class BotLimits(WireModel):
    """This server's maxima of a house bot's search (its `ARENA_BOT_*` settings)."""

    type: Literal["bot_limits"] = "bot_limits"
    max_depth: Count
    max_simulations: Count
    max_seconds: Annotated[float, Field(gt=0, allow_inf_nan=False)]
    max_nodes: Count
    threads: Count
    """Threads the house bots search on."""
    searches_per_player: Count
    """Searches of one player's matches at once (the others wait their turn)."""


class OnlineBot(WireModel):
    """A bot connected now and open to challenges (it sent `bot_available`).

    `games` are the games it accepts challenges to (None: any); `playing` counts the
    unfinished matches it sits in (a bot at 0 is idle).
    """

    name: PlayerName
    games: tuple[GameName, ...] | None = None
    playing: Annotated[int, Strict(), Field(ge=0)]


class OnlineBots(WireModel):
    """The bots online now (`GET /bots/online`), by name, at most `limit` of them."""

    type: Literal["online_bots"] = "online_bots"
    bots: tuple[OnlineBot, ...]


class BotList(WireModel):
    """The house bots a match or tournament may name (`{"bot": SPEC}`), and their limits."""

    type: Literal["bot_list"] = "bot_list"
    bots: tuple[BotInfo, ...]
    limits: BotLimits


class QueueWait(WireModel):
    """Why a queued grading job waits: its place, and whose jobs are graded before it.

    `position` counts from 1 (1: the next job a free worker takes); `ahead` jobs (position
    less one) are taken before it: `ahead_own` of them the same player's earlier uploads,
    `ahead_address` other players' from the same client address, `ahead_others` everyone
    else's. The queue takes client addresses in turn, then the players of an address in turn
    (docs/GRADER.md), so a player or an address with many jobs waiting waits behind the
    others. `reason` says the same in words.
    """

    type: Literal["queue_wait"] = "queue_wait"
    position: Annotated[int, Strict(), Field(ge=1)]
    ahead: Count
    ahead_own: Count
    ahead_address: Count
    ahead_others: Count
    reason: Text


class GradingJob(WireModel):
    """A grading job: its status, its place in the queue and why it waits, and its score once
    graded.

    `results_url` (Gradescope's results.json) and `report_url` (an HTML report) answer once the
    status is `done` or `error`; before then they answer JOB_NOT_FINISHED.
    """

    type: Literal["grading_job"] = "grading_job"
    job_id: JobId
    profile: GradingProfileName
    status: JobStatus
    files: tuple[Annotated[str, Field(max_length=255)], ...]
    queue_position: Annotated[int, Strict(), Field(ge=1)] | None = None
    """1 for the next job to start; None unless `queued`."""
    wait: QueueWait | None = None
    """Why it waits, while `queued` (its place and whose jobs are before it)."""
    score: Annotated[float, Field(ge=0)] | None = None
    max_score: Annotated[float, Field(ge=0)] | None = None
    summary: Annotated[str, Field(max_length=4000)] | None = None
    created_time_ms: EpochMs
    started_time_ms: EpochMs | None = None
    finished_time_ms: EpochMs | None = None
    results_url: Annotated[str, Field(max_length=256)]
    report_url: Annotated[str, Field(max_length=256)]


class ErrorResponse(_ErrorFields):
    """The body of every REST error response, with the same fields as the `error` message."""


REST_MODELS: tuple[type[WireModel], ...] = (
    PlayerCreate,
    PlayerCreated,
    MatchCreate,
    MatchJoin,
    MoveRequest,
    MatchFilter,
    MatchSummary,
    MatchList,
    MatchRecord,
    TournamentCreate,
    TournamentSummary,
    TournamentList,
    GradingProfiles,
    GradingJob,
    BotList,
    OnlineBots,
    Leaderboard,
    PlayerProfile,
    ErrorResponse,
)
"""Every REST body model (a match's full state over REST is a `MatchState`)."""

CLIENT_MESSAGES: tuple[type[WireMessage], ...] = (
    Hello,
    Move,
    Resign,
    OfferDraw,
    AcceptDraw,
    DeclineDraw,
    Abort,
    Ping,
    AcceptChallenge,
    DeclineChallenge,
    BotAvailable,
)
"""Every client-to-server WebSocket message model, in the order of the union."""

SERVER_MESSAGES: tuple[type[WireMessage], ...] = (
    Welcome,
    MatchStarted,
    MatchState,
    MoveMade,
    DrawOffered,
    DrawDeclined,
    MatchEnded,
    ErrorMessage,
    Pong,
    TournamentState,
    TournamentGameFinished,
    TournamentFinished,
    Challenge,
)
"""Every server-to-client WebSocket message model, in the order of the union."""

_CLIENT_ADAPTER: TypeAdapter[ClientMessage] = TypeAdapter(ClientMessage)
_SERVER_ADAPTER: TypeAdapter[ServerMessage] = TypeAdapter(ServerMessage)


def _parse(
    adapter: TypeAdapter[Any], data: bytes | str, known: tuple[type[WireMessage], ...]
) -> Any:
    """Validate one JSON message, raising ProtocolError with the error code that fits."""
    size = len(data.encode() if isinstance(data, str) else data)
    if size > MAX_MESSAGE_BYTES:
        raise ProtocolError(
            ErrorCode.MESSAGE_TOO_LARGE,
            f"message of {size} bytes exceeds the limit of {MAX_MESSAGE_BYTES} bytes",
            {"size": size, "limit": MAX_MESSAGE_BYTES},
        )
    try:
        return adapter.validate_json(data)
    except ValidationError as exc:
        # Only a rejected message pays for a second parse, to tell BAD_MESSAGE from the rest.
        raise _diagnose(data, exc, known) from None


def _diagnose(
    data: bytes | str, exc: ValidationError, known: tuple[type[WireMessage], ...]
) -> ProtocolError:
    """Return the ProtocolError that explains why `data` failed validation."""
    text = data if isinstance(data, str) else data.decode("utf-8", errors="replace")
    depth = _json_depth(text)
    if depth > MAX_JSON_DEPTH:
        # Checked before json.loads, which recurses once per level (RecursionError).
        return ProtocolError(
            ErrorCode.BAD_MESSAGE,
            f"message is nested {depth} levels deep; the limit is {MAX_JSON_DEPTH}",
            {"depth": depth, "limit": MAX_JSON_DEPTH},
        )
    try:
        raw = json.loads(text, parse_int=_bounded_int)
    except _NumberTooLongError as error:
        return ProtocolError(
            ErrorCode.BAD_MESSAGE,
            f"message has an integer of {error.digits} digits; the limit is {MAX_NUMBER_DIGITS}",
            {"digits": error.digits, "limit": MAX_NUMBER_DIGITS},
        )
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        return ProtocolError(ErrorCode.BAD_MESSAGE, f"message is not valid JSON: {error}")
    if not isinstance(raw, dict):
        return ProtocolError(
            ErrorCode.BAD_MESSAGE, f"message must be a JSON object, not {type(raw).__name__}"
        )
    tags = [model.model_fields["type"].default for model in known]
    tag = raw.get("type")
    if tag not in tags:
        shown = "no `type` field" if tag is None else f"unknown type {tag!r}"
        return ProtocolError(
            ErrorCode.BAD_MESSAGE,
            f"{shown} (expected one of: {', '.join(tags)})",
            {"type": tag if isinstance(tag, str) else None},
        )
    model = known[tags.index(tag)]
    return _validation_error(str(tag), exc, tuple(model.model_fields))


# A string, or an unclosed one to the end of the text: the optional closing quote keeps the scan
# linear (a required one would rescan from every quote of an unclosed string: quadratic).
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"?', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_BRACKET_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def _json_depth(text: str) -> int:
    """Return the deepest nesting of arrays and objects in `text`, strings skipped.

    Works on any text, JSON or not, in linear time and without recursion.
    """
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    return max(accumulate(map(_BRACKET_STEP.__getitem__, brackets)), default=0)


class _NumberTooLongError(ValueError):
    def __init__(self, digits: int) -> None:
        super().__init__(f"an integer of {digits} digits")
        self.digits = digits


def _bounded_int(literal: str) -> int:
    """Parse a JSON integer, refusing one longer than MAX_NUMBER_DIGITS (before int() runs)."""
    digits = len(literal.lstrip("-"))
    if digits > MAX_NUMBER_DIGITS:
        raise _NumberTooLongError(digits)
    return int(literal)


def _validation_error(tag: str, exc: ValidationError, fields: tuple[str, ...]) -> ProtocolError:
    """Return the VALIDATION_ERROR naming each bad field of a `tag` message (`fields`: the
    message's own, named when an unknown one was sent)."""
    details: dict[str, ScalarValue] = {}
    for error in exc.errors(include_url=False):
        # The first location item is the union's tag; the rest is the field path.
        location = ".".join(str(part) for part in error["loc"][1:]) or "(message)"
        problem = error["msg"]
        if error["type"] == "extra_forbidden" and len(error["loc"]) == 2:
            problem = f"unknown field; a {tag} has only the fields {', '.join(fields)}"
        details.setdefault(location, problem)
    listed = "; ".join(f"{field}: {problem}" for field, problem in details.items())
    return ProtocolError(ErrorCode.VALIDATION_ERROR, f"bad {tag} message: {listed}", details)


def parse_client_message(data: bytes | str) -> ClientMessage:
    """Return the client message encoded as JSON in `data`.

    Raises ProtocolError: MESSAGE_TOO_LARGE over MAX_MESSAGE_BYTES, BAD_MESSAGE for anything
    but a JSON object with a known `type`, VALIDATION_ERROR (with `details` per field) for a
    known message with bad fields.
    """
    message: ClientMessage = _parse(_CLIENT_ADAPTER, data, CLIENT_MESSAGES)
    return message


def parse_hello(data: bytes | str) -> Hello:
    """Return the `hello` that opens a connection, encoded as JSON in `data`.

    Raises ProtocolError as `parse_client_message` does for a bad hello (VALIDATION_ERROR
    naming its bad fields), and BAD_MESSAGE naming the type of any other message, even one with
    bad fields of its own: what is wrong with it first is that it is not a hello.
    """
    try:
        message = parse_client_message(data)
    except ProtocolError as error:
        if error.code is not ErrorCode.VALIDATION_ERROR:
            raise
        # A known type with bad fields: valid JSON within the limits (checked already).
        tag = json.loads(data)["type"]
        if tag == "hello":
            raise
        message_type = str(tag)
    else:
        if isinstance(message, Hello):
            return message
        message_type = message.type
    raise ProtocolError(
        ErrorCode.BAD_MESSAGE, f"the first message must be hello, not {message_type}"
    )


def parse_server_message(data: bytes | str) -> ServerMessage:
    """Return the server message encoded as JSON in `data`; errors as `parse_client_message`."""
    message: ServerMessage = _parse(_SERVER_ADAPTER, data, SERVER_MESSAGES)
    return message


def dump_server_message(message: ServerMessage, version: str = PROTOCOL_VERSION) -> str:
    """Return the JSON text of a server message, every field present (null when unset).

    For a client of an older minor `version` (the one its `hello` named), the fields added
    since are left out (see `SINCE`), so that client reads only fields it knows.
    """
    exclude = (
        None if version == PROTOCOL_VERSION else newer_fields(type(message), _version_of(version))
    )
    if exclude is None:  # the hot path: a client of this version (or newer)
        return _SERVER_ADAPTER.dump_json(message).decode()
    return message.model_dump_json(exclude=exclude)


@functools.cache
def _version_of(version: str) -> tuple[int, int]:
    return parse_version(version)


def newer_fields(model: type[BaseModel], version: tuple[int, int]) -> dict[str, Any] | None:
    """Return the `exclude` of `model_dump` that leaves out the fields newer than `version`.

    Nested models are followed (a field holding a model, an optional one, or a tuple of them);
    None when every field is known at `version`.
    """
    return _newer_fields(model, version)


def json_for_version(data: Any, model: type[BaseModel], version: tuple[int, int]) -> Any:
    """Return `data`, the JSON value of a `model`, without the fields newer than `version`.

    For a REST answer already dumped: the fields left out are those of `newer_fields`.
    """
    return _prune(data, newer_fields(model, version))


def _prune(data: Any, exclude: dict[str, Any] | None) -> Any:
    if exclude is None or not isinstance(data, dict):
        return data
    kept = {}
    for key, value in data.items():
        rule = exclude.get(key)
        if rule is True:
            continue
        if isinstance(rule, dict) and "__all__" in rule and isinstance(value, list):
            kept[key] = [_prune(item, rule["__all__"]) for item in value]
        elif isinstance(rule, dict):
            kept[key] = _prune(value, rule)
        else:
            kept[key] = value
    return kept


@functools.cache
def _newer_fields(model: type[BaseModel], version: tuple[int, int]) -> dict[str, Any] | None:
    exclude: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        extra = field.json_schema_extra
        since = extra.get(SINCE) if isinstance(extra, dict) else None
        if isinstance(since, str) and parse_version(since) > version:
            exclude[name] = True
            continue
        for inner, many in _models_in(field.annotation):
            nested = _newer_fields(inner, version)
            if nested is not None:
                exclude[name] = {"__all__": nested} if many else nested
    return exclude or None


def _models_in(annotation: Any, many: bool = False) -> list[tuple[type[BaseModel], bool]]:
    """Return the models a field's annotation holds, each with whether it is in a sequence."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [(annotation, many)]
    origin = get_origin(annotation)
    inside = many or origin in (tuple, list)
    return [found for arg in get_args(annotation) for found in _models_in(arg, inside)]


def dump_client_message(message: ClientMessage, version: str = PROTOCOL_VERSION) -> str:
    """Return the JSON text of a client message, every field present (null when unset).

    For a server of an older minor `version` (the one its `welcome` named), the fields added
    since are left out: that server would refuse them as unknown.
    """
    exclude = (
        None if version == PROTOCOL_VERSION else newer_fields(type(message), _version_of(version))
    )
    if exclude is None:
        return _CLIENT_ADAPTER.dump_json(message).decode()
    return message.model_dump_json(exclude=exclude)
