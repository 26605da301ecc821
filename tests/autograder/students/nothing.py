"""A student's program that reads its arguments and writes nothing."""

import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--inputfile", required=True)
parser.add_argument("--outputfile", required=True)
parser.parse_args()
