"""`arena serve`: run the Arena server under uvicorn."""

from __future__ import annotations

import gc
from typing import Annotated

import typer
import uvicorn
from pydantic import ValidationError

from cli.common import fail
from server.app import create_app
from server.settings import Settings


def register(app: typer.Typer) -> None:
    """Add the server commands to `app`."""
    app.command("serve")(serve)


def quick_start(settings: Settings) -> str:
    """Return the start-up banner: where the server is and how to play a first match."""
    base = f"http://{settings.host}:{settings.port}"
    bot = settings.house_bots[0] if settings.house_bots else "alphabeta:depth=4"
    json_header = "-H 'Content-Type: application/json'"
    return "\n".join(
        [
            f"Arena on {base} (API docs at {base}/docs), database {settings.database_url}",
            f"House bots: {', '.join(settings.house_bots) or 'none'} (any bot spec works).",
            "Play checkers against a house bot from another terminal:",
            f'  curl -s -X POST {base}/players {json_header} -d \'{{"name": "you"}}\'',
            "      # note the token it prints: export TOKEN=...",
            f'  curl -s -X POST {base}/matches -H "Authorization: Bearer $TOKEN" {json_header} '
            f'-d \'{{"game": "checkers", "seats": ["you", {{"bot": "{bot}"}}]}}\'',
            "      # note the match_id: export MATCH=...",
            f'  curl -s -X POST {base}/matches/$MATCH/moves -H "Authorization: Bearer $TOKEN" '
            f'{json_header} -d \'{{"move": "11-15"}}\'',
            f"  curl -s {base}/matches/$MATCH      # watch: the full state, moves and clocks",
            "Grade a checkers assignment (docs/GRADER.md):",
            f"  arena grader submit checkers.py --profile endgame --server {base}",
            "Protocol for bots in any language: docs/PROTOCOL.md. Stop with Ctrl-C.",
        ]
    )


GC_THRESHOLDS = (20_000, 20, 20)
"""Garbage-collector generation thresholds for the server process (CPython's: 700, 10, 10)."""


def tune_garbage_collector() -> None:
    """Keep the collector's pauses out of move round trips (a server process only).

    A full collection walks every tracked object: with hundreds of connections that takes
    tens of milliseconds, the largest part of the p99 round trip in bench/server.py. What is
    made before serving lives for good, so it is frozen out of every later collection, and the
    young generation is collected less often (reference counting frees almost everything a
    move allocates).
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def serve(
    host: Annotated[str | None, typer.Option(help="Address to listen on (ARENA_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Port to listen on (ARENA_PORT).")] = None,
    database: Annotated[
        str | None,
        typer.Option(
            "--database",
            help="Database URL (ARENA_DATABASE_URL), e.g. sqlite+aiosqlite:///arena.db or "
            "postgresql+asyncpg://user@host/db.",
        ),
    ] = None,
) -> None:
    """Run the server: REST at /, WebSockets at /ws, API docs at /docs."""
    overrides = {
        key: value
        for key, value in (("host", host), ("port", port), ("database_url", database))
        if value is not None
    }
    try:
        settings = Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        fail("bad setting: " + "; ".join(f"{e['loc'][0]}: {e['msg']}" for e in exc.errors()))
    typer.echo(quick_start(settings))
    app = create_app(settings)
    tune_garbage_collector()
    uvicorn.run(
        app,
        host=settings.host,
        port=settings.port,
        log_level="info",
        ws_per_message_deflate=settings.ws_compression,
    )
