"""A WebSocket client on a bare socket, for tests that need what a library will not do: announce
a frame it never finishes, or never read what the server sends."""

from __future__ import annotations

import base64
import json
import os
import socket
import struct
import time
from typing import Any

OP_TEXT = 0x1
OP_CLOSE = 0x8


class RawWebSocket:
    """A blocking client socket that has completed the WebSocket handshake, nothing more.

    `receive_buffer`: the socket's SO_RCVBUF, set before connecting (small: the kernel holds
    little for a client that does not read, so the server feels it at once).
    """

    def __init__(
        self, port: int, path: str, headers: dict[str, str] | None = None, receive_buffer: int = 0
    ) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if receive_buffer:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        self.sock.settimeout(10)
        self.sock.connect(("127.0.0.1", port))
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [
            f"GET {path} HTTP/1.1",
            f"Host: 127.0.0.1:{port}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key}",
            "Sec-WebSocket-Version: 13",
            *(f"{name}: {value}" for name, value in (headers or {}).items()),
        ]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        response = b""
        while b"\r\n\r\n" not in response:
            chunk = self.sock.recv(1)  # byte by byte: not one byte of a frame is consumed
            if not chunk:
                raise ConnectionError(f"handshake refused: {response!r}")
            response += chunk
        self.status = int(response.split(b" ", 2)[1])
        self._buffer = b""

    def send_header(self, length: int, opcode: int = OP_TEXT) -> None:
        """Send a final frame's header announcing `length` payload bytes (masked, mask 0)."""
        head = bytes([0x80 | opcode])
        if length < 126:
            head += bytes([0x80 | length])
        elif length < 2**16:
            head += bytes([0x80 | 126]) + struct.pack("!H", length)
        else:
            head += bytes([0x80 | 127]) + struct.pack("!Q", length)
        self.sock.sendall(head + b"\0\0\0\0")  # a zero mask leaves the payload as it is

    def send_text(self, text: str) -> None:
        """Send one text message as one frame."""
        payload = text.encode()
        self.send_header(len(payload))
        self.sock.sendall(payload)

    def send_json(self, message: dict[str, Any]) -> None:
        self.send_text(json.dumps(message))

    def try_send(self, data: bytes) -> bool:
        """Send `data` unless the socket is closed or reset; return whether it went."""
        try:
            self.sock.sendall(data)
        except OSError:
            return False
        return True

    def read_frame(self, timeout: float) -> tuple[int, bytes] | None:
        """Return the next frame's (opcode, payload), or None if the connection ends first."""
        deadline = time.monotonic() + timeout
        while True:
            frame = self._parse()
            if frame is not None:
                return frame
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no frame from the server in time")
            self.sock.settimeout(remaining)
            try:
                chunk = self.sock.recv(1 << 16)
            except ConnectionResetError:
                return None
            if not chunk:
                return None
            self._buffer += chunk

    def close_code(self, timeout: float) -> int | None:
        """Read until the server's close frame; return its code (None: no close frame)."""
        while True:
            frame = self.read_frame(timeout)
            if frame is None:
                return None
            opcode, payload = frame
            if opcode == OP_CLOSE:
                return int(struct.unpack("!H", payload[:2])[0]) if len(payload) >= 2 else 1005

    def close(self) -> None:
        self.sock.close()

    def _parse(self) -> tuple[int, bytes] | None:
        data = self._buffer
        if len(data) < 2:
            return None
        length, offset = data[1] & 0x7F, 2
        if length == 126:
            if len(data) < 4:
                return None
            length, offset = struct.unpack("!H", data[2:4])[0], 4
        elif length == 127:
            if len(data) < 10:
                return None
            length, offset = struct.unpack("!Q", data[2:10])[0], 10
        if len(data) < offset + length:
            return None
        self._buffer = data[offset + length :]
        return data[0] & 0x0F, data[offset : offset + length]
