"""What each connection is held to before any request reaches the app (docs/SECURITY.md,
"Connections"): its client's address, the proxies whose word on that address is trusted,
how many connections one address may hold open, and how long a request may take to arrive.

Pure policy and parsing, no server and no settings here: `cli.uvicorn_server` makes the gate of
the settings, and `cli.http_protocol` applies it to each connection of `arena serve`.

A client's address is the TCP peer's, IPv6 counted by its /64 (`address_key`). A peer listed
in `trusted_proxies` may name another: at the start of the connection with a PROXY protocol
header (version 1 or 2: a TCP proxy such as `arena cluster`'s, HAProxy), which holds for the
whole connection, or else request by request with `X-Forwarded-For` (an HTTP proxy such as
nginx, which sets it to its own client's address). A connection whose PROXY header named the
client never has its `X-Forwarded-For` read: that header came from the client.
"""

from __future__ import annotations

import ipaddress
from collections import Counter
from dataclasses import dataclass, field

from proxyprotocol import ProxyProtocolIncompleteError
from proxyprotocol.result import is_ipv4, is_ipv6
from proxyprotocol.v1 import ProxyProtocolV1
from proxyprotocol.v2 import ProxyProtocolV2

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

V1_SIGNATURE = b"PROXY "
V2_SIGNATURE = b"\r\n\r\n\x00\r\nQUIT\n"
V1_MAX_BYTES = 107
"""The longest version 1 header, its CRLF included (the protocol's own bound)."""


def address_key(host: str | None) -> str:
    """Return the key counting what `host` does: the address, or its /64 for IPv6."""
    if not host:
        return "unknown"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


def parse_trusted_proxies(text: str) -> tuple[Network, ...]:
    """Return the networks of `text`, comma-separated addresses and networks (CIDR).

    Raises ValueError naming the item that is neither, and refuses `*`: trusting every peer
    would let any client choose its address.
    """
    networks = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        if item == "*":
            raise ValueError(
                "'*' would let every client choose its address: name the proxies' addresses "
                "or networks"
            )
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ValueError(f"{item!r} is neither an IP address nor a network") from None
    return tuple(networks)


class TrustedProxies:
    """The proxies whose word on their client's address is taken."""

    def __init__(self, networks: tuple[Network, ...]) -> None:
        self.networks = networks

    def __bool__(self) -> bool:
        return bool(self.networks)

    def __contains__(self, host: object) -> bool:
        if not self.networks or not isinstance(host, str):
            return False
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return any(address in network for network in self.networks)

    @property
    def entries(self) -> list[str]:
        """The networks as text, as uvicorn's forwarded-headers middleware takes them."""
        return [str(network) for network in self.networks]


class ProxyHeaderError(ValueError):
    """A PROXY protocol header that cannot be read."""


@dataclass(frozen=True)
class ProxyHeader:
    """A PROXY protocol header read from the start of a connection."""

    client: tuple[str, int] | None
    """The client's address and port; None when the proxy names none (its own connection,
    such as a health check: version 2's LOCAL, version 1's UNKNOWN)."""
    size: int
    """The header's length in bytes: what follows is the client's."""


def starts_with_proxy_header(data: bytes) -> bool | None:
    """Return True if `data` begins with a PROXY protocol signature, False if it cannot, and
    None while it is too short to tell."""
    for signature in (V1_SIGNATURE, V2_SIGNATURE):
        seen = min(len(data), len(signature))
        if data[:seen] == signature[:seen]:
            return True if seen == len(signature) else None
    return False


def read_proxy_header(data: bytes) -> ProxyHeader | None:
    """Read the PROXY protocol header at the start of `data` (whose signature is there).

    Return None while the header is incomplete; raise ProxyHeaderError if it is malformed.
    Parsing is the proxy-protocol library's (both versions, version 2's checksum included).
    """
    try:
        if data.startswith(V1_SIGNATURE):
            end = data.find(b"\n", 0, V1_MAX_BYTES)
            if end < 0:
                if len(data) >= V1_MAX_BYTES:
                    raise ProxyHeaderError(f"no end of line within {V1_MAX_BYTES} bytes")
                return None
            size = end + 1
            result = ProxyProtocolV1().unpack(data[:size])
        else:
            version2 = ProxyProtocolV2()
            size = 16
            while True:
                if len(data) < size:
                    return None
                try:
                    result = version2.unpack(data[:size])
                    break
                except ProxyProtocolIncompleteError as incomplete:
                    wanted = incomplete.want_read.want_bytes
                    if not wanted:
                        raise ProxyHeaderError("a version 2 header of no length") from None
                    size += wanted
    except ProxyHeaderError:
        raise
    except ValueError as error:  # the library's syntax, checksum and address errors
        raise ProxyHeaderError(str(error) or type(error).__name__) from None
    if is_ipv4(result) or is_ipv6(result):
        host, port = result.peername[0], result.peername[1]
        return ProxyHeader((str(host), int(port)), size)
    return ProxyHeader(None, size)


@dataclass
class ConnectionGate:
    """The limits every connection of one server process is held to, and the open
    connections it counts per client address (in this process: each process counts its own).
    """

    max_per_address: int
    idle_timeout_s: float
    header_timeout_s: float
    body_timeout_s: float
    max_header_bytes: int
    trusted: TrustedProxies
    open: Counter[str] = field(default_factory=Counter)
    """Open connections per address key."""

    def admit(self, key: str) -> bool:
        """Count one more connection from address `key`; False (nothing counted) if it already
        has as many as it may."""
        if self.open[key] >= self.max_per_address:
            return False
        self.open[key] += 1
        return True

    def release(self, key: str) -> None:
        """Forget one connection counted by `admit`."""
        self.open[key] -= 1
        if self.open[key] <= 0:
            del self.open[key]
