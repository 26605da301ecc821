"""A small CheckerBoard-API engine in C, compiled for the tests of bots.programs.cbapi.

It works on CheckerBoard's board[x][y] alone (Black's home row at y = 0, Black men moving
to higher y, as the API's documentation and Fierz's simplech have it) and knows no square
numbers: it generates every legal move (captures first, whole multi-jumps, crowning ends a
move) and plays the one a hash of the board picks, so games vary yet repeat. Its status
text is `value C depth D nodes N`, C the number of calls this loaded copy has had (its
global state), D the depth it was asked for with info bit 3 (else 1), N the number of legal
moves, and ` reset` when info bit 0 is set. It fills the CBmove (from, to, every landing
square in path).

Compile-time variants: BROKEN returns a board with one opponent piece changed to its own
colour; CRASH aborts on its second call; STALL waits for playnow then plays; HANG never
returns; NO_PATH leaves the CBmove empty.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

SOURCE = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WHITE 1
#define BLACK 2
#define MAN 4
#define KING 8

struct coor { int x, y; };
struct CBmove {
    int jumps, newpiece, oldpiece;
    struct coor from, to, path[12], del[12];
    int delpiece[12];
};

typedef struct { int b[8][8]; int n; struct coor at[13]; } Line;

static Line moves[512];
static int count;
static int calls;

static int on_board(int x, int y) { return x >= 0 && x < 8 && y >= 0 && y < 8; }

static void record(int b[8][8], const Line *line) {
    if (count < 512) {
        moves[count] = *line;
        memcpy(moves[count].b, b, sizeof moves[count].b);
        count++;
    }
}

static int forward(int colour) { return colour == BLACK ? 1 : -1; }

static void jumps(int b[8][8], int x, int y, int piece, int colour, Line *line) {
    int dx, dy, found = 0;
    for (dy = -1; dy <= 1; dy += 2) {
        if (!(piece & KING) && dy != forward(colour)) continue;
        for (dx = -1; dx <= 1; dx += 2) {
            int mx = x + dx, my = y + dy, tx = x + 2 * dx, ty = y + 2 * dy;
            int mid, placed;
            Line next;
            if (!on_board(tx, ty) || b[tx][ty] != 0 || !(b[mx][my] & (colour ^ 3))) continue;
            found = 1;
            mid = b[mx][my];
            placed = piece;
            if (!(piece & KING) && ty == (colour == BLACK ? 7 : 0)) placed = colour | KING;
            b[mx][my] = 0;
            b[x][y] = 0;
            b[tx][ty] = placed;
            next = *line;
            next.at[next.n++] = (struct coor){tx, ty};
            if (placed != piece) record(b, &next);
            else jumps(b, tx, ty, piece, colour, &next);
            b[tx][ty] = 0;
            b[x][y] = piece;
            b[mx][my] = mid;
        }
    }
    if (!found && line->n > 1) record(b, line);
}

static void generate(int b[8][8], int colour) {
    int x, y, dx, dy;
    count = 0;
    for (x = 0; x < 8; x++)
        for (y = 0; y < 8; y++)
            if (b[x][y] & colour) {
                Line line;
                line.n = 1;
                line.at[0] = (struct coor){x, y};
                jumps(b, x, y, b[x][y], colour, &line);
            }
    if (count) return;
    for (x = 0; x < 8; x++)
        for (y = 0; y < 8; y++) {
            int piece = b[x][y];
            if (!(piece & colour)) continue;
            for (dy = -1; dy <= 1; dy += 2) {
                if (!(piece & KING) && dy != forward(colour)) continue;
                for (dx = -1; dx <= 1; dx += 2) {
                    int tx = x + dx, ty = y + dy, placed = piece;
                    Line line;
                    if (!on_board(tx, ty) || b[tx][ty] != 0) continue;
                    if (!(piece & KING) && ty == (colour == BLACK ? 7 : 0)) placed = colour | KING;
                    b[x][y] = 0;
                    b[tx][ty] = placed;
                    line.n = 2;
                    line.at[0] = (struct coor){x, y};
                    line.at[1] = (struct coor){tx, ty};
                    record(b, &line);
                    b[tx][ty] = 0;
                    b[x][y] = piece;
                }
            }
        }
}

int getmove(int board[8][8], int color, double maxtime, char str[1024], int *playnow,
            int info, int moreinfo, struct CBmove *move) {
    unsigned hash = 0;
    int x, y, i, pick;
    (void)moreinfo;
    calls++;
#ifdef CRASH
    if (calls == 2) abort();
#endif
#ifdef HANG
    for (;;) {}
#endif
#ifdef STALL
    while (!*(volatile int *)playnow) {}
#endif
    generate(board, color);
    snprintf(str, 1024, "value %d depth %d nodes %d%s", calls, (info & 8) ? (int)maxtime : 1,
             count, (info & 1) ? " reset" : "");
    if (!count) return 2;
    for (x = 0; x < 8; x++)
        for (y = 0; y < 8; y++) hash = hash * 31u + (unsigned)board[x][y];
    pick = (int)(hash % (unsigned)count);
    memcpy(board, moves[pick].b, sizeof moves[pick].b);
    memset(move, 0, sizeof *move);
#ifndef NO_PATH
    move->from = moves[pick].at[0];
    move->to = moves[pick].at[moves[pick].n - 1];
    for (i = 1; i < moves[pick].n; i++) move->path[i - 1] = moves[pick].at[i];
    move->jumps = moves[pick].n - 1;
#endif
#ifdef BROKEN
    for (x = 0; x < 8; x++)
        for (y = 0; y < 8; y++)
            if (board[x][y] & (color ^ 3)) {
                board[x][y] = color | MAN;
                return 3;
            }
#endif
    return 3;
}

int enginecommand(char command[256], char reply[1024]) {
    if (strcmp(command, "name") == 0) { strcpy(reply, "test engine"); return 1; }
    strcpy(reply, "?");
    return 0;
}
"""

VARIANTS = ("plain", "BROKEN", "CRASH", "STALL", "HANG", "NO_PATH")


def compile_engines(directory: Path) -> dict[str, Path]:
    """Compile every variant of the engine into `directory`; skip the test without gcc."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc is needed to build the test engine")
    source = directory / "engine.c"
    source.write_text(SOURCE)
    built = {}
    for variant in VARIANTS:
        target = directory / f"{variant.lower()}.so"
        flags = [] if variant == "plain" else [f"-D{variant}"]
        subprocess.run(
            [gcc, "-O2", "-fPIC", "-shared", *flags, "-o", target, source],
            check=True,
        )
        built[variant.lower()] = target
    return built
