"""The protocol version, MAJOR.MINOR (see docs/PROTOCOL.md, "Versioning").

A minor version only adds: optional fields, message types, error codes, close codes. The
models reject unknown fields, so a server sends each client only what the minor version named
in its `hello` knows, and a client uses only what the server's `welcome` version knows. A major
version changes or removes something; a server refuses a `hello` whose major version it does
not speak (error UNSUPPORTED_VERSION, then close code 4003).
"""

from __future__ import annotations

PROTOCOL_VERSION = "1.1"
"""The version of the wire protocol this package describes.

1.1 added `MatchResult.code` and `max_plies` (`MatchCreate`, `MatchState`, `MatchRecord`)."""


def parse_version(text: str) -> tuple[int, int]:
    """Return (major, minor) of a version written MAJOR.MINOR, raising ValueError otherwise."""
    major, dot, minor = text.partition(".")
    if not (dot and major.isdigit() and minor.isdigit()):
        raise ValueError(f"a protocol version is MAJOR.MINOR, like {PROTOCOL_VERSION!r}: {text!r}")
    return int(major), int(minor)


def is_compatible(client_version: str, server_version: str = PROTOCOL_VERSION) -> bool:
    """Return whether a client speaking `client_version` can talk to this server.

    The major versions must be equal; a client may be older or newer in the minor version.
    """
    return parse_version(client_version)[0] == parse_version(server_version)[0]
