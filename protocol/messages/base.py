"""The common ground of every message: the limits, the constrained field types and the base models.

Integers are strict and times are milliseconds; a `WireModel` is frozen and refuses unknown
fields, and a `WireMessage` (a WebSocket message) must carry its `type` tag.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, Strict

from protocol.errors import ScalarValue

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
Count = Annotated[int, Strict(), Field(ge=0)]


def _require_type(schema: dict[str, Any]) -> None:
    """Mark `type` required in a message's JSON Schema: the unions cannot work without it."""
    required = schema.setdefault("required", [])
    if "type" not in required:
        required.insert(0, "type")


class WireModel(BaseModel):
    """Base of every protocol model: immutable, and unknown fields are an error."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class WireMessage(WireModel):
    """Base of the WebSocket messages, whose `type` tag is required on the wire."""

    model_config = ConfigDict(json_schema_extra=_require_type)
