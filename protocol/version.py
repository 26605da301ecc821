"""The protocol version, MAJOR.MINOR (see docs/PROTOCOL.md, "Versioning").

A minor version only adds: optional fields, message types, error codes, close codes. The
models reject unknown fields, so a server sends each client only what the minor version named
in its `hello` knows, and a client uses only what the server's `welcome` version knows. A major
version changes or removes something; a server refuses a `hello` whose major version it does
not speak (error UNSUPPORTED_VERSION, then close code 4003).
"""

from __future__ import annotations

PROTOCOL_VERSION = "1.5"
"""The version of the wire protocol this package describes.

1.1 added `MatchResult.code` and `max_plies` (`MatchCreate`, `MatchState`, `MatchRecord`); 1.2
added a move's `search` (`SearchInfo` on `move`, `MoveRequest`, `move_made`, `RecordedMove`);
1.3 added `bot_available` (a bot open to challenges, listed by `GET /bots/online`) and SPRT
tournaments (`TournamentCreate.sprt`, and `sprt` of `TournamentState`, `TournamentSummary`,
`tournament_game_finished` and `tournament_finished`); 1.4 added Swiss tournaments
(`TournamentCreate.swiss`, a game's `round`, the standings' `swiss`); 1.5 added connected bots
in rated pools (a pool entry's `connected`)."""


VERSION_HEADER = "Arena-Protocol-Version"
"""The REST request header naming the version a client speaks (REST has no `hello`); a request
without it is answered in OLDEST_VERSION."""

OLDEST_VERSION = "1.0"
"""The first minor version of this major version: what a REST client that names none gets."""


def parse_version(text: str) -> tuple[int, int]:
    """Return (major, minor) of a version written MAJOR.MINOR, raising ValueError otherwise."""
    major, dot, minor = text.partition(".")
    if not (dot and major.isdigit() and minor.isdigit()):
        raise ValueError(f"a protocol version is MAJOR.MINOR, like {PROTOCOL_VERSION!r}: {text!r}")
    return int(major), int(minor)


def spoken_version(client_version: str, server_version: str = PROTOCOL_VERSION) -> str:
    """Return the version a server speaks with a compatible client: the older of the two.

    A client of an older minor version gets only what its version knows; a newer one gets all
    the server knows. The answer is written plainly (`01.0` is `1.0`).
    """
    major, minor = min(parse_version(client_version), parse_version(server_version))
    return f"{major}.{minor}"


def is_compatible(client_version: str, server_version: str = PROTOCOL_VERSION) -> bool:
    """Return whether a client speaking `client_version` can talk to this server.

    The major versions must be equal; a client may be older or newer in the minor version.
    """
    return parse_version(client_version)[0] == parse_version(server_version)[0]
