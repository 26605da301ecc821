"""Broken submission: takes its files from fixed places in sys.argv, not after the options."""

import sys

with open(sys.argv[1], encoding="utf-8") as file:
    board = file.read()
with open(sys.argv[2], "w", encoding="utf-8") as file:
    file.write(board)
