"""Players: register by name and get an API token (shown once, stored hashed); read a player's
ratings."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, status

from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import ErrorResponse, PlayerCreate, PlayerCreated, PlayerProfile
from server.auth import new_token
from server.deps import PlayersDep, RatingsDep, limit_registration
from server.ratelimit import RATE_LIMITED_RESPONSE

router = APIRouter(prefix="/players", tags=["players"])


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    responses={
        409: {"model": ErrorResponse},
        422: {"model": ErrorResponse},
        429: RATE_LIMITED_RESPONSE,
    },
    dependencies=[Depends(limit_registration)],
)
async def register_player(body: PlayerCreate, players: PlayersDep) -> PlayerCreated:
    """Register a player; the token in the answer is shown this once (409 SEAT_TAKEN if taken)."""
    token, token_hash = new_token()
    player = await players.register(body.name, token_hash)
    return PlayerCreated(id=f"p_{player.id}", name=player.name, token=token)


NamePath = Annotated[
    str, Path(min_length=1, max_length=32, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
]


@router.get("/{name}", responses={404: {"model": ErrorResponse}, 422: {"model": ErrorResponse}})
async def get_player(name: NamePath, players: PlayersDep, ratings: RatingsDep) -> PlayerProfile:
    """Return a player and their rating in each game they have played rated (404 UNKNOWN_PLAYER)."""
    player = await players.named(name)
    if player is None:
        raise ProtocolError(ErrorCode.UNKNOWN_PLAYER, f"no player is called {name!r}")
    return await ratings.profile(player)
