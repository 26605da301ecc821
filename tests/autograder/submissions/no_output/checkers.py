"""Broken submission: prints the board to stdout and writes no output file."""

import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--inputfile", required=True)
parser.add_argument("--outputfile", required=True)
args = parser.parse_args()
with open(args.inputfile, encoding="utf-8") as file:
    print(file.read())
