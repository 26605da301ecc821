"""Free TCP ports on 127.0.0.1 for the servers tests start, drawn apart from outgoing
connections' ports."""

from __future__ import annotations

import random
import socket
from pathlib import Path

_PORTS = random.SystemRandom()
"""Draws test ports: never seeded, so two test runs side by side do not draw the same ones."""


def _ephemeral_ports() -> tuple[int, int]:
    """The range the kernel takes outgoing connections' (and port 0's) ports from."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


BROWSER_REFUSED_PORTS = frozenset({10080})
"""Ports of the drawn range that Chromium refuses to load a page from (ERR_UNSAFE_PORT)."""


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that nothing listens on right now.

    It is drawn below the ephemeral range: a server is started on it some moments later, and
    meanwhile any outgoing connection on the machine could be given a port of that range.
    """
    low, _ = _ephemeral_ports()
    if low > 11_000:
        for _ in range(100):
            port = _PORTS.randrange(10_000, low)
            if port in BROWSER_REFUSED_PORTS:
                continue
            with socket.socket() as sock:
                try:
                    sock.bind(("127.0.0.1", port))
                except OSError:
                    continue
                return port
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
