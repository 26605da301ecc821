"""Matches: create, join, list, read (a browser gets the match page), play moves, resign, draws,
abort, records."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request, status
from fastapi.responses import PlainTextResponse, Response

from protocol import PROTOCOL_VERSION
from protocol.errors import ErrorCode
from protocol.messages import (
    ErrorResponse,
    MatchCreate,
    MatchJoin,
    MatchList,
    MatchRecord,
    MatchState,
    MatchStatus,
    MoveMade,
    MoveRequest,
    PlayerName,
)
from server.deps import (
    CallerDep,
    OptionalPlayerDep,
    PagesDep,
    PlayerDep,
    QueriesDep,
    ServiceDep,
    limit_match_creation,
)
from server.errors import MatchError
from server.limits.rates import RATE_LIMITED_RESPONSE
from server.matches.commands import Action
from server.routes.params import GameFilter, PageLimit, PageOffset
from server.routes.versions import VersionedRoute
from server.web.pages import wants_html
from server.web.play import viewer_of
from server.web.plots import search_view

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (400, 401, 403, 404, 409, 422)
}

router = APIRouter(
    prefix="/matches", tags=["matches"], responses=ERRORS, route_class=VersionedRoute
)
"""Its answers are in the version a request names (server.routes.versions)."""

MatchPath = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_\-]+$")]


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    responses={429: RATE_LIMITED_RESPONSE},
    dependencies=[Depends(limit_match_creation)],
)
async def create_match(body: MatchCreate, service: ServiceDep, player: PlayerDep) -> MatchState:
    """Create a match: seats are player names, `open`, or {"bot": SPEC} (a house bot).

    The answer is the match as its creator sees it: `your_seat` is the creator's seat, if any.
    """
    return await service.create_match(body, creator=player)


@router.get("")
async def list_matches(
    queries: QueriesDep,
    status: MatchStatus | None = None,
    game: GameFilter = None,
    player: Annotated[PlayerName | None, Query()] = None,
    limit: PageLimit = 50,
    offset: PageOffset = 0,
) -> MatchList:
    """List matches, newest first; every filter given must hold."""
    return await queries.list_matches(
        status=status, game=game, player=player, limit=limit, offset=offset
    )


@router.get("/{match_id}", response_model=MatchState)
async def get_match(
    match_id: MatchPath,
    request: Request,
    service: ServiceDep,
    queries: QueriesDep,
    pages: PagesDep,
    viewer: OptionalPlayerDep,
) -> MatchState | Response:
    """Return the full state of a match (no token needed; with one, `your_seat` is set).

    A browser (asking for HTML before JSON) gets the match's web page instead: in play mode
    when the browser's player (its cookie) holds a seat.
    """
    if not wants_html(request):
        return await service.state(match_id, viewer)
    context = {"version": request.app.version, "protocol_version": PROTOCOL_VERSION}
    try:
        shown = await queries.page(match_id)
    except MatchError as error:
        if error.code is not ErrorCode.UNKNOWN_MATCH:
            raise
        return pages.render(
            "not_found.html", {**context, "section": None, "what": f"match {match_id}"}, 404
        )
    searches = search_view(shown.record.moves)
    you = viewer_of(shown.state, None if viewer is None else viewer.name)
    return pages.render(
        "match.html",
        {**context, "section": None, "page": shown, "searches": searches, "you": you},
    )


@router.post("/{match_id}/join")
async def join_match(
    match_id: MatchPath, service: ServiceDep, player: PlayerDep, body: MatchJoin | None = None
) -> MatchState:
    """Take an open seat (`seat` omitted: any); the match starts when both seats are taken."""
    return await service.join(match_id, player, None if body is None else body.seat)


@router.post("/{match_id}/moves")
async def play_move(
    match_id: MatchPath, body: MoveRequest, service: ServiceDep, caller: CallerDep
) -> MoveMade:
    """Play a move; a refused move leaves the match unchanged and lists the legal moves.

    A bot's refused move (by its token) counts toward the forfeit; a person's, typed on the
    match page (by the browser's cookie), is only explained.
    """
    if caller.by_cookie:
        return await service.move_by_hand(match_id, caller.player, body.move, body.expected_seq)
    return await service.move(match_id, caller.player, body.move, body.expected_seq, body.search)


@router.post("/{match_id}/accept")
async def accept_challenge(
    match_id: MatchPath, service: ServiceDep, player: PlayerDep
) -> MatchState:
    """Accept a challenge: take the seat it invites you to; the match starts once full."""
    return await service.accept(match_id, player)


@router.post("/{match_id}/decline")
async def decline_challenge(
    match_id: MatchPath, service: ServiceDep, player: PlayerDep
) -> MatchState:
    """Decline a challenge: the match is aborted, no one plays it."""
    return await service.decline(match_id, player)


@router.post("/{match_id}/resign")
async def resign(match_id: MatchPath, service: ServiceDep, player: PlayerDep) -> MatchState:
    """Resign: the opponent wins."""
    return await service.act(match_id, player, Action.RESIGN)


@router.post("/{match_id}/offer-draw")
async def offer_draw(match_id: MatchPath, service: ServiceDep, player: PlayerDep) -> MatchState:
    """Offer a draw (accepts the opponent's standing offer, if any)."""
    return await service.act(match_id, player, Action.OFFER_DRAW)


@router.post("/{match_id}/accept-draw")
async def accept_draw(match_id: MatchPath, service: ServiceDep, player: PlayerDep) -> MatchState:
    """Accept the opponent's draw offer: the match is drawn."""
    return await service.act(match_id, player, Action.ACCEPT_DRAW)


@router.post("/{match_id}/decline-draw")
async def decline_draw(match_id: MatchPath, service: ServiceDep, player: PlayerDep) -> MatchState:
    """Decline the opponent's draw offer."""
    return await service.act(match_id, player, Action.DECLINE_DRAW)


@router.post("/{match_id}/abort")
async def abort(match_id: MatchPath, service: ServiceDep, player: PlayerDep) -> MatchState:
    """Abort the match before its first move; no one wins."""
    return await service.act(match_id, player, Action.ABORT)


@router.get("/{match_id}/record")
async def match_record(match_id: MatchPath, queries: QueriesDep) -> MatchRecord:
    """Return the record of a match: set-up, seats, every move with its time, result."""
    return await queries.record(match_id)


@router.get("/{match_id}/pdn", response_class=PlainTextResponse)
async def match_pdn(match_id: MatchPath, queries: QueriesDep) -> str:
    """Return a checkers match as PDN text (400 BAD_MESSAGE for any other game)."""
    return await queries.pdn(match_id)
