"""Hosted bots on the wire: a bot a player uploads and the server runs, its versions and
what its owner may read of its failures (docs/PROTOCOL.md, "Hosted bots")."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from protocol.messages.base import Count, EpochMs, GameName, PlayerName, WireModel
from protocol.messages.versioning import SINCE

HostedBotName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=32,
        pattern=r"^[a-z0-9][a-z0-9_\-]*$",
        description="A hosted bot's name, unique among its owner's bots: lower-case letters, "
        "digits, `_` and `-`. Its seat spec is `hosted:OWNER/NAME`.",
    ),
]
HostedBotKind = Literal["plugin", "engine"]
"""`plugin`: a Python file holding a plug-in class (docs/ENGINES.md, "Python plug-ins") or the
course's `select_move` function; `engine`: a Python program speaking the engine protocol on its
stdin and stdout (docs/ENGINES.md)."""
VersionStatus = Literal["ready", "refused"]
"""`ready`: it started in the sandbox and answered the handshake, so it may be made active;
`refused`: it did not (`note` says why) and can never play."""


class HostedBotCreate(WireModel):
    """A new hosted bot: its name and the game it plays (its program comes as versions)."""

    type: Literal["hosted_bot_create"] = "hosted_bot_create"
    name: HostedBotName
    game: GameName
    description: Annotated[str, Field(max_length=200)] = ""


class HostedBotVersion(WireModel):
    """One uploaded program of a hosted bot: each is kept, and rated and recorded on its own."""

    type: Literal["hosted_bot_version"] = "hosted_bot_version"
    number: Annotated[int, Field(ge=1)]
    kind: HostedBotKind
    entry: Annotated[str, Field(min_length=1, max_length=128)]
    """The file the sandbox runs (`bot.py`)."""
    size: Count
    sha256: Annotated[str, Field(min_length=64, max_length=64)]
    status: VersionStatus
    note: Annotated[str, Field(max_length=2000)]
    """The engine's name from its handshake when ready; why it was refused otherwise."""
    spec: Annotated[str, Field(max_length=256)]
    """The seat spec of exactly this version: `hosted:OWNER/NAME@N`."""
    created_ms: EpochMs


class HostedBot(WireModel):
    """A hosted bot: its owner, game, versions and which one plays (`active`)."""

    type: Literal["hosted_bot"] = "hosted_bot"
    owner: PlayerName
    name: HostedBotName
    game: GameName
    description: Annotated[str, Field(max_length=200)]
    spec: Annotated[str, Field(max_length=256)]
    """The seat spec that plays the active version: `hosted:OWNER/NAME`."""
    active: int | None
    """The number of the version that plays; None until one is made active."""
    paused: Annotated[str, Field(max_length=500)] | None
    """Why the bot plays no new match (too many failures in a row), if it is paused."""
    versions: tuple[HostedBotVersion, ...]
    created_ms: EpochMs


class HostedBotList(WireModel):
    """A page of hosted bots."""

    type: Literal["hosted_bot_list"] = "hosted_bot_list"
    bots: tuple[HostedBot, ...]


class HostedBotUpdate(WireModel):
    """A change to a hosted bot by its owner: the version that plays, its description, or
    lifting a pause."""

    type: Literal["hosted_bot_update"] = "hosted_bot_update"
    active: Annotated[int, Field(ge=1)] | None = None
    description: Annotated[str, Field(max_length=200)] | None = None
    resume: bool = False
    """True lifts a pause (the failure count starts again from zero)."""


class HostedBotFailure(WireModel):
    """How a version failed in a match, as only its owner reads it: the words and the last
    of what the program wrote on stderr (bounded)."""

    type: Literal["hosted_bot_failure"] = "hosted_bot_failure"
    version: Annotated[int, Field(ge=1)]
    match_id: Annotated[str, Field(max_length=64)] | None
    words: Annotated[str, Field(max_length=2000)]
    created_ms: EpochMs


class HostedBotFailures(WireModel):
    """A hosted bot's latest failures, newest first (to its owner only)."""

    type: Literal["hosted_bot_failures"] = "hosted_bot_failures"
    failures: tuple[HostedBotFailure, ...]


PoolName = Annotated[
    str,
    Field(min_length=1, max_length=32, pattern=r"^[a-z0-9][a-z0-9_\-]*$", description="A pool."),
]


class PoolJoin(WireModel):
    """A member for a pool: `OWNER/NAME`, a hosted bot of the caller's, or the caller's own
    player name, a bot the caller plays with its own client (`arena bot`, connected and open to
    challenges)."""

    type: Literal["pool_join"] = "pool_join"
    bot: Annotated[
        str,
        Field(
            min_length=1,
            max_length=65,
            pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*(/[a-z0-9][a-z0-9_\-]*)?$",
        ),
    ]


class PoolEntry(WireModel):
    """A member of a pool's ladder: the rating of the version that plays now (a hosted bot), or
    of the player (a connected bot, `connected`)."""

    type: Literal["pool_entry"] = "pool_entry"
    bot: Annotated[str, Field(max_length=65)]
    """`OWNER/NAME` of a hosted bot; a connected bot's player name."""
    spec: Annotated[str, Field(max_length=256)] | None
    """The version that plays (`hosted:OWNER/NAME@N`); None while it has none, and for a
    connected bot."""
    rating: float
    deviation: float
    games: Count
    paused: Annotated[str, Field(max_length=500)] | None
    playing: bool
    joined_ms: EpochMs
    connected: bool = Field(
        default=False,
        json_schema_extra={SINCE: "1.5"},
        description="A bot its player's own client plays (`arena bot`): paired while it is "
        "online and open to challenges.",
    )


class PoolGameSummary(WireModel):
    """A match the pool made: its bots (first to move first) and how it ended."""

    type: Literal["pool_game"] = "pool_game"
    match_id: Annotated[str, Field(max_length=64)]
    first: Annotated[str, Field(max_length=256)]
    second: Annotated[str, Field(max_length=256)]
    status: Annotated[str, Field(max_length=16)]
    winner: Annotated[int, Field(ge=0, le=1)] | None
    created_ms: EpochMs


class Pool(WireModel):
    """A rated pool: its game and clock, its ladder (highest rating first), the games being
    played and the latest finished."""

    type: Literal["pool"] = "pool"
    name: PoolName
    game: GameName
    base_ms: Count
    increment_ms: Count
    ladder: tuple[PoolEntry, ...]
    live: tuple[PoolGameSummary, ...]
    recent: tuple[PoolGameSummary, ...]


class PoolSummary(WireModel):
    """A pool as a list shows it."""

    type: Literal["pool_summary"] = "pool_summary"
    name: PoolName
    game: GameName
    base_ms: Count
    increment_ms: Count
    members: Count


class PoolList(WireModel):
    """The server's pools."""

    type: Literal["pool_list"] = "pool_list"
    pools: tuple[PoolSummary, ...]
