"""The `arena` app: every command is reachable, built whole or built for one command."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from cli.main import GROUPS, command_of, create_cli

ALL_COMMANDS = [name for names in GROUPS.values() for name in names]


def test_the_command_map_names_every_registered_command() -> None:
    """A command added to a module but not to GROUPS would be unreachable when run directly."""
    group = typer.main.get_command(create_cli())
    assert isinstance(group, typer.core.TyperGroup)
    assert sorted(group.commands) == sorted(ALL_COMMANDS)


@pytest.mark.parametrize("name", ALL_COMMANDS)
def test_each_command_runs_from_an_app_built_for_it(name: str) -> None:
    result = CliRunner().invoke(create_cli(name), [name, "--help"])
    assert result.exit_code == 0, result.output
    assert f"arena {name}" in result.stdout.replace("  ", " ")


def test_an_app_built_for_one_command_holds_only_its_module() -> None:
    group = typer.main.get_command(create_cli("perft"))
    assert isinstance(group, typer.core.TyperGroup)
    assert sorted(group.commands) == ["games", "perft", "show"]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["perft", "checkers", "1"], "perft"),
        (["grader", "submit", "x"], "grader"),
        (["--help"], None),
        ([], None),
        (["nosuch"], None),
    ],
)
def test_command_of_reads_the_first_word(argv: list[str], expected: str | None) -> None:
    assert command_of(argv) == expected
