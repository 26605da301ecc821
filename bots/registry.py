"""The bot registry: every bot a spec can name, each one class declared once, here.

A bot is one subclass of `Player` (bots.player): its spec `name`, a one-line `description`, its
`options` (each an `Option`: type, default, absolute maximum, the host limit that bounds it,
help), and `choose(state, budget, stop)`, which runs one search module. It is built from its
parsed options and a `Setup` (the game, its search knowledge, the evaluation the `eval` option
names, the clock and the random generator). To add a bot, write its class and add it to
`PLAYERS` at the end: `bots.spec` parses specs, checks a host's limits and builds bots from this
registry alone, and `arena bots` lists it. docs/BOTS.md has the table of which module each spec
name runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any, Final

from bots.common import SearchTimeout
from bots.egdb import DatabaseError
from bots.engine.compiled import (
    PLAIN,
    CompiledConnectFourEngine,
    CompiledEngine,
    SearchFeatures,
    compiled_engine,
)
from bots.engine.search import MAX_PLY, AlphaBetaEngine
from bots.lectures.alphabeta import alphabeta
from bots.lectures.mcts import mcts_search
from bots.lectures.minimax import minimax
from bots.lectures.negamax import negamax
from bots.lectures.simple import greedy_move, random_move
from bots.player import (
    EGDB,
    EVAL,
    MAX_C,
    MAX_NODES,
    MAX_SECONDS,
    MAX_SEED,
    MAX_SIMULATIONS,
    ORDERING,
    SEED,
    TT,
    Option,
    Player,
    Setup,
    depth_option,
)
from bots.programs.players import CheckerBoardPlayer, CommandPlayer, NamedEnginePlayer, PythonPlayer
from bots.result import SearchResult, SearchStopped, Stop
from bots.scoring import ENGINE
from games import Game, State
from games.checkers import CheckersState


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
