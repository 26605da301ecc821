"""Commands over the wire contract: `arena protocol schema`."""

from __future__ import annotations

import json

import typer


def register(app: typer.Typer) -> None:
    """Add the `protocol` command group to `app`."""
    group = typer.Typer(
        name="protocol",
        help="The wire protocol of the match server (see docs/PROTOCOL.md).",
        no_args_is_help=True,
    )
    group.command("schema")(schema)
    app.add_typer(group, name="protocol")


def schema() -> None:
    """Print the JSON Schema of every WebSocket message and REST body."""
    from protocol import json_schema

    print(json.dumps(json_schema(), indent=2))
