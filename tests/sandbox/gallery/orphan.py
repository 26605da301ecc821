"""Start a daemon (double fork, new session) that outlives the program, then exit at once."""

import os
import time

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(60)
    os._exit(0)
print("parent done")
