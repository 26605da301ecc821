"""Players on the wire: registering one (and its token), and the Glicko-2 ratings, leaderboards
and profiles.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, Strict, field_validator

from protocol.messages.base import BotSpecText, Count, GameName, PlayerName, WireModel
from protocol.messages.matches import OPEN_SEAT


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
