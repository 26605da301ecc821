"""The house bots a match or tournament may seat, with the server's limits on them, and the
players' bots online now and open to challenges (both public)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from protocol.messages import MAX_PAGE_LIMIT, BotList, ErrorResponse, GameName, OnlineBots
from server.deps import PresenceDep, QueriesDep, SettingsDep
from server.limits.compute import house_bots

router = APIRouter(prefix="/bots", tags=["bots"])


@router.get("")
async def list_bots(settings: SettingsDep) -> BotList:
    """List the house bots (a seat `{"bot": SPEC}`), their options and this server's maxima.

    A spec over a `server_maximum` is refused with VALIDATION_ERROR when a match or
    tournament names it.
    """
    return house_bots(settings)


@router.get("/online", responses={422: {"model": ErrorResponse}})
async def online_bots(
    presence: PresenceDep,
    queries: QueriesDep,
    game: Annotated[GameName | None, Query(description="Only bots accepting this game.")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE_LIMIT)] = 50,
) -> OnlineBots:
    """List the bots online now and open to challenges (they sent `bot_available` on `/ws`),
    by name: the games each accepts and how many unfinished matches it sits in (`playing`).

    A bot challenges another by creating a match with it in a seat (`POST /matches`).
    """
    return await queries.online_bots(await presence.online(), game=game, limit=limit)
