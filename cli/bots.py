"""Commands over the search bots: `arena bots` lists them, `arena analyse` searches a position
with one."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from cli.common import err_console, fail, game_errors, load_game, number, plural
from cli.games import GameArg, OptionOpt, PositionOpt

if TYPE_CHECKING:
    from rich.spinner import Spinner

    from bots.result import Clock

console = Console(highlight=False)

DEFAULT_ANALYSE_SECONDS = 60.0
"""The default of `arena analyse --time`: the longest a search may run."""


def register(app: typer.Typer) -> None:
    """Add the search commands to `app`."""
    app.command("bots")(list_bots)
    app.command("analyse")(analyse)
    app.command("analyze", hidden=True)(analyse)


def list_bots() -> None:
    """List the bots, their options and defaults (bot specs: NAME:KEY=VALUE,...)."""
    from rich.table import Table

    from bots.spec import describe_bots

    table = Table(title="Arena bots: write a spec as NAME or NAME:KEY=VALUE,KEY=VALUE")
    table.add_column("bot")
    table.add_column("what it does")
    table.add_column("options (default)")
    for name, description, options in describe_bots():
        lines = [f"{k}={d}: {h}" if d else f"{k}: {h}" for k, d, h in options]
        table.add_row(name, description, "\n".join(lines) or "-")
    console.print(table)


def analyse(
    game: GameArg,
    bot: Annotated[
        str, typer.Option("--bot", "-b", help="The bot spec, e.g. alphabeta:depth=6,eval=material.")
    ],
    position: PositionOpt = None,
    option: OptionOpt = None,
    seconds: Annotated[
        float,
        typer.Option(
            "--time",
            min=0,
            help="Stop the search after this many seconds (0: no limit): a time-limited bot "
            "(id, mcts) plays its best move so far, a fixed-depth one has none and fails.",
        ),
    ] = DEFAULT_ANALYSE_SECONDS,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Search a position with a bot: its move, score, principal variation and statistics.

    The score is from the point of view of the side to move. The search stops after --time
    seconds; on a terminal a line shows it running.
    """
    from bots.common import pv_texts
    from bots.result import SearchStopped
    from bots.spec import BotSpecError, create_bot

    rules = load_game(game, option)
    with game_errors():
        state = rules.position_or_initial(position)
    if state.is_terminal():
        fail("the game is over in this position: there is nothing to analyse")
    try:
        searcher = create_bot(bot, rules, clock=time.perf_counter)
    except (BotSpecError, ValueError) as exc:
        fail(str(exc))
    clock = time.perf_counter
    watch = _SearchWatch(bot.strip(), clock, seconds)
    try:
        with _searching(watch, live=not as_json and err_console.is_terminal):
            result = searcher.choose(
                state, time_budget=seconds if seconds > 0 else None, stop=watch.should_stop
            )
    except SearchStopped:
        fail(
            f"{bot.strip()} did not finish within {number(seconds)} s (--time), after at least "
            f"{plural(watch.nodes, 'node')}: a fixed-depth search has no move before it ends; "
            "ask a smaller depth, a longer --time (0: no limit), or a bot that stops on time "
            "with its best move so far (id:time=5)"
        )
    stats = result.stats
    move_text = state.format_move(result.move) if result.move is not None else None
    pv = stats.pv or pv_texts(state, result.pv)
    outcome, plies = score_outcome(result.score)
    if as_json:
        payload: dict[str, Any] = {
            "move": move_text,
            "score": result.score,
            "outcome": outcome,
            "plies": plies,
            "pv": pv,
            "nodes": stats.nodes,
            "depth": stats.depth,
            "seconds": round(stats.seconds, 6),
            "nps": round(stats.nps, 1),
            "bot": searcher.name,
            "stats": stats.as_dict(),
        }
        print(json.dumps(payload))
        return
    # The spec as given: the canonical name leaves out options at their defaults.
    console.print(f"{bot.strip()} on {rules.name}, {rules.player_names[state.to_move]} to move")
    console.print(f"  move   {move_text}")
    console.print(f"  score  {describe_score(result.score)} (for the side to move)")
    console.print(f"  pv     {' '.join(pv)}")
    console.print(
        f"  depth {stats.depth}, {plural(stats.nodes, 'node')}, "
        f"{plural(stats.evaluations, 'evaluation')}, {stats.seconds:.3f} s, "
        f"{stats.nps:,.0f} nodes/s, table hits {stats.tt_hits:,}, cut-offs {stats.cutoffs:,}"
        + (f", {plural(stats.simulations, 'simulation')}" if stats.simulations else "")
    )


class _SearchWatch:
    """Stops a search after `seconds` (0: never) on `clock`, and counts the nodes it has
    searched (a search asks its stop every 64 nodes, or every MCTS simulation)."""

    def __init__(self, spec: str, clock: Clock, seconds: float) -> None:
        self.spec = spec
        self.clock = clock
        self.seconds = seconds
        self.start = clock()
        self.asked = 0
        from rich.spinner import Spinner

        self.spinner = Spinner("dots")

    @property
    def nodes(self) -> int:
        """Return the nodes searched so far, at least (64 for each time the stop was asked)."""
        return 64 * self.asked

    def should_stop(self) -> bool:
        """Return True once the time is up (the search's `stop`)."""
        self.asked += 1
        return self.seconds > 0 and self.clock() - self.start >= self.seconds

    def __rich__(self) -> Spinner:
        elapsed = self.clock() - self.start
        limit = f" of {number(self.seconds)} s (--time)" if self.seconds > 0 else ""
        self.spinner.update(
            text=f"searching with {self.spec}: {elapsed:.0f} s{limit}, {self.nodes:,} nodes or more"
        )
        return self.spinner


@contextmanager
def _searching(watch: _SearchWatch, live: bool) -> Iterator[None]:
    """Show `watch` as a transient line on stderr while a search runs, when `live`."""
    if not live:
        yield
        return
    from rich.live import Live

    with Live(watch, console=err_console, transient=True, refresh_per_second=4):
        yield


def score_outcome(score: float) -> tuple[str | None, int | None]:
    """Return what a search score proves: ("win" or "loss", plies to the end) or (None, None).

    Engine scores count a win `plies` plies away as WIN - plies; an MCTS proof is exactly
    WIN, with no distance (plies None).
    """
    from bots.scoring import ENGINE

    if not (ENGINE.is_win(score) or ENGINE.is_loss(score)):
        return None, None
    outcome = "win" if score > 0 else "loss"
    distance = round(ENGINE.win - abs(score))
    return outcome, distance if distance > 0 else None


def describe_score(score: float) -> str:
    """Return a search score in words: "a forced win in 3 plies", "0.42"."""
    outcome, plies = score_outcome(score)
    if outcome is None:
        return f"{score:g}"
    if plies is None:
        return f"a proven {outcome}"
    return f"a forced {outcome} in {plural(plies, 'ply', 'plies')}"
