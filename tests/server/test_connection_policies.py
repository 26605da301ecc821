"""The connection layer's policies without a server (server/connections.py): which proxies are
trusted, how a PROXY protocol header is read, how connections are counted per address."""

from __future__ import annotations

import ipaddress

import pytest
from pydantic import ValidationError

from cli.uvicorn_server import connection_gate
from server.connections import (
    ProxyHeader,
    ProxyHeaderError,
    TrustedProxies,
    address_key,
    parse_trusted_proxies,
    read_proxy_header,
    starts_with_proxy_header,
)
from server.settings import Settings


def test_trusted_proxies_are_addresses_or_networks_never_everyone() -> None:
    assert parse_trusted_proxies(" 127.0.0.1, 10.0.0.0/8 ,::1,") == (
        ipaddress.ip_network("127.0.0.1/32"),
        ipaddress.ip_network("10.0.0.0/8"),
        ipaddress.ip_network("::1/128"),
    )
    assert parse_trusted_proxies("") == ()
    trusted = TrustedProxies(parse_trusted_proxies("127.0.0.1,10.0.0.0/8"))
    assert "10.1.2.3" in trusted and "::ffff:127.0.0.1" in trusted
    assert "127.0.0.2" not in trusted and None not in trusted and "proxy" not in trusted
    for bad in ("*", "proxy.example", "10.0.0.0/33"):
        with pytest.raises(ValidationError, match="trusted_proxies"):
            Settings(trusted_proxies=bad)


def test_a_proxy_header_is_read_whole_or_refused() -> None:
    v1 = b"PROXY TCP6 2001:db8::7 2001:db8::1 40000 443\r\n"
    assert starts_with_proxy_header(b"PRO") is None
    assert starts_with_proxy_header(b"GET / HTTP/1.1\r\n") is False
    assert starts_with_proxy_header(b"PROXY") is None and starts_with_proxy_header(v1) is True
    assert read_proxy_header(v1[:-3]) is None  # not whole yet
    header = read_proxy_header(v1 + b"GET /")
    assert header == ProxyHeader(("2001:db8::7", 40000), len(v1))
    assert read_proxy_header(b"PROXY UNKNOWN\r\n") == ProxyHeader(None, 15)
    local = b"\r\n\r\n\x00\r\nQUIT\n\x20\x00\x00\x00"  # version 2, LOCAL: the proxy's own
    assert read_proxy_header(local[:10]) is None
    assert read_proxy_header(local + b"GET") == ProxyHeader(None, 16)
    for bad in (
        b"PROXY TCP4 127.0.0.1\r\n",
        b"PROXY TCP4 127.0.0.999 127.0.0.1 1 2\r\n",
        b"PROXY TCP4 127.0.0.1 127.0.0.1 1 99999\r\n",
        b"PROXY " + b"x" * 200,
    ):
        with pytest.raises(ProxyHeaderError):
            read_proxy_header(bad)


def test_connections_are_counted_per_address_and_ipv6_per_64() -> None:
    gate = connection_gate(Settings(max_connections_per_address=2))
    first, second = address_key("2001:db8:1:2::1"), address_key("2001:db8:1:2:ffff::9")
    assert first == second
    assert gate.admit(first) and gate.admit(second) and not gate.admit(first)
    assert gate.admit(address_key("2001:db8:1:3::1"))
    gate.release(first)
    assert gate.admit(second)
    for _ in range(2):
        gate.release(first)
    gate.release(address_key("2001:db8:1:3::1"))
    assert not gate.open  # nothing left behind
