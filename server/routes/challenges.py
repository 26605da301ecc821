"""Challenges: the matches waiting for the caller to accept or decline a seat."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from protocol.messages import Challenge, ErrorResponse
from server.deps import PlayerDep, ServiceDep

ERRORS: dict[int | str, dict[str, Any]] = {401: {"model": ErrorResponse}}

router = APIRouter(prefix="/challenges", tags=["matches"], responses=ERRORS)


@router.get("")
async def list_challenges(service: ServiceDep, player: PlayerDep) -> list[Challenge]:
    """List the challenges waiting for your answer (POST /matches/{id}/accept or /decline)."""
    return await service.challenges(player)
