"""The OpenAPI description, completed: every error a route can answer, and the games by name.

FastAPI documents what a route declares. What the server answers around the routes is added
here, from what each operation has: a body (400 BAD_MESSAGE when unreadable, 413
MESSAGE_TOO_LARGE over the body limit), parameters or a body (422 VALIDATION_ERROR), a bearer
token (401 UNAUTHORIZED), and on every operation 429 RATE_LIMITED. Every error response is
documented as what it is, an `application/json` `ErrorResponse` (FastAPI would give a text or
HTML route's errors that route's media type), and `game` in the request bodies is an enum of
the registered games. A web form's route that answers a refusal with a page documents that
page (`text/html`) beside the `ErrorResponse`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from fastapi import FastAPI

from games import game_names

ERROR_SCHEMA = {"$ref": "#/components/schemas/ErrorResponse"}

BODY_ERRORS = {
    "400": "BAD_MESSAGE: the body cannot be read (not UTF-8, malformed multipart).",
    "413": "MESSAGE_TOO_LARGE: the body is over the server's limit (ARENA_MAX_BODY_BYTES, "
    "65,536 bytes by default); refused before it is read.",
}
VALIDATION_ERROR = (
    "VALIDATION_ERROR: a parameter or body field is missing, mistyped or out of range; "
    "`details` names each one."
)
UNAUTHORIZED = "UNAUTHORIZED: the bearer token is missing (where one is required) or wrong."
RATE_LIMITED = "RATE_LIMITED: too many requests; slow down and retry later."

GAME_BODIES = ("MatchCreate", "TournamentCreate")

BEARER = "HTTPBearer"
"""The bearer token's security scheme."""
OPTIONAL_BEARER = "HTTPBearerOptional"
"""The scheme server.deps declares the token of a route that works without one under; the
document lists it as the bearer token, optional (`[{"HTTPBearer": []}, {}]`)."""
"""The request bodies whose `game` names a registered game."""

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def complete_openapi(
    document: dict[str, Any], body_limit_exempt: Collection[tuple[str, str]] = ()
) -> dict[str, Any]:
    """Add to `document` (in place, and return it) the errors every operation can answer.

    `body_limit_exempt` holds the (METHOD, path) operations the body limit does not apply to
    (they document their own 413).
    """
    schemas: dict[str, Any] = document.setdefault("components", {}).setdefault("schemas", {})
    for name, schema in schemas.items():
        if name.split("-")[0] in GAME_BODIES and "game" in schema.get("properties", {}):
            schema["properties"]["game"]["enum"] = game_names()
    schemes: dict[str, Any] = document["components"].get("securitySchemes", {})
    schemes.pop(OPTIONAL_BEARER, None)
    for path, item in document.get("paths", {}).items():
        for method, operation in item.items():
            if method in HTTP_METHODS:
                _optional_token(operation)
                _complete_operation(operation, (method.upper(), path) in body_limit_exempt)
    return document


def _optional_token(operation: dict[str, Any]) -> None:
    """List the bearer token of an operation that works without one as optional: the
    requirement `{}` beside it (a route that needs a player names the token alone)."""
    requirements: list[dict[str, Any]] = operation.get("security", [])
    if not any(OPTIONAL_BEARER in requirement for requirement in requirements):
        return
    needed = [r for r in requirements if OPTIONAL_BEARER not in r]
    operation["security"] = needed or [{BEARER: []}, {}]


def _complete_operation(operation: dict[str, Any], exempt: bool) -> None:
    """Document the errors that `operation` can answer, each as an `ErrorResponse`."""
    responses: dict[str, Any] = operation.setdefault("responses", {})
    added: dict[str, str] = {"429": RATE_LIMITED}
    if "requestBody" in operation:
        added.update(BODY_ERRORS)
        if exempt:
            del added["413"]
    if "requestBody" in operation or operation.get("parameters"):
        added["422"] = VALIDATION_ERROR
    if operation.get("security"):
        added["401"] = UNAUTHORIZED
    if "422" not in added and "text/html" not in responses.get("422", {}).get("content", {}):
        # No parameter and no body: nothing to find invalid, unless the route reads a web
        # form itself and answers 422 with the form again (a page it declares).
        responses.pop("422", None)
    for status, description in added.items():
        responses.setdefault(status, {"description": description})
    for status, response in responses.items():
        if status[0] in "45":
            # A web form's route may answer a refusal with a page it declares (text/html, not
            # the error model FastAPI files under an HTML route's media type).
            page = response.get("content", {}).get("text/html")
            response["content"] = {"application/json": {"schema": ERROR_SCHEMA}}
            if page is not None and page.get("schema") != ERROR_SCHEMA:
                response["content"]["text/html"] = page


def install_openapi(app: FastAPI, body_limit_exempt: Collection[tuple[str, str]] = ()) -> None:
    """Make `app.openapi()` (and `/openapi.json`) serve the completed description."""
    generate: Callable[[], dict[str, Any]] = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = complete_openapi(generate(), body_limit_exempt)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
