"""Fork without end; every child tries to leave the process group and keeps forking.

Each process says once, on stderr, that a fork was refused: the processes limit held it.
"""

import contextlib
import os
import time

told = False
while True:
    try:
        if os.fork() == 0:
            told = False
            with contextlib.suppress(OSError):
                os.setsid()
    except OSError as error:
        if not told:
            told = True
            with contextlib.suppress(OSError):
                os.write(2, f"fork refused: {error.strerror}\n".encode())
        time.sleep(0.001)
