"""`arena trace`: every node a search visits, drawn the way the lectures draw game trees."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from cli.common import fail, game_errors, load_game, number, plural
from cli.games import GameArg, OptionOpt, PositionOpt

if TYPE_CHECKING:
    from bots.trace.model import Trace

MAX_WINDOW = 1e12
"""The largest |alpha| or |beta| --window takes (infinities aside): beyond every score."""


def register(app: typer.Typer) -> None:
    """Add `arena trace` to `app`."""
    app.command("trace")(trace_command)


def trace_command(
    game: GameArg,
    bot: Annotated[
        str | None,
        typer.Option(
            "--bot",
            "-b",
            help="The bot whose search to trace: minimax (prune=on), alphabeta_lecture "
            "(soft=on), negamax, or alphabeta (the engine; tt, ordering), e.g. "
            "alphabeta_lecture:depth=3,soft=on.",
        ),
    ] = None,
    search: Annotated[
        str | None,
        typer.Option(
            "--search",
            help="Instead of --bot, a search by name: minimax, minimax_prune, alphabeta "
            "(fail-hard), alphabeta_soft, negamax, abnodevalue (the lecture's ABNodeValue), "
            "engine.",
        ),
    ] = None,
    position: PositionOpt = None,
    option: OptionOpt = None,
    depth: Annotated[
        int | None,
        typer.Option(
            "--depth", "-d", min=1, max=128, help="Plies to search (default: the bot's depth)."
        ),
    ] = None,
    to_end: Annotated[
        bool,
        typer.Option("--to-end", help="Search to the end of the game (no depth limit)."),
    ] = False,
    evaluation: Annotated[
        str | None,
        typer.Option("--eval", help="With --search: the evaluation (default: the game's)."),
    ] = None,
    scoring: Annotated[
        str,
        typer.Option(
            "--scoring",
            help="Scores of finished games: engine (a win is 1,000,000 less its distance in "
            "plies, as the bots score) or lecture (win 1, draw 0, loss -1).",
        ),
    ] = "engine",
    window: Annotated[
        str | None,
        typer.Option(
            "--window",
            help="The root's window ALPHA,BETA (e.g. -1,1; inf allowed) for alphabeta, "
            "alphabeta_soft and negamax; for abnodevalue BETA is the root's parentVal.",
        ),
    ] = None,
    max_nodes: Annotated[
        int,
        typer.Option(
            "--max-nodes",
            min=1,
            max=1_000_000,
            help="Refuse a tree larger than this (at most 1,000,000).",
        ),
    ] = 20_000,
    show: Annotated[
        int,
        typer.Option(
            "--show",
            min=1,
            max=2_000,
            help="Nodes the text and SVG drawings show before folding subtrees away "
            "(the principal variation always shows).",
        ),
    ] = 60,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the whole trace as one JSON object.")
    ] = False,
    svg: Annotated[
        Path | None, typer.Option("--svg", help="Write the tree as an SVG picture to FILE.")
    ] = None,
    html: Annotated[
        Path | None,
        typer.Option(
            "--html", help="Write a self-contained page to FILE: click a node to unfold it."
        ),
    ] = None,
) -> None:
    """Trace a search: every node in visit order with its window, value and cut-offs.

    Prints an indented tree (* marks the principal variation); --json prints everything,
    --svg and --html draw it like the lectures: MAX and MIN levels, values, visit order, the
    window on entry, never-searched children greyed with the cut marked. Node values are the
    root player's for minimax and the lecture's alpha-beta, the side to move's for negamax,
    abnodevalue and the engine. A tree larger than --max-nodes is refused.
    """
    from bots.spec import BotSpecError
    from bots.trace.draw import render_svg, render_text
    from bots.trace.page import render_html
    from bots.trace.tree import SEARCHES, TraceError, TraceLimitError, trace, trace_spec

    outputs = [
        name for name, given in (("--json", as_json), ("--svg", svg), ("--html", html)) if given
    ]
    if len(outputs) > 1:
        fail(f"give one of --json, --svg and --html, not {' and '.join(outputs)}")
    if (bot is None) == (search is None):
        fail("name what to trace with --bot SPEC or --search NAME (one of them)")
    if to_end and depth is not None:
        fail("give --depth N or --to-end, not both")
    if search is not None and search not in SEARCHES:
        fail(f"unknown search {search!r} (searches: {', '.join(SEARCHES)})")
    if bot is not None and evaluation is not None:
        fail("with --bot the evaluation is the spec's eval option, e.g. --bot minimax:eval=NAME")
    root_window = _parse_window(window)
    rules = load_game(game, option)
    with game_errors():
        state = rules.position_or_initial(position)
    if state.is_terminal():
        fail("the game is over in this position: there is nothing to search")
    try:
        if bot is not None:
            traced = trace_spec(
                state,
                bot,
                depth,
                max_nodes,
                to_end=to_end,
                scoring=scoring,
                window=root_window or (-math.inf, math.inf),
            )
        else:
            assert search is not None
            traced = trace(
                state,
                search,
                None if to_end else depth or _default_depth(search),
                evaluation=evaluation,
                max_nodes=max_nodes,
                scoring=scoring,
                window=root_window or (-math.inf, math.inf),
            )
    except TraceLimitError as exc:
        fail(f"{exc} with --max-nodes")
    except (BotSpecError, TraceError) as exc:
        fail(str(exc))
    if as_json:
        print(json.dumps(traced.as_dict()))
        return
    if svg is not None or html is not None:
        target = svg if svg is not None else html
        assert target is not None
        text = render_svg(traced, budget=show) if svg is not None else render_html(traced)
        try:
            target.write_text(text, encoding="utf-8")
        except OSError as exc:
            fail(f"cannot write {target}: {exc.strerror or exc}")
        print(f"wrote {target}: {_summary(traced)}")
        return
    print(render_text(traced, budget=show), end="")


def _default_depth(search: str) -> int:
    """The depth a bare --search runs at: the matching bot's default depth."""
    from bots.registry import PLAYERS

    bot = "alphabeta" if search == "engine" else "minimax"
    default = PLAYERS[bot].options["depth"].default
    assert isinstance(default, int)
    return default


def _parse_window(text: str | None) -> tuple[float, float] | None:
    if text is None:
        return None
    parts = text.split(",")
    if len(parts) != 2:
        fail(f"--window takes ALPHA,BETA (e.g. -1,1 or -inf,inf), not {text!r}")
    values = []
    for part in parts:
        raw = part.strip().lower()
        if len(raw) > 32:
            fail(f"--window bound {raw[:32]}... is too long")
        try:
            value = float(raw)
        except ValueError:
            fail(f"--window bounds must be numbers or inf, not {part.strip()!r}")
        if math.isnan(value) or (math.isfinite(value) and abs(value) > MAX_WINDOW):
            fail(f"--window bounds must be inf or within ±{number(MAX_WINDOW)}, not {part.strip()}")
        values.append(value)
    if not values[0] < values[1]:
        fail(f"--window needs ALPHA < BETA, not {text}")
    return values[0], values[1]


def _summary(traced: Trace) -> str:
    from bots.trace.labels import format_value

    stats = traced.stats
    return (
        f"{traced.search}, {plural(stats.nodes, 'node')}, {plural(stats.cutoffs, 'cut-off')}, "
        f"value {format_value(traced.value, traced.scoring)}, best move {traced.best_move}"
    )
