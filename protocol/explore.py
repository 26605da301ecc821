"""The wire contract of the search-tree explorer: a trace request, and a position with its moves.

`POST /explore/trace` takes a `TraceRequest` and answers with the trace as `bots.trace.model`'s
`Trace.as_dict()` makes it (docs/BOTS.md, "Seeing a search", has its shape: every node in visit
order with its window, value and cut-off). `POST /explore/position` takes a `PositionRequest`
and answers with a `PositionAnswer`: the position reached and its legal moves, which the page
uses to play into a position. Numbers that may be infinite travel as "inf" and "-inf".
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, Strict

from protocol.messages import GameName, MoveText, Options, PositionText, WireModel

MAX_EXPLORE_MOVES = 200
"""Most moves a request may play from its position before tracing."""
MAX_BOUND = 1e12
"""The largest |alpha| or |beta| of a window, infinities aside: beyond every score."""

SearchName = Literal[
    "minimax", "minimax_prune", "alphabeta", "alphabeta_soft", "negamax", "abnodevalue", "engine"
]
"""The searches a trace runs (bots.trace.tree.SEARCHES): plain minimax, minimax with the lecture's
simple pruning, fail-hard and fail-soft alpha-beta, negamax, the lecture's ABNodeValue, and
the engine (table and ordering switchable)."""

Bound = Annotated[float, Strict(), Field(ge=-MAX_BOUND, le=MAX_BOUND)] | Literal["inf", "-inf"]
"""A window bound: a number, or "inf" / "-inf"."""


class PositionRequest(WireModel):
    """A position: the game's start (or `position`, in the game's notation), then `moves`."""

    game: GameName
    options: Options = Field(default_factory=dict)
    position: PositionText | None = Field(
        None, description="A position in the game's notation; none: the game's start."
    )
    moves: list[MoveText] = Field(
        default_factory=list,
        max_length=MAX_EXPLORE_MOVES,
        description="Moves played from `position`, in order, in the game's notation.",
    )


class PositionAnswer(WireModel):
    """The position a `PositionRequest` reaches: its text, who is to move, its legal moves."""

    game: str
    position: PositionText
    to_move: str = Field(description="The name of the side to move (e.g. `X`, `black`).")
    legal_moves: list[MoveText]
    over: bool = Field(description="True when the game is over: there is nothing to search.")


class TraceRequest(PositionRequest):
    """A search to trace on a position (see `PositionRequest`), to `depth` plies.

    `evaluation` names one of the game's evaluations (none: the game's default); `tt` and
    `ordering` switch the engine's transposition table and move ordering; `scoring` is
    "engine" (a win is 1,000,000 less its distance in plies) or "lecture" (win 1, draw 0,
    loss -1); `window` the root's (alpha, beta) for alphabeta, alphabeta_soft and negamax (for
    abnodevalue, beta is the root's parentVal); `max_nodes` a node limit below the server's.
    """

    search: SearchName = "alphabeta"
    depth: Annotated[int, Strict(), Field(ge=1, le=128)] = 3
    evaluation: Annotated[str, Field(min_length=1, max_length=64)] | None = None
    tt: Annotated[bool, Strict()] = True
    ordering: Annotated[bool, Strict()] = True
    scoring: Literal["engine", "lecture"] = "engine"
    window: tuple[Bound, Bound] | None = None
    max_nodes: Annotated[int, Strict(), Field(ge=1, le=1_000_000)] | None = None
