"""The interface of a Python bot plug-in: what a user's class is given and what it returns.

A plug-in is a class with a `choose(state, limits)` method (subclassing `Plugin` is optional):

    from bots.plugin import Limits, Option, Plugin, Reply

    class MyBot(Plugin):
        name = "my bot"                                  # shown in the handshake and reports
        author = "me"
        version = "1.0"
        games = ("connect4",)                            # None (the default): every game
        options = {"greed": Option(0.5, "how greedy, 0 to 1", 0.0, 1.0)}

        def __init__(self, greed: float = 0.5) -> None:  # one keyword argument per option
            self.greed = greed

        def choose(self, state, limits: Limits) -> Reply:
            ...                                          # state: a games.State, not terminal
            return Reply(move, score=0.0, depth=1, nodes=7)

Arena builds the class once per game, with its declared options (the spec's values, the
defaults filled in) as keyword arguments, and calls `choose` for each of its moves. `state` is
the position (games.base.State: `legal_moves()`, `apply(move)`, `to_move`, `outcome()`,
`format_move(move)`, `game`); `limits` says how long or how deep to search. `choose` returns a
`Reply`, or just the move: one of `state.legal_moves()` or its text in the game's notation.

Spec: `py:path/to/mybot.py:MyBot` (a file), `py:package.module:MyBot` (an importable module)
or `py:NAME` (a class an installed package registers as NAME in the `arena.bots` entry-point
group), then Arena's limits and the class's options as for any bot:
`py:./mybot.py:MyBot:time=0.5,greed=0.8`. The plug-in runs in a child process of its own
(bots/programs/pyhost.py speaks docs/ENGINES.md's protocol for it), so a crash or a hang loses its
game and no more, and the next game starts a fresh process. This module is the whole of the
interface a plug-in may rely on; it imports nothing else of Arena.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

__all__ = ["Limits", "Option", "Plugin", "Reply"]


def _never() -> bool:
    return False


@dataclass(frozen=True, slots=True)
class Limits:
    """How long or how deep one search may go; each None when not set.

    `movetime` is the seconds this move may take (Arena tells the plug-in to stop when they
    are up: a search should then return at once); `depth` and `nodes` bound the search by
    plies and by positions visited. `stop()` returns True once Arena wants the move now.
    """

    movetime: float | None = None
    depth: int | None = None
    nodes: int | None = None
    stop: Callable[[], bool] = _never


@dataclass(slots=True)
class Reply:
    """A move with what the search found: its score from the side to move's point of view
    (positive is good for it; None: no opinion), the depth reached, the positions visited and
    the principal variation (moves or their texts, the first being `move`)."""

    move: Hashable
    score: float | None = None
    depth: int = 0
    nodes: int = 0
    pv: Sequence[Hashable] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class Option:
    """One option of a plug-in: its default (its type is the option's: bool, int, float or
    str), a help line, and bounds for a number."""

    default: bool | int | float | str
    help: str = ""
    minimum: float | None = None
    maximum: float | None = None

    @property
    def kind(self) -> str:
        """The option's type as the engine protocol names it: bool, int, float or string."""
        if isinstance(self.default, bool):
            return "bool"
        if isinstance(self.default, int):
            return "int"
        if isinstance(self.default, float):
            return "float"
        return "string"


class Plugin:
    """An optional base class for plug-ins: the class attributes Arena reads, with defaults.

    `name` defaults to the class's name; `games` None means every game.
    """

    name: ClassVar[str | None] = None
    author: ClassVar[str] = ""
    version: ClassVar[str] = ""
    games: ClassVar[Sequence[str] | None] = None
    options: ClassVar[Mapping[str, Option]] = {}

    def choose(self, state: Any, limits: Limits) -> Reply | Hashable:
        """Return the move for `state` (not terminal): a Reply, a legal move or its text."""
        raise NotImplementedError(f"{type(self).__name__}.choose is not written")
