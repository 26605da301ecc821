"""`arena bot` on the command line: bad input and an unreachable server are one line each."""

from __future__ import annotations

from typing import Any

import pytest

from tests.ports import free_port


def _bot_cli() -> Any:
    import typer

    from cli.bot import register

    app = typer.Typer()
    register(app)
    app.command("other", hidden=True)(lambda: None)  # keep `bot` a sub-command
    return app


def test_cli_gives_up_on_an_unreachable_server_in_one_line() -> None:
    from typer.testing import CliRunner

    port = free_port()
    arguments = ["bot", "--server", f"http://127.0.0.1:{port}", "--token", "t", "--bot", "random"]
    result = CliRunner().invoke(_bot_cli(), [*arguments, "--wait", "0.5"])
    assert result.exit_code == 2, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith(f"error: no Arena server answered at ws://127.0.0.1:{port}/ws for 0.5 s")
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (["--bot", "nosuchbot"], "bad bot spec"),
        (["--bot", "alphabeta:depth=0"], "bad bot spec"),
        (["--bot", "random", "--server", "localhost"], "server URL"),
        (["--bot", "random", "--games", "chess,connect4"], "--games names no game chess"),
        (["--bot", "random", "--min-base", "60", "--max-base", "10"], "--min-base 60 is above"),
        (
            ["--bot", "random", "--challenge-every", "30", "--challenge-game", "chess"],
            "--challenge-game names no game 'chess'",
        ),
        (
            ["--bot", "random", "--challenge-every", "30", "--challenge-clock", "soon"],
            "not a clock",
        ),
        (
            ["--bot", "random", "--challenge-every", "30", "--challenge-clock", "-5+1"],
            "not a clock",
        ),
    ],
)
def test_cli_reports_bad_input_in_one_line(arguments: list[str], expected: str) -> None:
    from typer.testing import CliRunner

    base = {"--server": "http://127.0.0.1:1", "--token": "t"}
    for option, value in zip(arguments[::2], arguments[1::2], strict=True):
        base[option] = value
    result = CliRunner().invoke(_bot_cli(), ["bot", *[x for kv in base.items() for x in kv]])
    assert result.exit_code == 2, result.output
    assert expected in result.output
    assert "Traceback" not in result.output
