"""REST answers in the protocol version a client names (REST has no `hello`).

A request may name the version it speaks in the `Arena-Protocol-Version` header
(`protocol.version.VERSION_HEADER`); without it, it is answered in the first minor version,
1.0, so a client written before a field was added never meets it. A router built with
`route_class=VersionedRoute` answers each request with the fields of that version only
(`protocol.messages.json_for_version`); a header that is not a version of this major version
is refused.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from pydantic import BaseModel

from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import json_for_version, newer_fields
from protocol.version import (
    OLDEST_VERSION,
    PROTOCOL_VERSION,
    VERSION_HEADER,
    is_compatible,
    parse_version,
    spoken_version,
)


def requested_version(request: Request) -> tuple[int, int]:
    """Return the version to answer `request` in: its header's (at most ours), else 1.0.

    Raises ProtocolError VALIDATION_ERROR for a header that is not MAJOR.MINOR and
    UNSUPPORTED_VERSION for another major version.
    """
    text = request.headers.get(VERSION_HEADER)
    if text is None:
        return parse_version(OLDEST_VERSION)
    where = f"header.{VERSION_HEADER.lower()}"
    try:
        parse_version(text)
    except ValueError as error:
        raise ProtocolError(
            ErrorCode.VALIDATION_ERROR, f"{where}: {error}", {where: str(error)}
        ) from None
    if not is_compatible(text):
        raise ProtocolError(
            ErrorCode.UNSUPPORTED_VERSION,
            f"this server speaks protocol {PROTOCOL_VERSION}, not {text}",
            {"server_version": PROTOCOL_VERSION},
        )
    return parse_version(spoken_version(text))


class VersionedRoute(APIRoute):
    """A route whose JSON answer holds only the fields of the version the request names."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        model = self.response_model
        wire_model = model if isinstance(model, type) and issubclass(model, BaseModel) else None

        async def versioned(request: Request) -> Response:
            version = requested_version(request)
            response = await handler(request)
            if wire_model is None or newer_fields(wire_model, version) is None:
                return response
            if response.media_type != "application/json" or not 200 <= response.status_code < 300:
                return response
            data = json_for_version(json.loads(bytes(response.body)), wire_model, version)
            headers = {
                key: value
                for key, value in response.headers.items()
                if key.lower() not in ("content-length", "content-type")
            }
            return JSONResponse(data, status_code=response.status_code, headers=headers)

        return versioned
