"""The `arena` entry point: composes each package's command group into one app."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

import typer

GROUPS: dict[str, tuple[str, ...]] = {
    "cli.games": ("games", "show", "perft"),
    "cli.bots": ("bots", "analyse", "analyze"),
    "cli.solve": ("solve",),
    "cli.trace": ("trace",),
    "cli.egdb": ("egdb",),
    "cli.server": ("serve",),
    "cli.worker": ("worker",),
    "cli.protocol": ("protocol",),
    "cli.bot": ("bot",),
    "cli.tournament": ("tournament", "match"),
    "cli.grader": ("grade", "grader"),
    "cli.course": ("course",),
    "cli.cluster": ("cluster",),
}
"""Each command module, in the order `arena --help` lists them, and the commands it adds."""


def create_cli(command: str | None = None) -> typer.Typer:
    """Return the `arena` Typer app with every command group registered.

    With `command` (a top-level command name), only the module that adds it is imported and
    registered: running one command need not import and inspect all the others. The app
    stays a group either way, so `arena perft ...` parses the same.
    """
    app = typer.Typer(
        name="arena",
        help="Arena: exact game rules, search bots, matches, tournaments and a checkers "
        "autograder.",
        no_args_is_help=True,
        pretty_exceptions_show_locals=False,
        add_completion=False,
    )
    modules = [m for m, names in GROUPS.items() if command is None or command in names]
    for module in modules or GROUPS:
        importlib.import_module(module).register(app)
    # A callback keeps the app a group even when one module adds a single command.
    app.callback()(_arena)
    return app


def _arena() -> None:
    """Arena: exact game rules, search bots, matches, tournaments and a checkers autograder."""


def command_of(argv: Sequence[str]) -> str | None:
    """Return the top-level command `argv` (without the program name) runs, if it names one."""
    if not argv or argv[0].startswith("-"):
        return None
    return argv[0] if any(argv[0] in names for names in GROUPS.values()) else None


def main() -> None:
    """Run the `arena` command line."""
    create_cli(command_of(sys.argv[1:]))()
