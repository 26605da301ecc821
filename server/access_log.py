"""Keep tokens out of the server's logs.

uvicorn logs every request's path with its query string: the access log (`uvicorn.access`) for
HTTP and `uvicorn.error` for WebSocket handshakes, where a browser passes its token as
`/ws?token=...` (docs/PROTOCOL.md). `RedactTokens` replaces the value of every query parameter
whose name holds `token` with `***` in those records, keeping the route and the other
parameters; `install_redaction` puts it on both loggers.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import unquote_plus

REDACTED = "***"

REDACTED_LOGGERS = ("uvicorn.access", "uvicorn.error")
"""The loggers uvicorn writes request paths to: HTTP requests, and WebSocket handshakes."""

_QUERY_PARAMETER = re.compile(r"(?P<key>(?<=[?&;])[^=&;?#\s\"]+)=(?P<value>[^&;#\s\"]*)")


def _redact_parameter(found: re.Match[str]) -> str:
    key = found.group("key")
    if "token" in unquote_plus(key).lower() and found.group("value"):
        return f"{key}={REDACTED}"
    return found.group(0)


def redact(text: str) -> str:
    """Return `text` with the value of each `token` query parameter in it replaced by ***.

    A parameter counts when its name, percent-decoded, contains `token` in any case
    (`token`, `access_token`, `%74oken`): every spelling a query parser would read as one.
    """
    if "?" not in text:
        return text
    return _QUERY_PARAMETER.sub(_redact_parameter, text)


class RedactTokens(logging.Filter):
    """Redact tokens in a record's message and arguments; never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(arg) if isinstance(arg, str) else arg for arg in record.args)
        return True


def install_redaction() -> None:
    """Put a `RedactTokens` filter on uvicorn's loggers, once (calling it again changes nothing)."""
    for name in REDACTED_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(existing, RedactTokens) for existing in logger.filters):
            logger.addFilter(RedactTokens())
