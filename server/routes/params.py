"""The query parameters the routes share, each bounded: a page's `limit` and `offset`, a game.

Every integer a client sends is bounded above as well as below, so no value reaches the
database that it cannot hold (an `offset` past 2**63 would overflow a 64-bit column); a value
out of range is a 422 VALIDATION_ERROR naming the parameter.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Query
from pydantic import AfterValidator, WithJsonSchema

from games import game_names
from protocol.messages import MAX_OFFSET, MAX_PAGE_LIMIT


def known_game(name: str) -> str:
    """Return `name` if it is a registered game's name, as `arena games` lists it.

    Raises ValueError naming the games there are (a 422 VALIDATION_ERROR in a request).
    """
    names = game_names()
    if name not in names:
        raise ValueError(f"unknown game {name!r}; the games are: {', '.join(names)}")
    return name


KnownGame = Annotated[
    str,
    AfterValidator(known_game),
    WithJsonSchema({"type": "string", "enum": game_names(), "description": "A game's name."}),
]
"""A registered game's name, listed as an enum in the OpenAPI description."""

PageLimit = Annotated[
    int, Query(ge=1, le=MAX_PAGE_LIMIT, description=f"Items per page, 1 to {MAX_PAGE_LIMIT}.")
]
PageOffset = Annotated[
    int,
    Query(ge=0, le=MAX_OFFSET, description=f"Items to skip, 0 to {MAX_OFFSET}."),
]
GameFilter = Annotated[KnownGame | None, Query(description="Only this game's items.")]
