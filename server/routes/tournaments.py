"""Tournaments: create, answer invitations, start, cancel, list, read standings."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, status

from protocol.messages import (
    ErrorResponse,
    TournamentCreate,
    TournamentList,
    TournamentState,
)
from server.deps import PlayerDep, TournamentsDep, limit_tournament_creation
from server.ratelimit import RATE_LIMITED_RESPONSE
from server.routes.params import PageLimit, PageOffset

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (401, 403, 404, 409, 422)
}

router = APIRouter(prefix="/tournaments", tags=["tournaments"], responses=ERRORS)

TournamentPath = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_\-]+$")]


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    responses={429: RATE_LIMITED_RESPONSE},
    dependencies=[Depends(limit_tournament_creation)],
)
async def create_tournament(
    body: TournamentCreate, tournaments: TournamentsDep, player: PlayerDep
) -> TournamentState:
    """Create a tournament between house bots (status `created`; start it to play)."""
    return await tournaments.create(body, player)


@router.get("")
async def list_tournaments(
    tournaments: TournamentsDep,
    limit: PageLimit = 50,
    offset: PageOffset = 0,
) -> TournamentList:
    """List tournaments, newest first."""
    return await tournaments.list_tournaments(limit=limit, offset=offset)


@router.get("/{tournament_id}")
async def get_tournament(
    tournament_id: TournamentPath, tournaments: TournamentsDep
) -> TournamentState:
    """Return a tournament: status, progress, standings (points, Elo, LOS) and its games."""
    return await tournaments.state(tournament_id)


@router.post("/{tournament_id}/start")
async def start_tournament(
    tournament_id: TournamentPath, tournaments: TournamentsDep, player: PlayerDep
) -> TournamentState:
    """Start playing a created tournament (its owner only, once every invitation is accepted);
    a running or ended one is left as it is."""
    return await tournaments.start(tournament_id, player)


@router.post("/{tournament_id}/cancel")
async def cancel_tournament(
    tournament_id: TournamentPath, tournaments: TournamentsDep, player: PlayerDep
) -> TournamentState:
    """Cancel a created or running tournament (its owner only): games in play are stopped."""
    return await tournaments.cancel(tournament_id, player)


@router.post("/{tournament_id}/accept")
async def accept_invitation(
    tournament_id: TournamentPath, tournaments: TournamentsDep, player: PlayerDep
) -> TournamentState:
    """Accept the tournament's invitation to play in it (before it starts)."""
    return await tournaments.answer(tournament_id, player, accept=True)


@router.post("/{tournament_id}/decline")
async def decline_invitation(
    tournament_id: TournamentPath, tournaments: TournamentsDep, player: PlayerDep
) -> TournamentState:
    """Decline the tournament's invitation: it cannot start with you (its owner may cancel it)."""
    return await tournaments.answer(tournament_id, player, accept=False)
