"""Retrograde analysis of one material signature (and its flip), vectorised with numpy.

Values are stored per position, from the side to move, as one small integer `v`:

- 0: a draw (neither side can force a win; the 80-ply rule and repetition are ignored);
- v odd: the side to move loses in v - 1 plies (0: it has no move now);
- v even: the side to move wins in v - 1 plies.

A distance is the length of the game under best play: the winner ends it as fast as possible,
the loser makes it last as long as possible, counting every ply (captures and man moves
included) until the loser has no legal move (no pieces left or all blocked).

The algorithm: positions with a capture are decided at once from the smaller signatures (a
capture is compulsory and removes a piece; a multi-jump is followed to its end). The others
are decided layer by layer: after layer t every position whose distance is t is known. A
position is won in t (t odd) when a child is lost in t - 1, lost in t (t even) when every
child is known won and the longest of those wins is t - 1. Children outside the pair (a man
crowned) are known from the start. A position is looked at only in the layer after one of
its children was decided (the children are inverted once into lists of parents) or at the
layer a known child's result would decide it, so the work is proportional to the moves, not
to the moves times the layers. Whatever is undecided when nothing is left to look at is a draw.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

import numpy as np
import numpy.typing as npt

from bots.egdb.index import ALL, CROWN, U64, Signature, count, flip, popcount, positions, rank

BIG: Final = 1000
"""Scores inside the solver: a win in d plies is BIG - d, a loss in d plies d - BIG."""
NONE: Final = -4 * BIG
UNKNOWN: Final = 256
ABSENT: Final = 257
MAX_DISTANCE: Final = 254
"""The longest distance a one-byte value can hold (v = d + 1 <= 255)."""

I16 = npt.NDArray[np.int16]
I64 = npt.NDArray[np.int64]
Tables = Mapping[Signature, npt.NDArray[np.uint8]]

_ONE = np.uint64(1)
_ALL = np.uint64(ALL)
_CROWN = np.uint64(CROWN)


def child_score(v: npt.NDArray[np.integer]) -> I64:
    """Turn children's values (their side to move) into scores for the parent."""
    w = v.astype(np.int64)
    return np.where(w == 0, 0, np.where(w & 1 == 1, BIG - w, w - BIG))


def score_value(score: I64) -> I64:
    """Turn parent scores back into stored values."""
    return np.where(score > 0, BIG - score + 1, np.where(score < 0, BIG + score + 1, 0))


def _shift(bb: U64, d: int) -> U64:
    out = (bb << np.uint64(d)) if d > 0 else (bb >> np.uint64(-d))
    return out & _ALL


def _nth_bit(bb: U64, n: int) -> U64:
    for _ in range(n):
        bb = bb & (bb - _ONE)
    return bb & (~bb + _ONE)


def lookup(tables: Tables, mm: U64, mk: U64, om: U64, ok: U64) -> I64:
    """Return the stored values of positions of any signatures (mover-oriented bitboards).

    A side to move with no pieces has lost (value 1); every other signature must be in
    `tables`.
    """
    key = popcount(mm) * 1000 + popcount(mk) * 100 + popcount(om) * 10 + popcount(ok)
    out = np.empty(len(mm), dtype=np.int64)
    for code in np.unique(key):
        rows = np.nonzero(key == code)[0]
        c = int(code)
        sig = Signature(c // 1000, c // 100 % 10, c // 10 % 10, c % 10)
        if sig.mover_men == 0 and sig.mover_kings == 0:
            out[rows] = 1
            continue
        index = rank(sig, mm[rows], mk[rows], om[rows], ok[rows])
        out[rows] = tables[sig][index]
    return out


def _finish(tables: Tables, mm: U64, mk: U64, om: U64, ok: U64) -> I64:
    """Score of each position after the mover's move (the opponent to move next)."""
    return child_score(lookup(tables, flip(om), flip(ok), flip(mm), flip(mk)))


def _continue_jumps(
    tables: Tables, mm: U64, mk: U64, om: U64, ok: U64, piece: U64, king: bool
) -> I64:
    """Best score once `piece` has jumped: it jumps on while it can, else the move ends."""
    best = np.full(len(mm), NONE, dtype=np.int64)
    for d in (4, 5, -4, -5) if king else (4, 5):
        rows, state, land = _jumps(mm, mk, om, ok, piece, d, king)
        if len(rows):
            best[rows] = np.maximum(best[rows], _after_jump(tables, state, land, king))
    done = np.nonzero(best == NONE)[0]
    if len(done):
        best[done] = _finish(tables, mm[done], mk[done], om[done], ok[done])
    return best


def _jumps(
    mm: U64, mk: U64, om: U64, ok: U64, piece: U64, d: int, king: bool
) -> tuple[I64, tuple[U64, U64, U64, U64], U64]:
    """The rows where `piece` can jump in direction `d`, their positions after it, and where
    the piece lands (not yet crowned)."""
    mid = _shift(piece, d)
    land = _shift(piece, 2 * d)
    empty = _ALL & ~(mm | mk | om | ok)
    legal = ((mid & (om | ok)) != 0) & ((land & empty) != 0)
    rows = np.nonzero(legal)[0]
    mid, land, p = mid[rows], land[rows], piece[rows]
    om2 = om[rows] & ~mid
    ok2 = ok[rows] & ~mid
    if king:
        state = (mm[rows], mk[rows] ^ p ^ land, om2, ok2)
    else:
        state = (mm[rows] ^ p ^ land, mk[rows], om2, ok2)
    return rows, state, land


def _after_jump(tables: Tables, state: tuple[U64, U64, U64, U64], land: U64, king: bool) -> I64:
    mm, mk, om, ok = state
    if king:
        return _continue_jumps(tables, mm, mk, om, ok, land, True)
    crowned = (land & _CROWN) != 0
    out = np.empty(len(mm), dtype=np.int64)
    c = np.nonzero(crowned)[0]
    if len(c):
        # A man crowned by a jump ends the move there.
        out[c] = _finish(tables, mm[c] ^ land[c], mk[c] | land[c], om[c], ok[c])
    m = np.nonzero(~crowned)[0]
    if len(m):
        out[m] = _continue_jumps(tables, mm[m], mk[m], om[m], ok[m], land[m], False)
    return out


class _Side:
    """One signature of the pair: its positions' captures decided, its quiet moves listed."""

    def __init__(self, sig: Signature, tables: Tables, partner_offset: int) -> None:
        a, b, c, d = sig
        mm, mk, om, ok = positions(sig)
        n = len(mm)
        self.n = n
        empty = _ALL & ~(mm | mk | om | ok)
        capture_best = np.full(n, NONE, dtype=np.int64)
        for is_king, group, size in ((False, mm, a), (True, mk, b)):
            for i in range(size):
                piece = _nth_bit(group, i)
                for dd in (4, 5, -4, -5) if is_king else (4, 5):
                    rows, state, land = _jumps(mm, mk, om, ok, piece, dd, is_king)
                    if len(rows):
                        score = _after_jump(tables, state, land, is_king)
                        capture_best[rows] = np.maximum(capture_best[rows], score)
        self.captures = capture_best != NONE
        self.capture_value = score_value(capture_best)
        # Quiet moves of the positions without a capture.
        quiet = np.nonzero(~self.captures)[0]
        self.quiet = quiet
        qmm, qmk, qom, qok, qempty = mm[quiet], mk[quiet], om[quiet], ok[quiet], empty[quiet]
        partner = sig.flipped()
        crowned_sig = Signature(c, d, a - 1, b + 1) if a else None
        const = np.full(len(quiet), NONE, dtype=np.int64)
        moves = np.zeros(len(quiet), dtype=np.int64)
        slots: list[I64] = []
        for is_king, group, size in ((False, qmm, a), (True, qmk, b)):
            for i in range(size):
                piece = _nth_bit(group, i)
                for dd in (4, 5, -4, -5) if is_king else (4, 5):
                    to = _shift(piece, dd) & qempty
                    legal = to != 0
                    moves += legal
                    column = np.full(len(quiet), -1, dtype=np.int64)
                    if is_king:
                        rows = np.nonzero(legal)[0]
                        nmk = qmk[rows] ^ piece[rows] ^ to[rows]
                        column[rows] = partner_offset + rank(
                            partner, flip(qom[rows]), flip(qok[rows]), flip(qmm[rows]), flip(nmk)
                        )
                    else:
                        crown = legal & ((to & _CROWN) != 0)
                        rows = np.nonzero(legal & ~crown)[0]
                        nmm = qmm[rows] ^ piece[rows] ^ to[rows]
                        column[rows] = partner_offset + rank(
                            partner, flip(qom[rows]), flip(qok[rows]), flip(nmm), flip(qmk[rows])
                        )
                        rows = np.nonzero(crown)[0]
                        if len(rows) and crowned_sig is not None:
                            v = tables[crowned_sig][
                                rank(
                                    crowned_sig,
                                    flip(qom[rows]),
                                    flip(qok[rows]),
                                    flip(qmm[rows] ^ piece[rows]),
                                    flip(qmk[rows] | to[rows]),
                                )
                            ]
                            const[rows] = np.maximum(const[rows], child_score(v))
                    slots.append(column)
        self.children = np.stack(slots, axis=1) if slots else np.zeros((len(quiet), 0), np.int64)
        self.const = const
        self.blocked = moves == 0


class _Parents:
    """The rows whose quiet moves lead to each position (children inverted, CSR layout)."""

    def __init__(self, children: npt.NDArray[np.int32], total: int) -> None:
        flat = children.ravel()
        present = np.nonzero(flat < total)[0]
        targets = flat[present]
        order = np.argsort(targets, kind="stable")
        width = children.shape[1]
        self.rows = (present[order] // width).astype(np.int64)
        self.start = np.zeros(total + 2, dtype=np.int64)
        np.cumsum(np.bincount(targets, minlength=total + 1), out=self.start[1:])

    def of(self, ids: I64) -> I64:
        """Return the rows (with repeats) having a child among `ids`."""
        first = self.start[ids]
        lengths = self.start[ids + 1] - first
        n = int(lengths.sum())
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        shift = np.repeat(first - (np.cumsum(lengths) - lengths), lengths)
        found: I64 = self.rows[shift + np.arange(n)]
        return found


def solve_pair(
    sig: Signature,
    tables: Tables,
    *,
    layer: Callable[[int, int], None] | None = None,
) -> dict[Signature, npt.NDArray[np.uint8]]:
    """Solve `sig` and its flip together (they are each other's children); return both tables.

    `tables` holds every signature a capture or a crowning leads to. `layer(t, left)` is
    called after each layer with the number of positions still undecided.
    """
    partner = sig.flipped()
    n0 = count(sig)
    same = partner == sig
    sides = [_Side(sig, tables, 0 if same else n0)]
    if not same:
        sides.append(_Side(partner, tables, 0))
    total = sum(s.n for s in sides)
    value = np.full(total, -1, dtype=np.int64)
    undecided_rows: list[I64] = []
    children_parts: list[I64] = []
    const_parts: list[I64] = []
    offset = 0
    for side in sides:
        ids = offset + np.arange(side.n, dtype=np.int64)
        value[ids[side.captures]] = side.capture_value[side.captures]
        quiet_ids = ids[side.quiet]
        blocked = side.blocked & (side.const == NONE)
        value[quiet_ids[blocked]] = 1
        open_ = ~blocked
        undecided_rows.append(quiet_ids[open_])
        children_parts.append(side.children[open_])
        const_parts.append(side.const[open_])
        offset += side.n
    rows = np.concatenate(undecided_rows)
    width = max(p.shape[1] for p in children_parts)
    # Children as int32 indexes; "no move in this slot" points one past the end, to a value
    # that reads as known and scores below everything.
    children = np.concatenate(
        [np.pad(p, ((0, 0), (0, width - p.shape[1])), constant_values=-1) for p in children_parts]
    ).astype(np.int32)
    children[children < 0] = total
    del children_parts
    const = np.concatenate(const_parts).astype(np.int16)
    # Values during the loop: 0-255 as stored, UNKNOWN while undecided, ABSENT for no move.
    value_ext = np.append(np.where(value < 0, UNKNOWN, value), ABSENT).astype(np.int16)
    scores_of = np.full(ABSENT + 1, NONE, dtype=np.int16)
    scores_of[:256] = child_score(np.arange(256))
    parents = _Parents(children, total)
    # When to look at a row: after a child is decided (its parents are looked at in the next
    # layer), and at the layer a crowning move's known result would decide it.
    wake: dict[int, list[I64]] = {}

    def at(layer_: int, ids: I64) -> None:
        if len(ids):
            wake.setdefault(layer_, []).append(ids)

    # A crowning move's score is the parent's own distance if it is the best move (1 for a
    # draw, which needs only every child known).
    distance_of = np.where(const == 0, 1, BIG - np.abs(const.astype(np.int64)))
    for d in np.unique(distance_of[const != NONE]):
        at(int(d), np.nonzero((const != NONE) & (distance_of == d))[0])
    known = np.nonzero(value >= 0)[0]
    known_distance = np.maximum(value[known] - 1, 0)
    for d in np.unique(known_distance):
        at(int(d) + 1, parents.of(known[known_distance == d]))
    open_rows = np.ones(len(rows), dtype=bool)
    t = 0
    while wake:
        t += 1
        if t > MAX_DISTANCE:
            raise OverflowError(f"{sig.name}: a distance beyond {MAX_DISTANCE} plies")
        candidates = np.unique(np.concatenate(wake.pop(t, [np.zeros(0, np.int64)])))
        candidates = candidates[open_rows[candidates]]
        if len(candidates):
            v = value_ext[children[candidates]]
            all_known = (v != UNKNOWN).all(axis=1)
            best = np.maximum(scores_of[v].max(axis=1), const[candidates])
            win = best == BIG - t
            draw = all_known & (best == 0)
            decided = win | (all_known & (best == t - BIG)) | draw
            chosen = candidates[decided]
            open_rows[chosen] = False
            ids = rows[chosen]
            value_ext[ids] = np.where(draw[decided], 0, t + 1)
            # A draw decides nothing but "all children known": its parents look at it now.
            at(t + 1, parents.of(ids[~draw[decided]]))
            at(t + 1, parents.of(ids[draw[decided]]))
        if layer is not None:
            layer(t, int(open_rows.sum()))
    rows = rows[open_rows]
    value_ext[rows] = 0
    final = value_ext[:-1].astype(np.uint8)
    out = {sig: final[:n0]}
    if not same:
        out[partner] = final[n0:]
    return out
