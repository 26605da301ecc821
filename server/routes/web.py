"""The browser's own routes: a guest player kept in a cookie, and the tournament form.

A person in a browser has no bearer token, and a page's script must never hold one. `POST
/web/guest` registers a guest player (`PlayerRegistry.register_guest`) and keeps its token in a
cookie the page's scripts cannot read (HttpOnly) and that no other site's page can send
(SameSite=Strict; `POST`s with another site's `Origin` are refused besides). The forms post to
routes here, which call the same services as REST (the policies stay in the services) and
answer with a redirect to the page to show next (303), or the form again with what was wrong.
Every route takes the cookie as it takes a bearer token (server.deps, `optional_caller`).
"""

from __future__ import annotations

import math
import re
from typing import Any

from fastapi import APIRouter, Depends, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError
from starlette.datastructures import FormData

from competition.decks import DECKS
from competition.sequential import SprtError, SprtTest
from games import game_names
from protocol import PROTOCOL_VERSION
from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import ErrorResponse, TournamentCreate, TournamentList
from protocol.problems import explain_all
from server.auth import new_token
from server.db.models import Player
from server.deps import (
    GUEST_COOKIE,
    OptionalPlayerDep,
    PagesDep,
    PlayersDep,
    TournamentsDep,
    count_guest_registration,
    limit_registration,
    limit_tournament_creation,
)
from server.limits.rates import RATE_LIMITED_RESPONSE
from server.players import PlayerRegistry
from server.web.pages import Pages
from server.web.security import check_origin

router = APIRouter(prefix="/web", tags=["web pages"])

GUEST_COOKIE_SECONDS = 30 * 24 * 3600
"""How long a browser keeps its guest player (renewed by nothing: a new guest after that)."""

FORM_DEFAULTS: dict[str, str] = {
    "game": "tictactoe",
    "bots": "alphabeta:depth=2\ngreedy\nrandom",
    "format": "round-robin",
    "games_per_pairing": "2",
    "seed": "0",
    "ply_cap": "200",
    "concurrency": "2",
    "base_s": "",
    "increment_s": "",
    "move_cap_s": "",
    "deck": "",
    "openings": "",
    "sprt": "",
    "sprt_pairs": "1000",
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
            "decks": tuple(DECKS.values()),
            "errors": errors,
        },
        status_code=422 if errors else 200,
    )


@router.post(
    "/guest",
    status_code=status.HTTP_303_SEE_OTHER,
    response_class=RedirectResponse,
    responses={
        303: {
            "description": "See Other: the page named by `next` (else the tournaments page), "
            "the guest's cookie set"
        },
        429: RATE_LIMITED_RESPONSE,
        **ERRORS,
    },
    dependencies=[Depends(check_origin), Depends(limit_registration)],
)
async def create_guest(request: Request, players: PlayersDep) -> Response:
    """Register a guest player for this browser, its token in an HttpOnly SameSite=Strict
    cookie, and go to the form's `next` path, else back to the tournaments page (counted as a
    registration)."""
    target = next_path(await request.form(), "/tournaments#create")
    _, token = await new_guest(players)
    response = RedirectResponse(target, status_code=status.HTTP_303_SEE_OTHER)
    set_guest_cookie(response, request, token)
    return response


async def new_guest(players: PlayerRegistry) -> tuple[Player, str]:
    """Register a guest player; return it and its token (for the browser's cookie only).

    The caller counts it as a registration first (`limit_registration`).
    """
    token, token_hash = new_token()
    return await players.register_guest(token_hash), token


async def guest_or_new(
    request: Request, players: PlayerRegistry, guest: Player | None
) -> tuple[Player, str | None]:
    """Return the browser's guest, making one when it has none (a form posted by a browser
    without a guest: the play form, an upload), counted as a registration against its address
    like `POST /web/guest`. The token is the new guest's, for `set_guest_cookie`; None when the
    browser already had its guest."""
    if guest is not None:
        return guest, None
    await count_guest_registration(request)
    return await new_guest(players)


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


NEXT_PATH = re.compile(r"/[A-Za-z0-9_\-/]*")
"""Where `POST /web/guest` and `POST /web/guest/forget` may send the browser next: a path of
this server."""


def next_path(form: FormData, default: str) -> str:
    """Return the form's `next` when it is a path of this server, else `default`."""
    wanted = form.get("next")
    # A path of this server only ("//host" is another site's), never a URL.
    if isinstance(wanted, str) and NEXT_PATH.fullmatch(wanted) and not wanted.startswith("//"):
        return wanted
    return default


@router.post(
    "/guest/forget",
    status_code=status.HTTP_303_SEE_OTHER,
    response_class=RedirectResponse,
    responses={
        303: {"description": "See Other: the page named by `next` (else the tournaments page)"},
        403: ERRORS[403],
    },
    dependencies=[Depends(check_origin)],
)
async def forget_guest(request: Request) -> Response:
    """Forget this browser's guest player: its cookie is cleared (the player and what it did
    stay, under its name); go to the form's `next` path, else the tournaments page."""
    target = next_path(await request.form(), "/tournaments")
    response = RedirectResponse(target, status_code=status.HTTP_303_SEE_OTHER)
    response.delete_cookie(
        GUEST_COOKIE,
        path="/",
        secure=request.url.scheme == "https",
        httponly=True,
        samesite="strict",
    )
    return response


FORM_LABELS: dict[str, str] = {
    "game": "Game",
    "bots": "Players",
    "format": "Format",
    "games_per_pairing": "Games per pairing",
    "seed": "Seed",
    "ply_cap": "Ply cap",
    "concurrency": "Games at once",
    "time_control": "Time control",
    "base_ms": "Time per side",
    "increment_ms": "Increment",
    "move_cap_ms": "Most time for one move",
    "openings": "Openings",
    "sprt": "SPRT",
    "sprt_pairs": "Most SPRT pairs",
}
"""The form's label of each field of `TournamentCreate`, to say where a refused value is."""

MAX_FORM_SECONDS = 7 * 24 * 3600
"""The most seconds a time field of the form takes (the wire's limits are checked after)."""

SHOWN_CHARACTERS = 40
"""How much of a refused value an error repeats."""


def _lines(text: str) -> tuple[str, ...]:
    return tuple(line.strip() for line in text.splitlines() if line.strip())


def _whole(form: dict[str, str], field: str) -> int:
    """Return the form's whole number `field` (its default when left empty)."""
    text = form.get(field, "").strip() or FORM_DEFAULTS[field]
    try:
        return int(text)
    except ValueError:
        shown = text[:SHOWN_CHARACTERS]
        raise ValueError(f"{FORM_LABELS[field]}: a whole number, please, not {shown!r}") from None


def _milliseconds(form: dict[str, str], field: str, label: str) -> int | None:
    """Return the form's `field`, seconds (a decimal), in ms; None when left empty."""
    text = form.get(field, "").strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 <= seconds <= MAX_FORM_SECONDS:  # NaN fails this too
        raise ValueError(
            f"{label}: a number of seconds from 0 to {MAX_FORM_SECONDS}, please, "
            f"not {text[:SHOWN_CHARACTERS]!r}"
        )
    return round(seconds * 1000)


def _time_control(form: dict[str, str]) -> dict[str, int] | None:
    """Return the time control the form asks for, None (untimed) without a time per side."""
    base = _milliseconds(form, "base_s", "Time per side")
    increment = _milliseconds(form, "increment_s", "Increment")
    cap = _milliseconds(form, "move_cap_s", "Most time for one move")
    if base is None:
        if increment or cap is not None:
            raise ValueError(
                "Time control: an increment or a most time for one move needs a time per side"
            )
        return None
    control = {"base_ms": base, "increment_ms": increment or 0}
    if cap is not None:
        control["move_cap_ms"] = cap
    return control


def _openings(form: dict[str, str]) -> str | tuple[str, ...] | None:
    """Return the openings the form names: a deck, a list, or None for the game's default."""
    deck = form.get("deck", "").strip()
    listed = _lines(form.get("openings", ""))
    if deck and listed:
        raise ValueError("Openings: name a deck or list openings, not both")
    return deck or listed or None


def _sprt(form: dict[str, str]) -> dict[str, Any] | None:
    """Return the SPRT the form asks for, read as `arena match --sprt` reads its settings
    (`elo0=0 elo1=5 alpha=0.05 beta=0.05`); None when left empty."""
    text = form.get("sprt", "").strip()
    if not text:
        return None
    try:
        test = SprtTest.parse(text)
    except SprtError as error:
        raise ValueError(f"SPRT: {error}") from None
    return test.to_dict() | {"max_pairs": _whole(form, "sprt_pairs")}


class FormError(ValueError):
    """What is wrong with a form: one sentence for each refused field, by its label."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = tuple(problems)


def _label(location: tuple[Any, ...]) -> str:
    """Return the form's label of a refused field of `TournamentCreate`."""
    where = [str(part) for part in location]
    if not where:
        return "The form"
    if where[0] == "time_control" and len(where) > 1:
        return FORM_LABELS.get(where[1], where[1])
    if where[0] == "sprt" and len(where) > 1:
        return FORM_LABELS["sprt_pairs"] if where[1] == "max_pairs" else f"SPRT {where[1]}"
    return FORM_LABELS.get(where[0], where[0])


def _refusal(error: ProtocolError) -> str:
    """Say the service's refusal of the form by the field's label: "Openings: opening 1 of 2
    ('11-15 99-1'): ..." rather than the wire's "openings: ..."."""
    named = [key for key in error.details if key in FORM_LABELS]
    if error.code is ErrorCode.VALIDATION_ERROR and len(named) == 1:
        return f"{FORM_LABELS[named[0]]}: {error.details[named[0]]}"
    return error.message


def _form_body(form: dict[str, str]) -> TournamentCreate:
    """Return the tournament the form asks for; FormError saying what is wrong (each
    refused field by its label, in plain words: protocol.problems, all of them at once)."""
    body: dict[str, Any] = {
        "game": form.get("game", ""),
        "bots": _lines(form.get("bots", "")),
        "format": form.get("format", "") or FORM_DEFAULTS["format"],
    }
    problems: list[str] = []
    for field in ("games_per_pairing", "seed", "ply_cap", "concurrency"):
        try:
            body[field] = _whole(form, field)
        except ValueError as error:
            problems.append(str(error))
    for field, read in (
        ("time_control", _time_control),
        ("openings", _openings),
        ("sprt", _sprt),
    ):
        try:
            body[field] = read(form)
        except ValueError as error:
            problems.append(str(error))
    if problems:
        raise FormError(problems)
    try:
        return TournamentCreate(**body)
    except ValidationError as error:
        said = explain_all(error.errors(include_url=False))
        raise FormError([f"{_label(where)}: {words}" for where, words in said]) from None


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
    dependencies=[Depends(check_origin), Depends(limit_tournament_creation)],
)
async def create_tournament_from_form(
    request: Request,
    guest: OptionalPlayerDep,
    players: PlayersDep,
    tournaments: TournamentsDep,
    pages: PagesDep,
) -> Response:
    """Create (and with `start`, start) a tournament from the page's form, as the browser's
    guest player (made for a browser without one, once the form is read); go to its page, or
    show the form again with what was wrong (422)."""
    received = await request.form()
    form = {key: str(value) for key, value in received.items() if isinstance(value, str)}
    try:
        body = _form_body(form)
    except FormError as problems:
        listed = await tournaments.list_tournaments(limit=50)
        return tournaments_page(pages, request, listed, 50, guest, form, problems.problems)
    # A rate limit (429) on the new guest is answered as it is, not as the form.
    guest, token = await guest_or_new(request, players, guest)
    response: Response
    try:
        state = await tournaments.create(body, guest)
        # A tournament naming other players waits for their answers: its page shows them.
        if form.get("start") and not state.invitations:
            state = await tournaments.start(state.tournament_id, guest)
    except ProtocolError as error:
        listed = await tournaments.list_tournaments(limit=50)
        refused = (_refusal(error),)
        response = tournaments_page(pages, request, listed, 50, guest, form, refused)
    else:
        response = RedirectResponse(
            f"/tournaments/{state.tournament_id}", status_code=status.HTTP_303_SEE_OTHER
        )
    if token is not None:
        set_guest_cookie(response, request, token)
    return response
