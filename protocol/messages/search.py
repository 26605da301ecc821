"""What a bot's search found for the move it played, sent with the move (since protocol 1.2)."""

from __future__ import annotations

from typing import Annotated, Literal, Self

from pydantic import Field, Strict, model_validator

from protocol.messages.base import MAX_SAFE_INTEGER, MoveText, Ms, WireModel
from protocol.messages.versioning import SINCE

MAX_PV_MOVES = 64
"""The most moves a search's principal variation (`SearchInfo.pv`) may list."""
MAX_SEARCH_DEPTH = 10_000
"""The largest depth, in plies, a search may report."""

SearchOutcome = Literal["win", "draw", "loss"]
"""A result a search proved for the mover with best play from both sides."""


class SearchInfo(WireModel):
    """What a bot's search found for the move it played (since protocol 1.2; all optional on
    the wire but `depth` and `nodes`).

    `score` is from the mover's point of view (positive: good for the side that played the
    move), in the bot's own units: compare a bot's scores with each other, not with another
    bot's. Arena's own bots score in their evaluation's units (checkers: a man is 100), a
    forced win as 1,000,000 less the plies to it, and MCTS as its mean reward in [-1, 1].
    `outcome` is set when the search proved the result (then `outcome_plies`, when known, is
    how many plies from the position before the move it takes); otherwise `score` is an
    estimate. `pv` is the principal variation from the move played (its first move), in the
    game's notation. `depth` is the search's depth in plies (iterative deepening: the last
    depth completed; MCTS: the deepest node), `seldepth` the deepest ply any line reached.
    """

    depth: Annotated[int, Strict(), Field(ge=0, le=MAX_SEARCH_DEPTH)]
    nodes: Annotated[int, Strict(), Field(ge=0, le=MAX_SAFE_INTEGER)]
    score: (
        Annotated[
            float,
            Strict(),
            Field(allow_inf_nan=False, ge=-MAX_SAFE_INTEGER, le=MAX_SAFE_INTEGER),
        ]
        | None
    ) = None
    outcome: SearchOutcome | None = None
    outcome_plies: Annotated[int, Strict(), Field(ge=0, le=MAX_SEARCH_DEPTH)] | None = None
    pv: Annotated[tuple[MoveText, ...], Field(max_length=MAX_PV_MOVES)] = ()
    seldepth: Annotated[int, Strict(), Field(ge=0, le=MAX_SEARCH_DEPTH)] | None = None
    time_ms: Ms | None = Field(
        default=None, description="The search's own time, as the bot measured it."
    )
    nps: Annotated[int, Strict(), Field(ge=0, le=MAX_SAFE_INTEGER)] | None = None

    @model_validator(mode="after")
    def _plies_need_an_outcome(self) -> Self:
        if self.outcome_plies is not None and self.outcome is None:
            raise ValueError("outcome_plies needs an outcome: the result the search proved")
        return self


SearchField = Annotated[
    SearchInfo | None,
    Field(
        json_schema_extra={SINCE: "1.2"},
        description="The bot's search statistics for this move (None: not reported).",
    ),
]
