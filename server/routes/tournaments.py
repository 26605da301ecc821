"""Tournaments: create, answer invitations, start, cancel, list, read standings.

Answers hold the fields of the protocol version a request names (server.routes.versions): a
client of 1.2 or older never meets an SPRT tournament's `sprt` (since 1.3).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request, status
from fastapi.responses import HTMLResponse

from protocol import PROTOCOL_VERSION
from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import (
    ErrorResponse,
    TournamentCreate,
    TournamentList,
    TournamentState,
)
from server.deps import (
    PagesDep,
    PlayerDep,
    TournamentsDep,
    ViewerDep,
    limit_tournament_creation,
)
from server.limits.rates import RATE_LIMITED_RESPONSE
from server.routes.params import PageLimit, PageOffset
from server.routes.versions import VersionedRoute
from server.routes.web import tournaments_page
from server.web.pages import wants_html
from server.web.plots import elo_plot

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (401, 403, 404, 409, 422)
}

router = APIRouter(
    prefix="/tournaments", tags=["tournaments"], responses=ERRORS, route_class=VersionedRoute
)

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


@router.get("", response_model=TournamentList)
async def list_tournaments(
    request: Request,
    tournaments: TournamentsDep,
    pages: PagesDep,
    guest: ViewerDep,
    limit: PageLimit = 50,
    offset: PageOffset = 0,
) -> TournamentList | HTMLResponse:
    """List tournaments, newest first; a browser gets the tournaments page, with the form to
    create one as its guest player."""
    listed = await tournaments.list_tournaments(limit=limit, offset=offset)
    if not wants_html(request):
        return listed
    return tournaments_page(pages, request, listed, limit, guest)


@router.get("/{tournament_id}", response_model=TournamentState)
async def get_tournament(
    request: Request, tournament_id: TournamentPath, tournaments: TournamentsDep, pages: PagesDep
) -> TournamentState | HTMLResponse:
    """Return a tournament: status, progress, standings (points, Elo, LOS) and its games; a
    browser gets its page (kept up to date over `/ws/tournaments/{id}`)."""
    if not wants_html(request):
        return await tournaments.state(tournament_id)
    try:
        state = await tournaments.state(tournament_id)
    except ProtocolError as error:
        if error.code is not ErrorCode.UNKNOWN_TOURNAMENT:
            raise
        return pages.render(
            "not_found.html",
            {
                "section": "tournaments",
                "version": request.app.version,
                "protocol_version": PROTOCOL_VERSION,
                "what": f"tournament {tournament_id}",
            },
            404,
        )
    return pages.render(
        "tournament.html",
        {
            "section": "tournaments",
            "version": request.app.version,
            "protocol_version": PROTOCOL_VERSION,
            "tournament": state,
            "elo_plot": elo_plot(state.standings.ratings),
        },
    )


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
