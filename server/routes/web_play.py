"""Playing in the browser: the forms by which the browser's guest plays a house bot, answers
challenges, joins open seats and asks for a rematch.

The forms call the same match service as REST (its policies: who may sit, move or act) under
the same rate limits, by the browser's cookie (HttpOnly, SameSite=Strict, see
server.routes.web), and a request with another site's `Origin` is refused. The forms (`POST
/web/play`, `/web/matches/{id}/join`, `/accept`, `/decline`, `/rematch`) answer with a
redirect to the page to show next (303), or a page saying what was wrong (the play form again,
422; a refused join, answer or rematch, with the refusal's status). The page's script
(`static/play.js`) posts moves and actions as JSON to the REST routes themselves
(`/matches/{id}/moves`, ...), by the same cookie (server.routes.matches).

A browser without a guest that posts the play form or joins a seat gets a guest made for it
(counted as a registration, like `POST /web/guest`); answering a challenge and playing take
the guest the challenge or the seat is for (401 without a cookie, 403 NOT_A_PLAYER or
NOT_CHALLENGED for another player's match).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from games import game_names
from protocol import PROTOCOL_VERSION
from protocol.errors import HTTP_STATUS, ProtocolError
from protocol.messages import ErrorResponse
from server.db.models import Player
from server.deps import (
    OptionalPlayerDep,
    PagesDep,
    PlayerDep,
    PlayersDep,
    ServiceDep,
    SettingsDep,
    limit_match_creation,
)
from server.limits.rates import RATE_LIMITED_RESPONSE
from server.matches.service import MatchService
from server.routes.matches import MatchPath
from server.routes.web import guest_or_new, set_guest_cookie
from server.settings import Settings
from server.web.pages import Pages
from server.web.play import (
    COLOURS,
    PLAY_DEFAULTS,
    TIME_CONTROLS,
    house_bot_choices,
    read_play_form,
)
from server.web.security import check_origin

router = APIRouter(prefix="/web", tags=["web pages"], dependencies=[Depends(check_origin)])
"""Every route here refuses a request sent from another site's page (FORBIDDEN)."""

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (400, 401, 403, 404, 409, 422)
}

HTML_ANSWER: dict[str, Any] = {
    "description": "A page (HTML) saying what was wrong",
    "content": {"text/html": {"schema": {"type": "string"}}},
}

REFUSED_PAGES: dict[int | str, dict[str, Any]] = {
    code: {
        **HTML_ANSWER,
        "description": "Refused by the match service: a page (HTML) saying why, with the "
        "refusal's status (the route's own refusals, 401 and 403 FORBIDDEN, are ErrorResponses)",
    }
    for code in (403, 404, 409)
}
"""The refusals a form route answers with a page (`refused.html`)."""


def form_body(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    """Return the OpenAPI `requestBody` of a web form with these fields (read by the route
    itself from `request.form()`, so that a wrong value comes back in the form)."""
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return {
        "requestBody": {
            "required": bool(required),
            "content": {"application/x-www-form-urlencoded": {"schema": schema}},
        }
    }


PLAY_FORM = form_body(
    {
        "game": {"type": "string", "enum": list(game_names())},
        "bot": {"type": "string", "maxLength": 256, "description": "a house bot's spec"},
        "time_control": {"type": "string", "enum": list(TIME_CONTROLS)},
        "colour": {"type": "string", "enum": list(COLOURS)},
    },
    required=("game", "bot", "time_control", "colour"),
)
"""The play form's fields, for the OpenAPI description."""

JOIN_FORM = form_body({"seat": {"type": "string", "enum": ["0", "1"]}})


async def lobby_play_context(
    service: MatchService, settings: Settings, guest: Player | None
) -> dict[str, Any]:
    """Return what the lobby's play block shows: the form's choices, and the guest's pending
    challenges and live matches (none without a guest)."""
    return {
        "guest": guest,
        "play": play_form_context(settings),
        "challenges": [] if guest is None else await service.challenges(guest),
        "your_matches": [] if guest is None else await service.live_states(guest),
    }


def play_form_context(
    settings: Settings, form: dict[str, str] | None = None, errors: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Return what the play form shows: its choices, its values, and what was wrong."""
    return {
        "games": game_names(),
        "bots": house_bot_choices(settings),
        "time_controls": {key: label for key, (label, _) in TIME_CONTROLS.items()},
        "colours": COLOURS,
        "form": form or dict(PLAY_DEFAULTS),
        "errors": errors,
    }


def _refused_page(
    pages: Pages, request: Request, what: str, error: ProtocolError, back: str
) -> HTMLResponse:
    """Render the page saying that `what` was refused, and why, with the refusal's status."""
    return pages.render(
        "refused.html",
        {
            "section": None,
            "version": request.app.version,
            "protocol_version": PROTOCOL_VERSION,
            "what": what,
            "error": error,
            "back": back,
        },
        status_code=HTTP_STATUS[error.code],
    )


def _play_form_again(
    pages: Pages,
    request: Request,
    settings: Settings,
    form: dict[str, str],
    message: str,
    guest: Player | None,
) -> HTMLResponse:
    """Render the play form again with what was typed and what was wrong (422)."""
    return pages.render(
        "play.html",
        {
            "section": None,
            "version": request.app.version,
            "protocol_version": PROTOCOL_VERSION,
            "play": play_form_context(settings, form, (message,)),
            "guest": guest,
        },
        status_code=422,
    )


@router.post(
    "/play",
    status_code=status.HTTP_303_SEE_OTHER,
    response_class=RedirectResponse,
    responses={
        303: {"description": "See Other: the new match's page (the guest's cookie set if new)"},
        429: RATE_LIMITED_RESPONSE,
        **ERRORS,
        422: {**HTML_ANSWER, "description": "The play form again (HTML), saying what was wrong"},
    },
    dependencies=[Depends(limit_match_creation)],
    openapi_extra=PLAY_FORM,
)
async def play_house_bot(
    request: Request,
    guest: OptionalPlayerDep,
    players: PlayersDep,
    service: ServiceDep,
    pages: PagesDep,
    settings: SettingsDep,
) -> Response:
    """Start a match between the browser's guest and a house bot from the lobby's form (a
    browser without a guest gets one); go to the match's page, or show the form again with
    what was wrong (422). Counted as `POST /matches` is."""
    received = await request.form()
    form = {key: str(value) for key, value in received.items() if isinstance(value, str)}
    token: str | None = None
    try:
        asked = read_play_form(form)
    except ValueError as error:
        return _play_form_again(pages, request, settings, form, str(error), guest)
    # A rate limit (429) is answered as it is, not as the form.
    guest, token = await guest_or_new(request, players, guest)
    try:
        state = await service.create_match(asked.match_create(guest.name), creator=guest)
    except ProtocolError as error:
        response: Response = _play_form_again(pages, request, settings, form, error.message, guest)
    else:
        response = RedirectResponse(
            f"/matches/{state.match_id}", status_code=status.HTTP_303_SEE_OTHER
        )
    if token is not None:
        set_guest_cookie(response, request, token)
    return response


@router.post(
    "/matches/{match_id}/join",
    status_code=status.HTTP_303_SEE_OTHER,
    response_class=RedirectResponse,
    responses={
        303: {"description": "See Other: the match's page (the guest's cookie set if new)"},
        **ERRORS,
        **REFUSED_PAGES,
    },
    openapi_extra=JOIN_FORM,
)
async def join_from_page(
    match_id: MatchPath,
    request: Request,
    guest: OptionalPlayerDep,
    players: PlayersDep,
    service: ServiceDep,
    pages: PagesDep,
) -> Response:
    """Take an open seat of the match for the browser's guest (made if the browser has none);
    a form field `seat` (0 or 1) names one. Back to the match's page, or a page saying why
    not (SEAT_TAKEN, MATCH_OVER, UNKNOWN_MATCH...)."""
    received = await request.form()
    seat_text = received.get("seat")
    seat = int(seat_text) if seat_text in ("0", "1") else None
    guest, token = await guest_or_new(request, players, guest)
    try:
        await service.join(match_id, guest, seat)
    except ProtocolError as error:
        response: Response = _refused_page(
            pages, request, "Taking the seat", error, f"/matches/{match_id}"
        )
    else:
        response = RedirectResponse(f"/matches/{match_id}", status_code=status.HTTP_303_SEE_OTHER)
    if token is not None:
        set_guest_cookie(response, request, token)
    return response


@router.post(
    "/matches/{match_id}/accept",
    status_code=status.HTTP_303_SEE_OTHER,
    response_class=RedirectResponse,
    responses={
        303: {"description": "See Other: the match's page"},
        **ERRORS,
        **REFUSED_PAGES,
    },
)
async def accept_from_page(
    match_id: MatchPath, request: Request, guest: PlayerDep, service: ServiceDep, pages: PagesDep
) -> Response:
    """Accept the challenge inviting the browser's guest to this match; go to its page."""
    try:
        await service.accept(match_id, guest)
    except ProtocolError as error:
        return _refused_page(pages, request, "Accepting the challenge", error, "/")
    return RedirectResponse(f"/matches/{match_id}", status_code=status.HTTP_303_SEE_OTHER)


@router.post(
    "/matches/{match_id}/decline",
    status_code=status.HTTP_303_SEE_OTHER,
    response_class=RedirectResponse,
    responses={
        303: {"description": "See Other: the lobby"},
        **ERRORS,
        **REFUSED_PAGES,
    },
)
async def decline_from_page(
    match_id: MatchPath, request: Request, guest: PlayerDep, service: ServiceDep, pages: PagesDep
) -> Response:
    """Decline the challenge inviting the browser's guest to this match (it is aborted); back
    to the lobby."""
    try:
        await service.decline(match_id, guest)
    except ProtocolError as error:
        return _refused_page(pages, request, "Declining the challenge", error, "/")
    return RedirectResponse("/", status_code=status.HTTP_303_SEE_OTHER)


@router.post(
    "/matches/{match_id}/rematch",
    status_code=status.HTTP_303_SEE_OTHER,
    response_class=RedirectResponse,
    responses={
        303: {"description": "See Other: the new match's page"},
        429: RATE_LIMITED_RESPONSE,
        **ERRORS,
        **REFUSED_PAGES,
        422: {
            **HTML_ANSWER,
            "description": "Refused by the match service (a bot no longer "
            "allowed, say): a page (HTML) saying why",
        },
    },
    dependencies=[Depends(limit_match_creation)],
)
async def rematch_from_page(
    match_id: MatchPath, request: Request, guest: PlayerDep, service: ServiceDep, pages: PagesDep
) -> Response:
    """Create the rematch of the guest's finished match: the same game and clocks, the colours
    swapped; a house bot plays again, a player is challenged (as `POST /matches` creates a
    match, counted as it is). Go to the new match's page, or a page saying why not
    (NOT_A_PLAYER, MATCH_NOT_OVER, UNKNOWN_MATCH...)."""
    try:
        state = await service.rematch(match_id, guest)
    except ProtocolError as error:
        return _refused_page(pages, request, "The rematch", error, f"/matches/{match_id}")
    return RedirectResponse(f"/matches/{state.match_id}", status_code=status.HTTP_303_SEE_OTHER)
