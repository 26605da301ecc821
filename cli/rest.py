"""A small REST client of an Arena server for the commands that talk to one.

Every refusal becomes a one-line error naming the server's code and message (exit status 2),
and a server that cannot be reached says so, as `arena grader submit` always did.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cli.common import fail

if TYPE_CHECKING:
    import httpx

DEFAULT_SERVER = "http://127.0.0.1:8000"

ServerOpt = Annotated[
    str,
    typer.Option(
        "--server", envvar="ARENA_SERVER", help="The Arena server's base URL (or ARENA_SERVER)."
    ),
]
TokenOpt = Annotated[
    str | None,
    typer.Option(
        "--token",
        envvar="ARENA_TOKEN",
        help="Your token (or ARENA_TOKEN): a player's API token from POST /players, or a "
        "course invite token.",
    ),
]


def error_text(response: httpx.Response) -> str:
    """Return the server's refusal as `CODE: message`, or the HTTP status and body's start."""
    try:
        body = response.json()
        return f"{body['code']}: {body['message']}"
    except (ValueError, KeyError, TypeError):
        return f"HTTP {response.status_code}: {response.text[:200]}"


class Api:
    """An open connection to one server, with one token, answering JSON or exiting clearly."""

    def __init__(self, client: httpx.Client, has_token: bool) -> None:
        self.client = client
        self.has_token = has_token

    def request(
        self, method: str, path: str, *, doing: str, expect: int = 200, **kwargs: Any
    ) -> httpx.Response:
        """Send one request and return its response, or exit 2 with the server's refusal.

        `doing` completes "the server refused to ...": what the request was for, in words.
        """
        response = self.client.request(method, path, **kwargs)
        if response.status_code != expect:
            self.refused(response, doing)
        return response

    def call(self, method: str, path: str, *, doing: str, expect: int = 200, **kwargs: Any) -> Any:
        """Send one request and return its JSON body (None when it has none), as `request`."""
        response = self.request(method, path, doing=doing, expect=expect, **kwargs)
        return response.json() if response.content else None

    def get_text(self, path: str, *, doing: str) -> str:
        """GET a text resource (a CSV export), or exit 2 with the server's refusal."""
        return self.request("GET", path, doing=doing).text

    def refused(self, response: httpx.Response, doing: str) -> typer.Exit:
        """Exit 2 naming the server's code and message; say how to pass a missing token."""
        hint = ""
        if response.status_code == 401 and not self.has_token:
            hint = "; pass your token with --token TOKEN (or ARENA_TOKEN)"
        raise fail(f"the server refused to {doing}: {error_text(response)}{hint}")


@contextmanager
def connect(server: str, token: str | None, timeout: float = 60.0) -> Iterator[Api]:
    """Open an `Api` on `server` with `token`; a network failure inside exits 2 clearly."""
    import httpx

    base = server.rstrip("/")
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    try:
        with httpx.Client(base_url=base, timeout=timeout, headers=headers) as client:
            yield Api(client, token is not None)
    except httpx.HTTPError as error:
        fail(f"cannot reach {base}: {error}")
