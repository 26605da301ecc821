"""Broken submission: reads the board, then fails with an exception."""

import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--inputfile", required=True)
parser.add_argument("--outputfile", required=True)
args = parser.parse_args()
with open(args.inputfile, encoding="utf-8") as file:
    board = file.read()


def parse(text: str) -> None:
    raise RuntimeError("board parser failed")


parse(board)
