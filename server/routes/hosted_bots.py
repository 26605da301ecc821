"""Hosted bots: create a bot, upload its versions, choose the one that plays, read its
failures (docs/PROTOCOL.md, "Hosted bots"). Anyone may list and read bots; only a bot's owner
changes it or reads its failures."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import (
    APIRouter,
    Depends,
    File,
    Form,
    Path,
    Query,
    Request,
    Response,
    UploadFile,
    status,
)
from fastapi.responses import HTMLResponse

from protocol.messages import (
    ErrorResponse,
    HostedBot,
    HostedBotCreate,
    HostedBotFailures,
    HostedBotList,
    HostedBotUpdate,
    HostedBotVersion,
)
from server.deps import (
    HostedDep,
    OptionalPlayerDep,
    PagesDep,
    PlayerDep,
    PoolsDep,
    SettingsDep,
    limit_upload,
)
from server.limits.rates import RATE_LIMITED_RESPONSE
from server.routes.params import GameFilter, PageLimit, PageOffset
from server.routes.uploads import UploadLimitRoute, read_uploads
from server.routes.web_hosted import bot_page, bots_page
from server.settings import Settings
from server.web.pages import wants_html

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (401, 403, 404, 409, 413, 422, 503)
}


class HostedUploadRoute(UploadLimitRoute):
    """An upload of a hosted bot's version: always by a player, within the hosted limit."""

    def allows_anonymous(self, settings: Settings) -> bool:
        return False

    def upload_limit(self, settings: Settings) -> int:
        return settings.hosted.max_upload_bytes


router = APIRouter(
    prefix="/hosted-bots", tags=["hosted bots"], responses=ERRORS, route_class=HostedUploadRoute
)

OwnerPath = Annotated[
    str, Path(min_length=1, max_length=32, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
]
NamePath = Annotated[str, Path(min_length=1, max_length=32, pattern=r"^[a-z0-9][a-z0-9_\-]*$")]

HTML_PAGE: dict[int | str, dict[str, Any]] = {
    200: {"content": {"text/html": {"schema": {"type": "string"}}}}
}
"""A route whose resource a browser gets as its page."""


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    responses={429: RATE_LIMITED_RESPONSE},
    dependencies=[Depends(limit_upload)],
)
async def create_bot(
    body: HostedBotCreate, hosted: HostedDep, player: PlayerDep, response: Response
) -> HostedBot:
    """Create a hosted bot of yours for a game; upload its program as versions next.

    NAME_TAKEN when you have a bot of that name; QUOTA_EXCEEDED past
    `ARENA_HOSTED_BOTS_PER_PLAYER`.
    """
    bot = await hosted.create(player, body)
    response.headers["Location"] = f"/hosted-bots/{bot.owner}/{bot.name}"
    return bot


@router.get("", response_model=HostedBotList, responses=HTML_PAGE)
async def list_bots(
    request: Request,
    hosted: HostedDep,
    viewer: OptionalPlayerDep,
    pages: PagesDep,
    settings: SettingsDep,
    limit: PageLimit = 50,
    offset: PageOffset = 0,
    owner: Annotated[str | None, Query(max_length=32)] = None,
    game: GameFilter = None,
) -> HostedBotList | HTMLResponse:
    """List hosted bots (optionally one owner's, or one game's), oldest first. A browser gets
    the hosted bots' page: the reader's own, the create form, everyone's."""
    if wants_html(request):
        return await bots_page(request, pages, hosted, settings, viewer, offset)
    return await hosted.page(owner, game, limit, offset, viewer)


@router.get("/{owner}/{name}", response_model=HostedBot, responses=HTML_PAGE)
async def get_bot(
    request: Request,
    owner: OwnerPath,
    name: NamePath,
    hosted: HostedDep,
    viewer: OptionalPlayerDep,
    pages: PagesDep,
    pools: PoolsDep,
    settings: SettingsDep,
) -> HostedBot | HTMLResponse:
    """A hosted bot and its versions (why a version was refused: to its owner only). A browser
    gets its page (to its owner: the forms and the failures too)."""
    if wants_html(request):
        return await bot_page(request, pages, hosted, pools, settings, viewer, owner, name)
    return await hosted.get(owner, name, viewer)


@router.patch("/{owner}/{name}")
async def update_bot(
    owner: OwnerPath, name: NamePath, body: HostedBotUpdate, hosted: HostedDep, player: PlayerDep
) -> HostedBot:
    """Choose the version that plays (a ready one), change the description, or lift a pause
    (`resume`). The owner only."""
    return await hosted.update(owner, name, player, body)


@router.post(
    "/{owner}/{name}/versions",
    status_code=status.HTTP_201_CREATED,
    responses={429: RATE_LIMITED_RESPONSE},
    dependencies=[Depends(limit_upload)],
)
async def upload_version(
    owner: OwnerPath,
    name: NamePath,
    hosted: HostedDep,
    settings: SettingsDep,
    player: PlayerDep,
    response: Response,
    kind: Annotated[
        Literal["plugin", "engine"],
        Form(description="`plugin` (a bots.plugin class or `select_move`) or `engine`"),
    ],
    files: Annotated[
        list[UploadFile],
        File(description="bot.py and its modules as plain files, or one .zip."),
    ],
) -> HostedBotVersion:
    """Upload a new version of your bot (multipart/form-data): it is checked, started once in
    the sandbox, and kept. `status` says whether it may play (`ready`) or why not (`note`).
    The bot's first ready version becomes the one that plays."""
    uploads = await read_uploads(files, settings.hosted.max_upload_bytes)
    version = await hosted.upload(owner, name, player, kind, uploads)
    response.headers["Location"] = f"/hosted-bots/{owner}/{name}"
    return version


@router.get("/{owner}/{name}/failures")
async def get_failures(
    owner: OwnerPath,
    name: NamePath,
    hosted: HostedDep,
    player: PlayerDep,
    limit: PageLimit = 50,
) -> HostedBotFailures:
    """How the bot's versions failed in matches, newest first: the owner only (an opponent
    reads only that the hosted bot failed)."""
    return await hosted.failures(owner, name, player, limit)
