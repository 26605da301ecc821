"""The `arena` entry point: composes each package's command group into one app."""

from __future__ import annotations

import typer

from cli import bot, bots, games, grader, protocol, server, tournament


def create_cli() -> typer.Typer:
    """Return the `arena` Typer app with every command group registered."""
    app = typer.Typer(
        name="arena",
        help="Arena: exact game rules, search bots, matches, tournaments and a checkers "
        "autograder.",
        no_args_is_help=True,
        pretty_exceptions_show_locals=False,
        add_completion=False,
    )
    games.register(app)
    bots.register(app)
    server.register(app)
    protocol.register(app)
    bot.register(app)
    tournament.register(app)
    grader.register(app)
    return app


def main() -> None:
    """Run the `arena` command line."""
    create_cli()()
