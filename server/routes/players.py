"""Players: register by name and get an API token (shown once, stored hashed); read a player's
ratings."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request, status
from fastapi.responses import HTMLResponse

from competition.ratings import DEFAULT_DEVIATION, DEFAULT_RATING
from protocol import PROTOCOL_VERSION
from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import ErrorResponse, PlayerCreate, PlayerCreated, PlayerProfile
from server.auth import new_token
from server.deps import PagesDep, PlayersDep, QueriesDep, RatingsDep, limit_registration
from server.limits.rates import RATE_LIMITED_RESPONSE
from server.web.pages import wants_html
from server.web.plots import history_plot

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
    """Register a player; the token in the answer is shown this once (409 NAME_TAKEN if taken)."""
    token, token_hash = new_token()
    player = await players.register(body.name, token_hash)
    return PlayerCreated(id=f"p_{player.id}", name=player.name, token=token)


NamePath = Annotated[
    str, Path(min_length=1, max_length=32, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
]


RECENT_LIMIT = 20
"""How many of the player's latest matches their page lists."""


@router.get(
    "/{name}",
    response_model=PlayerProfile,
    responses={404: {"model": ErrorResponse}, 422: {"model": ErrorResponse}},
)
async def get_player(
    request: Request,
    name: NamePath,
    players: PlayersDep,
    ratings: RatingsDep,
    queries: QueriesDep,
    pages: PagesDep,
) -> PlayerProfile | HTMLResponse:
    """Return a player and their rating in each game they have played rated (404 UNKNOWN_PLAYER);
    a browser gets the player's page: the ratings with their history, the latest matches."""
    player = await players.named(name)
    if player is None and wants_html(request):
        return pages.render(
            "not_found.html",
            {
                "section": "players",
                "version": request.app.version,
                "protocol_version": PROTOCOL_VERSION,
                "what": f"player called {name}",
            },
            404,
        )
    if player is None:
        raise ProtocolError(ErrorCode.UNKNOWN_PLAYER, f"no player is called {name!r}")
    profile = await ratings.profile(player)
    if not wants_html(request):
        return profile
    history = await ratings.history(player)
    start = [(DEFAULT_RATING, DEFAULT_DEVIATION)]
    plots = {
        game: history_plot(start + [(p.rating, p.deviation) for p in points])
        for game, points in history.items()
    }
    recent = await queries.list_matches(player=player.name, limit=RECENT_LIMIT)
    return pages.render(
        "player.html",
        {
            "section": "players",
            "version": request.app.version,
            "protocol_version": PROTOCOL_VERSION,
            "profile": profile,
            "plots": plots,
            "recent": recent.matches,
        },
    )
