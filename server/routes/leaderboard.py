"""The leaderboard: a game's Glicko-2 ratings, highest first (public)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from protocol.messages import ErrorResponse, Leaderboard
from server.deps import RatingsDep
from server.routes.params import KnownGame, PageLimit, PageOffset

ERRORS: dict[int | str, dict[str, Any]] = {422: {"model": ErrorResponse}}

router = APIRouter(prefix="/leaderboard", tags=["ratings"], responses=ERRORS)


@router.get("")
async def get_leaderboard(
    ratings: RatingsDep,
    game: Annotated[KnownGame, Query(description="The game whose ratings to list.")],
    limit: PageLimit = 50,
    offset: PageOffset = 0,
) -> Leaderboard:
    """List a game's ratings (players and house bots), highest first; 422 for an unknown game."""
    return await ratings.leaderboard(game, limit=limit, offset=offset)
