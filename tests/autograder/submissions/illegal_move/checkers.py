"""Broken submission: copies the input board, then "moves" to a board with every piece gone."""

import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--inputfile", required=True)
parser.add_argument("--outputfile", required=True)
args = parser.parse_args()
with open(args.inputfile, encoding="utf-8") as file:
    board = file.read().strip()
empty = "\n".join("." * 8 for _ in range(8))
with open(args.outputfile, "w", encoding="utf-8") as file:
    file.write(board + "\n\n" + empty + "\n")
