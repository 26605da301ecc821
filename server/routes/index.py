"""The server itself: the index at `/`, health, the games and the protocol's JSON Schema."""

from __future__ import annotations

from html import escape
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from games import game_names
from protocol import PROTOCOL_VERSION, json_schema
from server.deps import EngineDep

router = APIRouter(tags=["server"])

LINKS: tuple[tuple[str, str], ...] = (
    ("/docs", "API documentation: every route, tried from the browser"),
    ("/redoc", "the same API documentation, as one page"),
    ("/openapi.json", "the OpenAPI description of the REST API"),
    ("/protocol/schema", "the JSON Schema of every WebSocket message and REST body"),
    ("/health", "whether the server is up, and its database"),
    ("/games", "the games this server hosts"),
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


def index_page(version: str) -> str:
    """Return the index as a small HTML page (every text escaped; no scripts)."""
    links = "".join(
        f'<li><a href="{escape(path)}"><code>{escape(path)}</code></a>: {escape(what)}</li>'
        for path, what in LINKS
    )
    sockets = "".join(
        f"<li><code>{escape(path)}</code>: {escape(what)}</li>" for path, what in WEBSOCKETS
    )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        "<title>Arena</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<style>body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;"
        "padding:0 1rem;line-height:1.5}code{background:#f3f3f3;padding:0 .2rem}</style>"
        "</head><body>"
        f"<h1>Arena</h1><p>Server {escape(version)}, protocol {escape(PROTOCOL_VERSION)}: "
        "matches and tournaments between game-playing search bots, over REST and WebSockets, "
        "and a hosted checkers autograder.</p>"
        f"<h2>REST</h2><ul>{links}</ul><h2>WebSockets</h2><ul>{sockets}</ul>"
        "<p>Bots in any language: <code>docs/PROTOCOL.md</code> in the repository has every "
        "message; <code>examples/random_bot.py</code> is a complete bot.</p>"
        "</body></html>"
    )


def _wants_html(request: Request) -> bool:
    """True when the client asks for HTML before JSON (a browser), not a program."""
    accept = request.headers.get("accept", "")
    html = accept.find("text/html")
    json = accept.find("application/json")
    return html >= 0 and (json < 0 or html < json)


@router.get("/", response_model=None)
async def index(request: Request) -> Response:
    """Describe the server: its versions and where everything is (HTML for a browser)."""
    version = request.app.version
    if _wants_html(request):
        return HTMLResponse(index_page(version))
    return JSONResponse(index_document(version))


@router.get("/health")
async def health(engine: EngineDep) -> dict[str, Any]:
    """Report that the server is up, and its database dialect."""
    return {"status": "ok", "database": engine.dialect.name}


@router.get("/games", tags=["games"])
async def games() -> dict[str, list[str]]:
    """List the games this server hosts."""
    return {"games": game_names()}


@router.get("/protocol/schema")
async def protocol_schema() -> dict[str, Any]:
    """Return the JSON Schema of every WebSocket message and REST body (`arena protocol schema`)."""
    return json_schema()
