/*
 * A complete engine for Arena's engine protocol (docs/ENGINES.md), in C99.
 *
 * It plays a random legal move in each of Arena's four games (tictactoe, nim, connect4,
 * checkers), knowing their rules itself. Build and play it:
 *
 *     cc -O2 -o random_engine examples/engines/random_engine.c
 *     arena tournament checkers cmd:./random_engine random
 *
 * Options: `seed` (int): the random generator's seed, set at each new game.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MOVES 4096
#define MOVE_TEXT 64
#define LINE 65536

static char game[32];
static char heaps_option[4096] = "1,3,5,7";
static char position[LINE];
static unsigned long seed, state;
static char moves[MAX_MOVES][MOVE_TEXT];
static int count;

static void send(const char *line) {
    fputs(line, stdout);
    fputc('\n', stdout);
    fflush(stdout);
}

static unsigned long next_random(void) { /* a 64-bit LCG: enough for a random mover */
    state = state * 6364136223846793005UL + 1442695040888963407UL;
    return state >> 33;
}

static void add(const char *text) {
    if (count < MAX_MOVES) {
        snprintf(moves[count], MOVE_TEXT, "%s", text);
        count++;
    }
}

/* -- tic-tac-toe: nine cells "X...O...." row by row; a move is the cell 0-8 -------------- */

static void tictactoe(const char *start, char **played, int n) {
    char board[10] = ".........";
    int i, x = 0, o = 0;
    char text[4];
    if (start) memcpy(board, start, 9);
    for (i = 0; i < 9; i++) { x += board[i] == 'X'; o += board[i] == 'O'; }
    for (i = 0; i < n; i++) {
        board[atoi(played[i])] = x == o ? 'X' : 'O';
        if (x == o) x++; else o++;
    }
    for (i = 0; i < 9; i++)
        if (board[i] == '.') { sprintf(text, "%d", i); add(text); }
}

/* -- nim: heaps "1,3,5,7" (a "/2" suffix: the second player to move); a move is "H:K" ---- */

static void nim(const char *start, char **played, int n) {
    static long heaps[1000];
    int size = 0, i;
    long k;
    char text[MOVE_TEXT];
    const char *p = start ? start : heaps_option;
    while (*p && *p != '/' && size < 1000) {
        heaps[size++] = strtol(p, (char **)&p, 10);
        if (*p == ',') p++;
    }
    for (i = 0; i < n; i++) {
        long heap = strtol(played[i], &played[i], 10);
        heaps[heap - 1] -= strtol(played[i] + 1, NULL, 10);
    }
    for (i = 0; i < size; i++)
        for (k = 1; k <= heaps[i]; k++) { sprintf(text, "%d:%ld", i + 1, k); add(text); }
}

/* -- connect four: the columns played, 1-based ("4455"); a move is a column "1".."7" ----- */

static void connect4(const char *start, char **played, int n) {
    int height[8] = {0}, i;
    char text[2] = "0";
    if (start) for (; *start; start++) height[*start - '0']++;
    for (i = 0; i < n; i++) height[atoi(played[i])]++;
    for (i = 1; i <= 7; i++)
        if (height[i] < 6) { text[0] = (char)('0' + i); add(text); }
}

/* -- checkers: FEN "B:W21,22,K30:B1,2"; squares 1-32, Black first, toward higher numbers --- */

static char board[33]; /* '.', 'b', 'w', 'B', 'W' */
static char turn;      /* 'b' or 'w' */

static int square_of(int row, int col) {
    if (row < 0 || row > 7 || col < 0 || col > 7 || (row + col) % 2 == 0) return 0;
    return row * 4 + col / 2 + 1;
}
static int row_of(int s) { return (s - 1) / 4; }
static int col_of(int s) { int r = row_of(s); return 2 * ((s - 1) % 4) + (r % 2 == 0); }
static int last_row(char side) { return side == 'b' ? 7 : 0; }
static char enemy(void) { return turn == 'b' ? 'w' : 'b'; }

static void read_fen(const char *fen) {
    const char *p = fen;
    int i;
    for (i = 0; i <= 32; i++) board[i] = '.';
    turn = (char)(*p == 'W' || *p == 'w' ? 'w' : 'b');
    while ((p = strchr(p, ':')) != NULL) {
        char side = (char)(p[1] == 'W' || p[1] == 'w' ? 'w' : 'b');
        p += 2;
        while (*p && *p != ':') {
            int king = 0, first, last;
            if (*p == ',') { p++; continue; }
            if (*p == 'K') { king = 1; p++; }
            first = (int)strtol(p, (char **)&p, 10);
            last = first;
            if (*p == '-') last = (int)strtol(p + 1, (char **)&p, 10);
            for (i = first; i <= last && i <= 32; i++) board[i] = (char)(king ? side - 32 : side);
        }
    }
}

static void play(const char *move) {
    int path[16], n = 0, i;
    const char *p = move;
    char piece;
    while (*p && n < 16) {
        path[n++] = (int)strtol(p, (char **)&p, 10);
        if (*p == '-' || *p == 'x') p++;
    }
    piece = board[path[0]];
    board[path[0]] = '.';
    for (i = 1; i < n; i++) {
        int d = abs(path[i] - path[i - 1]);
        if (d > 5) {
            int over = square_of((row_of(path[i]) + row_of(path[i - 1])) / 2,
                                 (col_of(path[i]) + col_of(path[i - 1])) / 2);
            board[over] = '.';
        }
    }
    if (row_of(path[n - 1]) == last_row(turn) && piece >= 'a') piece = (char)(piece - 32);
    board[path[n - 1]] = piece;
    turn = enemy();
}

static int jumps_found;

static void extend(int *path, int n, int king, int *taken) {
    int dr, dc, more = 0, i;
    int row = row_of(path[n - 1]), col = col_of(path[n - 1]);
    int forward = turn == 'b' ? 1 : -1;
    for (dr = -1; dr <= 1; dr += 2) {
        if (!king && dr != forward) continue;
        for (dc = -1; dc <= 1; dc += 2) {
            int over = square_of(row + dr, col + dc), to = square_of(row + 2 * dr, col + 2 * dc);
            if (!over || !to || taken[over]) continue;
            if ((board[over] | 32) != enemy()) continue;
            if (board[to] != '.' && to != path[0]) continue;
            more = 1;
            path[n] = to;
            if (!king && row_of(to) == last_row(turn)) {
                char text[MOVE_TEXT] = "", part[8];
                for (i = 0; i <= n; i++) { sprintf(part, i ? "x%d" : "%d", path[i]); strcat(text, part); }
                add(text);
                jumps_found = 1;
            } else {
                taken[over] = 1;
                extend(path, n + 1, king, taken);
                taken[over] = 0;
            }
        }
    }
    if (!more && n > 1) {
        char text[MOVE_TEXT] = "", part[8];
        for (i = 0; i < n; i++) { sprintf(part, i ? "x%d" : "%d", path[i]); strcat(text, part); }
        add(text);
        jumps_found = 1;
    }
}

static void checkers(const char *start, char **played, int n) {
    int s, i, dr, dc, path[16], taken[33] = {0};
    read_fen(start ? start : "B:W21-32:B1-12");
    for (i = 0; i < n; i++) play(played[i]);
    jumps_found = 0;
    for (s = 1; s <= 32; s++)
        if ((board[s] | 32) == turn) { path[0] = s; extend(path, 1, board[s] < 'a', taken); }
    if (jumps_found) return;
    for (s = 1; s <= 32; s++) {
        int forward = turn == 'b' ? 1 : -1;
        if ((board[s] | 32) != turn) continue;
        for (dr = -1; dr <= 1; dr += 2) {
            if (board[s] >= 'a' && dr != forward) continue;
            for (dc = -1; dc <= 1; dc += 2) {
                int to = square_of(row_of(s) + dr, col_of(s) + dc);
                char text[MOVE_TEXT];
                if (to && board[to] == '.') { sprintf(text, "%d-%d", s, to); add(text); }
            }
        }
    }
}

/* -- the protocol ---------------------------------------------------------------------- */

static void legal_moves(void) {
    static char copy[LINE];
    static char *tokens[LINE / 2];
    char *start = NULL;
    int n = 0, first = 0, i;
    strcpy(copy, position);
    for (char *t = strtok(copy, " \t\r\n"); t; t = strtok(NULL, " \t\r\n")) tokens[n++] = t;
    if (n > 1 && strcmp(tokens[1], "fen") == 0 && n > 2) start = tokens[2];
    for (i = 0; i < n; i++) if (strcmp(tokens[i], "moves") == 0) first = i + 1;
    count = 0;
    if (!first) first = n;
    if (strcmp(game, "tictactoe") == 0) tictactoe(start, tokens + first, n - first);
    else if (strcmp(game, "nim") == 0) nim(start, tokens + first, n - first);
    else if (strcmp(game, "connect4") == 0) connect4(start, tokens + first, n - first);
    else checkers(start, tokens + first, n - first);
}

int main(void) {
    static char line[LINE];
    char out[MOVE_TEXT + 64];
    setvbuf(stdout, NULL, _IOLBF, 0);
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (strncmp(line, "arena ", 6) == 0) {
            send("id name Random (C)");
            send("id author the Arena authors");
            send("id version 1.0");
            send("option name seed type int default 0 min 0 max 1000000");
            send("games tictactoe nim connect4 checkers");
            send("arenaok 1");
        } else if (strncmp(line, "setoption name seed value ", 26) == 0) {
            seed = strtoul(line + 26, NULL, 10);
        } else if (strncmp(line, "newgame ", 8) == 0) {
            char *heaps = strstr(line, "heaps=");
            sscanf(line + 8, "%31s", game);
            if (heaps) sscanf(heaps + 6, "%4095s", heaps_option);
            state = seed;
        } else if (strcmp(line, "isready") == 0) {
            send("readyok");
        } else if (strncmp(line, "position ", 9) == 0) {
            strcpy(position, line);
        } else if (strncmp(line, "go", 2) == 0) {
            legal_moves();
            if (count == 0) { send("error no legal move in this position"); continue; }
            sprintf(out, "info depth 1 nodes %d score 0", count);
            send(out);
            sprintf(out, "bestmove %s", moves[next_random() % (unsigned long)count]);
            send(out);
        } else if (strcmp(line, "quit") == 0) {
            break;
        }
    }
    return 0;
}
