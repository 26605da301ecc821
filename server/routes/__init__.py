"""The REST and WebSocket routers, and the handlers that turn errors into `ErrorResponse`s.

`install(app)` includes every router and the exception handlers: a protocol error becomes its
`ErrorResponse` with the status `protocol.HTTP_STATUS` gives, a request that fails validation a
422 VALIDATION_ERROR naming each bad field, what the framework refuses by itself (no such
route, a method the route does not take, an unreadable body) NOT_FOUND, METHOD_NOT_ALLOWED or
BAD_MESSAGE, and anything unexpected a 500 INTERNAL_ERROR without a traceback. No answer is
ever the framework's own `{"detail": ...}`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import MappingProxyType

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import BaseRoute, Match
from starlette.staticfiles import StaticFiles

from protocol.errors import ErrorCode, ProtocolError, ScalarValue
from protocol.problems import explain_all
from server.errors import error_response
from server.routes import (
    bots,
    challenges,
    courses,
    explore,
    grader,
    hosted_bots,
    index,
    leaderboard,
    matches,
    players,
    pools,
    tournaments,
    web,
    web_courses,
    web_grader,
    web_hosted,
    web_play,
    ws,
    ws_watch,
)
from server.routes.api_docs import install_api_docs

log = logging.getLogger(__name__)


async def _protocol_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ProtocolError)
    retry_after = exc.details.get("retry_after_s")
    if exc.code is ErrorCode.SUBMISSION_LIMIT and isinstance(retry_after, int):
        return error_response(exc, headers={"Retry-After": str(retry_after)})
    return error_response(exc)


async def _validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    details: dict[str, ScalarValue] = {}
    # In plain words (protocol.problems): "needs at least 2 players", not pydantic's "Tuple
    # should have at least 2 items after validation".
    for location, words in explain_all(exc.errors()):
        where = ".".join(str(part) for part in location) or "(request)"
        details.setdefault(where[:128], words)
    listed = "; ".join(f"{where}: {what}" for where, what in details.items())
    return error_response(
        ProtocolError(ErrorCode.VALIDATION_ERROR, f"bad request: {listed}", details)
    )


FRAMEWORK_CODES: Mapping[int, ErrorCode] = MappingProxyType(
    {
        400: ErrorCode.BAD_MESSAGE,
        401: ErrorCode.UNAUTHORIZED,
        403: ErrorCode.FORBIDDEN,
        404: ErrorCode.NOT_FOUND,
        405: ErrorCode.METHOD_NOT_ALLOWED,
        413: ErrorCode.MESSAGE_TOO_LARGE,
        422: ErrorCode.VALIDATION_ERROR,
        429: ErrorCode.RATE_LIMITED,
    }
)
"""The error code of each HTTP status the framework (Starlette, FastAPI) answers by itself."""


HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def allowed_methods(request: Request) -> list[str]:
    """Return every method some route of the application takes at `request`'s path.

    Starlette's own `Allow` names only the methods of the first route matching the path, so
    `DELETE /matches` would be told only of GET (not of POST). Each method is tried against
    every route, through the routes' public `matches`.
    """
    routes: list[BaseRoute] = request.app.routes
    return [
        method
        for method in HTTP_METHODS
        if any(
            route.matches({**request.scope, "method": method})[0] is Match.FULL for route in routes
        )
    ]


def _is_websocket_route(request: Request) -> bool:
    """True when `request`'s path is one of the application's WebSocket routes."""
    routes: list[BaseRoute] = request.app.routes
    scope = {**request.scope, "type": "websocket"}
    return any(route.matches(scope)[0] is Match.FULL for route in routes)


def _framework_error(request: Request, exc: StarletteHTTPException) -> ProtocolError:
    """Return the protocol error saying what the framework refused in `request`, and why."""
    path = request.url.path[:256]
    method = request.method
    if exc.status_code >= 500:
        return ProtocolError(
            ErrorCode.INTERNAL_ERROR, "the server failed; retry, and report it if it repeats"
        )
    code = FRAMEWORK_CODES.get(exc.status_code, ErrorCode.BAD_MESSAGE)
    if code is ErrorCode.NOT_FOUND and _is_websocket_route(request):
        return ProtocolError(
            code,
            f"{path} is a WebSocket: open it with a WebSocket client (docs/PROTOCOL.md)",
            {"method": method, "path": path},
        )
    if code is ErrorCode.NOT_FOUND:
        return ProtocolError(
            code,
            f"no route {method} {path}: `GET /` lists what this server serves, "
            "`/openapi.json` every route",
            {"method": method, "path": path},
        )
    if code is ErrorCode.METHOD_NOT_ALLOWED:
        allowed = ", ".join(allowed_methods(request))
        return ProtocolError(
            code,
            f"{path} does not take {method}; it takes {allowed or 'other methods'}",
            {"method": method, "path": path, "allow": allowed},
        )
    what = "unreadable request" if code is ErrorCode.BAD_MESSAGE else "refused request"
    return ProtocolError(code, f"{what}: {exc.detail}", {"path": path})


async def _http_error(request: Request, exc: Exception) -> Response:
    """Give every request the framework refuses by itself (no such route, a method the route
    does not take, an unreadable body) the protocol's error body, with the framework's status
    and headers (`Allow` for a 405)."""
    assert isinstance(exc, StarletteHTTPException)
    error = _framework_error(request, exc)
    headers = dict(exc.headers or {})
    if error.code is ErrorCode.METHOD_NOT_ALLOWED:
        headers["Allow"] = str(error.details["allow"])
    return error_response(error, status_code=exc.status_code, headers=headers)


async def _internal_error(_request: Request, exc: Exception) -> JSONResponse:
    log.error("unexpected error: %r", exc)
    return error_response(
        ProtocolError(
            ErrorCode.INTERNAL_ERROR, "the server failed; retry, and report it if it repeats"
        )
    )


def install(app: FastAPI) -> None:
    """Include the REST routers and the web pages' static assets (`/static`) in `app`, and
    install the error handlers."""
    app.include_router(index.router)
    app.include_router(players.router)
    app.include_router(leaderboard.router)
    app.include_router(bots.router)
    app.include_router(matches.router)
    app.include_router(challenges.router)
    app.include_router(tournaments.router)
    app.include_router(web.router)
    app.include_router(web_grader.router)
    app.include_router(web_play.router)
    app.include_router(explore.router)
    app.include_router(web_courses.router)
    app.include_router(web_hosted.router)
    app.include_router(web_hosted.uploads_router)
    app.include_router(grader.router)
    app.include_router(courses.router)
    app.include_router(courses.uploads)
    app.include_router(hosted_bots.router)
    app.include_router(pools.router)
    app.include_router(ws.router)
    app.include_router(ws_watch.router)
    install_api_docs(app)
    app.mount("/static", StaticFiles(packages=[("server.web", "static")]), name="static")
    app.add_exception_handler(ProtocolError, _protocol_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _internal_error)
