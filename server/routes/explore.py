"""The search-tree explorer: its page (`GET /explore`) and its two JSON routes.

`POST /explore/trace` traces a search on a position and answers with every node in visit
order (bots.trace.model's `Trace.as_dict()`, the shape docs/BOTS.md documents); `POST
/explore/position` plays moves into a position and answers with its legal moves. Both are
public, for the page's script and for REST clients alike: no token, and a bearer token or a
guest cookie changes nothing. What a trace may cost is bounded by the service
(server.explore); the traces and the positions are counted per client address
(`rate_traces_per_address`, `rate_positions_per_address`).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, Response

from bots.evaluation.knowledge import knowledge_for
from bots.trace.tree import SEARCHES
from games import game_names
from protocol import PROTOCOL_VERSION
from protocol.explore import PositionAnswer, PositionRequest, TraceRequest
from protocol.messages import ErrorResponse
from server.deps import ExplorerDep, PagesDep, limit_position, limit_trace
from server.limits.rates import RATE_LIMITED_RESPONSE

router = APIRouter(prefix="/explore", tags=["explore"])


ERRORS: dict[int | str, dict[str, Any]] = {code: {"model": ErrorResponse} for code in (413, 422)}

TRACE_ANSWER: dict[str, Any] = {
    "description": "The trace: its settings, value, best move, principal variation, "
    "statistics, node counts by depth, and every node in visit order (docs/BOTS.md, "
    '"Seeing a search"; infinite values are "inf" and "-inf")',
    "content": {"application/json": {"schema": {"type": "object"}}},
}

DEFAULT_SEARCH = "alphabeta"


def explore_choices() -> dict[str, Any]:
    """Return what the page's form offers: games with their evaluations, and searches."""
    return {
        "games": [
            {
                "name": name,
                "evaluations": sorted(knowledge_for(name).evaluations),
                "default_evaluation": knowledge_for(name).default_evaluation,
            }
            for name in game_names()
        ],
        "searches": dict(SEARCHES),
    }


@router.get("", response_class=HTMLResponse)
async def explore_page(request: Request, pages: PagesDep, explorer: ExplorerDep) -> Response:
    """The explorer page: pick a game, a position, a search and a depth, and step through the
    search node by node (its script calls `POST /explore/position` and `/explore/trace`)."""
    return pages.render(
        "explore.html",
        {
            "section": "explore",
            "version": request.app.version,
            "protocol_version": PROTOCOL_VERSION,
            "choices": explore_choices(),
            "default_search": DEFAULT_SEARCH,
            "max_depth": explorer.max_depth,
            "max_nodes": explorer.max_nodes,
            "max_seconds": explorer.max_seconds,
        },
    )


@router.post(
    "/position",
    responses={429: RATE_LIMITED_RESPONSE, **ERRORS},
    dependencies=[Depends(limit_position)],
)
async def explore_position(body: PositionRequest, explorer: ExplorerDep) -> PositionAnswer:
    """Play `moves` from `position` (none: the start) and answer with the position reached,
    the side to move and its legal moves. VALIDATION_ERROR names a bad game, option or
    position; INVALID_MOVE and ILLEGAL_MOVE (with the legal moves) a bad move, by index;
    RATE_LIMITED past the rate per client address."""
    return await explorer.position(body)


@router.post(
    "/trace",
    response_class=Response,
    responses={
        200: TRACE_ANSWER,
        429: RATE_LIMITED_RESPONSE,
        503: {"model": ErrorResponse, "description": "TRACE_TIMEOUT: stopped at the time limit"},
        **ERRORS,
    },
    dependencies=[Depends(limit_trace)],
)
async def explore_trace(body: TraceRequest, explorer: ExplorerDep) -> Response:
    """Trace `search` on the position to `depth` plies: every node in visit order with the
    move leading to it, the window on entry and on return, its value, cut-offs and the moves
    never searched, table hits. Bounded: the depth, the nodes (TRACE_TOO_LARGE), the time
    (TRACE_TIMEOUT), and the rate per client address (RATE_LIMITED)."""
    return Response(await explorer.trace(body), media_type="application/json")
