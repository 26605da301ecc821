"""A small TCP proxy for `arena cluster`: one address in front of several `arena serve`.

Each client connection goes to the next server in turn (round robin per connection) and its
bytes are copied both ways, so HTTP, keep-alive and WebSocket upgrades pass through unchanged:
the proxy reads no protocol. A server that refuses the connection (stopped, killed, not yet
started) is skipped for the next one; the client is refused only when every server refuses.

Each server connection starts with a PROXY protocol header (version 1, the text line
`PROXY TCP4 CLIENT PROXY CLIENT_PORT PROXY_PORT`) naming the client, so that a server that
trusts this proxy (`ARENA_TRUSTED_PROXIES`, which `arena cluster` sets) counts every client by
its own address; the client's X-Forwarded-For is never believed (a TCP proxy cannot rewrite the
headers of each request on a kept-alive connection). When the server closes its side, the
client's connection is closed too: the server's time limits bound what the proxy holds.

    python -m cli.tcp_proxy --listen 127.0.0.1:8000 --backend 127.0.0.1:8001 --backend ...

prints `listening on HOST:PORT` once it accepts connections, and stops on SIGTERM or Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import signal
import sys
from collections.abc import Sequence

from proxyprotocol.result import ProxyResult, ProxyResultIPv4, ProxyResultIPv6, ProxyResultUnknown
from proxyprotocol.v1 import ProxyProtocolV1

from cli.rlimit import raise_open_file_limit

CHUNK = 64 * 1024
"""Largest read from one side before it is written to the other."""
CONNECT_TIMEOUT_S = 5.0
"""How long one server may take to accept a connection before the next is tried."""


def parse_address(text: str) -> tuple[str, int]:
    """Return (host, port) from `HOST:PORT` (an IPv6 host in brackets); ValueError otherwise."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise ValueError(f"an address is HOST:PORT, not {text!r}")
    return host.strip("[]"), int(port)


class TcpProxy:
    """Accept connections on one address and pipe each to the next backend in turn."""

    def __init__(self, backends: Sequence[tuple[str, int]]) -> None:
        if not backends:
            raise ValueError("a proxy needs at least one backend")
        self.backends = list(backends)
        self.next_backend = 0
        self.connections = 0
        """Connections accepted so far (each counted once, whatever backend took it)."""
        self.server: asyncio.Server | None = None
        self.pipes: set[asyncio.Task[None]] = set()

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        """Listen on (host, port); return the port listened on (port 0: any free one)."""
        self.server = await asyncio.start_server(self._accept, host, port)
        return int(self.server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        """Stop listening and cut every open connection."""
        if self.server is not None:
            self.server.close()
        for task in list(self.pipes):
            task.cancel()
        await asyncio.gather(*self.pipes, return_exceptions=True)
        if self.server is not None:
            await self.server.wait_closed()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.pipes.add(task)
        self.connections += 1
        try:
            upstream = await self._connect()
            if upstream is None:
                return
            up_reader, up_writer = upstream
            try:
                up_writer.write(proxy_header(writer))
                to_server = asyncio.create_task(_copy(reader, up_writer))
                try:
                    # The server's side ending ends the connection: HTTP and WebSocket servers
                    # never half-close, and a client that keeps its side open after the
                    # server closed would hold both sockets for ever.
                    await _copy(up_reader, writer)
                finally:
                    to_server.cancel()
                    await asyncio.gather(to_server, return_exceptions=True)
            finally:
                up_writer.close()
        except asyncio.CancelledError:
            # `close` cuts the connection. The task ends normally: asyncio's streams would log
            # a cancelled connection handler as an error.
            pass
        finally:
            writer.close()
            self.pipes.discard(task)

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        """Connect to the next backend that accepts, starting with the one whose turn it is."""
        start = self.next_backend
        self.next_backend = (start + 1) % len(self.backends)
        for step in range(len(self.backends)):
            host, port = self.backends[(start + step) % len(self.backends)]
            try:
                return await asyncio.wait_for(
                    asyncio.open_connection(host, port), CONNECT_TIMEOUT_S
                )
            except (OSError, TimeoutError):
                continue
        return None


def proxy_header(client: asyncio.StreamWriter) -> bytes:
    """Return the PROXY protocol header naming `client`'s address and the proxy's."""
    peer = client.get_extra_info("peername")
    local = client.get_extra_info("sockname")
    result: ProxyResult = ProxyResultUnknown()
    with contextlib.suppress(TypeError, ValueError, IndexError):
        source, dest = ipaddress.ip_address(peer[0]), ipaddress.ip_address(local[0])
        if isinstance(source, ipaddress.IPv4Address) and isinstance(dest, ipaddress.IPv4Address):
            result = ProxyResultIPv4((source, int(peer[1])), (dest, int(local[1])))
        elif isinstance(source, ipaddress.IPv6Address) and isinstance(dest, ipaddress.IPv6Address):
            result = ProxyResultIPv6((source, int(peer[1])), (dest, int(local[1])))
    return ProxyProtocolV1().pack(result)


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy `reader` to `writer` until end of stream, then half-close `writer`."""
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        # One side went away: the other is closed by the caller. Abort this side too, or the
        # other copy would wait for a peer that will never send.
        writer.transport.abort()


async def serve(listen: tuple[str, int], backends: Sequence[tuple[str, int]]) -> None:
    """Run a proxy on `listen` until SIGTERM or SIGINT."""
    proxy = TcpProxy(backends)
    port = await proxy.start(*listen)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    print(f"listening on {listen[0]}:{port}", flush=True)
    await stop.wait()
    await proxy.close()


def main(argv: Sequence[str] | None = None) -> None:
    """Run the proxy from the command line (see the module's help)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--listen", required=True, help="HOST:PORT to accept on (port 0: any)")
    parser.add_argument(
        "--backend", action="append", required=True, help="HOST:PORT of a server (repeat)"
    )
    args = parser.parse_args(argv)
    try:
        listen = parse_address(args.listen)
        backends = [parse_address(b) for b in args.backend]
    except ValueError as exc:
        parser.error(str(exc))
    raise_open_file_limit()  # two sockets per client connection
    run = asyncio.run
    with contextlib.suppress(ImportError):
        import uvloop

        run = uvloop.run
    try:
        run(serve(listen, backends))
    except OSError as exc:
        sys.exit(f"cannot listen on {args.listen}: {exc.strerror or exc}")


if __name__ == "__main__":
    main()
