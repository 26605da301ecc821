"""Try to reach a database on the loopback and a public address; report each errno."""

import errno
import socket

for host, port in (("127.0.0.1", 5432), ("1.1.1.1", 53)):
    try:
        with socket.create_connection((host, port), timeout=2):
            print(f"{host}:{port} connected")
    except OSError as error:
        print(f"{host}:{port} failed {errno.errorcode.get(error.errno or 0, error.errno)}")
