"""Helpers shared by the command groups: game options, errors, output."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.console import Console
from rich.markup import escape

from games import Game, GameError, get_game

err_console = Console(stderr=True)

OptionList = list[str]


def parse_option_pairs(pairs: list[str] | None) -> dict[str, str]:
    """Return the KEY=VALUE pairs given with --option as a dict, or exit with a clear error."""
    options: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            fail(f"--option takes KEY=VALUE, got {pair!r}")
        options[key.strip()] = value.strip()
    return options


def number(value: float) -> str:
    """Return a number as people write it: digits grouped (1,000,000, never 1e+06), and a
    fraction only when there is one (0.5)."""
    if math.isfinite(value) and value == int(value):
        return f"{int(value):,}"
    return f"{value:,.10g}"


def plural(count: int, word: str, many: str | None = None) -> str:
    """Return `count` and `word`, in the plural unless the count is one: "1 legal move"."""
    return f"{count:,} {word if count == 1 else many or word + 's'}"


def load_game(name: str, option_pairs: list[str] | None) -> Game:
    """Return the named game with its --option values, or exit with a clear error."""
    with game_errors():
        return get_game(name, parse_option_pairs(option_pairs))


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print `message` as an error and exit with `code`."""
    # Soft wrap: one line however long (the terminal wraps it), and the text is not markup.
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


@contextmanager
def game_errors() -> Iterator[None]:
    """Turn a GameError into a one-line message and exit status 2 instead of a traceback."""
    try:
        yield
    except GameError as exc:
        fail(str(exc))
