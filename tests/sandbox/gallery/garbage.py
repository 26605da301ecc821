"""Print endless random bytes that are mostly not UTF-8."""

import os
import sys

while True:
    sys.stdout.buffer.write(os.urandom(4096))
