"""Commands over the rules alone: `arena games`, `arena show`, `arena perft`."""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import typer
from rich.console import Console

from cli.common import fail, game_errors, load_game, plural
from games import State, game_names, perft
from games.checkers import CheckersState
from games.connect4 import ConnectFourState
from games.registry import GAME_CLASSES

console = Console(highlight=False)

GameArg = Annotated[str, typer.Argument(help=f"The game: {', '.join(game_names())}.")]
PositionOpt = Annotated[
    str | None,
    typer.Option(
        "--position",
        "-p",
        help="Start from this position, in the game's notation (default: the start position).",
    ),
]
OptionOpt = Annotated[
    list[str] | None,
    typer.Option("--option", "-o", help="A game option as KEY=VALUE; repeatable."),
]


def natural_key(text: str) -> list[tuple[int, int | str]]:
    """Return a sort key that orders the numbers inside move text numerically (9-13 < 10-14)."""
    return [(0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", text)]


def register(app: typer.Typer) -> None:
    """Add the rules commands to `app`."""
    app.command("games")(list_games)
    app.command("show")(show)
    # A negative depth must reach the command as a number, to be refused in words, not be
    # taken for an unknown option.
    app.command("perft", context_settings={"ignore_unknown_options": True})(perft_command)


def list_games() -> None:
    """List the games with their options and defaults."""
    from rich.table import Table

    table = Table(title="Arena games")
    table.add_column("game")
    table.add_column("players")
    table.add_column("options (default)")
    table.add_column("description")
    for name in game_names():
        cls = GAME_CLASSES[name]
        options = ", ".join(f"{k}={v}" for k, v in cls.option_defaults().items()) or "-"
        table.add_row(name, " / ".join(cls.player_names), options, cls.description)
    console.print(table)


def show(game: GameArg, position: PositionOpt = None, option: OptionOpt = None) -> None:
    """Print the board, the side to move and the legal moves."""
    rules = load_game(game, option)
    with game_errors():
        state = rules.position_or_initial(position)
    console.print(state.render())
    console.print(f"position: {rules.format_position(state)}")
    outcome = state.outcome()
    if outcome is not None:
        winner = "draw" if outcome.winner is None else f"{rules.player_names[outcome.winner]} wins"
        console.print(f"game over: {winner} ({outcome.reason})")
        return
    moves = sorted((state.format_move(m) for m in state.legal_moves()), key=natural_key)
    console.print(
        f"{rules.player_names[state.to_move].capitalize()} to move; "
        f"{plural(len(moves), 'legal move')}:"
    )
    console.print("  " + " ".join(moves))


PERFT_MAX_SECONDS = 600.0
"""The default of `arena perft --max-time`: a count estimated to take longer is refused."""

PROGRESS_AFTER_S = 1.0
"""A count estimated to take longer than this shows its progress (on a terminal)."""

PROBE_SECONDS = 0.25
"""How long the counts of the shallow depths may take before the rest is estimated from them."""

MIN_DECAY = 0.5
"""The least a growth per ply is taken to shrink from one ply to the next (`plan_perft`)."""


@dataclass(frozen=True)
class PerftPlan:
    """What a count to a depth is expected to cost, measured on the shallow depths.

    `exact` is the count when the probe reached the depth itself (or a depth with no lines
    left: every deeper count is 0). Otherwise the count took `probe_seconds` at `probed` plies,
    at `rate` nodes a second, and grows `growth` times a ply; `log10_nodes` and
    `log10_seconds` estimate the count at the depth asked and its time (logarithms: the
    estimates can be far beyond a float).
    """

    exact: int | None
    probed: int = 0
    probe_seconds: float = 0.0
    growth: float = 1.0
    rate: float = 0.0
    log10_nodes: float = 0.0
    log10_seconds: float = 0.0

    def seconds(self) -> float:
        """Return the estimated time in seconds (inf when beyond a float)."""
        return 10**self.log10_seconds if self.log10_seconds < 300 else math.inf

    def depth_within(self, seconds: float) -> int:
        """Return the deepest count estimated to take at most `seconds` (at least 1 ply)."""
        if self.growth <= 1:
            return self.probed
        spare = math.log10(seconds / self.probe_seconds) / math.log10(self.growth)
        return max(1, self.probed + math.floor(spare))


Counter = Callable[[State[Any], int], int]
"""A perft function: games.perft, or a compiled core's for its game."""


def plan_perft(
    state: State[Any],
    depth: int,
    clock: Callable[[], float] = time.perf_counter,
    count: Counter = perft,
) -> PerftPlan:
    """Count the depths up to `depth` with `count` while each takes less than PROBE_SECONDS
    on `clock`; return the exact count if that reaches `depth`, else the estimate for `depth`.

    The estimate grows the last count by the growth per ply of the last two depths, that growth
    shrinking as it did from the depth before (a tree whose games end, such as tic-tac-toe's,
    grows less at each ply and then shrinks: its count is small however deep it is asked for).
    """
    counts = [1]
    for ply in range(1, depth + 1):
        start = clock()
        nodes = count(state, ply)
        took = max(clock() - start, 1e-9)
        if ply == depth or nodes == 0:
            return PerftPlan(exact=nodes)
        counts.append(nodes)
        if took >= PROBE_SECONDS and ply >= 2:
            growth = counts[-1] / counts[-2]
            decay = min(1.0, max(MIN_DECAY, growth / (counts[-2] / counts[-3])))
            log_growth = _log_growth(growth, decay, depth - ply)
            return PerftPlan(
                exact=None,
                probed=ply,
                probe_seconds=took,
                growth=growth,
                rate=nodes / took,
                log10_nodes=math.log10(nodes) + log_growth,
                log10_seconds=math.log10(took) + log_growth,
            )
    return PerftPlan(exact=1)  # depth 0


def _log_growth(growth: float, decay: float, steps: int) -> float:
    """Return log10 of how much a count grows in `steps` plies, each ply's growth `decay` times
    the one before, the first `growth * decay` (counted only while it is more than 1: past
    that the tree shrinks, and the deepest counts are the smaller)."""
    if growth <= 1:
        return 0.0
    if decay >= 1:
        return steps * math.log10(growth)
    # log10(growth * decay**k) for k = 1..n, summed: n log g + log d * n (n + 1) / 2.
    growing = math.floor(math.log10(growth) / -math.log10(decay))
    n = min(steps, growing)
    return max(0.0, n * math.log10(growth) + math.log10(decay) * n * (n + 1) / 2)


def perft_command(
    game: GameArg,
    depth: Annotated[int, typer.Argument(help="Plies to search (0 or more).")],
    position: PositionOpt = None,
    option: OptionOpt = None,
    divide: Annotated[
        bool, typer.Option("--divide", help="Also print the count below each legal move.")
    ] = False,
    max_time: Annotated[
        float,
        typer.Option(
            "--max-time",
            min=0,
            help="Refuse a count estimated to take longer than this many seconds (0: no limit).",
        ),
    ] = PERFT_MAX_SECONDS,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Count the leaf nodes of the legal-move tree to DEPTH plies (a whole multi-jump is one).

    The shallow depths are counted first to estimate the rest: a count estimated to take more
    than --max-time seconds is refused at once, and one of more than a second shows its
    progress. Checkers and Connect Four counts beyond the first estimate run on the compiled
    core.
    """
    if depth < 0:
        fail(f"the depth must be 0 or more plies, not {depth}")
    rules = load_game(game, option)
    with game_errors():
        state = rules.position_or_initial(position)
    start = time.perf_counter()
    plan = plan_perft(state, depth)
    counter: Counter = perft
    if plan.exact is None and isinstance(state, CheckersState | ConnectFourState):
        # Too long for the probe in plain Python: count with the compiled core (loading it
        # takes about a second, so counts the probe finishes never pay for it), and estimate
        # again at its speed. Its time starts once it is loaded.
        counter = perft_counter(state)
        start = time.perf_counter()
        plan = plan_perft(state, depth, count=counter)
    if plan.exact is None and max_time > 0 and plan.seconds() > max_time:
        fail(_too_long(rules.name, depth, plan, max_time))
    if plan.exact is not None and not divide:
        nodes, per_move = plan.exact, []
    else:
        long_run = plan.exact is None and plan.seconds() > PROGRESS_AFTER_S
        per_move = _count(state, depth, show_progress=not as_json and long_run, count=counter)
        nodes = sum(n for _, n in per_move) if depth > 0 else 1
    seconds = time.perf_counter() - start
    if as_json:
        result: dict[str, Any] = {
            "game": rules.name,
            "depth": depth,
            "nodes": nodes,
            "seconds": round(seconds, 6),
            "position": rules.format_position(state),
        }
        if divide:
            result["divide"] = dict(per_move)
        print(json.dumps(result))
        return
    if divide:
        for text, count in sorted(per_move, key=lambda item: natural_key(item[0])):
            console.print(f"{text:>16}  {count:,}")
    rate = nodes / seconds if seconds > 0 else 0
    console.print(
        f"perft({depth:,}) = {plural(nodes, 'node')} in {seconds:.3f} s ({rate:,.0f} nodes/s)"
    )


def _too_long(game: str, depth: int, plan: PerftPlan, max_time: float) -> str:
    """Say why a count is refused: its estimated size and time, and the depth that would do."""
    within = plan.depth_within(max_time)
    return (
        f"perft({depth:,}) of {game} would count about {power_of_ten(plan.log10_nodes)} nodes "
        f"(the tree grows about {plan.growth:.1f} times a ply), about "
        f"{duration(plan.log10_seconds)} at the {plan.rate:,.0f} nodes/s measured here; depth "
        f"{within:,} should take at most {duration(math.log10(max_time))} (--max-time "
        f"{max_time:g} refuses longer counts; --max-time 0 runs any)"
    )


def power_of_ten(log10_value: float) -> str:
    """Return 10**`log10_value` in words a reader takes in: "2,400,000" or "10^52"."""
    if log10_value < 15:
        return f"{round(10**log10_value):,}"
    return f"10^{math.floor(log10_value):,}"


def duration(log10_seconds: float) -> str:
    """Return 10**`log10_seconds` seconds in the largest unit that fits: "4 s", "3 days",
    "10^40 years"."""
    units = [("year", 365.25 * 86_400), ("day", 86_400), ("hour", 3600), ("minute", 60)]
    for unit, size in units:
        log_count = log10_seconds - math.log10(size)
        if log_count >= 0:
            if log_count >= 6:
                return f"{power_of_ten(log_count)} {unit}s"
            return plural(round(10**log_count), unit)
    return f"{10**log10_seconds:.1f} s"


def perft_counter(state: State[Any]) -> Counter:
    """Return the fastest perft for `state`'s game: the compiled core for checkers and Connect
    Four (loaded here, compiled with a line on stderr the first time on this machine), else
    games.perft."""
    from bots.core import load

    announce = Console(stderr=True, highlight=False, soft_wrap=True).print
    if isinstance(state, CheckersState):
        load("checkers", announce=announce)
        from bots.core.checkers import perft as checkers_perft

        def count_checkers(position: State[Any], depth: int) -> int:
            if not isinstance(position, CheckersState):
                raise TypeError(f"not a checkers position: {position!r}")
            return checkers_perft(position, depth)

        return count_checkers
    if isinstance(state, ConnectFourState):
        load("connect4", announce=announce)
        from bots.core.connect4 import perft as connect4_perft

        def count_connect4(position: State[Any], depth: int) -> int:
            if not isinstance(position, ConnectFourState):
                raise TypeError(f"not a Connect Four position: {position!r}")
            return connect4_perft(position, depth)

        return count_connect4
    return perft


def _count(
    state: State[Any],
    depth: int,
    show_progress: bool,
    console: Console | None = None,
    count: Counter = perft,
) -> list[tuple[str, int]]:
    """Return (move text, leaf count by `count`) per legal move; with `show_progress`, a
    progress bar on `console` (default: stderr) over the subtrees two plies down, with the
    nodes counted so far and the time left."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    if depth == 0:
        return []
    moves = state.legal_moves()
    if depth == 1:
        return [(state.format_move(m), 1) for m in moves]
    # Two plies down: tens of subtrees, so the bar moves every second or so on long counts.
    children = [state.apply_unchecked(move) for move in moves]
    replies = [child.legal_moves() for child in children]
    results: list[tuple[str, int]] = []
    with Progress(
        TextColumn(f"perft({depth:,})"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("subtrees, {task.fields[nodes]} nodes,"),
        TimeElapsedColumn(),
        TextColumn("elapsed,"),
        TimeRemainingColumn(),
        TextColumn("left"),
        console=console or Console(stderr=True),
        transient=True,
        disable=not show_progress,
    ) as progress:
        task = progress.add_task("perft", total=sum(len(r) for r in replies), nodes="0")
        counted = 0
        for move, child, answers in zip(moves, children, replies, strict=True):
            below = 0
            for answer in answers:
                below += count(child.apply_unchecked(answer), depth - 2)
                progress.update(task, advance=1, nodes=f"{counted + below:,}")
            counted += below
            results.append((state.format_move(move), below))
    return results
