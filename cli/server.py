"""`arena serve`: run the Arena server under uvicorn."""

from __future__ import annotations

import errno
import json
import os
import shutil
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperCommand

from cli.common import fail
from cli.rlimit import raise_open_file_limit

if TYPE_CHECKING:
    from server.settings import Settings


class ServeCommand(TyperCommand):
    """`arena serve`, whose help ends with every server setting (read only when help is shown)."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """Add the settings to the epilog, then format the help as usual."""
        self.epilog = settings_help()
        super().format_help(ctx, formatter)


def register(app: typer.Typer) -> None:
    """Add the server commands to `app`."""
    app.command("serve", cls=ServeCommand)(serve)


def settings_help() -> str:
    """Return every server setting as help paragraphs: variable, default and meaning."""
    from pydantic_core import to_jsonable_python
    from rich.markup import escape

    from server.settings import all_settings

    lines = ["Every setting is an environment variable (ARENA_<NAME>, default in brackets):"]
    for setting in all_settings():
        field = setting.field
        default = to_jsonable_python(field.get_default(call_default_factory=True))
        shown = (
            "none"
            if default is None
            else ",".join(str(item) for item in default)
            if isinstance(default, list) and all(isinstance(item, str) for item in default)
            else json.dumps(default)
            if isinstance(default, list | dict)
            else default
        )
        lines.append(escape(f"{setting.variable} [{shown}]: {field.description}"))
    lines.append('Lists are JSON (ARENA_HOUSE_BOTS=\'["random", "id:time=0.5"]\').')
    return "\n\n".join(lines)


def arena_command() -> str:
    """Return how the user runs this `arena`: its name if PATH finds it, else its path."""
    me = Path(sys.argv[0])
    if me.name != "arena":  # not started as the console script (a test, python -m)
        return "arena"
    found = shutil.which("arena")
    if found is not None and Path(found).resolve() == me.resolve():
        return "arena"
    try:
        return str(me.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(me.resolve())


READ_FIELD = (
    "import json,sys; r=json.load(sys.stdin); k=sys.argv[1]; "
    "print(r[k]) if k in r else sys.exit(r.get('message', r))"
)
"""A python3 one-liner for shell scripts: print field argv[1] of the JSON on stdin, or exit
with the server's error message (a name taken, a bad token) instead of a traceback."""


def quick_start(settings: Settings, port: int | None = None) -> str:
    """Return the start-up banner: where the server is and how to play a first match.

    The commands are meant to be pasted into a shell as they are, as often as wanted: each
    paste registers a fresh name (`you-` and a random number, $NAME) and keeps its token in
    $TOKEN. `port` is the port actually listened on (it differs from the setting's 0).
    """
    base = f"http://{_url_host(settings.host)}:{port if port is not None else settings.port}"
    bot = settings.house_bots[0] if settings.house_bots else "alphabeta:depth=4"
    arena = arena_command()
    json_header = "-H 'Content-Type: application/json'"
    auth = '-H "Authorization: Bearer $TOKEN"'
    match_body = json.dumps({"game": "checkers", "seats": ["$NAME", {"bot": bot}]})
    match_body = match_body.replace('"', '\\"')
    return "\n".join(
        [
            f"Arena on {base} (API docs at {base}/docs), database {settings.database_url}",
            f"Open {base}/ in a browser to play a house bot, watch matches and tournaments, "
            "and grade an assignment.",
            f"Step through a search node by node, drawn as the lectures draw it: {base}/explore",
            f"House bots: {', '.join(settings.house_bots) or 'none'} (any bot spec works).",
            "Or play checkers over REST: paste these lines into another terminal.",
            f'  BASE={base} NAME=you-$RANDOM READ="{READ_FIELD}"',
            f"  TOKEN=$(curl -s -X POST $BASE/players {json_header} "
            '-d "{\\"name\\": \\"$NAME\\"}" | python3 -c "$READ" token)',
            f'  MATCH=$(curl -s -X POST $BASE/matches {auth} {json_header} -d "{match_body}"'
            ' | python3 -c "$READ" match_id)',
            f"  curl -s -w '\\n' -X POST $BASE/matches/$MATCH/moves {auth} {json_header} "
            '-d \'{"move": "11-15"}\'',
            "  curl -s -w '\\n' $BASE/matches/$MATCH   # the whole state: moves, clocks, legal "
            "moves",
            "Or let a bot play for you ($NAME) over WebSockets:",
            f"  {arena} bot --server $BASE --token $TOKEN --bot id:time=0.5",
            "Grade a checkers assignment (docs/GRADER.md), starting from the course's starter:",
            f"  ({grading_line(settings)})",
            f"  {arena} grader starter --out my-solution",
            f"  {arena} grader submit my-solution/checkers.py --profile endgame --server $BASE "
            "--token $TOKEN",
            "Run the assignment for a course: students, deadlines, a gradebook (docs/COURSE.md):",
            f'  {arena} course create "My course" --server $BASE --token $TOKEN',
            "Bots in any language: docs/PROTOCOL.md. Every setting: "
            f"{arena} serve --help. Stop with Ctrl-C.",
        ]
    )


def grading_line(settings: Settings) -> str:
    """Return how this server grades student code: in which sandbox, or why not at all."""
    from sandbox import Mode, sandbox_support

    if settings.role == "server":
        return "student code is graded by `arena worker` processes, each in its own sandbox"
    support = sandbox_support()
    if support.mode is Mode.ROOT:
        return "student code runs in bubblewrap's sandbox, as uids of its own"
    if support.mode is Mode.USER:
        return "student code runs in bubblewrap's sandbox, in a user namespace"
    if settings.grader.allow_unsandboxed:
        return (
            f"WARNING: student code runs WITHOUT a sandbox here ({support.reason}); "
            "grade only code you trust"
        )
    return (
        f"grading is off here: no sandbox ({support.reason}); docs/GRADER.md, 'Sandbox', "
        "says what it needs"
    )


def _url_host(host: str) -> str:
    """Return `host` as it is written in a URL (an IPv6 address in brackets)."""
    return f"[{host}]" if ":" in host else host


def listen(host: str, port: int) -> socket.socket:
    """Return a socket bound to (host, port), or exit with a message saying what to change.

    Binding before the banner is printed means a port in use is reported at once, in words,
    and the banner shows the port actually listened on (port 0: any free port). The socket is
    not inheritable (Python's default): uvloop starts child processes without closing
    inheritable descriptors, so every grading child would hold the port, and one that outlived
    the server would keep a restarted server from listening.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        if error.errno == errno.EADDRINUSE:
            fail(
                f"port {port} is in use on {host}; try --port {port + 1 if port else 8001} "
                "(or stop what listens there)"
            )
        if error.errno == errno.EACCES:
            fail(f"not allowed to listen on port {port} (ports below 1024 need root); try --port")
        fail(f"cannot listen on {host}:{port}: {error.strerror or error} (see --host, --port)")
    return sock


def serve(
    host: Annotated[str | None, typer.Option(help="Address to listen on (ARENA_HOST).")] = None,
    port: Annotated[
        int | None, typer.Option(help="Port to listen on, 0 for any free one (ARENA_PORT).")
    ] = None,
    database: Annotated[
        str | None,
        typer.Option(
            "--database",
            help="Database URL (ARENA_DATABASE_URL), e.g. sqlite+aiosqlite:///arena.db or "
            "postgresql+asyncpg://user@host/db.",
        ),
    ] = None,
) -> None:
    """Run the server: REST at /, WebSockets at /ws, API docs at /docs.

    Options override their environment variables; all other settings are listed below.
    """
    from pydantic import ValidationError

    from server.app import create_app
    from server.settings import Settings

    overrides: dict[str, Any] = {
        key: value
        for key, value in (("host", host), ("port", port), ("database_url", database))
        if value is not None
    }
    try:
        settings = Settings(**overrides)
    except ValidationError as exc:
        fail("bad setting: " + "; ".join(_setting_error(e) for e in exc.errors()))
    raise_open_file_limit()
    sock = listen(settings.host, settings.port)
    actual_port = sock.getsockname()[1]
    typer.echo(quick_start(settings, port=actual_port))
    if os.environ.get("FORWARDED_ALLOW_IPS"):
        typer.echo(
            "FORWARDED_ALLOW_IPS is ignored: name the proxies whose X-Forwarded-For (or PROXY "
            "protocol header) to trust in ARENA_TRUSTED_PROXIES (docs/SECURITY.md)",
            err=True,
        )
    app = create_app(settings)
    from cli.uvicorn_server import TunedServer, server_config

    TunedServer(server_config(app, settings, port=actual_port)).run(sockets=[sock])


def _setting_error(error: Any) -> str:
    """Return one pydantic error as `ARENA_NAME: message` (a group's setting by its flat name)."""
    location = "_".join(str(part) for part in error["loc"][:2]) if error["loc"] else "setting"
    return f"ARENA_{location.upper()} ({location}): {error['msg']}"
