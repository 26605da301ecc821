"""The REST and WebSocket routers, and the handlers that turn errors into `ErrorResponse`s.

`install(app)` includes every router and the exception handlers: a protocol error becomes its
`ErrorResponse` with the status `protocol.HTTP_STATUS` gives, a request that fails validation a
422 VALIDATION_ERROR naming each bad field, and anything unexpected a 500 INTERNAL_ERROR
without a traceback.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from protocol.errors import HTTP_STATUS, ErrorCode, ProtocolError, ScalarValue
from protocol.messages import ErrorResponse
from server.matches import MatchError
from server.routes import challenges, grader, index, matches, players, tournaments, ws

log = logging.getLogger(__name__)


def error_response(error: ProtocolError) -> JSONResponse:
    """Return the HTTP response carrying `error` as an `ErrorResponse`."""
    body = ErrorResponse(
        code=error.code,
        message=error.message[:2000],
        match_id=error.match_id if isinstance(error, MatchError) else None,
        legal_moves=error.legal_moves if isinstance(error, MatchError) else None,
        details=error.details,
    )
    return JSONResponse(body.model_dump(mode="json"), status_code=HTTP_STATUS[error.code])


async def _protocol_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ProtocolError)
    return error_response(exc)


async def _validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    details: dict[str, ScalarValue] = {}
    for problem in exc.errors():
        location = ".".join(str(part) for part in problem.get("loc", ())) or "(request)"
        details.setdefault(location[:128], str(problem.get("msg", "invalid")))
    listed = "; ".join(f"{where}: {what}" for where, what in details.items())
    return error_response(
        ProtocolError(ErrorCode.VALIDATION_ERROR, f"bad request: {listed}", details)
    )


async def _http_error(request: Request, exc: Exception) -> Response:
    """Give a request the framework refused as unreadable (400) the protocol's error body."""
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 400:
        return error_response(
            ProtocolError(ErrorCode.BAD_MESSAGE, f"unreadable request: {exc.detail}")
        )
    return await http_exception_handler(request, exc)


async def _internal_error(_request: Request, exc: Exception) -> JSONResponse:
    log.error("unexpected error: %r", exc)
    return error_response(
        ProtocolError(
            ErrorCode.INTERNAL_ERROR, "the server failed; retry, and report it if it repeats"
        )
    )


def install(app: FastAPI) -> None:
    """Include the REST routers in `app` and install the error handlers."""
    app.include_router(index.router)
    app.include_router(players.router)
    app.include_router(matches.router)
    app.include_router(challenges.router)
    app.include_router(tournaments.router)
    app.include_router(grader.router)
    app.include_router(ws.router)
    app.add_exception_handler(ProtocolError, _protocol_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _internal_error)
