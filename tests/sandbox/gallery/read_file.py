"""Try to read the file named on the command line and print what happened."""

import sys

try:
    with open(sys.argv[1]) as handle:
        print("read:", handle.read())
except OSError as error:
    print(type(error).__name__, error)
