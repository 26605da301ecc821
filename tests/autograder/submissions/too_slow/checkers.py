"""Slow submission: correct, but stalls on puzzles of 9 plies or more.

The test copies Arena's reference solution next to this file as reference_solver.py.
"""

import argparse
import time

import reference_solver

parser = argparse.ArgumentParser()
parser.add_argument("--inputfile", required=True)
parser.add_argument("--outputfile", required=True)
args = parser.parse_args()
with open(args.inputfile, encoding="utf-8") as file:
    board = reference_solver.read_board(file.read())
line = reference_solver.solve(board)
if len(line) - 1 >= 9:
    time.sleep(600)
with open(args.outputfile, "w", encoding="utf-8") as file:
    file.write("\n\n".join(reference_solver.format_board(b) for b in line) + "\n")
