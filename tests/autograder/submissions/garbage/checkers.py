"""Broken submission: writes something that is not a sequence of boards."""

import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--inputfile", required=True)
parser.add_argument("--outputfile", required=True)
args = parser.parse_args()
with open(args.outputfile, "w", encoding="utf-8") as file:
    file.write("red wins!\nmoves: 3\n")
