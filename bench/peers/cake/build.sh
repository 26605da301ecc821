#!/bin/sh
# Build Cake 1.22 (Martin Fierz; Unix port by Peter Chiochetti) as a CheckerBoard-API library
# for the strength benchmark (bench/strength.py engine --engine PATH/cake.so). Cake is GPL v2
# or later: it is built outside the repository from its public sources and never shipped.
#
#   sh bench/peers/cake/build.sh [CAPERS_CHECKOUT] [OUT_DIR]
#
# CAPERS_CHECKOUT: a checkout of github.com/hungerburg/capers (cloned to a temporary directory
# when not given); the build uses its commit below. OUT_DIR (default
# ${XDG_CACHE_HOME:-$HOME/.cache}/arena/peers/cake) receives cake.so.
set -eu
COMMIT=90cf1769b8ae935e304994f0f3155c218c42ce39
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${2:-${XDG_CACHE_HOME:-$HOME/.cache}/arena/peers/cake}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
if [ $# -ge 1 ]; then
    SOURCE=$1
else
    SOURCE=$WORK/capers
    git clone --quiet https://github.com/hungerburg/capers "$SOURCE"
fi
mkdir -p "$WORK/src" "$OUT"
git -C "$SOURCE" archive "$COMMIT" | tar -x -C "$WORK/src"
# No opening book (book.c is left out: the shim's booklookup finds nothing) and no endgame
# database (Cake's switches.h compiles it out on 64-bit targets; db.c is left out).
gcc -O2 -fPIC -shared -w -DSYS_UNIX -DVERSION=1.22 \
    -DDBINI='"/nonexistent/db.ini"' -DXBOOK='"/nonexistent/xbook.bin"' -I"$WORK/src/cake" \
    "$HERE/cbcake.c" "$WORK/src/cake/cakepp.c" "$WORK/src/cake/movegen.c" -o "$OUT/cake.so"
echo "$OUT/cake.so"
