"""Bot specs: one string names a bot and its options, e.g. `alphabeta:depth=6,eval=material`.

Every tool (CLI, server, tournaments, autograder) names bots this way. A spec is the bot's
name, then optionally `:` and comma-separated `key=value` options; options have defaults, and
an unknown bot, option or value is a `BotSpecError` that lists what exists.

This module is the composition root of the bots package: it builds searchers from their
options and hands them the clock and random generator (it is the one place in bots/ that
names `time.perf_counter`, as the default clock).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bots.common import SearchTimeout
from bots.engine import MAX_PLY, AlphaBetaEngine
from bots.evaluation import Knowledge
from bots.knowledge import knowledge_for
from bots.mcts import mcts_search
from bots.minimax import minimax
from bots.result import Clock, SearchResult, SearchStopped, Stop
from bots.scoring import ENGINE
from bots.simple import greedy_move, random_move
from games import Game, State


class BotSpecError(ValueError):
    """A bot spec that names no bot, an unknown option, or a bad option value."""


@dataclass(frozen=True, slots=True)
class Option:
    """One option of a bot: its type, default and help text."""

    kind: str  # "int", "float", "bool", "str", "eval"
    default: Any
    help: str
    minimum: float | None = None
    maximum: float | None = None


MAX_NUMBER_LENGTH = 32
"""Most characters of a number in a spec: anything longer is refused before it is converted."""
MAX_SIMULATIONS = 10**9
MAX_SECONDS = 86_400.0
MAX_NODES = 10**12
MAX_SEED = 2**63 - 1
MAX_C = 1000.0


BOTS: Mapping[str, tuple[str, Mapping[str, Option]]] = {
    "random": (
        "a uniformly random legal move",
        {"seed": Option("int", 0, "seed of the random generator", None, MAX_SEED)},
    ),
    "greedy": (
        "one-ply search: the move whose resulting position evaluates best (simpleFindMax)",
        {
            "eval": Option("eval", None, "evaluation function (default: the game's)"),
            "seed": Option("int", 0, "seed for breaking ties at random", None, MAX_SEED),
        },
    ),
    "minimax": (
        "plain depth-limited minimax, as in the lecture (no pruning unless prune=on)",
        {
            "depth": Option("int", 4, "plies to search before evaluating", 1, MAX_PLY),
            "eval": Option("eval", None, "evaluation function (default: the game's)"),
            "prune": Option("bool", False, "the lecture's simple pruning: stop at a sure win"),
        },
    ),
    "alphabeta": (
        "depth-limited negamax alpha-beta; tt=off,ordering=off is the plain lecture version",
        {
            "depth": Option(
                "int", 6, "plies to search (forced captures are searched beyond)", 1, MAX_PLY
            ),
            "eval": Option("eval", None, "evaluation function (default: the game's)"),
            "tt": Option("bool", True, "transposition table"),
            "ordering": Option(
                "bool", True, "move ordering: table move, captures, killers, history"
            ),
        },
    ),
    "id": (
        "iterative deepening alpha-beta under a time budget per move",
        {
            "time": Option(
                "float",
                1.0,
                "seconds per move, less if the clock says so (0: no limit)",
                0.0,
                MAX_SECONDS,
            ),
            "depth": Option("int", 64, "maximum depth", 1, MAX_PLY),
            "nodes": Option(
                "int",
                0,
                "nodes per move, all iterations together (0: no limit); with time=0 the "
                "same position always gets the same move",
                0,
                MAX_NODES,
            ),
            "eval": Option("eval", None, "evaluation function (default: the game's)"),
            "tt": Option("bool", True, "transposition table"),
            "ordering": Option(
                "bool", True, "move ordering: table move, captures, killers, history"
            ),
        },
    ),
    "mcts": (
        "Monte Carlo tree search (UCT) with MCTS-Solver",
        {
            "simulations": Option("int", 2000, "simulations per move", 1, MAX_SIMULATIONS),
            "time": Option(
                "float",
                0.0,
                "seconds per move instead of a simulation count (0: off)",
                0.0,
                MAX_SECONDS,
            ),
            "c": Option("float", math.sqrt(2), "UCT exploration constant", 0.0, MAX_C),
            "solver": Option("bool", True, "MCTS-Solver: prove wins and losses"),
            "seed": Option("int", 0, "seed of the random generator", None, MAX_SEED),
        },
    ),
}


Chooser = Callable[[State[Any], float | None, Stop | None], SearchResult]
"""A bot's search: (state, time budget in seconds or None, stop or None) -> its result."""


@dataclass(frozen=True, slots=True)
class BotSpec:
    """A parsed bot spec: the bot's name and every option's value (defaults filled in)."""

    name: str
    options: Mapping[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        """The canonical spec text, naming only the options that differ from the defaults."""
        schema = BOTS[self.name][1]
        changed = [
            f"{key}={_format_value(value)}"
            for key, value in self.options.items()
            if value != schema[key].default
        ]
        return self.name + (":" + ",".join(changed) if changed else "")


def _format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def _convert(bot: str, key: str, option: Option, text: str) -> Any:
    raw = text.strip()
    if option.kind in ("int", "float") and len(raw) > MAX_NUMBER_LENGTH:
        raise BotSpecError(
            f"{bot} option {key} is a number of {len(raw)} characters; "
            f"at most {option.maximum:g} is allowed"
            if option.maximum is not None
            else f"{bot} option {key} is a number of {len(raw)} characters, too long"
        )
    try:
        if option.kind == "int":
            value: Any = int(raw)
        elif option.kind == "float":
            value = float(raw)
            if not math.isfinite(value):
                raise ValueError(raw)
        elif option.kind == "bool":
            lowered = raw.lower()
            if lowered in ("on", "true", "yes", "1"):
                return True
            if lowered in ("off", "false", "no", "0"):
                return False
            raise ValueError(raw)
        else:
            if not raw:
                raise ValueError(raw)
            return raw
    except ValueError:
        expected = {"int": "a whole number", "float": "a number", "bool": "on or off"}
        raise BotSpecError(
            f"{bot} option {key} must be {expected.get(option.kind, 'a name')}, not {text!r}"
        ) from None
    if option.minimum is not None and value < option.minimum:
        raise BotSpecError(f"{bot} option {key} must be at least {option.minimum:g}, not {value}")
    if option.maximum is not None and value > option.maximum:
        raise BotSpecError(f"{bot} option {key} must be at most {option.maximum:g}, not {value}")
    return value


def parse_bot_spec(text: str) -> BotSpec:
    """Return the BotSpec written as `text`, raising BotSpecError naming what is wrong."""
    if not isinstance(text, str) or not text.strip():
        raise BotSpecError(f"empty bot spec (bots: {', '.join(BOTS)})")
    name, colon, rest = text.strip().partition(":")
    name = name.strip().lower()
    if name not in BOTS:
        raise BotSpecError(f"unknown bot {name!r} (bots: {', '.join(BOTS)})")
    schema = BOTS[name][1]
    options = {key: option.default for key, option in schema.items()}
    seen: set[str] = set()
    items = [part.strip() for part in rest.split(",")] if colon else []
    if "" in items:
        raise BotSpecError(
            f"bot spec {text.strip()!r} has an empty option: write {name} or "
            f"{name}:KEY=VALUE,KEY=VALUE with nothing empty between the commas"
        )
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip().lower()
        if not sep:
            raise BotSpecError(f"{name} option {item!r} needs a value: write {key}=VALUE")
        if key not in schema:
            known = ", ".join(
                f"{k} (default {_format_value(o.default)})" for k, o in schema.items()
            )
            raise BotSpecError(f"{name} has no option {key!r} (options: {known})")
        if key in seen:
            raise BotSpecError(f"{name} option {key} is given twice")
        seen.add(key)
        options[key] = _convert(name, key, schema[key], value)
    return BotSpec(name, options)


@dataclass(frozen=True, slots=True)
class SearchLimits:
    """A host's maxima for the searches of the bots it runs (the server's house bots).

    `depth` bounds minimax and alphabeta, and id when neither its time nor its nodes do;
    `simulations` bounds mcts by count; `seconds` every time option; `nodes` id's node count.
    """

    depth: int
    simulations: int
    seconds: float
    nodes: int


def check_limits(spec: BotSpec, limits: SearchLimits) -> None:
    """Raise BotSpecError naming the option and the maximum unless `spec` is within `limits`.

    Every search must end within a bound the host allows: a depth, a count or a time. Options
    that bound nothing (an id's depth under a time limit) are not checked.
    """
    options = spec.options
    name = spec.name

    def at_most(key: str, maximum: float) -> None:
        if options[key] > maximum:
            raise BotSpecError(
                f"{name} option {key} is {_format_value(options[key])}, more than this "
                f"host's maximum of {maximum:g}"
            )

    if name in ("minimax", "alphabeta"):
        at_most("depth", limits.depth)
    elif name == "id":
        at_most("time", limits.seconds)
        at_most("nodes", limits.nodes)
        if options["time"] == 0 and options["nodes"] == 0:
            at_most("depth", limits.depth)
    elif name == "mcts":
        at_most("time", limits.seconds)
        if options["time"] == 0:
            at_most("simulations", limits.simulations)


class Bot:
    """A bot made from a spec for one game: `choose(state)` returns its move and statistics.

    `time_budget` (seconds) caps the time of time-limited bots (`id`, `mcts:time=...`), for
    example from the clock of a match; depth- and count-limited bots ignore it. `stop` is asked
    every so often during the search (every 64 nodes, or every simulation): once it returns
    True the search ends within milliseconds, returning its best move so far or, when it has
    none (minimax, alphabeta), raising SearchStopped.
    """

    def __init__(self, spec: BotSpec, game: Game, chooser: Chooser) -> None:
        self.spec = spec
        self.game = game
        self._chooser = chooser

    @property
    def name(self) -> str:
        """The canonical spec text."""
        return str(self.spec)

    def choose(
        self, state: State[Any], *, time_budget: float | None = None, stop: Stop | None = None
    ) -> SearchResult:
        """Return the bot's move for `state` (which must not be terminal) with its statistics."""
        if state.is_terminal():
            raise ValueError("the game is over: there is no move to choose")
        return self._chooser(state, time_budget, stop)

    def __repr__(self) -> str:
        return f"<Bot {self.name} for {self.game.name}>"


def create_bot(
    spec: str | BotSpec,
    game: Game,
    *,
    clock: Clock = time.perf_counter,
    rng: random.Random | None = None,
) -> Bot:
    """Return the bot `spec` names, for `game`, on `clock`.

    `rng` overrides the generator built from the spec's `seed`. Raises BotSpecError for a bad
    spec or an evaluation the game does not have.
    """
    parsed = parse_bot_spec(spec) if isinstance(spec, str) else spec
    options = parsed.options
    knowledge = knowledge_for(game)
    evaluation = _evaluation(knowledge, options.get("eval"), parsed.name)
    name = parsed.name
    generator = rng if rng is not None else random.Random(options.get("seed", 0))

    if name == "random":
        return Bot(parsed, game, lambda state, budget, stop: random_move(state, generator))
    if name == "greedy":
        return Bot(
            parsed, game, lambda state, budget, stop: greedy_move(state, evaluation, rng=generator)
        )
    if name == "minimax":
        depth = options["depth"]
        prune = options["prune"]
        return Bot(
            parsed,
            game,
            lambda state, budget, stop: minimax(
                state,
                depth=depth,
                evaluate=evaluation,
                scoring=ENGINE,
                prune=prune,
                clock=clock,
                stop=stop,
            ),
        )
    if name == "alphabeta":
        engine = AlphaBetaEngine(
            knowledge, evaluation, tt=options["tt"], ordering=options["ordering"], clock=clock
        )
        depth = options["depth"]

        def fixed(state: State[Any], budget: float | None, stop: Stop | None) -> SearchResult:
            try:
                return engine.search(state, depth, stop=stop)
            except SearchTimeout:
                raise SearchStopped("the search was stopped") from None

        return Bot(parsed, game, fixed)
    if name == "id":
        engine = AlphaBetaEngine(
            knowledge, evaluation, tt=options["tt"], ordering=options["ordering"], clock=clock
        )
        per_move = options["time"]
        max_depth = options["depth"]
        max_nodes = options["nodes"] or None

        def deepen(state: State[Any], budget: float | None, stop: Stop | None) -> SearchResult:
            limits = [t for t in (per_move or None, budget) if t is not None]
            deadline = clock() + min(limits) if limits else None
            return engine.iterative_deepening(
                state, deadline=deadline, max_depth=max_depth, max_nodes=max_nodes, stop=stop
            )

        return Bot(parsed, game, deepen)
    if name == "mcts":
        per_move = options["time"]
        simulations = options["simulations"]

        def search(state: State[Any], budget: float | None, stop: Stop | None) -> SearchResult:
            allowed = per_move if per_move > 0 else None
            if budget is not None:
                allowed = budget if allowed is None else min(allowed, budget)
            return mcts_search(
                state,
                simulations=None if per_move > 0 else simulations,
                deadline=None if allowed is None else clock() + allowed,
                clock=clock,
                rng=generator,
                c=options["c"],
                solver=options["solver"],
                stop=stop,
            )

        return Bot(parsed, game, search)
    raise BotSpecError(f"unknown bot {name!r}")  # unreachable: parse_bot_spec checked it


def _evaluation(knowledge: Knowledge, name: str | None, bot: str) -> Callable[[State[Any]], float]:
    try:
        return knowledge.evaluation(name).function
    except ValueError as exc:
        raise BotSpecError(f"{bot}: {exc}") from None


def describe_bots() -> list[tuple[str, str, list[tuple[str, str, str]]]]:
    """Return (bot, description, [(option, default, help)]) for every bot, for help screens."""
    return [
        (
            name,
            description,
            [(key, _format_value(o.default), o.help) for key, o in schema.items()],
        )
        for name, (description, schema) in BOTS.items()
    ]
