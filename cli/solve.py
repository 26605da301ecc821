"""`arena solve`: solve a position exactly, with a live line while it runs and an account of
any limit that cut it short."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from cli.common import err_console, fail, game_errors, load_game, number, plural
from cli.games import GameArg, OptionOpt, PositionOpt, natural_key

if TYPE_CHECKING:
    from rich.spinner import Spinner

    from bots.result import Clock
    from bots.solvers.solution import Progress, Solution, SolveProgress
    from games import Game, State

console = Console(highlight=False)

DEFAULT_SOLVE_SECONDS = 60.0
CONNECT4_SLOW_STONES = 8
"""Connect Four solves from fewer stones took minutes to hours when measured (docs/BOTS.md)."""
# What to try instead, per game, when `bots.solvers.solve.refuse` turns a position down.
INSTEAD = {
    "checkers": 'give an endgame with --position (e.g. "W:WK23,K28:B3"), or ask a bot for a '
    "move: arena analyse checkers --bot id:time=5",
}


def register(app: typer.Typer) -> None:
    """Add `arena solve` to `app`."""
    app.command("solve")(solve_command)


def solve_command(
    game: GameArg,
    position: PositionOpt = None,
    option: OptionOpt = None,
    seconds: Annotated[
        float,
        typer.Option(
            "--time",
            min=0,
            help="Stop after this many seconds and report the bounds found (0: no time limit).",
        ),
    ] = DEFAULT_SOLVE_SECONDS,
    max_nodes: Annotated[
        int | None,
        typer.Option("--nodes", min=1, help="Stop after this many nodes (default: no limit)."),
    ] = None,
    max_plies: Annotated[
        int | None,
        typer.Option("--max-plies", min=1, help="Checkers: longest forced win to look for."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Solve a position exactly: its value for the side to move and every optimal move.

    Connect Four scores follow Pons' convention (+(22-k) for a win with the k-th stone of the
    side to move); other games score +1 win, 0 draw, -1 loss. Checkers: small endgames, by a
    proof search of up to --max-plies plies (default 30); bigger positions are refused.
    A solve stopped by --time, --nodes or --max-plies prints the bounds it found and exits
    with status 1; a refused position exits with status 2.
    """
    from bots.engine.search import MAX_PLY
    from bots.solvers.solve import Solver, refuse

    if max_plies is not None and max_plies > MAX_PLY:
        fail(f"--max-plies is at most {MAX_PLY} (the deepest a search goes), not {max_plies}")
    rules = load_game(game, option)
    with game_errors():
        state = rules.position_or_initial(position)
    reason = refuse(state)
    if reason is not None:
        instead = INSTEAD.get(rules.name)
        fail(f"{reason}; {instead}" if instead else reason)
    if rules.name == "connect4":
        # Load the compiled solver before the clock starts (announcing a first compilation).
        from bots.core import load

        load("connect4", announce=lambda line: err_console.print(line, markup=False))
    clock = time.perf_counter
    deadline = clock() + seconds if seconds > 0 else None
    live = not as_json and err_console.is_terminal
    with _progress_line(rules.name, clock, seconds, live) as progress:
        solution = Solver(clock=clock).solve(
            state, max_plies=max_plies, deadline=deadline, max_nodes=max_nodes, progress=progress
        )
    ordered = sorted(solution.best_moves, key=lambda m: natural_key(state.format_move(m)))
    best = [state.format_move(m) for m in ordered]
    stop = _stop_message(solution, rules, state, seconds, max_nodes, max_plies)
    if as_json:
        data: dict[str, Any] = {
            "value": solution.value,
            "score": solution.score,
            "best_moves": best,
            "plies": solution.plies,
            "nodes": solution.nodes,
            "seconds": round(solution.seconds, 6),
            "lower": solution.lower,
            "upper": solution.upper,
            "limit": solution.limit,
            "depth": solution.depth,
            "method": solution.method,
        }
        course = _course_moves(state, ordered)
        if course is not None:
            data["best_moves_course"] = course
        print(json.dumps(data))
        if stop is not None:
            err_console.print(stop, highlight=False, markup=False, soft_wrap=True)
    else:
        course = _course_moves(state, ordered)
        if course is not None:
            best = [f"{pdn} [{text}]" for pdn, text in zip(best, course, strict=True)]
        _print_solution(solution, rules, state, best, stop)
    if stop is not None:
        raise typer.Exit(1)


def _course_moves(state: State[Any], moves: list[Any]) -> list[str] | None:
    """Return checkers moves in the course's (row,col) coordinates (None for other games):
    the grader speaks them, so a student can compare the two."""
    from autograder.course import format_path
    from games.checkers import CheckersMove, CheckersState

    if not isinstance(state, CheckersState):
        return None
    return [
        format_path(m.path, "x" if m.is_capture else "-")
        for m in moves
        if isinstance(m, CheckersMove)
    ]


def _player(rules: Game, state: State[Any]) -> str:
    """Name the side to move: the game's name, and for checkers the course's too."""
    from autograder.course import side_to_move
    from games.checkers import CheckersState

    name = rules.player_names[state.to_move]
    if isinstance(state, CheckersState):
        return f"{name} (to move; {side_to_move(state)} in the course's words)"
    return f"{name} (to move)"


def _print_solution(
    solution: Solution, rules: Game, state: State[Any], best: list[str], stop: str | None
) -> None:
    from games.checkers import CheckersState

    player = _player(rules, state)
    if solution.value == "unknown":
        console.print(f"{rules.name}: {stop}", markup=False, soft_wrap=True)
    else:
        console.print(f"{rules.name}: {solution.value} for {player}", markup=False)
        console.print(f"  score       {solution.score}")
        if solution.plies is not None:
            console.print(f"  plies       {solution.plies} to the end with best play")
        if solution.method == "nim-sum":
            console.print(
                "  solved by   the nim-sum theory (instant; the length of play is not computed)"
            )
        checkers = isinstance(state, CheckersState)
        moves = (", " if checkers else " ").join(best) if best else "-"
        if solution.method == "nim-sum":
            moves = f"{moves} (every winning move)" if best else "- (every move loses)"
        console.print(f"  best moves  {moves}", markup=False, soft_wrap=True)
        if checkers and best:
            console.print(
                "  [brackets]  the same moves as the course writes them: (row,col), row 0 at "
                "the top; red is White",
                markup=False,
                soft_wrap=True,
            )
        if stop is not None:
            console.print(f"  {stop}", markup=False, soft_wrap=True)
    console.print(f"  {plural(solution.nodes, 'node')} in {solution.seconds:.3f} s")


def _stop_message(
    solution: Solution,
    rules: Game,
    state: State[Any],
    seconds: float,
    max_nodes: int | None,
    max_plies: int | None,
) -> str | None:
    """Return the one-line account of a solve cut short by a limit, or None if it finished."""
    from bots.solvers.solve import DEFAULT_CHECKERS_PLIES
    from games.connect4 import ConnectFourState

    if solution.limit is None:
        return None
    player = _player(rules, state)
    if solution.limit == "plies":
        return (
            f"no forced win or loss within {plural(solution.depth or 0, 'ply', 'plies')} (the "
            "--max-plies limit); "
            "raise --max-plies to look further (a draw cannot be proved this way)"
        )
    if solution.limit == "time":
        stopped, advice = f"stopped after {number(seconds)} s (time limit)", "raise --time"
    else:
        stopped = f"stopped after {plural(max_nodes or 0, 'node')} (node limit)"
        advice = "raise --nodes"
    if solution.value != "unknown":
        return (
            f"{stopped} while listing the best moves: the value is exact, the list may be "
            f"incomplete; {advice}"
        )
    if solution.depth is not None:
        plies = max_plies or DEFAULT_CHECKERS_PLIES
        known = (
            f"no forced win or loss within {plural(solution.depth, 'ply', 'plies')} (of the "
            f"{plies} asked for)"
        )
    else:
        known = (
            f"score between {solution.lower} and {solution.upper} ({_verdict(solution, player)})"
        )
    if isinstance(state, ConnectFourState) and state.ply < CONNECT4_SLOW_STONES:
        advice += (
            f" (from fewer than {CONNECT4_SLOW_STONES} stones a solve can take minutes to hours "
            "here)"
        )
    return f"{stopped}: {known}; {advice}"


def _verdict(solution: Solution, player: str) -> str:
    """Say in words what the score bounds of an unknown value tell."""
    if solution.lower > 0:
        return f"a win for {player}, exact score unknown"
    if solution.upper < 0:
        return f"a loss for {player}, exact score unknown"
    if solution.lower == 0:
        return f"at least a draw for {player}"
    if solution.upper == 0:
        return f"at most a draw for {player}"
    return f"win, draw or loss: still open for {player}"


@contextmanager
def _progress_line(
    name: str, clock: Clock, seconds: float, live: bool
) -> Iterator[Progress | None]:
    """Show a transient line on stderr with what the solve knows, while it runs.

    Yields the progress callback to give the solver, or None when `live` is False (JSON
    output, or stderr is not a terminal).
    """

    if not live:
        yield None
        return
    line = _ProgressLine(name, clock, seconds)
    from rich.live import Live

    with Live(line, console=err_console, transient=True, refresh_per_second=8):
        yield line.update


class _ProgressLine:
    """The live line: a spinner, the latest report, and the time read at each refresh."""

    def __init__(self, name: str, clock: Clock, seconds: float) -> None:
        self.name = name
        self.clock = clock
        self.start = clock()
        self.limit = f" of {number(seconds)} s" if seconds > 0 else ""
        self.latest: SolveProgress | None = None
        from rich.spinner import Spinner

        self.spinner = Spinner("dots")

    def update(self, progress: SolveProgress) -> None:
        """Keep the solver's latest report (called from the solve, read by the refresh)."""
        self.latest = progress

    def __rich__(self) -> Spinner:
        elapsed = self.clock() - self.start
        text = f"solving {self.name}"
        latest = self.latest
        if latest is not None:
            if latest.depth is not None:
                known = f"no forced win or loss within {plural(latest.depth, 'ply', 'plies')}"
            else:
                known = f"score between {latest.lower} and {latest.upper}"
            text += f": {known}, {plural(latest.nodes, 'node')}"
        self.spinner.update(text=f"{text}, {elapsed:.0f} s{self.limit}")
        return self.spinner
