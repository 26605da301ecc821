"""`arena bot`: play a bot on an Arena server over WebSockets (client.BotClient).

When the server cannot be reached (or the connection drops) the client logs a line saying what
it waits for and keeps retrying with exponential backoff, with or without `--matches`: a bot is
a long-lived process that should survive server restarts. After `--wait` seconds without an
answer (DEFAULT_WAIT_S; 0: forever) it gives up with one line and exit status 2. It also stops
with an error when retrying cannot help (token refused, connection replaced by a newer one,
protocol version not supported), and cleanly on Ctrl-C.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Annotated

import typer

from cli.common import fail

if TYPE_CHECKING:
    from protocol.messages import TimeControl

_POOL_NAME = re.compile(r"[a-z0-9][a-z0-9_\-]{0,31}")

DEFAULT_WAIT_S = 60.0
"""How long `arena bot` waits for a server that does not answer (a restart takes seconds)."""


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
        str,
        typer.Option(
            "--bot",
            "--engine",
            help="Bot spec, e.g. alphabeta:depth=6 (see `arena bots`), or a program of yours: "
            "cmd:COMMAND, py:FILE.py:CLASS, cb:ENGINE.so (docs/ENGINES.md).",
        ),
    ],
    matches: Annotated[
        int | None,
        typer.Option(
            "--matches",
            min=1,
            help="Exit after this many matches have been played to their end (a declined or "
            "aborted one does not count).",
        ),
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
    games: Annotated[
        str | None,
        typer.Option(
            "--games",
            help="Accept challenges only to these games, comma-separated (default: every game "
            "the bot can play; a challenge to a game it cannot play is always declined).",
        ),
    ] = None,
    opponents: Annotated[
        str | None,
        typer.Option(
            "--opponents",
            help="Accept challenges only from these players, comma-separated (default: anyone).",
        ),
    ] = None,
    min_base: Annotated[
        float | None,
        typer.Option("--min-base", min=0, help="Decline clocks whose base time is below this (s)."),
    ] = None,
    max_base: Annotated[
        float | None,
        typer.Option("--max-base", min=0, help="Decline clocks whose base time is above this (s)."),
    ] = None,
    max_increment: Annotated[
        float | None,
        typer.Option(
            "--max-increment", min=0, help="Decline clocks whose increment is above this (s)."
        ),
    ] = None,
    untimed: Annotated[
        bool,
        typer.Option(
            "--untimed/--no-untimed", help="Accept challenges to matches without a clock."
        ),
    ] = True,
    challenge_every: Annotated[
        float | None,
        typer.Option(
            "--challenge-every",
            min=1,
            help="Challenge an idle online bot every this many seconds while playing no match "
            "(`GET /bots/online`; default: never).",
        ),
    ] = None,
    challenge_game: Annotated[
        str,
        typer.Option("--challenge-game", help="The game of the challenges this bot sends."),
    ] = "checkers",
    challenge_clock: Annotated[
        str,
        typer.Option(
            "--challenge-clock",
            help="The clock of the challenges this bot sends: BASE+INCREMENT in seconds "
            "(60+1), or `none` for untimed.",
        ),
    ] = "60+1",
    challenge_opponents: Annotated[
        str | None,
        typer.Option(
            "--challenge-opponents",
            help="Challenge only these bots, comma-separated (default: any idle online bot).",
        ),
    ] = None,
    challenge_timeout: Annotated[
        float,
        typer.Option(
            "--challenge-timeout",
            min=1,
            help="Seconds to wait for an answer to a challenge before aborting it.",
        ),
    ] = 60.0,
    pools: Annotated[
        list[str] | None,
        typer.Option(
            "--pool",
            help="Enter this player into the rated pool of that name at each connection "
            "(repeat for several; `GET /pools` lists them). The pool pairs the bot while it is "
            "connected, and seats it in rated matches by itself.",
        ),
    ] = None,
    wait: Annotated[
        float,
        typer.Option(
            "--wait",
            min=0,
            help="Seconds to keep trying to reach a server that does not answer (from the first "
            "failed try since the last connection) before giving up with exit status 2; "
            "0: forever.",
        ),
    ] = DEFAULT_WAIT_S,
) -> None:
    """Play every match the server gives this player with the bot SPEC, until Ctrl-C.

    Connects to SERVER/ws, budgets each move from the match clock, logs every move with its
    search statistics, and reconnects with backoff when the connection drops. A server that does
    not answer is retried for --wait seconds, each retry logged, then given up (exit status 2).
    Challenges are accepted by the filter options (each declined one is logged with its reason).
    With --challenge-every the bot also challenges other online bots by itself; with --pool it
    plays the rated games a pool pairs it into.
    """
    import asyncio

    from bots.spec import BotSpecError
    from client import (
        BotClient,
        ChallengeFilter,
        ChallengePlan,
        ClientError,
        ServerUnreachable,
    )
    from games import game_names

    if min_base is not None and max_base is not None and min_base > max_base:
        fail(f"--min-base {min_base:g} is above --max-base {max_base:g}")
    for pool in pools or ():
        if not _POOL_NAME.fullmatch(pool):
            fail(
                f"--pool {pool!r} is no pool name (lower-case letters, digits, `_` and `-`, at "
                "most 32): `GET /pools` lists the server's pools"
            )
    wanted = _names(games)
    if wanted is not None:
        unknown = sorted(wanted - set(game_names()))
        if unknown:
            fail(
                f"--games names no game {', '.join(unknown)}; "
                f"the games are: {', '.join(game_names())}"
            )
    challenges = ChallengeFilter(
        games=wanted,
        opponents=_names(opponents),
        min_base_ms=None if min_base is None else round(min_base * 1000),
        max_base_ms=None if max_base is None else round(max_base * 1000),
        max_increment_ms=None if max_increment is None else round(max_increment * 1000),
        untimed=untimed,
    )
    plan = None
    if challenge_every is not None:
        if challenge_game not in game_names():
            fail(
                f"--challenge-game names no game {challenge_game!r}; "
                f"the games are: {', '.join(game_names())}"
            )
        plan = ChallengePlan(
            game=challenge_game,
            every_s=challenge_every,
            time_control=_clock(challenge_clock),
            opponents=_names(challenge_opponents),
            timeout_s=challenge_timeout,
        )
    try:
        client = BotClient(
            server,
            token,
            spec,
            accept_challenges=accept_challenges,
            challenges=challenges,
            give_up_after=wait or None,
            challenge_plan=plan,
            pools=tuple(dict.fromkeys(pools or ())),
        )
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
    except ServerUnreachable as exc:
        fail(str(exc))
    except ClientError as exc:
        fail(str(exc), code=1)
    logging.getLogger("arena.bot").info("done: %d match(es) ended", played)


def _names(listed: str | None) -> frozenset[str] | None:
    """The comma-separated names of an option, or None when it was not given."""
    if listed is None:
        return None
    return frozenset(name.strip() for name in listed.split(",") if name.strip())


def _clock(text: str) -> TimeControl | None:
    """The time control written BASE+INCREMENT in seconds (`60+1`, `300`), or None for
    `none`; a bad one fails with a line saying how to write it."""
    from protocol.messages import TimeControl

    if text.strip().lower() == "none":
        return None
    base, _, increment = text.partition("+")
    try:
        base_ms = round(float(base) * 1000)
        increment_ms = round(float(increment or 0) * 1000)
        return TimeControl(base_ms=base_ms, increment_ms=increment_ms)
    except ValueError:
        raise fail(
            f"--challenge-clock {text!r} is not a clock: write BASE+INCREMENT in seconds "
            "(60+1; a base of at least 0.001 s) or `none`"
        ) from None
