"""The cluster's TCP proxy (cli/tcp_proxy.py): round robin per connection, bytes both ways
after a PROXY protocol header naming the client, a refusing backend skipped, WebSocket
upgrades passed through; against real sockets."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
from collections.abc import AsyncIterator

import pytest
from websockets.asyncio.server import ServerConnection, serve

from cli.tcp_proxy import TcpProxy, parse_address
from tests.ports import free_port
from tests.wsclient import connect


async def read_proxy_line(reader: asyncio.StreamReader) -> None:
    """Read the PROXY protocol header the proxy starts each connection with, and check it."""
    header = (await reader.readline()).decode()
    assert header.startswith("PROXY TCP4 127.0.0.1 127.0.0.1 ") and header.endswith("\r\n")


async def named_backend(name: str) -> tuple[asyncio.Server, int]:
    """A TCP server that reads the PROXY header, greets with its name, then echoes every byte
    until EOF, then says bye."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_proxy_line(reader)
        writer.write(f"{name}\n".encode())
        while data := await reader.read(1024):
            writer.write(data)
        writer.write(b"bye\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, int(server.sockets[0].getsockname()[1])


@contextlib.asynccontextmanager
async def proxy_to(ports: list[int]) -> AsyncIterator[tuple[TcpProxy, int]]:
    proxy = TcpProxy([("127.0.0.1", port) for port in ports])
    port = await proxy.start("127.0.0.1", 0)
    try:
        yield proxy, port
    finally:
        await proxy.close()


async def greeting(port: int) -> str:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        return (await asyncio.wait_for(reader.readline(), 5)).decode().strip()
    finally:
        writer.close()


async def test_connections_go_round_robin_and_bytes_flow_both_ways() -> None:
    (one, port_one), (two, port_two) = await named_backend("one"), await named_backend("two")
    async with one, two, proxy_to([port_one, port_two]) as (proxy, port):
        assert [await greeting(port) for _ in range(4)] == ["one", "two", "one", "two"]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        assert (await reader.readline()).strip() == b"one"
        payload = bytes(range(256)) * 1024  # larger than one read: it arrives whole, in order
        writer.write(payload)
        writer.write_eof()  # the half-close reaches the backend, which then answers and closes
        echoed = await asyncio.wait_for(reader.read(), 10)
        assert echoed == payload + b"bye\n"
        writer.close()
        assert proxy.connections == 5


async def test_a_refusing_backend_is_skipped() -> None:
    dead = free_port()  # nothing listens there: connections are refused
    alive, port_alive = await named_backend("alive")
    async with alive, proxy_to([dead, port_alive]) as (_, port):
        assert [await greeting(port) for _ in range(3)] == ["alive"] * 3


async def test_with_every_backend_refusing_the_client_is_closed() -> None:
    async with proxy_to([free_port(), free_port()]) as (_, port):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        assert await asyncio.wait_for(reader.read(), 10) == b""
        writer.close()


async def test_a_websocket_passes_through() -> None:
    async def echo(ws: ServerConnection) -> None:
        async for message in ws:
            await ws.send(f"{ws.request.path if ws.request else '?'}:{message}")

    async def strip_proxy_header(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """Read the PROXY header, then pass the rest to the WebSocket server (which reads
        none) and back."""
        await read_proxy_line(reader)
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", ws_port)

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            while data := await source.read(65536):
                sink.write(data)
                await sink.drain()
            sink.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    ws_port = free_port()
    shim = await asyncio.start_server(strip_proxy_header, "127.0.0.1", 0)
    backend_port = int(shim.sockets[0].getsockname()[1])
    async with (
        shim,
        serve(echo, "127.0.0.1", ws_port),
        proxy_to([backend_port]) as (_, port),
        connect(f"ws://127.0.0.1:{port}/ws") as ws,
    ):
        for text in ("hello", "x" * 100_000):
            await ws.send(text)
            assert await asyncio.wait_for(ws.recv(), 5) == f"/ws:{text}"


def test_the_command_says_where_it_listens_and_stops_on_sigterm() -> None:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "cli.tcp_proxy", "--listen", f"127.0.0.1:{port}",
         "--backend", f"127.0.0.1:{free_port()}"],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == f"listening on 127.0.0.1:{port}"
        process.terminate()
        assert process.wait(10) == 0
    finally:
        process.kill()
        process.wait()


@pytest.mark.parametrize("text", ["8000", "host:", ":80", "host:port"])
def test_a_bad_address_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="HOST:PORT"):
        parse_address(text)


def test_an_address_parses() -> None:
    assert parse_address("127.0.0.1:8000") == ("127.0.0.1", 8000)
    assert parse_address("[::1]:9") == ("::1", 9)
