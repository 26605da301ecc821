"""Keep tokens out of the server's logs.

uvicorn logs every request's path with its query string: the access log (`uvicorn.access`) for
HTTP and `uvicorn.error` for WebSocket handshakes, where a browser passes its token as
`/ws?token=...` (docs/PROTOCOL.md), and a course's invite link carries its token in the path
(`/join/{token}`). `RedactTokens` replaces with `***`, in those records:

- the value of every query parameter whose name is a credential's (`is_credential`), on any
  path;
- the value of every path parameter whose name is a credential's, on the routes that have one
  (`credential_paths`, read from the application's own routes, so a new such route is
  redacted without a word here).

The route, the other parameters, the status and the rest of the line are kept.
`install_redaction` puts the filter on both loggers.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from typing import Any, Final
from urllib.parse import unquote_plus

REDACTED = "***"

REDACTED_LOGGERS = ("uvicorn.access", "uvicorn.error")
"""The loggers uvicorn writes request paths to: HTTP requests, and WebSocket handshakes."""

CREDENTIAL_WORDS: Final = ("token", "secret", "password", "credential")
"""A parameter whose name holds one of these carries a credential."""

_QUERY_PARAMETER = re.compile(r"(?P<key>(?<=[?&;])[^=&;?#\s\"]+)=(?P<value>[^&;#\s\"]*)")
_TEMPLATE_PARAMETER = re.compile(r"\{(?P<name>[^}:]+)(?::[^}]*)?\}")


def is_credential(name: str) -> bool:
    """Return True for a parameter name that carries a credential (`token`, `invite_token`,
    `%74oken`: the name is percent-decoded and compared in any case)."""
    lowered = unquote_plus(name).lower()
    return any(word in lowered for word in CREDENTIAL_WORDS)


def _redact_parameter(found: re.Match[str]) -> str:
    if is_credential(found.group("key")) and found.group("value"):
        return f"{found.group('key')}={REDACTED}"
    return found.group(0)


def _walk(routes: Iterable[Any], prefix: str = "") -> Iterator[str]:
    """Yield the path template of every route, through included routers and mounts."""
    for route in routes:
        original = getattr(route, "original_router", None)
        if original is not None:  # FastAPI's included router
            included = getattr(getattr(route, "include_context", None), "prefix", "") or ""
            yield from _walk(original.routes, prefix + included)
            continue
        path = getattr(route, "path", None)
        if not isinstance(path, str):
            continue
        inner = getattr(route, "routes", None)
        if inner and not hasattr(route, "endpoint"):  # a Mount with routes of its own
            yield from _walk(inner, prefix + path)
            continue
        yield prefix + path


def credential_paths(routes: Iterable[Any]) -> list[str]:
    """Return the path templates among `routes` (an app's `routes`) with a path parameter
    that carries a credential, e.g. `/join/{token}`."""
    return sorted(
        {
            template
            for template in _walk(routes)
            if any(
                is_credential(found.group("name"))
                for found in _TEMPLATE_PARAMETER.finditer(template)
            )
        }
    )


def _path_pattern(template: str) -> re.Pattern[str]:
    """Return the pattern finding `template` in a log line, a group per credential value.

    A path starts a line's field (after the start, a space or a quote). A credential that
    ends the template takes the rest of the path, so a value with a slash in it (a decoded
    `%2F`) is hidden whole.
    """
    parts = [r"(?<![^\s\"])"]
    position = 0
    found_all = list(_TEMPLATE_PARAMETER.finditer(template))
    for index, found in enumerate(found_all):
        parts.append(re.escape(template[position : found.start()]))
        last = index == len(found_all) - 1 and found.end() == len(template)
        if is_credential(found.group("name")):
            parts.append(r"([^?#\s\"]+)" if last else r"([^/?#\s\"]+)")
        else:
            parts.append(r"[^/?#\s\"]+")
        position = found.end()
    parts.append(re.escape(template[position:]))
    parts.append(r"(?=[/?#\s\"]|$)")
    return re.compile("".join(parts))


class Redactor:
    """Redacts credentials in logged paths: query parameters, and the path parameters of
    the templates it was given."""

    def __init__(self) -> None:
        self._templates: set[str] = set()
        self._patterns: list[re.Pattern[str]] = []

    def add_paths(self, templates: Iterable[str]) -> None:
        """Redact the credential path parameters of `templates` too."""
        for template in templates:
            if template not in self._templates:
                self._templates.add(template)
                self._patterns.append(_path_pattern(template))

    def redact(self, text: str) -> str:
        """Return `text` with every credential value in it replaced by ***."""
        for pattern in self._patterns:
            text = pattern.sub(_redact_groups, text)
        if "?" in text:
            text = _QUERY_PARAMETER.sub(_redact_parameter, text)
        return text


def _redact_groups(found: re.Match[str]) -> str:
    whole, start = found.group(0), found.start()
    pieces = []
    position = 0
    for index in range(1, (found.re.groups or 0) + 1):
        begin, end = found.span(index)
        pieces.append(whole[position : begin - start])
        pieces.append(REDACTED)
        position = end - start
    pieces.append(whole[position:])
    return "".join(pieces)


def redact(text: str, paths: Iterable[str] = ()) -> str:
    """Return `text` with the value of each credential query parameter in it, and of each
    credential path parameter of the templates `paths`, replaced by ***.

    A query parameter counts when its name, percent-decoded, contains `token` (or another
    of CREDENTIAL_WORDS) in any case (`token`, `access_token`, `%74oken`): every spelling a
    query parser would read as one.
    """
    redactor = Redactor()
    redactor.add_paths(paths)
    return redactor.redact(text)


class RedactTokens(logging.Filter):
    """Redact tokens in a record's message and arguments; never drops a record."""

    def __init__(self) -> None:
        super().__init__()
        self.redactor = Redactor()

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = self.redactor.redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(
                self.redactor.redact(arg) if isinstance(arg, str) else arg for arg in record.args
            )
        return True


def install_redaction(routes: Iterable[Any] = ()) -> None:
    """Put a `RedactTokens` filter on uvicorn's loggers, once, redacting the credential path
    parameters of `routes` (an app's `routes`) too; calling it again adds only new paths."""
    paths = credential_paths(routes)
    for name in REDACTED_LOGGERS:
        logger = logging.getLogger(name)
        existing = next((f for f in logger.filters if isinstance(f, RedactTokens)), None)
        if existing is None:
            existing = RedactTokens()
            logger.addFilter(existing)
        existing.redactor.add_paths(paths)
