"""The engine's bots by spec: `alphabeta` (fixed depth) and `id` (iterative deepening).

Each bot keeps one engine, whose table and history carry over from move to move: the compiled
engine for checkers and Connect Four (bots.engine.compiled), node for node the Python engine's,
unless the bot asks for what the core lacks (a user's evaluation, the endgame database). `id`
offers the compiled checkers engine's own techniques (its engine mode, `SearchFeatures`) as
options; with any of them on, it evaluates with the checkers evaluation `engine` unless its spec
names one. Both are registered in bots.registry.PLAYERS.
"""

from __future__ import annotations

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
from bots.player import (
    EGDB,
    EVAL,
    MAX_NODES,
    MAX_SECONDS,
    ORDERING,
    TT,
    Option,
    Player,
    Setup,
    depth_option,
)
from bots.result import SearchResult, SearchStopped, Stop
from games import Game, State
from games.checkers import CheckersState


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


def _endgame_database(game: Game) -> Callable[[State[Any]], float | None]:
    """Open the checkers endgame database for probing; DatabaseError if it is not built."""
    if game.name != "checkers":
        raise DatabaseError(f"egdb=on is for checkers only, not {game.name}")
    # Imported here: numpy and the tables are needed only by bots that probe.
    from bots.egdb.probe import Database, default_directory  # noqa: PLC0415 - numpy on demand

    return Database(default_directory()).engine_score
