/* A CheckerBoard-API front for Cake 1.22, the strength benchmark's peer (built by build.sh
   outside the repository, never shipped). It compiles the port's dll.c for its board helpers
   and replaces its getmove with one that writes the move into the board (as the API wants),
   searches to a depth when info bit 3 is set (maxtime is then the depth, as bots/programs/cbapi.py
   passes it), resets the repetition history when info bit 0 is set, and keeps Cake silent.
   No opening book (booklookup finds nothing), no endgame database. */
#define getmove cake_dll_getmove
#define logging dll_logging
#include "dll.c"
#undef getmove
#undef logging

int booklookup(struct pos *p, int color) { (void)p; (void)color; return 0; }
int initbook(char fn[1024]) { (void)fn; return 0; }

__attribute__((constructor)) static void cbcake_quiet(void) { dll_logging = 0; }

static void bitboardtoboard(const struct pos *q, int b[8][8])
{
  int i, x, y, v;
  for (x = 0; x < 8; x++)
    for (y = 0; y < 8; y++)
      b[x][y] = 0;
  for (i = 0; i < 32; i++)
    {
      y = i / 4;
      x = 2 * (i % 4) + (y & 1);
      v = 0;
      if (q->bm & (1u << i)) v = BLACK | MAN;
      if (q->bk & (1u << i)) v = BLACK | KING;
      if (q->wm & (1u << i)) v = WHITE | MAN;
      if (q->wk & (1u << i)) v = WHITE | KING;
      b[x][y] = v;
    }
}

int getmove(int b[8][8], int color, double maxtime, char str[1024], int *playnow,
            int info, int unused, CBmove *move)
{
  int value, Lfrom = 0, Lto = 0, depth_mode = (info & 8) != 0;
  struct pos after, before;
  struct move m;
  char c, Lstr[256];
  (void)unused;
  if (!init)
    init = initdll ();
  str[0] = 0;
  boardtobitboard (b, &after);
  value = cake_getmove (&after, color, depth_mode ? 1 : 0, maxtime,
                        depth_mode ? (int) maxtime : 9, 10000, str, playnow, 0, info & 1);
  boardtobitboard (b, &before);
  m.bm = after.bm ^ before.bm;
  m.bk = after.bk ^ before.bk;
  m.wm = after.wm ^ before.wm;
  m.wk = after.wk ^ before.wk;
  movetonotation (before, m, Lstr, color);
  sscanf (Lstr, "%2i%c%2i", &Lfrom, &c, &Lto);
  if (Lto < 0) Lto = -Lto;
  movetocbmove (before, m, move, color, Lfrom, Lto);
  bitboardtoboard (&after, b);
  if (value >= 4999) return WIN;
  if (value <= -4999) return LOSS;
  return UNKNOWN;
}
