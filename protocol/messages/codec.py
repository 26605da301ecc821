"""Reading and writing WebSocket messages as JSON text, with the error code that fits each
refusal: too large, not a known message (BAD_MESSAGE), or bad fields (VALIDATION_ERROR).
"""

from __future__ import annotations

import functools
import json
import re
from itertools import accumulate
from typing import Any

from pydantic import TypeAdapter, ValidationError

from protocol.errors import ErrorCode, ProtocolError, ScalarValue
from protocol.messages.base import MAX_JSON_DEPTH, MAX_MESSAGE_BYTES, MAX_NUMBER_DIGITS, WireMessage
from protocol.messages.client_frames import CLIENT_MESSAGES, ClientMessage, Hello
from protocol.messages.server_frames import SERVER_MESSAGES, ServerMessage
from protocol.messages.versioning import newer_fields
from protocol.version import PROTOCOL_VERSION, parse_version

_CLIENT_ADAPTER: TypeAdapter[ClientMessage] = TypeAdapter(ClientMessage)
_SERVER_ADAPTER: TypeAdapter[ServerMessage] = TypeAdapter(ServerMessage)


def _parse(
    adapter: TypeAdapter[Any], data: bytes | str, known: tuple[type[WireMessage], ...]
) -> Any:
    """Validate one JSON message, raising ProtocolError with the error code that fits."""
    size = len(data.encode() if isinstance(data, str) else data)
    if size > MAX_MESSAGE_BYTES:
        raise ProtocolError(
            ErrorCode.MESSAGE_TOO_LARGE,
            f"message of {size} bytes exceeds the limit of {MAX_MESSAGE_BYTES} bytes",
            {"size": size, "limit": MAX_MESSAGE_BYTES},
        )
    try:
        return adapter.validate_json(data)
    except ValidationError as exc:
        # Only a rejected message pays for a second parse, to tell BAD_MESSAGE from the rest.
        raise _diagnose(data, exc, known) from None


def _diagnose(
    data: bytes | str, exc: ValidationError, known: tuple[type[WireMessage], ...]
) -> ProtocolError:
    """Return the ProtocolError that explains why `data` failed validation."""
    text = data if isinstance(data, str) else data.decode("utf-8", errors="replace")
    depth = _json_depth(text)
    if depth > MAX_JSON_DEPTH:
        # Checked before json.loads, which recurses once per level (RecursionError).
        return ProtocolError(
            ErrorCode.BAD_MESSAGE,
            f"message is nested {depth} levels deep; the limit is {MAX_JSON_DEPTH}",
            {"depth": depth, "limit": MAX_JSON_DEPTH},
        )
    try:
        raw = json.loads(text, parse_int=_bounded_int)
    except _NumberTooLongError as error:
        return ProtocolError(
            ErrorCode.BAD_MESSAGE,
            f"message has an integer of {error.digits} digits; the limit is {MAX_NUMBER_DIGITS}",
            {"digits": error.digits, "limit": MAX_NUMBER_DIGITS},
        )
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        return ProtocolError(ErrorCode.BAD_MESSAGE, f"message is not valid JSON: {error}")
    if not isinstance(raw, dict):
        return ProtocolError(
            ErrorCode.BAD_MESSAGE, f"message must be a JSON object, not {type(raw).__name__}"
        )
    tags = [model.model_fields["type"].default for model in known]
    tag = raw.get("type")
    if tag not in tags:
        shown = "no `type` field" if tag is None else f"unknown type {tag!r}"
        return ProtocolError(
            ErrorCode.BAD_MESSAGE,
            f"{shown} (expected one of: {', '.join(tags)})",
            {"type": tag if isinstance(tag, str) else None},
        )
    model = known[tags.index(tag)]
    return _validation_error(str(tag), exc, tuple(model.model_fields))


# A string, or an unclosed one to the end of the text: the optional closing quote keeps the scan
# linear (a required one would rescan from every quote of an unclosed string: quadratic).
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"?', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_BRACKET_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def _json_depth(text: str) -> int:
    """Return the deepest nesting of arrays and objects in `text`, strings skipped.

    Works on any text, JSON or not, in linear time and without recursion.
    """
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    return max(accumulate(map(_BRACKET_STEP.__getitem__, brackets)), default=0)


class _NumberTooLongError(ValueError):
    def __init__(self, digits: int) -> None:
        super().__init__(f"an integer of {digits} digits")
        self.digits = digits


def _bounded_int(literal: str) -> int:
    """Parse a JSON integer, refusing one longer than MAX_NUMBER_DIGITS (before int() runs)."""
    digits = len(literal.lstrip("-"))
    if digits > MAX_NUMBER_DIGITS:
        raise _NumberTooLongError(digits)
    return int(literal)


def _validation_error(tag: str, exc: ValidationError, fields: tuple[str, ...]) -> ProtocolError:
    """Return the VALIDATION_ERROR naming each bad field of a `tag` message (`fields`: the
    message's own, named when an unknown one was sent)."""
    details: dict[str, ScalarValue] = {}
    for error in exc.errors(include_url=False):
        # The first location item is the union's tag; the rest is the field path.
        location = ".".join(str(part) for part in error["loc"][1:]) or "(message)"
        problem = error["msg"]
        if error["type"] == "extra_forbidden" and len(error["loc"]) == 2:
            problem = f"unknown field; a {tag} has only the fields {', '.join(fields)}"
        details.setdefault(location, problem)
    listed = "; ".join(f"{field}: {problem}" for field, problem in details.items())
    return ProtocolError(ErrorCode.VALIDATION_ERROR, f"bad {tag} message: {listed}", details)


def parse_client_message(data: bytes | str) -> ClientMessage:
    """Return the client message encoded as JSON in `data`.

    Raises ProtocolError: MESSAGE_TOO_LARGE over MAX_MESSAGE_BYTES, BAD_MESSAGE for anything
    but a JSON object with a known `type`, VALIDATION_ERROR (with `details` per field) for a
    known message with bad fields.
    """
    message: ClientMessage = _parse(_CLIENT_ADAPTER, data, CLIENT_MESSAGES)
    return message


def parse_hello(data: bytes | str) -> Hello:
    """Return the `hello` that opens a connection, encoded as JSON in `data`.

    Raises ProtocolError as `parse_client_message` does for a bad hello (VALIDATION_ERROR
    naming its bad fields), and BAD_MESSAGE naming the type of any other message, even one with
    bad fields of its own: what is wrong with it first is that it is not a hello.
    """
    try:
        message = parse_client_message(data)
    except ProtocolError as error:
        if error.code is not ErrorCode.VALIDATION_ERROR:
            raise
        # A known type with bad fields: valid JSON within the limits (checked already).
        tag = json.loads(data)["type"]
        if tag == "hello":
            raise
        message_type = str(tag)
    else:
        if isinstance(message, Hello):
            return message
        message_type = message.type
    raise ProtocolError(
        ErrorCode.BAD_MESSAGE, f"the first message must be hello, not {message_type}"
    )


def parse_server_message(data: bytes | str) -> ServerMessage:
    """Return the server message encoded as JSON in `data`; errors as `parse_client_message`."""
    message: ServerMessage = _parse(_SERVER_ADAPTER, data, SERVER_MESSAGES)
    return message


def dump_server_message(message: ServerMessage, version: str = PROTOCOL_VERSION) -> str:
    """Return the JSON text of a server message, every field present (null when unset).

    For a client of an older minor `version` (the one its `hello` named), the fields added
    since are left out (see `SINCE`), so that client reads only fields it knows.
    """
    return _dump(_SERVER_ADAPTER, message, version)


def dump_client_message(message: ClientMessage, version: str = PROTOCOL_VERSION) -> str:
    """Return the JSON text of a client message, every field present (null when unset).

    For a server of an older minor `version` (the one its `welcome` named), the fields added
    since are left out: that server would refuse them as unknown.
    """
    return _dump(_CLIENT_ADAPTER, message, version)


def _dump(adapter: TypeAdapter[Any], message: WireMessage, version: str) -> str:
    """Return the JSON text of `message` for a peer of `version`, newer fields left out."""
    exclude = (
        None if version == PROTOCOL_VERSION else newer_fields(type(message), _version_of(version))
    )
    if exclude is None:  # the hot path: a peer of this version (or newer)
        return adapter.dump_json(message).decode()
    return message.model_dump_json(exclude=exclude)


@functools.cache
def _version_of(version: str) -> tuple[int, int]:
    return parse_version(version)
