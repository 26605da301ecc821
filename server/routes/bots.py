"""The house bots a match or tournament may seat, with the server's limits on them (public)."""

from __future__ import annotations

from fastapi import APIRouter

from protocol.messages import BotList
from server.deps import SettingsDep
from server.limits import house_bots

router = APIRouter(prefix="/bots", tags=["bots"])


@router.get("")
async def list_bots(settings: SettingsDep) -> BotList:
    """List the house bots (a seat `{"bot": SPEC}`), their options and this server's maxima.

    A spec over a `server_maximum` is refused with VALIDATION_ERROR when a match or
    tournament names it.
    """
    return house_bots(settings)
