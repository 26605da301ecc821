"""`arena serve`: run the Arena server under uvicorn."""

from __future__ import annotations

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
    typer.echo(
        f"Arena on http://{settings.host}:{settings.port} (API docs at /docs), "
        f"database {settings.database_url}"
    )
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_level="info")
