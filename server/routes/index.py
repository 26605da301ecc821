"""The server itself: the index at `/` (the lobby page for a browser), health, the games and the
protocol's JSON Schema."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from bots.engine.compiled import core_state
from games import game_names
from protocol import PROTOCOL_VERSION, json_schema
from server.deps import (
    EngineDep,
    PagesDep,
    QueriesDep,
    RatingsDep,
    ServiceDep,
    SettingsDep,
    TournamentsDep,
    ViewerDep,
)
from server.routes.web_play import lobby_play_context
from server.web.pages import wants_html

router = APIRouter(tags=["server"])

LINKS: tuple[tuple[str, str], ...] = (
    ("/docs", "API documentation: every route, tried from the browser"),
    ("/openapi.json", "the OpenAPI description of the REST API"),
    ("/protocol/schema", "the JSON Schema of every WebSocket message and REST body"),
    ("/health", "whether the server is up, and its database"),
    ("/games", "the games this server hosts"),
    ("/bots", "the house bots, their options and this server's limits on them"),
    ("/matches", "matches, newest first (filters: status, game, player)"),
    ("/tournaments", "tournaments, newest first"),
    ("/grader/profiles", "the autograder's assignment profiles"),
)
"""Where a newcomer goes from `/`, with what each place holds."""

WEBSOCKETS: tuple[tuple[str, str], ...] = (
    ("/ws", "players: play every match over one connection"),
    ("/ws/matches/{match_id}", "spectators: a match live"),
    ("/ws/tournaments/{tournament_id}", "a tournament's progress live"),
)


def index_document(version: str) -> dict[str, Any]:
    """Return the index as data: the server's versions and where everything is."""
    return {
        "name": "Arena",
        "version": version,
        "protocol_version": PROTOCOL_VERSION,
        "links": {path: what for path, what in LINKS},
        "websockets": {path: what for path, what in WEBSOCKETS},
    }


LIVE_LIMIT = 20
"""How many live matches the lobby lists (its script refreshes the same page of the listing)."""

RECENT_LIMIT = 10
"""How many finished matches the lobby lists."""

LEADERBOARD_LIMIT = 10
"""How many of each game's best ratings the lobby lists."""


@router.get("/", response_model=None)
async def index(
    request: Request,
    pages: PagesDep,
    queries: QueriesDep,
    tournaments: TournamentsDep,
    ratings: RatingsDep,
    service: ServiceDep,
    settings: SettingsDep,
    guest: ViewerDep,
) -> Response:
    """Describe the server: its versions and where everything is; a browser gets the lobby."""
    version = request.app.version
    if not wants_html(request):
        return JSONResponse(index_document(version))
    live = await queries.list_matches(status="active", limit=LIVE_LIMIT)
    finished = await queries.list_matches(status="finished", limit=RECENT_LIMIT)
    listed = await tournaments.list_tournaments()
    leaderboards = await ratings.leaderboards(limit=LEADERBOARD_LIMIT)
    return pages.render(
        "lobby.html",
        {
            "section": "lobby",
            "version": version,
            "protocol_version": PROTOCOL_VERSION,
            "live": live.matches,
            "live_limit": LIVE_LIMIT,
            "finished": finished.matches,
            "tournaments": [t for t in listed.tournaments if t.status == "running"],
            "leaderboards": leaderboards,
            "links": LINKS,
            "websockets": WEBSOCKETS,
            **await lobby_play_context(service, settings, guest),
        },
    )


@router.get("/health")
async def health(engine: EngineDep) -> dict[str, Any]:
    """Report that the server is up, its database dialect, and whether its house engine's
    compiled search has loaded ("loading" for the first seconds after start-up; a fresh machine
    compiles it once, in under a minute, and house bots built before then wait for it)."""
    return {"status": "ok", "database": engine.dialect.name, "engine": core_state()}


@router.get("/games", tags=["games"])
async def games() -> dict[str, list[str]]:
    """List the games this server hosts."""
    return {"games": game_names()}


@router.get("/protocol/schema")
async def protocol_schema() -> dict[str, Any]:
    """Return the JSON Schema of every WebSocket message and REST body (`arena protocol schema`)."""
    return json_schema()
