"""Try to create each file named on the command line and print what happened to each."""

import sys

for path in sys.argv[1:]:
    try:
        with open(path, "w") as handle:
            handle.write("escaped")
        print(path, "written")
    except OSError as error:
        print(path, type(error).__name__)
