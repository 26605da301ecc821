"""What the course REST routes share: the errors they answer with, the page a browser gets
from a resource route, and the signed-in player such a route needs for its JSON."""

from __future__ import annotations

from typing import Any

from protocol.messages import ErrorResponse
from server.db.models import Player
from server.deps import missing_credential

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (401, 403, 404, 409, 413, 422, 429, 503)
}

HTML_PAGE: dict[int | str, dict[str, Any]] = {
    200: {"content": {"text/html": {"schema": {"type": "string"}}}}
}
"""A route whose resource a browser gets as its page."""


def signed_in(viewer: Player | None) -> Player:
    if viewer is None:
        raise missing_credential()
    return viewer
