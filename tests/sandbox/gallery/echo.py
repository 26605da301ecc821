"""A well-behaved submission: copy stdin to stdout, upper-cased."""

import sys

sys.stdout.write(sys.stdin.read().upper())
