"""Players: register by name and get an API token (shown once, stored hashed)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, status

from protocol.messages import ErrorResponse, PlayerCreate, PlayerCreated
from server.auth import new_token
from server.deps import PlayersDep, limit_registration
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
