"""The bot registry: every bot a spec can name, each one class declared once, here.

A bot is one subclass of `Player`: its spec `name`, a one-line `description`, its `options`
(each an `Option`: type, default, absolute maximum, the host limit that bounds it, help), and
`choose(state, budget, stop)`, which runs one search module. It is built from its parsed options
and a `Setup` (the game, its search knowledge, the evaluation the `eval` option names, the clock
and the random generator). To add a bot, write its class and add it to `PLAYERS` at the end:
`bots.spec` parses specs, checks a host's limits and builds bots from this registry alone, and
`arena bots` lists it. docs/BOTS.md has the table of which module each spec name runs.
"""

from __future__ import annotations

import json
import math
import os
import random
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar, Final, Literal

from bots.alphabeta import alphabeta
from bots.cbapi import CheckerBoardBot, Engine
from bots.child import EngineError
from bots.common import SearchTimeout
from bots.compiled_engine import (
    PLAIN,
    CompiledConnectFourEngine,
    CompiledEngine,
    SearchFeatures,
    compiled_engine,
)
from bots.egdb import DatabaseError
from bots.engine import MAX_PLY, AlphaBetaEngine
from bots.evaluation import Knowledge, StateFunction
from bots.external import ExternalBot, Identity, ProtocolEngine, split_command
from bots.mcts import mcts_search
from bots.minimax import minimax
from bots.negamax import negamax
from bots.result import Clock, SearchResult, SearchStopped, Stop
from bots.scoring import ENGINE
from bots.simple import greedy_move, random_move
from games import Game, State
from games.checkers import CheckersState

MAX_SIMULATIONS = 10**9
MAX_SECONDS = 86_400.0
MAX_NODES = 10**12
MAX_SEED = 2**63 - 1
MAX_C = 1000.0

Limit = Literal["depth", "simulations", "seconds", "nodes"]
"""A field of `bots.spec.SearchLimits`: the host maximum that applies to an option."""


@dataclass(frozen=True, slots=True)
class Option:
    """One option of a bot: its type, default, help text, bounds, and the host limit on it.

    `kind` is "int", "float", "bool", "str" or "eval" (the name of one of the game's
    evaluations). `minimum` and `maximum` bound the value everywhere; `limit` names the host
    maximum (`SearchLimits` field) that bounds it too, checked only while every option named in
    `unless` is 0 (those options bound the search instead).
    """

    kind: str
    default: Any
    help: str
    minimum: float | None = None
    maximum: float | None = None
    limit: Limit | None = None
    unless: tuple[str, ...] = ()


EVAL: Final = Option("eval", None, "evaluation function (default: the game's)")
SEED: Final = Option("int", 0, "seed of the random generator", None, MAX_SEED)
TT: Final = Option("bool", True, "transposition table")
ORDERING: Final = Option("bool", True, "move ordering: table move, captures, killers, history")
EGDB: Final = Option(
    "bool",
    False,
    "checkers: exact scores from the endgame database (arena egdb build; $ARENA_EGDB_DIR)",
)


def depth_option(default: int, help: str) -> Option:
    """Return a search depth option: 1 to MAX_PLY plies, bounded by a host's depth limit."""
    return Option("int", default, help, 1, MAX_PLY, limit="depth")


@dataclass(frozen=True, slots=True)
class Setup:
    """What a bot is built with besides its options.

    `evaluate` is the evaluation the spec's `eval` names (the game's default without one), from
    the side to move; `clock` is in seconds; `rng` is seeded from the spec's `seed` unless the
    caller passed its own.
    """

    game: Game
    knowledge: Knowledge
    evaluate: StateFunction
    clock: Clock
    rng: random.Random


class Player(ABC):
    """One kind of bot: the spec name, description and options, and its search.

    Subclasses set the three class variables and write `choose`, reading their option values
    (every option, defaults filled in) from `self.values` and the rest from `self.setup`.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    options: ClassVar[Mapping[str, Option]]
    judges: ClassVar[bool] = True
    """False for a bot whose score says nothing of the position (random): see
    `bots.spec.Bot.accepts_draw`."""
    positional: ClassVar[str | None] = None
    """The option a spec gives first, without its key (`cb:/path/engine.so`), or None."""
    open_options: ClassVar[bool] = False
    """True for a program that declares options of its own (an engine, a plug-in): a spec's
    keys beyond `options` are passed on to it as text, and it refuses those it lacks."""

    def __init__(self, values: Mapping[str, Any], setup: Setup) -> None:
        self.values = values
        self.setup = setup

    @property
    def engine_name(self) -> str | None:
        """The name and version a program reported of itself (an engine, a plug-in), for
        game records; None for Arena's own bots, whose spec says what they are."""
        return None

    @abstractmethod
    def choose(self, state: State[Any], budget: float | None, stop: Stop | None) -> SearchResult:
        """Return the move for `state` (not terminal) with the search's statistics.

        `budget` (seconds, or None) caps time-limited bots; `stop` is asked every so often and
        ends the search once it returns True (the best move so far, or SearchStopped).
        """


class RandomPlayer(Player):
    name = "random"
    description = "a uniformly random legal move"
    options = MappingProxyType({"seed": SEED})
    judges = False

    def choose(self, state: State[Any], budget: float | None, stop: Stop | None) -> SearchResult:
        return random_move(state, self.setup.rng)


class GreedyPlayer(Player):
    name = "greedy"
    description = "one-ply search: the move whose resulting position evaluates best (simpleFindMax)"
    options = MappingProxyType(
        {
            "eval": EVAL,
            "seed": Option("int", 0, "seed for breaking ties at random", None, MAX_SEED),
        }
    )

    def choose(self, state: State[Any], budget: float | None, stop: Stop | None) -> SearchResult:
        return greedy_move(state, self.setup.evaluate, rng=self.setup.rng)


class MinimaxPlayer(Player):
    name = "minimax"
    description = "plain depth-limited minimax, as in the lecture (no pruning unless prune=on)"
    options = MappingProxyType(
        {
            "depth": depth_option(4, "plies to search before evaluating"),
            "eval": EVAL,
            "prune": Option("bool", False, "the lecture's simple pruning: stop at a sure win"),
        }
    )

    def choose(self, state: State[Any], budget: float | None, stop: Stop | None) -> SearchResult:
        return minimax(
            state,
            depth=self.values["depth"],
            evaluate=self.setup.evaluate,
            scoring=ENGINE,
            prune=self.values["prune"],
            clock=self.setup.clock,
            stop=stop,
        )


class AlphaBetaPlayer(Player):
    name = "alphabeta"
    description = (
        "the engine: depth-limited negamax alpha-beta with table, ordering and quiescence "
        "(the lecture's own: alphabeta_lecture)"
    )
    options = MappingProxyType(
        {
            "depth": depth_option(6, "plies to search (forced captures are searched beyond)"),
            "eval": EVAL,
            "tt": TT,
            "ordering": ORDERING,
            "egdb": EGDB,
        }
    )

    def __init__(self, values: Mapping[str, Any], setup: Setup) -> None:
        super().__init__(values, setup)
        # One engine per bot: its table and history carry over from move to move. Checkers and
        # Connect Four search on the compiled core, node for node the Python engine's, unless
        # the core lacks what the bot asks for (a user's evaluation, the endgame database).
        exact = _endgame_database(setup.game) if values["egdb"] else None
        options = {"tt": values["tt"], "ordering": values["ordering"], "clock": setup.clock}
        compiled = (
            compiled_engine(setup.knowledge, setup.evaluate, features=self.features(), **options)
            if exact is None
            else None
        )
        self.engine: AlphaBetaEngine | CompiledEngine | CompiledConnectFourEngine = (
            compiled or AlphaBetaEngine(setup.knowledge, setup.evaluate, exact=exact, **options)
        )

    def features(self) -> SearchFeatures:
        """The engine mode's techniques this bot searches with: none, node for node."""
        return PLAIN

    def choose(self, state: State[Any], budget: float | None, stop: Stop | None) -> SearchResult:
        try:
            return self.engine.search(state, self.values["depth"], stop=stop)
        except SearchTimeout:
            raise SearchStopped("the search was stopped") from None


ENGINE_MODE_EVALUATION: Final = "engine"
"""The checkers evaluation `id` uses in engine mode when its spec names none."""


def _features(values: Mapping[str, Any]) -> SearchFeatures:
    """The engine mode's techniques an `id` bot's option values ask for."""
    return SearchFeatures(
        pvs=values["pvs"],
        lmr=values["lmr"],
        partial=values["partial"],
        tm=values["tm"],
        extend=values["extend"],
        truncate=values["truncate"],
        single=values["single"],
        qextend=values["qextend"],
        deeper=values["deeper"],
    )


class IterativeDeepeningPlayer(AlphaBetaPlayer):
    name = "id"
    description = "iterative deepening alpha-beta under a time budget per move"
    options = MappingProxyType(
        {
            "time": Option(
                "float",
                1.0,
                "seconds per move, less if the clock says so (0: no limit)",
                0.0,
                MAX_SECONDS,
                limit="seconds",
            ),
            "depth": Option(
                "int", 64, "maximum depth", 1, MAX_PLY, limit="depth", unless=("time", "nodes")
            ),
            "nodes": Option(
                "int",
                0,
                "nodes per move, all iterations together (0: no limit); with time=0 the "
                "same position always gets the same move",
                0,
                MAX_NODES,
                limit="nodes",
            ),
            "eval": EVAL,
            "tt": TT,
            "ordering": ORDERING,
            "egdb": EGDB,
            "pvs": Option(
                "bool",
                False,
                "checkers: principal variation search with aspiration windows (engine mode)",
            ),
            "lmr": Option("bool", False, "checkers: late move reductions (engine mode)"),
            "partial": Option(
                "bool",
                True,
                "checkers: an iteration cut short by the time still gives a better root move",
            ),
            "tm": Option(
                "bool",
                False,
                "checkers: time management: a soft limit before each iteration, less when the "
                "best move holds, all the time when the score falls",
            ),
            "extend": Option(
                "bool",
                False,
                "checkers: search one ply more at the horizon when a piece of the side to move "
                "hangs (engine mode)",
            ),
            "truncate": Option(
                "bool",
                True,
                "checkers: search one ply less where the material is far outside the window "
                "(engine mode)",
            ),
            "single": Option(
                "bool",
                False,
                "checkers: a node with a single legal move does not spend a ply on it "
                "(engine mode)",
            ),
            "qextend": Option(
                "bool",
                False,
                "checkers: as `extend`, only where the material lies within 130 of the window "
                "(engine mode)",
            ),
            "deeper": Option(
                "bool",
                True,
                "checkers: a table entry searched deeper than a node needs ends the node too "
                "(engine mode)",
            ),
        }
    )

    def __init__(self, values: Mapping[str, Any], setup: Setup) -> None:
        # The engine mode's evaluation: on checkers, with any technique of the engine mode on
        # and no `eval` named, `engine` instead of the game's default (with every technique
        # off, id stays node for node the Python engine under the game's default).
        if (
            values.get("eval") is None
            and ENGINE_MODE_EVALUATION in setup.knowledge.evaluations
            and isinstance(setup.game.initial_state(), CheckersState)
            and not _features(values).plain
        ):
            engine = setup.knowledge.evaluation(ENGINE_MODE_EVALUATION).function
            setup = replace(setup, evaluate=engine)
        super().__init__(values, setup)

    def features(self) -> SearchFeatures:
        """The engine mode's techniques from the options (all off: node for node)."""
        return _features(self.values)

    def choose(self, state: State[Any], budget: float | None, stop: Stop | None) -> SearchResult:
        limits = [t for t in (self.values["time"] or None, budget) if t is not None]
        deadline = self.setup.clock() + min(limits) if limits else None
        return self.engine.iterative_deepening(
            state,
            deadline=deadline,
            max_depth=self.values["depth"],
            max_nodes=self.values["nodes"] or None,
            stop=stop,
        )


class MctsPlayer(Player):
    name = "mcts"
    description = "Monte Carlo tree search (UCT) with MCTS-Solver"
    options = MappingProxyType(
        {
            "simulations": Option(
                "int",
                2000,
                "simulations per move",
                1,
                MAX_SIMULATIONS,
                limit="simulations",
                unless=("time",),
            ),
            "time": Option(
                "float",
                0.0,
                "seconds per move instead of a simulation count (0: off)",
                0.0,
                MAX_SECONDS,
                limit="seconds",
            ),
            "c": Option("float", math.sqrt(2), "UCT exploration constant", 0.0, MAX_C),
            "solver": Option("bool", True, "MCTS-Solver: prove wins and losses"),
            "seed": SEED,
        }
    )

    def choose(self, state: State[Any], budget: float | None, stop: Stop | None) -> SearchResult:
        per_move = self.values["time"]
        allowed = per_move if per_move > 0 else None
        if budget is not None:
            allowed = budget if allowed is None else min(allowed, budget)
        clock = self.setup.clock
        return mcts_search(
            state,
            simulations=None if per_move > 0 else self.values["simulations"],
            deadline=None if allowed is None else clock() + allowed,
            clock=clock,
            rng=self.setup.rng,
            c=self.values["c"],
            solver=self.values["solver"],
            stop=stop,
        )


class LectureAlphaBetaPlayer(Player):
    name = "alphabeta_lecture"
    description = (
        "alpha-beta exactly as the lecture's pseudocode (fail-hard; soft=on: fail-soft), "
        "no table, no ordering"
    )
    options = MappingProxyType(
        {
            "depth": depth_option(4, "plies to search before evaluating"),
            "eval": EVAL,
            "soft": Option("bool", False, "fail-soft: a cut-off node returns its bound"),
        }
    )

    def choose(self, state: State[Any], budget: float | None, stop: Stop | None) -> SearchResult:
        return alphabeta(
            state,
            depth=self.values["depth"],
            evaluate=self.setup.evaluate,
            scoring=ENGINE,
            fail_soft=self.values["soft"],
            clock=self.setup.clock,
            stop=stop,
        )


class NegamaxPlayer(Player):
    name = "negamax"
    description = "the lecture's negamax alpha-beta (ABNodeValue with a full window)"
    options = MappingProxyType(
        {"depth": depth_option(4, "plies to search before evaluating"), "eval": EVAL}
    )

    def choose(self, state: State[Any], budget: float | None, stop: Stop | None) -> SearchResult:
        return negamax(
            state,
            depth=self.values["depth"],
            evaluate=self.setup.evaluate,
            scoring=ENGINE,
            clock=self.setup.clock,
            stop=stop,
        )


class CheckerBoardPlayer(Player):
    name = "cb"
    description = "a CheckerBoard-API checkers engine (a shared library), run in a child process"
    options = MappingProxyType(
        {
            "path": Option("str", None, "the engine's shared library (given first: cb:PATH)"),
            "time": Option(
                "float",
                1.0,
                "seconds per move (getmove's maxtime), less if the clock says so",
                0.001,
                MAX_SECONDS,
                limit="seconds",
            ),
            "depth": Option(
                "int",
                0,
                "search depth instead of a time (getmove's info bit 3; 0: off)",
                0,
                MAX_PLY,
            ),
        }
    )
    positional = "path"

    def __init__(self, values: Mapping[str, Any], setup: Setup) -> None:
        super().__init__(values, setup)
        if setup.game.name != "checkers":
            raise EngineError(f"a CheckerBoard engine plays checkers, not {setup.game.name}")
        # The child process starts here, so a library that cannot be loaded is refused
        # when the bot is built, before any game.
        engine = Engine(values["path"], setup.clock)
        self.bot = CheckerBoardBot(engine, values["time"], values["depth"])

    @property
    def engine_name(self) -> str | None:
        return self.bot.engine.name or None

    def choose(self, state: State[Any], budget: float | None, stop: Stop | None) -> SearchResult:
        assert isinstance(state, CheckersState)
        return self.bot.choose(state, budget, stop)


ENGINE_LIMITS: Final[Mapping[str, Option]] = MappingProxyType(
    {
        "time": Option(
            "float",
            1.0,
            "seconds per move (go movetime), less if the clock says so (0: none)",
            0.0,
            MAX_SECONDS,
            limit="seconds",
        ),
        "depth": Option("int", 0, "plies per move (go depth; 0: none)", 0, MAX_PLY),
        "nodes": Option("int", 0, "positions per move (go nodes; 0: none)", 0, MAX_NODES),
    }
)
"""Arena's limits on an engine or plug-in, sent with each `go`; other keys are its options."""


class ProtocolPlayer(Player):
    """A program speaking Arena's engine protocol (docs/ENGINES.md) in a child process.

    The process starts when the bot is built (so a program that cannot start, a handshake
    that fails, an option it does not declare or a game it does not play is refused before
    any game) and serves this one bot: a fresh bot, a fresh process.
    """

    options = ENGINE_LIMITS
    open_options = True

    def start(
        self,
        argv: Sequence[str],
        what: str,
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        verbatim: bool = False,
        engine_options: Mapping[str, str] | None = None,
    ) -> None:
        """Start the program and its first game; EngineError naming what went wrong."""
        engine = ProtocolEngine(
            argv, self.setup.clock, what=what, cwd=cwd, env=env, verbatim=verbatim
        )
        own = {**(engine_options or {})}
        own.update({k: str(v) for k, v in self.values.items() if k not in self.options})
        own.pop(self.positional or "", None)
        try:
            engine.configure(own)
            self.bot = ExternalBot(
                engine,
                self.setup.game,
                self.values["time"],
                self.values["depth"],
                self.values["nodes"],
            )
        except EngineError:
            engine.close()
            raise

    @property
    def identity(self) -> Identity:
        """What the program said of itself: name, author, version, options, games."""
        return self.bot.engine.identity

    @property
    def engine_name(self) -> str | None:
        identity = self.identity
        return " ".join(part for part in (identity.name, identity.version) if part) or None

    def choose(self, state: State[Any], budget: float | None, stop: Stop | None) -> SearchResult:
        return self.bot.choose(state, budget, stop)


class CommandPlayer(ProtocolPlayer):
    name = "cmd"
    description = "a program speaking Arena's engine protocol (docs/ENGINES.md): cmd:COMMAND"
    options = MappingProxyType(
        {
            "command": Option(
                "str", None, 'the command, shell-quoted (given first: cmd:COMMAND or cmd:"...")'
            ),
            **ENGINE_LIMITS,
        }
    )
    positional = "command"

    def __init__(self, values: Mapping[str, Any], setup: Setup) -> None:
        super().__init__(values, setup)
        command = values["command"]
        argv = split_command(command)
        self.start(argv, f"engine {_short(argv)!r}")


class PythonPlayer(ProtocolPlayer):
    name = "py"
    description = (
        "a Python plug-in (bots/plugin.py) in a child process: py:FILE.py:CLASS, "
        "py:MODULE:CLASS or py:NAME (entry point arena.bots)"
    )
    options = MappingProxyType(
        {
            "target": Option("str", None, "the plug-in (given first: py:FILE.py:CLASS)"),
            **ENGINE_LIMITS,
        }
    )
    positional = "target"

    def __init__(self, values: Mapping[str, Any], setup: Setup) -> None:
        super().__init__(values, setup)
        target = values["target"]
        # The host imports Arena's games and bots.plugin from where this Arena lives.
        root = str(Path(__file__).resolve().parent.parent)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        argv = [sys.executable, "-m", "bots.pyhost", target]
        self.start(argv, f"plug-in {_short([target])!r}", env=env, verbatim=True)


class NamedEnginePlayer(ProtocolPlayer):
    name = "engine"
    description = (
        "an engine named in a JSON file of engines ($ARENA_ENGINES, else ./engines.json): "
        "engine:NAME"
    )
    options = MappingProxyType(
        {
            "engine": Option("str", None, "the engine's name in the file (given first)"),
            **ENGINE_LIMITS,
        }
    )
    positional = "engine"

    def __init__(self, values: Mapping[str, Any], setup: Setup) -> None:
        super().__init__(values, setup)
        path = Path(os.environ.get("ARENA_ENGINES") or "engines.json")
        entry = read_engines(path).get(values["engine"])
        if entry is None:
            known = ", ".join(read_engines(path)) or "none"
            raise EngineError(f"{str(path)!r} names no engine {values['engine']!r} ({known})")
        argv = split_command(entry["command"])
        where = entry.get("workingDirectory")
        cwd = None if where is None else str((path.parent / str(where)).resolve())
        raw = entry.get("options", {})
        options = {str(k): spec_text(v) for k, v in raw.items()} if isinstance(raw, dict) else {}
        self.start(argv, f"engine {entry['name']!r}", cwd=cwd, engine_options=options)


def _short(argv: Sequence[str]) -> str:
    """A command as messages name it: each path by its last part (reasons are short)."""
    return " ".join(Path(arg).name if "/" in arg else arg for arg in argv)


def spec_text(value: Any) -> str:
    """An option's value from JSON as the protocol sends it (true/false for a bool)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def read_engines(path: Path) -> dict[str, dict[str, Any]]:
    """Read a JSON list of engines ({name, command, workingDirectory?, options?}) by name.

    The shape is cutechess's engines.json, except that `options` maps names to values.
    EngineError naming the file and what is wrong.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EngineError(f"no engines file {str(path)!r} (set $ARENA_ENGINES)") from None
    except (OSError, ValueError) as exc:
        raise EngineError(f"cannot read the engines file {str(path)!r}: {exc}") from None
    engines: dict[str, dict[str, Any]] = {}
    for index, entry in enumerate(data if isinstance(data, list) else [None]):
        if not (
            isinstance(entry, dict)
            and isinstance(entry.get("name"), str)
            and isinstance(entry.get("command"), str)
        ):
            raise EngineError(
                f"{str(path)!r}: entry {index + 1} is not an object with a name and a command"
            )
        if entry.get("protocol", "arena") != "arena":
            raise EngineError(
                f"{str(path)!r}: engine {entry['name']!r} speaks "
                f"{entry['protocol']!r}; Arena plays engines speaking 'arena'"
            )
        engines[entry["name"]] = entry
    return engines


def _endgame_database(game: Game) -> Callable[[State[Any]], float | None]:
    """Open the checkers endgame database for probing; DatabaseError if it is not built."""
    if game.name != "checkers":
        raise DatabaseError(f"egdb=on is for checkers only, not {game.name}")
    # Imported here: numpy and the tables are needed only by bots that probe.
    from bots.egdb.probe import Database, default_directory  # noqa: PLC0415 - numpy on demand

    return Database(default_directory()).engine_score


PLAYERS: Final[Mapping[str, type[Player]]] = MappingProxyType(
    {
        player.name: player
        for player in (
            RandomPlayer,
            GreedyPlayer,
            MinimaxPlayer,
            AlphaBetaPlayer,
            IterativeDeepeningPlayer,
            MctsPlayer,
            LectureAlphaBetaPlayer,
            NegamaxPlayer,
        )
    }
)
"""Every bot by spec name, in the order `arena bots` lists them: the bots a host may run."""

LOCAL_PLAYERS: Final[Mapping[str, type[Player]]] = MappingProxyType(
    {
        player.name: player
        for player in (CheckerBoardPlayer, CommandPlayer, PythonPlayer, NamedEnginePlayer)
    }
)
"""Bots that run a program from this machine's disk: local runs (tournaments and benches on
the command line) may name them; a host never does (`bots.spec.check_limits` refuses them)."""
