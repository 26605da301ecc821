"""The connection layer of a real `arena serve`: slow and idle connections are closed, each
client address holds a bounded number of connections (HTTP and WebSocket together), request
headers are bounded however they arrive, and a client's address is its own unless a trusted
proxy says otherwise (X-Forwarded-For, or the PROXY protocol).

Timeouts are made small through settings; each test waits with a generous deadline for the
server to act, and counts connections, never seconds. Clients pick their source address in
127.0.0.0/8 (all of it is loopback) to be told apart.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import select
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import InvalidStatus, WebSocketException
from websockets.sync.client import connect as ws_connect

from cli.tcp_proxy import TcpProxy
from tests.ports import free_port

DEADLINE_S = 30.0
"""How long a test waits for the server to do what it must (the machine may be loaded)."""
START_POLLS = 600
"""How many times a test asks a starting server's /health, 0.1 s apart (plus each request)."""
WAIT_POLLS = 300
"""How many times `wait_for` checks, 0.1 s apart."""


@contextmanager
def served(
    tmp_path: Path, files: int | None = None, **env: str
) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """Run `arena serve` on a free port with `env` added; yield the process and its port.

    `files` sets the process's open-file limit, soft and hard, before it starts.
    """
    exe = shutil.which("arena", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the arena console script is not installed in this environment")
    port = free_port()

    def limit_files() -> None:
        if files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))

    with open(tmp_path / "serve.log", "ab") as log:
        process = subprocess.Popen(
            [
                exe,
                "serve",
                "--port",
                str(port),
                "--database",
                f"sqlite+aiosqlite:///{tmp_path}/a.db",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "ARENA_GRADER_DIR": str(tmp_path / "grader"), **env},
            preexec_fn=limit_files,  # noqa: PLW1509 - the test starts no thread before
        )
    try:
        for _ in range(START_POLLS):
            try:
                httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
                break
            except httpx.HTTPError:
                assert process.poll() is None, (tmp_path / "serve.log").read_text()
                time.sleep(0.1)
        else:
            raise AssertionError(f"arena serve did not answer /health in {START_POLLS} tries")
        yield process, port
    finally:
        process.kill()
        process.wait(timeout=10)


def open_socket(port: int, source: str = "127.0.0.1") -> socket.socket:
    """Connect to the server from `source`."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))
    sock.settimeout(DEADLINE_S)
    return sock


def read_to_close(sock: socket.socket) -> bytes:
    """Read until the server closes the connection; fail if it is still open at the deadline."""
    answer = b""
    deadline = time.monotonic() + DEADLINE_S
    try:
        while time.monotonic() < deadline:
            sock.settimeout(max(0.1, deadline - time.monotonic()))
            chunk = sock.recv(65536)
            if not chunk:
                return answer
            answer += chunk
    except ConnectionResetError:
        return answer
    except TimeoutError:
        pass
    raise AssertionError(f"the server kept the connection open; it sent {answer[:300]!r}")


def trickle_to_close(sock: socket.socket, byte: bytes = b"a") -> bytes:
    """Send one byte every 0.1 s until the server answers or closes; return what it sent.

    Fails if the connection is still open at the deadline: a trickle must not keep it alive.
    """
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        try:
            sock.sendall(byte)
        except (BrokenPipeError, ConnectionResetError):
            return b""
        readable, _, _ = select.select([sock], [], [], 0.1)
        if readable:
            return read_to_close(sock)
    raise AssertionError("the server read a trickle for the whole deadline")


def read_response(sock: socket.socket) -> bytes:
    """Read one response with a Content-Length body; return its bytes."""
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = sock.recv(65536)
        assert chunk, f"closed after {answer!r}"
        answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1]) for line in head.lower().split(b"\r\n")
        if line.startswith(b"content-length:")
    )  # fmt: skip
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, f"closed after {answer!r}"
        body += chunk
    return head + b"\r\n\r\n" + body


def error_of(answer: bytes, status: int) -> dict[str, object]:
    """Return the JSON error body of `answer`, checking its status line."""
    assert answer.startswith(f"HTTP/1.1 {status} ".encode()), answer[:300]
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"content-type: application/json" in head.lower(), head
    error = json.loads(body)
    assert isinstance(error, dict) and error["type"] == "error", error
    return error


def client(port: int, source: str = "127.0.0.1") -> httpx.Client:
    """An HTTP client whose connections come from `source`."""
    return httpx.Client(
        base_url=f"http://127.0.0.1:{port}",
        transport=httpx.HTTPTransport(local_address=source),
        timeout=10,
    )


def wait_for(check: Callable[[], bool], what: str) -> None:
    """Call `check` until it is true, at most WAIT_POLLS times, 0.1 s apart."""
    for _ in range(WAIT_POLLS):
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(what)


# -- time limits ---------------------------------------------------------------------------------


def test_idle_connections_are_closed_even_those_that_never_send_a_byte(tmp_path: Path) -> None:
    with served(tmp_path, ARENA_HTTP_IDLE_TIMEOUT_S="0.5") as (_, port):
        silent = [open_socket(port) for _ in range(3)]
        for sock in silent:
            assert read_to_close(sock) == b""  # closed without a word: nothing was asked
            sock.close()
        # After an answer the connection is kept for the next request, then closed too.
        with open_socket(port) as sock:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
            assert read_to_close(sock).startswith(b"HTTP/1.1 200 ")


def test_headers_are_bounded_in_time_per_request_not_per_byte(tmp_path: Path) -> None:
    with served(tmp_path, ARENA_HTTP_HEADER_TIMEOUT_S="1", ARENA_HTTP_IDLE_TIMEOUT_S="600") as (
        _,
        port,
    ):
        # Headers begun and never finished: 408 with the documented error, then closed.
        with open_socket(port) as sock:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: t\r\nX-Slow: ")
            error = error_of(read_to_close(sock), 408)
            assert error["code"] == "REQUEST_TIMEOUT"
        # A byte every 0.1 s does not keep the headers' time running.
        with open_socket(port) as sock:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: t\r\nX-Slow: ")
            answer = trickle_to_close(sock)
            assert answer == b"" or error_of(answer, 408)["code"] == "REQUEST_TIMEOUT"
        # Each request of a kept-alive connection has its own time.
        with open_socket(port) as sock:
            for _ in range(2):
                sock.sendall(b"GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
                assert read_response(sock).startswith(b"HTTP/1.1 200 ")
            sock.sendall(b"GET /health HTTP/1.1\r\n")
            assert error_of(read_to_close(sock), 408)["code"] == "REQUEST_TIMEOUT"


def test_a_body_is_bounded_in_time_per_request_not_per_byte(tmp_path: Path) -> None:
    with served(tmp_path, ARENA_HTTP_BODY_TIMEOUT_S="1", ARENA_HTTP_IDLE_TIMEOUT_S="600") as (
        _,
        port,
    ):
        head = (
            b"POST /players HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
            b"Content-Length: 1000\r\n\r\n"
        )
        with open_socket(port) as sock:
            sock.sendall(head + b'{"name": "')
            error = error_of(read_to_close(sock), 408)
            assert error["code"] == "REQUEST_TIMEOUT"
        with open_socket(port) as sock:
            sock.sendall(head + b'{"name": "')
            answer = trickle_to_close(sock)
            assert answer == b"" or error_of(answer, 408)["code"] == "REQUEST_TIMEOUT"
        # Nobody was registered by the cut-off bodies, and a whole one is served.
        with client(port) as http:
            assert http.post("/players", json={"name": "aaaa"}).status_code == 201


# -- connections per address ---------------------------------------------------------------------


def test_connections_per_address_count_http_and_websockets_together(tmp_path: Path) -> None:
    with served(
        tmp_path,
        ARENA_MAX_CONNECTIONS_PER_ADDRESS="4",
        ARENA_WS_MAX_CONNECTIONS_PER_ADDRESS="2",
        ARENA_HTTP_IDLE_TIMEOUT_S="600",
        ARENA_WS_HELLO_TIMEOUT_S="600",
    ) as (_, port):
        url = f"ws://127.0.0.1:{port}/ws/matches/m_1"
        with ExitStack() as stack:
            for _ in range(2):
                stack.enter_context(ws_connect(url, source_address=("127.0.0.2", 0)))
            idle = [stack.enter_context(open_socket(port, "127.0.0.2")) for _ in range(2)]
            # A fifth connection from the address is answered at once and closed.
            with open_socket(port, "127.0.0.2") as sock:
                error = error_of(read_to_close(sock), 503)
                assert error["code"] == "TOO_MANY_CONNECTIONS"
                assert error["details"] == {"limit": 4}
            # A WebSocket handshake too: its request may be on its way when the server closes,
            # so the client sees the 503 or a reset. (websockets' sync client, its socket closed
            # under it while it sends, can also fail on an assertion of its own: still refused.)
            with pytest.raises(
                (InvalidStatus, ConnectionError, WebSocketException, AssertionError)
            ) as refused:
                ws_connect(url, source_address=("127.0.0.2", 0), open_timeout=10)
            if isinstance(refused.value, InvalidStatus):
                assert refused.value.response.status_code == 503
            # Another address has its own count.
            with client(port, "127.0.0.3") as other:
                assert other.get("/health").status_code == 200
            # A closed connection frees its place.
            idle.pop().close()
            with client(port, "127.0.0.2") as http:
                wait_for(
                    lambda: _status(http, "/health") == 200, "the closed connection kept its place"
                )


def _status(http: httpx.Client, path: str) -> int | None:
    try:
        return http.get(path).status_code
    except httpx.HTTPError:
        return None


def test_one_address_cannot_use_up_the_servers_open_files(tmp_path: Path) -> None:
    """300 idle sockets from one address against a server allowed 256 open files: the address
    keeps its 32, the rest are refused at once, and another client is served."""
    with served(
        tmp_path,
        files=256,
        ARENA_MAX_CONNECTIONS_PER_ADDRESS="32",
        ARENA_HTTP_IDLE_TIMEOUT_S="600",
    ) as (_, port):
        crowd = [open_socket(port, "127.0.0.2") for _ in range(300)]
        try:
            with client(port, "127.0.0.3") as other:
                assert other.get("/health").status_code == 200
            refused = 0
            pending = list(crowd)
            deadline = time.monotonic() + DEADLINE_S
            while refused < 300 - 32 and time.monotonic() < deadline:
                readable, _, _ = select.select(pending, [], [], 0.5)
                for sock in readable:
                    pending.remove(sock)
                    assert error_of(read_to_close(sock), 503)["code"] == "TOO_MANY_CONNECTIONS"
                    refused += 1
            assert refused == 300 - 32
        finally:
            for sock in crowd:
                sock.close()


# -- header size ---------------------------------------------------------------------------------


@pytest.mark.parametrize("pieces", [1, 16])
def test_headers_over_the_limit_are_refused_however_they_arrive(
    tmp_path: Path, pieces: int
) -> None:
    with served(tmp_path, ARENA_MAX_HEADER_BYTES="8192") as (_, port):

        def send(fill: int) -> bytes:
            request = b"GET /health HTTP/1.1\r\nHost: t\r\nX-Fill: " + b"a" * fill + b"\r\n\r\n"
            step = -(-len(request) // pieces)
            with open_socket(port) as sock:
                with suppress(BrokenPipeError, ConnectionResetError):  # refused before the end
                    for start in range(0, len(request), step):
                        sock.sendall(request[start : start + step])
                        if pieces > 1:
                            time.sleep(0.02)  # separate reads, each one piece
                return read_response(sock)

        assert send(6000).startswith(b"HTTP/1.1 200 ")
        error = error_of(send(12_000), 431)
        assert error["code"] == "HEADERS_TOO_LARGE"
        assert error["details"] == {"limit": 8192}


# -- client addresses and proxies ----------------------------------------------------------------


def register(http: httpx.Client, name: str, headers: dict[str, str] | None = None) -> int:
    """POST /players; return the status."""
    return http.post("/players", json={"name": name}, headers=headers or {}).status_code


def test_x_forwarded_for_is_ignored_unless_the_peer_is_a_trusted_proxy(tmp_path: Path) -> None:
    with served(tmp_path, ARENA_RATE_REGISTRATIONS_PER_ADDRESS="2/hour") as (_, port):
        with client(port) as http:
            forged = [{"X-Forwarded-For": f"127.0.0.{i + 50}"} for i in range(3)]
            statuses = [register(http, f"xff{i}", forged[i]) for i in range(3)]
        assert statuses == [201, 201, 429]


def proxied_request(port: int, source: str, header: bytes, request: bytes) -> bytes:
    """Send `header` (a PROXY protocol header) then `request`; return the answer."""
    with open_socket(port, source) as sock:
        sock.sendall(header + request)
        return read_to_close(sock)


def registration(name: str, forwarded_for: str) -> bytes:
    body = json.dumps({"name": name}).encode()
    return (
        b"POST /players HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
        + f"X-Forwarded-For: {forwarded_for}\r\nConnection: close\r\n".encode()
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )


def test_a_proxy_protocol_header_names_the_client_only_from_a_trusted_proxy(
    tmp_path: Path,
) -> None:
    with served(
        tmp_path,
        ARENA_TRUSTED_PROXIES="127.0.0.1",
        ARENA_RATE_REGISTRATIONS_PER_ADDRESS="2/hour",
    ) as (_, port):
        v1 = b"PROXY TCP4 127.0.0.7 127.0.0.1 5555 80\r\n"
        # The client's own X-Forwarded-For on a proxied connection is not the proxy's word.
        answers = [
            proxied_request(port, "127.0.0.1", v1, registration(f"pp{i}", f"127.0.0.{60 + i}"))
            for i in range(3)
        ]
        assert [a[:12] for a in answers] == [b"HTTP/1.1 201"] * 2 + [b"HTTP/1.1 429"]
        # Another client of the proxy has its own count; version 2 is read as well.
        v2 = (
            b"\r\n\r\n\x00\r\nQUIT\n\x21\x11\x00\x0c"
            + socket.inet_aton("127.0.0.8")
            + socket.inet_aton("127.0.0.1")
            + (5556).to_bytes(2, "big")
            + (80).to_bytes(2, "big")
        )
        other = proxied_request(port, "127.0.0.1", v2, registration("pp-other", "127.0.0.70"))
        assert other.startswith(b"HTTP/1.1 201 ")
        # From an address that is not a trusted proxy, the header is not HTTP: refused.
        refused = proxied_request(port, "127.0.0.2", v1, registration("pp-x", "127.0.0.71"))
        assert error_of(refused, 400)["code"] == "BAD_MESSAGE"
        # Nor is a malformed header from the proxy itself.
        bad = proxied_request(port, "127.0.0.1", b"PROXY TCP4 nonsense\r\n", b"")
        assert error_of(bad, 400)["code"] == "BAD_MESSAGE"


def test_a_client_behind_a_proxy_that_sends_nothing_is_idle_not_slow(tmp_path: Path) -> None:
    """The proxy's PROXY header comes as it connects; the client's silence after it is idle
    time, closed quietly, not a request's headers arriving too slowly."""
    with served(
        tmp_path,
        ARENA_TRUSTED_PROXIES="127.0.0.1",
        ARENA_HTTP_IDLE_TIMEOUT_S="0.5",
        ARENA_HTTP_HEADER_TIMEOUT_S="600",
    ) as (_, port):
        header = b"PROXY TCP4 127.0.0.7 127.0.0.1 5555 80\r\n"
        assert proxied_request(port, "127.0.0.1", header, b"") == b""


def test_the_cluster_proxy_tells_each_server_the_clients_address() -> None:
    """cli.tcp_proxy opens each server connection with a PROXY protocol header naming the
    client, and closes the client's connection when the server closes its own."""

    async def scenario() -> tuple[bytes, int]:
        received: asyncio.Queue[bytes] = asyncio.Queue()

        async def backend(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await received.put(await reader.readuntil(b"hello"))
            writer.close()  # the server is done: the client must not be kept waiting

        server = await asyncio.start_server(backend, "127.0.0.1", 0)
        backend_port = server.sockets[0].getsockname()[1]
        proxy = TcpProxy([("127.0.0.1", backend_port)])
        proxy_port = await proxy.start()
        try:
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", proxy_port, local_addr=("127.0.0.2", 0)
            )
            client_port = writer.get_extra_info("sockname")[1]
            writer.write(b"hello")
            first = await asyncio.wait_for(received.get(), DEADLINE_S)
            # The client never closes its side; the proxy lets the connection go all the same.
            assert await asyncio.wait_for(reader.read(), DEADLINE_S) == b""
            deadline = time.monotonic() + DEADLINE_S
            while proxy.pipes and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            still_open = len(proxy.pipes)
            writer.close()
            expected = f"PROXY TCP4 127.0.0.2 127.0.0.1 {client_port} {proxy_port}\r\nhello"
            assert first == expected.encode(), first
            return first, still_open
        finally:
            await proxy.close()
            server.close()
            await server.wait_closed()

    _, still_open = asyncio.run(scenario())
    assert still_open == 0


# -- the open-file limit -------------------------------------------------------------------------


def open_file_limit(pid: int) -> tuple[int, int]:
    """Return the soft and hard open-file limits of process `pid` (Linux /proc)."""
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            soft, hard = line.split()[3:5]
            return int(soft), int(hard)
    raise AssertionError("no open-file limit in /proc")


@pytest.mark.skipif(not Path("/proc/self/limits").exists(), reason="reads /proc/PID/limits")
def test_arena_serve_raises_its_soft_open_file_limit_to_the_hard_one(tmp_path: Path) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard <= 256:
        pytest.skip("the hard open-file limit leaves nothing to raise")
    exe = shutil.which("arena", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the arena console script is not installed in this environment")
    port = free_port()
    process = subprocess.Popen(
        [exe, "serve", "--port", str(port), "--database", f"sqlite+aiosqlite:///{tmp_path}/a.db"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "ARENA_GRADER_DIR": str(tmp_path / "grader")},
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard)),  # noqa: PLW1509
    )
    try:
        wait_for(lambda: _serving(port), "arena serve did not start")
        assert open_file_limit(process.pid) == (hard, hard)
    finally:
        process.kill()
        process.wait(timeout=10)


def _serving(port: int) -> bool:
    with suppress(httpx.HTTPError):
        return httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200
    return False
