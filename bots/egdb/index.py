"""Material signatures and the perfect index of checkers positions within one signature.

Every table is seen from the side to move, called the *mover*, oriented like Black: the mover's
men step toward higher square numbers and are crowned on 29-32. A position with White to move
is looked up as its mirror image (square s becomes 33 - s, colours swapped), which on the
game's bit layout is the reversal of the 35 used bits (bit b becomes bit 34 - b).

A signature (a, b, c, d) is the mover's men and kings and the opponent's men and kings. Its
positions are ranked by the combinatorial number system, men restricted to their legal
squares (the mover's men on 1-28, the opponent's on 5-32). With k the number of mover men on
the shared squares 5-28, the index is

    offset[k] + ((((r_mid * C(4, a-k) + r_top) * C(28-k, c) + r_om) * C(32-a-c, b) + r_mk)
                 * C(32-a-c-b, d) + r_ok)

where r_mid and r_top rank the mover's men on 5-28 and on 1-4, r_om ranks the opponent's men
among the squares of 5-32 the mover's men leave free, r_mk the mover's kings among the 32-a-c
squares the men leave free, and r_ok the opponent's kings among what is left. The number of
positions of a signature is the sum over k of the block sizes (`count`), so the index is a
bijection onto range(count) (tests check it).
"""

from __future__ import annotations

import itertools
from math import comb
from typing import Final, NamedTuple

import numpy as np
import numpy.typing as npt

from games.checkers import BIT_OF_SQUARE

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]


def _mask(squares: range) -> int:
    return sum(1 << BIT_OF_SQUARE[s] for s in squares)


ALL: Final = _mask(range(1, 33))
TOP: Final = _mask(range(1, 5))
"""Squares 1-4: the mover's men may stand here, the opponent's may not (crowned)."""
MID: Final = _mask(range(5, 29))
"""Squares 5-28: men of either side."""
CROWN: Final = _mask(range(29, 33))
"""Squares 29-32: the mover's crowning row."""
MOVER_MEN: Final = TOP | MID
OPPONENT_MEN: Final = MID | CROWN

_COMB: Final = np.array([[comb(n, k) for k in range(34)] for n in range(34)], dtype=np.int64)


class Signature(NamedTuple):
    """Material seen from the side to move: mover's men, kings; opponent's men, kings."""

    mover_men: int
    mover_kings: int
    opponent_men: int
    opponent_kings: int

    @property
    def pieces(self) -> int:
        """Total number of pieces."""
        return sum(self)

    @property
    def men(self) -> int:
        """Total number of men (promotions lower it)."""
        return self.mover_men + self.opponent_men

    def flipped(self) -> Signature:
        """The signature after the mover moves without capturing or crowning."""
        return Signature(self.opponent_men, self.opponent_kings, self.mover_men, self.mover_kings)

    @property
    def name(self) -> str:
        """A short name, e.g. `1201` for one man and two kings against one king."""
        return "".join(map(str, self))

    @classmethod
    def parse(cls, text: str) -> Signature:
        """Read a name such as `1201`; ValueError if it is not four digits."""
        if len(text) != 4 or not text.isdigit():
            raise ValueError(f"a signature is four digits (men, kings, men, kings), not {text!r}")
        a, b, c, d = (int(ch) for ch in text)
        return cls(a, b, c, d)


def _blocks(sig: Signature) -> list[tuple[int, int]]:
    """For each k (mover men on 5-28): (k, block size)."""
    a, b, c, d = sig
    blocks = []
    for k in range(a + 1):
        size = (
            comb(24, k)
            * comb(4, a - k)
            * comb(28 - k, c)
            * comb(32 - a - c, b)
            * comb(32 - a - c - b, d)
        )
        blocks.append((k, size))
    return blocks


def count(sig: Signature) -> int:
    """Return the number of placements of `sig` (one side to move), by the closed form."""
    return sum(size for _, size in _blocks(sig))


def signatures(pieces: int) -> list[Signature]:
    """Every signature of exactly `pieces` pieces, in dependency order (fewer men first)."""
    found = [
        Signature(a, b, c, pieces - a - b - c)
        for a in range(pieces + 1)
        for b in range(pieces + 1 - a)
        for c in range(pieces + 1 - a - b)
    ]
    return sorted(found, key=lambda s: (s.men, s))


def signatures_up_to(pieces: int) -> list[Signature]:
    """Every signature of 1 to `pieces` pieces, in an order where each needs only earlier
    ones or its own flip (captures lose pieces, crowning loses men)."""
    return [s for n in range(1, pieces + 1) for s in signatures(n)]


class _Layout:
    """Per-signature constants of the index as arrays indexed by k."""

    def __init__(self, sig: Signature) -> None:
        a, b, c, d = sig
        self.sig = sig
        blocks = _blocks(sig)
        offsets = [0]
        for _, size in blocks:
            offsets.append(offsets[-1] + size)
        self.offset = np.array(offsets[:-1], dtype=np.int64)
        self.total = offsets[-1]
        self.top_size = np.array([comb(4, a - k) for k in range(a + 1)], dtype=np.int64)
        self.om_size = np.array([comb(28 - k, c) for k in range(a + 1)], dtype=np.int64)
        self.mk_size = comb(32 - a - c, b)
        self.ok_size = comb(32 - a - c - b, d)


_LAYOUTS: dict[Signature, _Layout] = {}


def _layout(sig: Signature) -> _Layout:
    layout = _LAYOUTS.get(sig)
    if layout is None:
        layout = _LAYOUTS[sig] = _Layout(sig)
    return layout


def popcount(x: U64) -> I64:
    """Return the number of set bits of each element."""
    return np.bitwise_count(x).astype(np.int64)


def _rank(bb: U64, domain: U64 | int, pieces: int) -> I64:
    """Rank each subset `bb` of `domain` (at most `pieces` bits) among subsets of its size."""
    rank = np.zeros(bb.shape, dtype=np.int64)
    one = np.uint64(1)
    for i in range(pieces):
        low = bb & (~bb + one)
        present = low != 0
        below = popcount(np.asarray(domain & (low - one), dtype=np.uint64))
        rank += np.where(present, _COMB[below, i + 1], 0)
        bb = bb ^ low
    return rank


def rank(sig: Signature, mm: U64, mk: U64, om: U64, ok: U64) -> I64:
    """Return the index of each position (mover's men, kings; opponent's men, kings)."""
    a, b, c, d = sig
    layout = _layout(sig)
    k = popcount(mm & np.uint64(MID))
    r_mid = _rank(mm & np.uint64(MID), MID, a)
    r_top = _rank(mm & np.uint64(TOP), TOP, a)
    r_om = _rank(om, np.uint64(OPPONENT_MEN) & ~mm, c)
    free = np.uint64(ALL) & ~(mm | om)
    r_mk = _rank(mk, free, b)
    r_ok = _rank(ok, free & ~mk, d)
    index = r_mid * layout.top_size[k] + r_top
    index = index * layout.om_size[k] + r_om
    index = index * layout.mk_size + r_mk
    index = index * layout.ok_size + r_ok
    return index + layout.offset[k]


def _rank_one(bb: int, domain: int) -> int:
    rank = 0
    i = 0
    while bb:
        low = bb & -bb
        rank += comb((domain & (low - 1)).bit_count(), i + 1)
        bb ^= low
        i += 1
    return rank


def rank_one(sig: Signature, mm: int, mk: int, om: int, ok: int) -> int:
    """Return the index of one position (Python ints; the same as `rank`, for probing)."""
    a, _, c, _ = sig
    k = (mm & MID).bit_count()
    layout = _layout(sig)
    index = _rank_one(mm & MID, MID) * comb(4, a - k) + _rank_one(mm & TOP, TOP)
    index = index * comb(28 - k, c) + _rank_one(om, OPPONENT_MEN & ~mm)
    free = ALL & ~(mm | om)
    index = index * layout.mk_size + _rank_one(mk, free)
    index = index * layout.ok_size + _rank_one(ok, free & ~mk)
    return index + int(layout.offset[k])


def _subsets(domain: int, size: int) -> U64:
    bits = [1 << b for b in range(35) if domain >> b & 1]
    return np.array([sum(c) for c in itertools.combinations(bits, size)], dtype=np.uint64)


def _extend(parts: list[U64], domain: int, size: int) -> list[U64]:
    """Add one more piece group of `size` pieces on `domain`, disjoint from the others."""
    choices = _subsets(domain, size)
    occupied = np.zeros_like(parts[0]) if parts else np.zeros(1, dtype=np.uint64)
    for part in parts:
        occupied = occupied | part
    rows, cols = np.nonzero((occupied[:, None] & choices[None, :]) == 0)
    return [part[rows] for part in parts] + [choices[cols]]


def _placements(sig: Signature) -> tuple[U64, U64, U64, U64]:
    """Every placement of `sig` in no particular order: (mover men, kings, opponent men, kings)."""
    a, b, c, d = sig
    parts = [_subsets(MOVER_MEN, a)]
    parts = _extend(parts, OPPONENT_MEN, c)
    parts = _extend(parts, ALL, b)
    parts = _extend(parts, ALL, d)
    mm, om, mk, ok = parts
    return mm, mk, om, ok


def positions(sig: Signature) -> tuple[U64, U64, U64, U64]:
    """Return every position of `sig` in index order: (mover men, kings, opponent men, kings)."""
    mm, mk, om, ok = _placements(sig)
    index = rank(sig, mm, mk, om, ok)
    order = np.empty_like(index)
    order[index] = np.arange(len(index), dtype=np.int64)
    return mm[order], mk[order], om[order], ok[order]


def unrank_check(sig: Signature) -> bool:
    """True when the index of `sig` is a bijection onto range(count(sig))."""
    index = rank(sig, *_placements(sig))
    total = count(sig)
    return len(index) == total and bool(np.array_equal(np.sort(index), np.arange(total)))


_REVERSE_BYTE: Final = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], dtype=np.uint64)


def flip(bb: U64) -> U64:
    """Mirror bitboards: square s to 33 - s (bit b to 34 - b on the game's layout)."""
    out = np.zeros_like(bb)
    byte = np.uint64(255)
    for j in range(5):
        chunk = _REVERSE_BYTE[((bb >> np.uint64(8 * j)) & byte).astype(np.intp)]
        out |= chunk << np.uint64(8 * (4 - j))
    return out >> np.uint64(5)


def flip_one(bb: int) -> int:
    """Mirror one bitboard (Python int): square s to 33 - s."""
    out = 0
    while bb:
        low = bb & -bb
        out |= 1 << (34 - (low.bit_length() - 1))
        bb ^= low
    return out
