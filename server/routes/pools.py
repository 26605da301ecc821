"""Rated pools: list them, read a pool's ladder and games, enter or take out a hosted bot of
yours, or yourself as a connected bot (docs/PROTOCOL.md, "Rated pools")."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Request, Response, status
from fastapi.responses import HTMLResponse

from protocol.messages import ErrorResponse, Pool, PoolJoin, PoolList
from server.deps import PagesDep, PlayerDep, PoolsDep, request_viewer
from server.routes.versions import VersionedRoute
from server.routes.web_hosted import pool_page, pools_page
from server.web.pages import wants_html

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (401, 403, 404, 422)
}

router = APIRouter(prefix="/pools", tags=["pools"], responses=ERRORS, route_class=VersionedRoute)

PoolPath = Annotated[str, Path(min_length=1, max_length=32, pattern=r"^[a-z0-9][a-z0-9_\-]*$")]
OwnerPath = Annotated[
    str, Path(min_length=1, max_length=32, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
]
NamePath = Annotated[str, Path(min_length=1, max_length=32, pattern=r"^[a-z0-9][a-z0-9_\-]*$")]


HTML_PAGE: dict[int | str, dict[str, Any]] = {
    200: {"content": {"text/html": {"schema": {"type": "string"}}}}
}
"""A route whose resource a browser gets as its page."""


@router.get("", response_model=PoolList, responses=HTML_PAGE)
async def list_pools(request: Request, pools: PoolsDep, pages: PagesDep) -> PoolList | HTMLResponse:
    """The server's pools: each one's game, clock and how many bots are in it. A browser gets
    the pools' page (who leads each)."""
    if wants_html(request):
        return await pools_page(request, pages, pools, await request_viewer(request))
    return await pools.pools()


@router.get("/{pool}", response_model=Pool, responses=HTML_PAGE)
async def get_pool(
    request: Request, pool: PoolPath, pools: PoolsDep, pages: PagesDep
) -> Pool | HTMLResponse:
    """A pool's ladder (highest rating first), its games being played and its latest games. A
    browser gets its page (the games to watch; `?bot=OWNER/NAME`: that bot's history)."""
    if wants_html(request):
        return await pool_page(request, pages, pools, await request_viewer(request), pool)
    return await pools.pool(pool)


@router.post("/{pool}/members", status_code=status.HTTP_201_CREATED)
async def join_pool(
    pool: PoolPath, body: PoolJoin, pools: PoolsDep, player: PlayerDep, response: Response
) -> Pool:
    """Enter a hosted bot of yours (`{"bot": "OWNER/NAME"}`): the pool pairs it from now on,
    playing its active version; or yourself (`{"bot": "YOUR_NAME"}`), a bot your own client
    plays (`arena bot`), paired while it is connected and open to challenges. Joining twice
    changes nothing, but resumes a connected bot the pool paused."""
    answer = await pools.join(pool, player, body)
    response.headers["Location"] = f"/pools/{pool}"
    return answer


@router.delete("/{pool}/members/{owner}/{name}", status_code=status.HTTP_204_NO_CONTENT)
async def leave_pool(
    pool: PoolPath, owner: OwnerPath, name: NamePath, pools: PoolsDep, player: PlayerDep
) -> Response:
    """Take a bot of yours out of the pool; its games being played end as usual."""
    await pools.leave(pool, owner, name, player)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.delete("/{pool}/members/{player}", status_code=status.HTTP_204_NO_CONTENT)
async def leave_pool_connected(
    pool: PoolPath, player: OwnerPath, pools: PoolsDep, caller: PlayerDep
) -> Response:
    """Take yourself, a connected bot, out of the pool; your game being played ends as usual."""
    await pools.leave_connected(pool, player, caller)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
