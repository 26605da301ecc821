"""The house bots a server runs, their options and limits, and the bots online for challenges."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, Strict

from protocol.messages.base import Count, GameName, OptionKey, PlayerName, WireModel

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
