"""The bot registry: every bot a spec can name, each one class, listed once, here.

A bot is one subclass of `Player` (bots.player): its spec `name`, a one-line `description`, its
`options` (each an `Option`: type, default, absolute maximum, the host limit that bounds it,
help), and `choose(state, budget, stop)`, which runs one search module. It is built from its
parsed options and a `Setup` (the game, its search knowledge, the evaluation the `eval` option
names, the clock and the random generator). The lectures' bots are declared here (bots.lectures
imports no bot machinery), the engine's in bots.engine.players, the programs' in
bots.programs.players.
To add a bot, write its class and add it to `PLAYERS` at the end: `bots.spec` parses specs,
checks a host's limits and builds bots from this registry alone, and `arena bots` lists it.
docs/BOTS.md has the table of which module each spec name runs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from bots.engine.players import AlphaBetaPlayer, IterativeDeepeningPlayer
from bots.lectures.alphabeta import alphabeta
from bots.lectures.mcts import mcts_search
from bots.lectures.minimax import minimax
from bots.lectures.negamax import negamax
from bots.lectures.simple import greedy_move, random_move
from bots.player import (
    EVAL,
    MAX_C,
    MAX_SECONDS,
    MAX_SEED,
    MAX_SIMULATIONS,
    SEED,
    Option,
    Player,
    depth_option,
)
from bots.programs.players import CheckerBoardPlayer, CommandPlayer, NamedEnginePlayer, PythonPlayer
from bots.result import SearchResult, Stop
from bots.scoring import ENGINE
from games import State


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
