"""The browser's own routes: a guest player kept in a cookie, and the tournament form.

A person in a browser has no bearer token, and a page's script must never hold one. `POST
/web/guest` registers a guest player (`PlayerRegistry.register_guest`) and keeps its token in a
cookie the page's scripts cannot read (HttpOnly) and that no other site's page can send
(SameSite=Strict; `POST`s with another site's `Origin` are refused besides). The forms post to
routes here, which call the same services as REST (the policies stay in the services) and
answer with a redirect to the page to show next (303), or the form again with what was wrong.
Only these routes read the cookie: REST keeps the bearer token alone.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Depends, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError

from games import game_names
from protocol import PROTOCOL_VERSION
from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import ErrorResponse, TournamentCreate, TournamentList
from server.auth import new_token
from server.db.models import Player
from server.deps import (
    GUEST_COOKIE,
    GuestDep,
    PagesDep,
    PlayersDep,
    TournamentsDep,
    limit_registration,
    limit_web_tournament_creation,
)
from server.players import PlayerRegistry
from server.ratelimit import RATE_LIMITED_RESPONSE
from server.web.pages import Pages

router = APIRouter(prefix="/web", tags=["web pages"])

GUEST_COOKIE_SECONDS = 30 * 24 * 3600
"""How long a browser keeps its guest player (renewed by nothing: a new guest after that)."""

FORM_DEFAULTS: dict[str, str] = {
    "game": "tictactoe",
    "bots": "alphabeta:depth=2\ngreedy\nrandom",
    "games_per_pairing": "2",
    "seed": "0",
    "start": "on",
}
"""What the tournament form holds before anyone types in it."""

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (401, 403, 422)
}


def tournaments_page(
    pages: Pages,
    request: Request,
    listed: TournamentList,
    limit: int,
    guest: Player | None,
    form: dict[str, str] | None = None,
    errors: tuple[str, ...] = (),
) -> HTMLResponse:
    """Render the tournaments page: the list, and the form (or the button to get a guest)."""
    return pages.render(
        "tournaments.html",
        {
            "section": "tournaments",
            "version": request.app.version,
            "protocol_version": PROTOCOL_VERSION,
            "listed": listed,
            "limit": limit,
            "guest": guest,
            "games": game_names(),
            "form": form or FORM_DEFAULTS,
            "errors": errors,
        },
        status_code=422 if errors else 200,
    )


def check_origin(request: Request) -> None:
    """Refuse a form posted from another site's page (FORBIDDEN), as SameSite does the cookie."""
    origin = request.headers.get("origin")
    if origin is None:
        return
    if urlsplit(origin).netloc != request.headers.get("host", ""):
        raise ProtocolError(ErrorCode.FORBIDDEN, "a form of this server must be sent from it")


@router.post(
    "/guest",
    status_code=status.HTTP_303_SEE_OTHER,
    response_class=RedirectResponse,
    responses={
        303: {"description": "See Other: the tournaments page, the guest's cookie set"},
        429: RATE_LIMITED_RESPONSE,
        **ERRORS,
    },
    dependencies=[Depends(check_origin), Depends(limit_registration)],
)
async def create_guest(request: Request, players: PlayersDep) -> Response:
    """Register a guest player for this browser, its token in an HttpOnly SameSite=Strict
    cookie, and go back to the tournaments page (counted as a registration)."""
    _, token = await new_guest(players)
    response = RedirectResponse("/tournaments#create", status_code=status.HTTP_303_SEE_OTHER)
    set_guest_cookie(response, request, token)
    return response


async def new_guest(players: PlayerRegistry) -> tuple[Player, str]:
    """Register a guest player; return it and its token (for the browser's cookie only).

    The caller counts it as a registration first (`limit_registration`).
    """
    token, token_hash = new_token()
    return await players.register_guest(token_hash), token


def set_guest_cookie(response: Response, request: Request, token: str) -> None:
    """Keep a guest's token in the browser: HttpOnly, SameSite=Strict, Secure over HTTPS."""
    response.set_cookie(
        GUEST_COOKIE,
        token,
        max_age=GUEST_COOKIE_SECONDS,
        path="/",
        secure=request.url.scheme == "https",
        httponly=True,
        samesite="strict",
    )


def _form_body(form: dict[str, str]) -> TournamentCreate:
    """Return the tournament the form asks for; ValueError saying what is wrong."""
    bots = tuple(line.strip() for line in form.get("bots", "").splitlines() if line.strip())
    numbers: dict[str, int] = {}
    for field, label in (("games_per_pairing", "games per pairing"), ("seed", "seed")):
        try:
            numbers[field] = int(form.get(field, "") or FORM_DEFAULTS[field])
        except ValueError:
            raise ValueError(f"{label}: a whole number, please") from None
    try:
        return TournamentCreate(game=form.get("game", ""), bots=bots, **numbers)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in problem['loc'])}: {problem['msg']}"
            for problem in error.errors()
        )
        raise ValueError(problems) from None


@router.post(
    "/tournaments",
    status_code=status.HTTP_303_SEE_OTHER,
    response_class=RedirectResponse,
    responses={
        303: {"description": "See Other: the new tournament's page"},
        429: RATE_LIMITED_RESPONSE,
        **ERRORS,
        422: {
            "description": "The form again (HTML), saying what was wrong",
            "content": {"text/html": {"schema": {"type": "string"}}},
        },
    },
    dependencies=[Depends(check_origin), Depends(limit_web_tournament_creation)],
)
async def create_tournament_from_form(
    request: Request, guest: GuestDep, tournaments: TournamentsDep, pages: PagesDep
) -> Response:
    """Create (and with `start`, start) a tournament from the page's form, as the browser's
    guest player; go to its page, or show the form again with what was wrong (422)."""
    received = await request.form()
    form = {key: str(value) for key, value in received.items() if isinstance(value, str)}
    try:
        state = await tournaments.create(_form_body(form), guest)
        # A tournament naming other players waits for their answers: its page shows them.
        if form.get("start") and not state.invitations:
            state = await tournaments.start(state.tournament_id, guest)
    except ValueError as error:  # a ProtocolError from the service is one too
        message = error.message if isinstance(error, ProtocolError) else str(error)
        listed = await tournaments.list_tournaments(limit=50)
        return tournaments_page(pages, request, listed, 50, guest, form, (message,))
    return RedirectResponse(
        f"/tournaments/{state.tournament_id}", status_code=status.HTTP_303_SEE_OTHER
    )
