"""`arena bot`: play a bot on an Arena server over WebSockets (bots.client.BotClient).

When the server cannot be reached (or the connection drops) the client logs one line and keeps
retrying with exponential backoff, with or without `--matches`: a bot is a long-lived process
that should survive server restarts. It stops with an error only when retrying cannot help
(token refused, connection replaced by a newer one, protocol version not supported), and
cleanly on Ctrl-C.
"""

from __future__ import annotations

import logging
from typing import Annotated

import typer

from cli.common import fail


def register(app: typer.Typer) -> None:
    """Add the `bot` command to `app`."""
    app.command("bot")(bot)


def configure_logging(verbose: bool) -> None:
    """Log to stderr: each move with its statistics; protocol details with `verbose`."""
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if not verbose:
        logging.getLogger("websockets").setLevel(logging.WARNING)
        logging.getLogger("httpx").setLevel(logging.WARNING)


def bot(
    server: Annotated[
        str, typer.Option("--server", help="Server URL, e.g. http://127.0.0.1:8000.")
    ],
    token: Annotated[
        str, typer.Option("--token", help="The player's API token (from POST /players).")
    ],
    spec: Annotated[
        str, typer.Option("--bot", help="Bot spec, e.g. alphabeta:depth=6 (see `arena bots`).")
    ],
    matches: Annotated[
        int | None,
        typer.Option("--matches", min=1, help="Exit after this many matches have ended."),
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log protocol details.")] = False,
    accept_challenges: Annotated[
        bool,
        typer.Option(
            "--accept-challenges/--decline-challenges",
            help="Accept the challenges other players send this player (a match naming it in a "
            "seat), or decline them.",
        ),
    ] = True,
) -> None:
    """Play every match the server gives this player with the bot SPEC, until Ctrl-C.

    Connects to SERVER/ws, budgets each move from the match clock, logs every move with its
    search statistics, and reconnects with backoff when the connection drops (an unreachable
    server is retried, never fatal).
    """
    import asyncio

    from bots.client import BotClient, ClientError
    from bots.spec import BotSpecError

    try:
        client = BotClient(server, token, spec, accept_challenges=accept_challenges)
    except BotSpecError as exc:
        fail(f"bad bot spec {spec!r}: {exc} (`arena bots` lists the bots and their options)")
    except ValueError as exc:
        fail(str(exc))
    configure_logging(verbose)
    try:
        played = asyncio.run(client.run(max_matches=matches))
    except KeyboardInterrupt:
        logging.getLogger("arena.bot").info("stopped (Ctrl-C)")
        raise typer.Exit(130) from None
    except ClientError as exc:
        fail(str(exc), code=1)
    logging.getLogger("arena.bot").info("done: %d match(es) ended", played)
