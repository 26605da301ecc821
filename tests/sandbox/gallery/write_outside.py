"""Try to create each file named on the command line; print what happened (an errno name)."""

import errno
import sys

for path in sys.argv[1:]:
    try:
        with open(path, "w") as handle:
            handle.write("escaped")
        print(path, "written")
    except OSError as error:
        print(path, errno.errorcode.get(error.errno or 0, type(error).__name__))
