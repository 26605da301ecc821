"""The pages of hosted bots and rated pools, and the forms of a bot's owner.

Four pages are the HTML answers of their resources' own routes, rendered here when a browser
asks (`wants_html`): the pools (`/pools`), a pool's ladder and games (`/pools/{pool}`, with
`?bot=OWNER/NAME` a bot's own history in it), the hosted bots (`/hosted-bots`: the reader's
own, the create form, everyone's) and a bot's page (`/hosted-bots/{owner}/{name}`: its
versions; for its owner the upload form, the version that plays, resume, the pools, and the
failures with their words, which nobody else sees).

The forms post to `/web/hosted-bots/...`, each origin-checked (`check_origin`) and acting as
the browser's cookie player; they call the services the REST routes call (HostedBots,
PoolService), which decide every policy, and answer with a redirect to the page to show next
(303) or the bot's page again saying what was refused, with the REST route's status. Creating
a bot makes a guest player for a browser without one, as the other forms do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError
from starlette.datastructures import UploadFile

from games import game_names
from protocol import HTTP_STATUS, PROTOCOL_VERSION
from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import (
    HostedBot,
    HostedBotCreate,
    HostedBotFailure,
    HostedBotUpdate,
    PoolEntry,
    PoolGameSummary,
    PoolJoin,
    PoolSummary,
)
from protocol.problems import explain_all
from server.db.models import Player
from server.deps import (
    HostedDep,
    OptionalPlayerDep,
    PagesDep,
    PlayersDep,
    PoolsDep,
    SettingsDep,
    app_settings,
    get_hosted,
    get_pages,
    get_pools,
    limit_upload,
    missing_credential,
    request_viewer,
)
from server.hosted import HostedBots
from server.pool import PoolService
from server.routes.uploads import UploadLimitRoute, read_uploads
from server.routes.web import guest_or_new, set_guest_cookie
from server.settings import Settings
from server.web.pages import Pages
from server.web.security import check_origin

BOT_FORMS = "/web/hosted-bots/{owner}/{name}"
UPLOAD_FORM = BOT_FORMS + "/versions"
"""The upload form, which reads its body under the hosted bots' upload limit."""

KINDS = (
    ("plugin", "Python plug-in", "a bots.plugin class, or a module with select_move"),
    ("engine", "Engine", "a program speaking the engine protocol on stdin and stdout"),
)
"""The kinds of program a version may be, as the upload form offers them."""

FAILURES_SHOWN = 50
GAMES_SHOWN_PER_BOT = 50
LISTED = 50

OwnerPath = Annotated[
    str, Path(min_length=1, max_length=32, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
]
NamePath = Annotated[str, Path(min_length=1, max_length=32, pattern=r"^[a-z0-9][a-z0-9_\-]*$")]


# -- how the pages say things -------------------------------------------------------------------


def seconds_text(ms: int) -> str:
    """Return a span of ms as a clock reads it: `1 min`, `1 min 30 s`, `0.5 s`."""
    minutes, rest = divmod(ms, 60_000)
    seconds = f"{rest / 1000:g} s" if rest else ""
    if minutes:
        return f"{minutes} min" + (f" {seconds}" if seconds else "")
    return seconds or "0 s"


def when(time_ms: int) -> str:
    """Return a time (epoch ms) as people read it, in UTC: `23 Nov 2026, 14:05 UTC`."""
    return datetime.fromtimestamp(time_ms / 1000, UTC).strftime("%d %b %Y, %H:%M UTC")


def clock_text(base_ms: int, increment_ms: int) -> str:
    """Return a pool's clock: `1 min + 1 s a move`, or `30 s a side` without an increment."""
    if increment_ms:
        return f"{seconds_text(base_ms)} + {seconds_text(increment_ms)} a move"
    return f"{seconds_text(base_ms)} a side"


def hosted_label(spec: str) -> str:
    """Return the `OWNER/NAME` of a seat's `hosted:OWNER/NAME@N` (another seat unchanged)."""
    return spec.removeprefix("hosted:").split("@", 1)[0]


def version_of(spec: str) -> str:
    """Return the `N` of `hosted:OWNER/NAME@N`, empty for a spec naming no version."""
    return spec.split("@", 1)[1] if spec.startswith("hosted:") and "@" in spec else ""


def game_result(game: PoolGameSummary) -> str:
    """Say how a pool game ended, or that it is being played."""
    if game.status == "aborted":
        return "aborted"
    if game.status != "finished":
        return "being played"
    if game.winner is None:
        return "draw"
    return f"{hosted_label(game.first if game.winner == 0 else game.second)} won"


def result_for(game: PoolGameSummary, label: str) -> str:
    """Say how a pool game ended for the bot `label`: won, lost, draw, aborted."""
    if game.status != "finished":
        return game_result(game)
    if game.winner is None:
        return "draw"
    winner = game.first if game.winner == 0 else game.second
    return "won" if hosted_label(winner) == label else "lost"


def _context(request: Request, viewer: Player | None, **values: Any) -> dict[str, Any]:
    return {
        "section": "pools",
        "version": request.app.version,
        "protocol_version": PROTOCOL_VERSION,
        "viewer": viewer,
        "clock_text": clock_text,
        "when": when,
        "hosted_label": hosted_label,
        "version_of": version_of,
        "game_result": game_result,
        **values,
    }


def _refused(error: ProtocolError) -> int:
    return HTTP_STATUS.get(error.code, 422)


# -- the pools -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PoolRow:
    """A pool on the pools page: its summary and the top of its ladder."""

    pool: PoolSummary
    top: PoolEntry | None


async def pools_page(
    request: Request, pages: Pages, pools: PoolService, viewer: Player | None
) -> HTMLResponse:
    """Render the server's pools: game, clock, how many bots, who leads each."""
    rows = []
    for summary in (await pools.pools()).pools:
        ladder = (await pools.pool(summary.name)).ladder
        rows.append(PoolRow(summary, ladder[0] if ladder else None))
    return pages.render("pools.html", _context(request, viewer, rows=rows))


@dataclass(frozen=True, slots=True)
class History:
    """A bot's games in a pool, as its history on the pool's page shows them."""

    label: str
    entry: PoolEntry | None
    games: tuple[tuple[PoolGameSummary, str], ...]
    """Its games, newest first, each with how it ended for the bot."""
    won: int
    lost: int
    drawn: int


def history(label: str, ladder: Sequence[PoolEntry], games: Sequence[PoolGameSummary]) -> History:
    """Return the bot `label`'s entry and games among a pool's."""
    entry = next((e for e in ladder if e.bot == label), None)
    played = tuple(
        (game, result_for(game, label))
        for game in games
        if label in (hosted_label(game.first), hosted_label(game.second))
    )[:GAMES_SHOWN_PER_BOT]
    results = [result for _, result in played]
    return History(
        label, entry, played, results.count("won"), results.count("lost"), results.count("draw")
    )


async def pool_page(
    request: Request, pages: Pages, pools: PoolService, viewer: Player | None, name: str
) -> HTMLResponse:
    """Render a pool: its ladder, the games being played (to watch), the latest results, and
    with `?bot=OWNER/NAME` that bot's history."""
    try:
        pool = await pools.pool(name)
    except ProtocolError as error:
        if error.code is not ErrorCode.NOT_FOUND:
            raise
        return pages.render("not_found.html", _context(request, viewer, what=f"pool {name}"), 404)
    chosen = request.query_params.get("bot", "")[:65]
    shown = history(chosen, pool.ladder, (*pool.live, *pool.recent)) if chosen else None
    return pages.render(
        "pool.html", _context(request, viewer, pool=pool, history=shown, result_for=result_for)
    )


# -- hosted bots ---------------------------------------------------------------------------------


async def bots_page(
    request: Request,
    pages: Pages,
    hosted: HostedBots,
    settings: Settings,
    viewer: Player | None,
    offset: int = 0,
    form: dict[str, str] | None = None,
    error: str | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    """Render the hosted bots: the reader's own, the create form, then everyone's."""
    mine = () if viewer is None else (await hosted.page(viewer.name, None, 100, 0, viewer)).bots
    everyone = (await hosted.page(None, None, LISTED + 1, offset, viewer)).bots
    return pages.render(
        "hosted_bots.html",
        _context(
            request,
            viewer,
            mine=mine,
            everyone=everyone[:LISTED],
            next_offset=offset + LISTED if len(everyone) > LISTED else None,
            games=game_names(),
            form=form or {},
            error=error,
            available=hosted.available(),
            quota=settings.hosted.bots_per_player,
        ),
        status_code=status_code,
    )


@dataclass(frozen=True, slots=True)
class Membership:
    """A pool of a bot's game, and the bot's place in it (None: not in it)."""

    pool: PoolSummary
    entry: PoolEntry | None


async def bot_page(
    request: Request,
    pages: Pages,
    hosted: HostedBots,
    pools: PoolService,
    settings: Settings,
    viewer: Player | None,
    owner: str,
    name: str,
    error: ProtocolError | str | None = None,
    kind: str = "plugin",
) -> HTMLResponse:
    """Render a hosted bot: its versions and pools, and for its owner the forms and its
    failures (the page again with `error` when a form was refused, at the REST status, the
    upload form keeping the `kind` chosen)."""
    try:
        bot = await hosted.get(owner, name, viewer)
    except ProtocolError as refused:
        if refused.code is not ErrorCode.NOT_FOUND:
            raise
        what = f"hosted bot {owner}/{name}"
        return pages.render("not_found.html", _context(request, viewer, what=what), 404)
    mine = viewer is not None and viewer.name == bot.owner
    failures: tuple[HostedBotFailure, ...] = ()
    if mine and viewer is not None:
        failures = (await hosted.failures(owner, name, viewer, FAILURES_SHOWN)).failures
    memberships = await _memberships(pools, bot)
    status_code = 200
    if isinstance(error, ProtocolError):
        status_code, error = _refused(error), error.message
    elif error is not None:
        status_code = 422
    return pages.render(
        "hosted_bot.html",
        _context(
            request,
            viewer,
            bot=bot,
            mine=mine,
            failures=failures,
            memberships=memberships,
            kinds=KINDS,
            chosen_kind=kind,
            error=error,
            available=hosted.available(),
            max_upload_bytes=settings.hosted.max_upload_bytes,
            max_files=settings.grader.max_files,
        ),
        status_code=status_code,
    )


async def _memberships(pools: PoolService, bot: HostedBot) -> list[Membership]:
    label = f"{bot.owner}/{bot.name}"
    found = []
    for summary in (await pools.pools()).pools:
        if summary.game != bot.game:
            continue
        ladder = (await pools.pool(summary.name)).ladder
        found.append(Membership(summary, next((e for e in ladder if e.bot == label), None)))
    return found


# -- the owner's forms ---------------------------------------------------------------------------


class BotUploadRoute(UploadLimitRoute):
    """The upload form: the hosted bots' upload limit on the raw body, read only from a
    browser with a credential, and an upload past the limit answered with the bot's page
    saying so."""

    def allows_anonymous(self, settings: Settings) -> bool:
        return False

    def upload_limit(self, settings: Settings) -> int:
        return settings.hosted.max_upload_bytes

    async def refuse(self, request: Request, error: ProtocolError) -> Response:
        owner = str(request.path_params.get("owner", ""))
        name = str(request.path_params.get("name", ""))
        if not owner or not name:
            raise error
        hosted, pools, pages = (
            await get_hosted(request),
            await get_pools(request),
            await get_pages(request),
        )
        viewer = await request_viewer(request)
        settings = app_settings(request)
        return await bot_page(request, pages, hosted, pools, settings, viewer, owner, name, error)


router = APIRouter(tags=["web pages"], include_in_schema=False)
uploads_router = APIRouter(tags=["web pages"], route_class=BotUploadRoute, include_in_schema=False)

SEE_OTHER = status.HTTP_303_SEE_OTHER


def _bot_url(owner: str, name: str, anchor: str = "") -> str:
    return f"/hosted-bots/{owner}/{name}" + (f"#{anchor}" if anchor else "")


async def _form(request: Request) -> dict[str, str]:
    received = await request.form()
    return {key: value for key, value in received.items() if isinstance(value, str)}


def _signed_in(viewer: Player | None) -> Player:
    if viewer is None:
        raise missing_credential()
    return viewer


@router.post(
    "/web/hosted-bots",
    status_code=SEE_OTHER,
    response_class=RedirectResponse,
    dependencies=[Depends(check_origin), Depends(limit_upload)],
)
async def create_from_form(
    request: Request,
    hosted: HostedDep,
    players: PlayersDep,
    pages: PagesDep,
    settings: SettingsDep,
    viewer: OptionalPlayerDep,
) -> Response:
    """Create a hosted bot (`name`, `game`, `description`) as the browser's player, made a
    guest first for a browser without one; go to the bot's page, or show the form again saying
    what was wrong."""
    form = await _form(request)
    try:
        body = HostedBotCreate(
            name=form.get("name", "").strip(),
            game=form.get("game", ""),
            description=form.get("description", "").strip(),
        )
    except ValidationError as invalid:
        said = explain_all(invalid.errors(include_url=False))
        words = "; ".join(f"{'/'.join(map(str, where)).title()}: {text}" for where, text in said)
        return await bots_page(request, pages, hosted, settings, viewer, 0, form, words, 422)
    player, token = await guest_or_new(request, players, viewer)
    response: Response
    try:
        bot = await hosted.create(player, body)
    except ProtocolError as error:
        response = await bots_page(
            request, pages, hosted, settings, player, 0, form, error.message, _refused(error)
        )
    else:
        response = RedirectResponse(_bot_url(bot.owner, bot.name), SEE_OTHER)
    if token is not None:
        set_guest_cookie(response, request, token)
    return response


@uploads_router.post(
    UPLOAD_FORM,
    status_code=SEE_OTHER,
    response_class=RedirectResponse,
    dependencies=[Depends(check_origin), Depends(limit_upload)],
)
async def upload_from_form(
    request: Request,
    owner: OwnerPath,
    name: NamePath,
    hosted: HostedDep,
    pools: PoolsDep,
    pages: PagesDep,
    settings: SettingsDep,
    viewer: OptionalPlayerDep,
) -> Response:
    """Upload a version (multipart: `kind`, `files`) of the reader's bot: it is checked and
    tried as `POST /hosted-bots/{owner}/{name}/versions` does; go to the bot's page, which says
    whether it is ready or why it was refused."""
    player = _signed_in(viewer)
    kind: object = "plugin"
    try:
        await hosted.owned(owner, name, player)
        received = await request.form()
        kind = received.get("kind")
        files = [
            item
            for item in received.getlist("files")
            # A file input left empty still sends one part, without a name or a byte.
            if isinstance(item, UploadFile) and (item.filename or item.size)
        ]
        if kind not in ("plugin", "engine"):
            raise ProtocolError(ErrorCode.VALIDATION_ERROR, "choose the kind: plug-in or engine")
        if not files:
            raise ProtocolError(
                ErrorCode.VALIDATION_ERROR, "choose your bot's files, or one .zip of them"
            )
        uploads = await read_uploads(files, settings.hosted.max_upload_bytes)
        version = await hosted.upload(owner, name, player, kind, uploads)
    except ProtocolError as error:
        chosen = kind if kind in ("plugin", "engine") else "plugin"
        return await bot_page(
            request, pages, hosted, pools, settings, player, owner, name, error, str(chosen)
        )
    return RedirectResponse(
        _bot_url(owner, name, f"version-{version.number}"), status.HTTP_303_SEE_OTHER
    )


async def _update(
    request: Request,
    owner: str,
    name: str,
    hosted: HostedBots,
    pools: PoolService,
    pages: Pages,
    settings: Settings,
    viewer: Player | None,
    change: HostedBotUpdate | str,
) -> Response:
    """Make `change` to the reader's bot (or show `change`, a refusal's words); go to its page."""
    player = _signed_in(viewer)
    try:
        await hosted.owned(owner, name, player)
        if isinstance(change, str):
            raise ProtocolError(ErrorCode.VALIDATION_ERROR, change)
        await hosted.update(owner, name, player, change)
    except ProtocolError as error:
        return await bot_page(request, pages, hosted, pools, settings, player, owner, name, error)
    return RedirectResponse(_bot_url(owner, name, "versions"), SEE_OTHER)


@router.post(
    BOT_FORMS + "/active",
    status_code=SEE_OTHER,
    response_class=RedirectResponse,
    dependencies=[Depends(check_origin)],
)
async def activate_from_form(
    request: Request,
    owner: OwnerPath,
    name: NamePath,
    hosted: HostedDep,
    pools: PoolsDep,
    pages: PagesDep,
    settings: SettingsDep,
    viewer: OptionalPlayerDep,
) -> Response:
    """Choose the version that plays (`version`, a ready one) as PATCH does."""
    number = (await _form(request)).get("version", "")
    change: HostedBotUpdate | str = "choose a version to play"
    if number.isdigit() and 0 < len(number) <= 9:
        change = HostedBotUpdate(active=int(number))
    return await _update(request, owner, name, hosted, pools, pages, settings, viewer, change)


@router.post(
    BOT_FORMS + "/resume",
    status_code=SEE_OTHER,
    response_class=RedirectResponse,
    dependencies=[Depends(check_origin)],
)
async def resume_from_form(
    request: Request,
    owner: OwnerPath,
    name: NamePath,
    hosted: HostedDep,
    pools: PoolsDep,
    pages: PagesDep,
    settings: SettingsDep,
    viewer: OptionalPlayerDep,
) -> Response:
    """Lift the pause of a bot that failed too often in a row, as PATCH `resume` does."""
    change = HostedBotUpdate(resume=True)
    return await _update(request, owner, name, hosted, pools, pages, settings, viewer, change)


@router.post(
    BOT_FORMS + "/join",
    status_code=SEE_OTHER,
    response_class=RedirectResponse,
    dependencies=[Depends(check_origin)],
)
async def join_from_form(
    request: Request,
    owner: OwnerPath,
    name: NamePath,
    hosted: HostedDep,
    pools: PoolsDep,
    pages: PagesDep,
    settings: SettingsDep,
    viewer: OptionalPlayerDep,
) -> Response:
    """Enter the reader's bot into the pool `pool`, as `POST /pools/{pool}/members` does; go to
    the pool's page showing the bot's history."""
    player = _signed_in(viewer)
    pool = (await _form(request)).get("pool", "")
    try:
        await hosted.owned(owner, name, player)
        if not pool:
            raise ProtocolError(ErrorCode.VALIDATION_ERROR, "choose a pool to join")
        await pools.join(pool, player, PoolJoin(bot=f"{owner}/{name}"))
    except ProtocolError as error:
        return await bot_page(request, pages, hosted, pools, settings, player, owner, name, error)
    return RedirectResponse(f"/pools/{pool}?bot={owner}/{name}", SEE_OTHER)


@router.post(
    BOT_FORMS + "/leave",
    status_code=SEE_OTHER,
    response_class=RedirectResponse,
    dependencies=[Depends(check_origin)],
)
async def leave_from_form(
    request: Request,
    owner: OwnerPath,
    name: NamePath,
    hosted: HostedDep,
    pools: PoolsDep,
    pages: PagesDep,
    settings: SettingsDep,
    viewer: OptionalPlayerDep,
) -> Response:
    """Take the reader's bot out of the pool `pool`, as `DELETE /pools/{pool}/members/...`
    does; go back to the bot's page."""
    player = _signed_in(viewer)
    pool = (await _form(request)).get("pool", "")
    try:
        await hosted.owned(owner, name, player)
        if not pool:
            raise ProtocolError(ErrorCode.VALIDATION_ERROR, "choose a pool to leave")
        await pools.leave(pool, owner, name, player)
    except ProtocolError as error:
        return await bot_page(request, pages, hosted, pools, settings, player, owner, name, error)
    return RedirectResponse(_bot_url(owner, name, "pools"), SEE_OTHER)
