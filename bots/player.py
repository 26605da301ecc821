"""What a bot is: a `Player` (its spec name, description, options and search), each `Option`
(type, default, absolute maximum, the host limit that bounds it, help), the `Setup` it is built
with, and the options and absolute maxima the bots share.

Every bot is one subclass of `Player`; bots.registry lists the bots Arena searches with,
bots.programs.players the programs from disk.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Literal

from bots.engine.search import MAX_PLY
from bots.evaluation import Knowledge, StateFunction
from bots.result import Clock, SearchResult, Stop
from games import Game, State

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
