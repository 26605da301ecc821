"""The house engine's checkers search compiled: negamax alpha-beta, node for node
bots.engine.search's.

`bots.engine.search.AlphaBetaEngine` stays the reference; this is the same algorithm on the core's
bitboards (bots.core.checkers: move generation, making moves, the draw rules), so that for the
same position, history, depth, table and ordering state it visits the same nodes in the same
order and returns the same score, move, principal variation and counts:

- depth semantics: `left` plies, then a quiescence extension while a capture is pending
  (left stays 0, a non-quiet node is never evaluated, except at MAX_PLY);
- terminal scores of bots.scoring.ENGINE (a loss `ply - WIN`), draws by the 80-ply rule and
  threefold repetition exactly as games.checkers, the root's history included;
- the transposition table of bots.engine.table: the key of
  bots.evaluation.checkers_endings.table_key (the capture-free plies added where they matter),
  its slot `hash(key) & mask` computed as CPython hashes a tuple of small ints (so both tables
  collide alike), EXACT / LOWER / UPPER,
  only an entry of exactly this depth ends a node, mate scores stored from the node, and
  depth-preferred replacement with generations;
- move ordering: the table move, captures by pieces taken x100 and crowning +10 (weighted
  10,000,000 each), killers (+1,000,000), history (left * left per cut-off), ties in
  generation order;
- the evaluations `material`, `positional` / `positional_v1` / `positional_tuned` (one
  function under a weight table) and `endings` (positional plus the ending features, scored by
  the rules), in integers, as bots.evaluation.checkers and checkers_endings fuse them.

Everything lives in one int64 buffer per engine (`new_buffer`): the positions since the last
capture or man move (slot i at 3 i, as bots.core.checkers.is_drawn reads them), the control
words (counters, node limit, stop flag), the weights, killers and history, the principal
variation table, the move order and move areas per ply, and the transposition table. The
stop flag is written by another thread while the search runs without the GIL; it is read
every CHECK_EVERY nodes, and an aborted search unwinds with ABORTED set.

Designed for later options (principal variation search, aspiration windows, reductions):
the node-for-node mode is the default of every control word, and a new technique gets a word
of its own, off unless set.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit, types

from bots.core import search as shared
from bots.core.bits import popcount as _popcount
from bots.core.checkers import (
    AREA,
    MAX_LANDINGS,
    MAX_MOVES,
    REC,
    _child,
    _jumpers,
    generate,
    is_drawn,
)
from bots.core.search import (
    INF,
    KILLER_BONUS,
    MATE_ZONE,
    NO_CUT,
    STATIC_WEIGHT,
    TT_MOVE_BONUS,
    enter,
    entry_depth,
    entry_move,
    insert,
    raise_pv,
    remember_killer,
    start_search,
    table_cut,
    table_store,
    uncounted,
)
from bots.evaluation import checkers as base
from bots.evaluation import checkers_endings as endings
from bots.evaluation import checkers_engine as engine_features
from bots.scoring import WIN
from games.checkers import (
    BLACK_CROWN,
    DRAW_PLIES,
    VALID,
    WHITE_CROWN,
    CheckersState,
)

Buffer = npt.NDArray[np.int64]
i8 = types.int64
i8a = types.Array(types.int64, 1, "C")

MAX_PLY = 128
"""Deepest ply (bots.engine.search.MAX_PLY): a node there is evaluated even with a capture
pending."""
LMR_DEPTH = 3
"""Plies left from which late moves are reduced (by one ply)."""
LMR_MOVES = 3
"""Moves searched in full before the reductions start."""
TRUNCATE_MARGIN = 110
"""How far outside the window a node's material must lie to be truncated (a man is 100)."""
TRUNCATE_KING = 130
"""A king in the truncation's material count."""
EXTEND_WINDOW = 130
"""With EXTEND 2: how far outside the window the material may lie for the extension."""

# -- the buffer's layout ------------------------------------------------------------------------

HISTORY_SLOTS = DRAW_PLIES + MAX_PLY + 8
"""Positions of the draw rules' history: the root's (at most DRAW_PLIES + 1 matter) and the
search's, one a ply."""
CONTROL = 3 * HISTORY_SLOTS
"""The control words of bots.core.search, at CONTROL + each; this search's own follow."""
STOP = CONTROL + shared.STOP
NODES = CONTROL + shared.NODES
EVALUATIONS = CONTROL + shared.EVALUATIONS
TT_HITS = CONTROL + shared.TT_HITS
CUTOFFS = CONTROL + shared.CUTOFFS
NODE_LIMIT = CONTROL + shared.NODE_LIMIT
ABORTED = CONTROL + shared.ABORTED
GENERATION = CONTROL + shared.GENERATION
TT_MASK = CONTROL + shared.TT_MASK
USE_TT = CONTROL + shared.USE_TT
ORDERING = CONTROL + shared.ORDERING
PVS = CONTROL + 11
"""Engine mode: principal variation search (a null window after the first move, re-searched
when it fails high); 0 keeps the node-for-node search."""
LMR = CONTROL + 12
"""Engine mode, with PVS: late move reductions (LMR_DEPTH, LMR_MOVES); 0: none."""
ROOT_MOVE = CONTROL + 13
"""The root move that last raised alpha in this search, its value known (-1: none yet): an
aborted iteration's best move so far."""
ROOT_SCORE = CONTROL + 14
"""ROOT_MOVE's score."""
EXTEND = CONTROL + 15
"""Engine mode: a quiet node at depth 0 where the side not to move could capture (a piece of
the side to move hangs) is searched one ply more instead of evaluated, up to ply 2 x the
root's depth; 2: the same, only when the node's material (man 100, king TRUNCATE_KING) lies
within EXTEND_WINDOW of the window; 0: never."""
ROOT_DEPTH = CONTROL + 16
"""The depth the root was asked for (EXTEND's limit)."""
TRUNCATE = CONTROL + 17
"""Engine mode: a quiet node below the root with 2 or more plies left and more than
ENDGAME_PIECES pieces whose material (man 100, king TRUNCATE_KING) lies more than
TRUNCATE_MARGIN outside the window is searched one ply shallower (never in endings, where the
side ahead must see its win through); 0: never."""
SINGLE = CONTROL + 18
"""Engine mode: a node below the root with plies left and a single legal move searches that
move without spending a ply (up to ply 2 x the root's depth); 0: never."""
DEEPER = CONTROL + 19
"""Engine mode: a table entry searched deeper than the node needs ends the node too (its
bound or exact score); 0: only an entry of exactly the node's depth does, as bots.engine.search."""
CONTROL_WORDS = 20

WEIGHTS = CONTROL + CONTROL_WORDS
W_KIND = 0
"""0 material, 1 positional under the weights, 2 positional plus the ending features."""
W_MAN, W_KING, W_ADVANCE, W_BACK, W_CENTRE, W_MOBILITY, W_TRAPPED, W_APPROACH, W_REFUGE = range(
    1, 10
)
W_TRADE, W_PREY_CORNER, W_PREY_MOBILITY, W_HUNTER_CENTRE, W_PRESSURE = range(10, 15)
W_RUNAWAY, W_BRIDGE, W_EXCHANGE, W_THREAT = range(15, 19)
W_ROWS = 19
"""Kind 3: the men_row_R weights, one word a row of checkers_engine.MAN_ROWS."""
W_DOG_HOLES, W_KING_CENTRE, W_CROWDED = range(24, 27)
"""Kind 3 (`engine`): the features bots.evaluation.checkers_engine adds, W_RUNAWAY on."""
WEIGHT_WORDS = 32

KILLERS = WEIGHTS + WEIGHT_WORDS
"""Two killer steps per ply (from bit * 64 + to bit; -1 none)."""
HISTORY = KILLERS + 2 * (MAX_PLY + 1)
"""History per side and step: side * 4096 + from bit * 64 + to bit."""
PV_STRIDE = MAX_PLY + 2
PV_LENGTH = HISTORY + 2 * 4096
PV = PV_LENGTH + PV_STRIDE
"""The triangular principal variation: per ply, the generation indexes of its moves."""
ORDER = PV + PV_STRIDE * PV_STRIDE
"""Per ply: the order of its moves (MAX_MOVES indexes), then their ordering values."""
MOVES = ORDER + (MAX_PLY + 1) * 2 * MAX_MOVES
"""Per ply: a move area of bots.core.checkers."""
TABLE = MOVES + (MAX_PLY + 2) * AREA
ENTRY = 4
"""Words per table slot: two of key, the data word of bots.core.search (the move a generation
index), the generation (0: empty)."""

# CPython's hash of a tuple (xxHash's primes and rounds, Objects/tupleobject.c since 3.8), in
# wrapping int64 arithmetic: a small non-negative int hashes to itself.
_XXPRIME_1 = 11400714785074694791 - (1 << 64)
_XXPRIME_2 = 14029467366897019727 - (1 << 64)
_XXPRIME_5 = 2870177450012600261
_LOW_31 = (1 << 31) - 1
_LOW_32 = (1 << 32) - 1

_BLACK_ADVANCE = base._BLACK_ADVANCE
_WHITE_ADVANCE = base._WHITE_ADVANCE
_B1, _B2, _B4 = _BLACK_ADVANCE
_W1, _W2, _W4 = _WHITE_ADVANCE
_CENTRE = base.CENTRE_MASK
_DOUBLE_CORNERS = base.DOUBLE_CORNERS
_ENDGAME_PIECES = base.ENDGAME_PIECES
_MAX_DISTANCE = base.MAX_DISTANCE
_PLUS_2 = endings.PREY_PLUS_2
_PLUS_1 = endings.PREY_PLUS_1
_MINUS_1 = endings.PREY_MINUS_1
_MINUS_2 = endings.PREY_MINUS_2
_DRAW_WINDOW = endings.DRAW_WINDOW
_QUIET_KEY_FROM = endings.TABLE_QUIET_FROM
_BLACK_BRIDGE = engine_features.BLACK_BRIDGE
_WHITE_BRIDGE = engine_features.WHITE_BRIDGE
_START_PIECES = engine_features.START_PIECES
_B_ROW2, _B_ROW3, _B_ROW4, _B_ROW5, _B_ROW6 = engine_features.BLACK_ROWS
_W_ROW2, _W_ROW3, _W_ROW4, _W_ROW5, _W_ROW6 = engine_features.WHITE_ROWS
(_B_DOG_A, _W_DOG_A), (_B_DOG_B, _W_DOG_B) = engine_features.DOG_HOLE_MASKS[0]
(_W_DOG_C, _B_DOG_C), (_W_DOG_D, _B_DOG_D) = engine_features.DOG_HOLE_MASKS[1]
_CROWDED_MEN = engine_features.CROWDED_MEN


# -- the table's key and slot -------------------------------------------------------------------


@njit(cache=True)
def _hash_lane(acc: int, lane: int) -> int:
    acc += lane * _XXPRIME_2
    acc = (acc << 31) | ((acc >> 33) & _LOW_31)
    return acc * _XXPRIME_1


@njit(cache=True)
def key_hash(black: int, white: int, kings: int, turn: int, quiet: int) -> int:
    """Return Python's `hash` of the table key: (black, white, kings, turn), plus `quiet` when
    it is not negative."""
    acc = _hash_lane(_XXPRIME_5, black)
    acc = _hash_lane(acc, white)
    acc = _hash_lane(acc, kings)
    acc = _hash_lane(acc, turn)
    length = 4
    if quiet >= 0:
        acc = _hash_lane(acc, quiet)
        length = 5
    acc += length ^ (_XXPRIME_5 ^ 3527539)
    if acc == -1:
        return 1546275796
    return acc


@njit(cache=True)
def _squeeze(board: int) -> int:
    """The 32 squares of a board without its three ghost bits (8, 17, 26)."""
    return (
        (board & 0xFF)
        | ((board >> 1) & 0xFF00)
        | ((board >> 2) & 0xFF0000)
        | ((board >> 3) & 0xFF000000)
    )


@njit(cache=True)
def _key_word(kings: int, turn: int, quiet: int) -> int:
    """The second key word: kings, side to move and the key's quiet (+1; 0 when not in it)."""
    return _squeeze(kings) | (turn << 32) | ((quiet + 1) << 33)


@njit(cache=True)
def _table_quiet(black: int, white: int, kings: int, quiet: int) -> int:
    """The capture-free plies the table key holds, or -1 (checkers_endings.table_key: from
    TABLE_QUIET_FROM on, and in kings-only positions)."""
    if quiet >= _QUIET_KEY_FROM or ((black | white) & ~kings) == 0:
        return quiet
    return -1


# -- evaluations --------------------------------------------------------------------------------


@njit(cache=True)
def _approach(hunters: int, prey: int) -> int:
    """Sum over `hunters` of 8 - king steps to the nearest bit of `prey` (checkers._approach)."""
    if hunters == 0 or prey == 0:
        return 0
    count = _popcount(hunters)
    reach = prey
    total = 0
    for step in range(1, _MAX_DISTANCE + 1):
        reach = (reach | (reach << 4) | (reach << 5) | (reach >> 4) | (reach >> 5)) & VALID
        covered = _popcount(hunters & reach)
        if covered == count:
            return total + count * (_MAX_DISTANCE + 1 - step)
        total += covered
    return total


@njit(cache=True)
def _positional(buf: Buffer, black: int, white: int, crowned: int) -> int:
    """checkers.positional_function under the buffer's weights, from Black's point of view."""
    w = WEIGHTS
    empty = VALID ^ (black | white)
    black_kings = black & crowned
    white_kings = white & crowned
    black_men = black ^ black_kings
    white_men = white ^ white_kings
    score: int = (
        buf[w + W_MAN] * (_popcount(black_men) - _popcount(white_men))
        + buf[w + W_KING] * (_popcount(black_kings) - _popcount(white_kings))
        + buf[w + W_ADVANCE]
        * (
            _popcount(black_men & _B1)
            - _popcount(white_men & _W1)
            + 2 * (_popcount(black_men & _B2) - _popcount(white_men & _W2))
            + 4 * (_popcount(black_men & _B4) - _popcount(white_men & _W4))
        )
        + buf[w + W_BACK]
        * (_popcount(black_men & WHITE_CROWN) - _popcount(white_men & BLACK_CROWN))
        + buf[w + W_CENTRE] * (_popcount(black & _CENTRE) - _popcount(white & _CENTRE))
    )
    moves = (
        _popcount((black << 4) & empty)
        + _popcount((black << 5) & empty)
        - _popcount((white >> 4) & empty)
        - _popcount((white >> 5) & empty)
    )
    if crowned != 0:
        free = (empty >> 4) | (empty >> 5) | (empty << 4) | (empty << 5)
        trapped = 0
        if black_kings != 0:
            moves += _popcount((black_kings >> 4) & empty)
            moves += _popcount((black_kings >> 5) & empty)
            boxed = black_kings & ~free
            if boxed != 0:
                jumps = (
                    ((white >> 4) & (empty >> 8))
                    | ((white >> 5) & (empty >> 10))
                    | ((white << 4) & (empty << 8))
                    | ((white << 5) & (empty << 10))
                )
                trapped += _popcount(boxed & ~jumps)
        if white_kings != 0:
            moves -= _popcount((white_kings << 4) & empty)
            moves -= _popcount((white_kings << 5) & empty)
            boxed = white_kings & ~free
            if boxed != 0:
                jumps = (
                    ((black >> 4) & (empty >> 8))
                    | ((black >> 5) & (empty >> 10))
                    | ((black << 4) & (empty << 8))
                    | ((black << 5) & (empty << 10))
                )
                trapped -= _popcount(boxed & ~jumps)
        score += buf[w + W_TRAPPED] * trapped
        if _popcount(black | white) <= _ENDGAME_PIECES:
            lead = (
                _popcount(black)
                + _popcount(black_kings)
                - _popcount(white)
                - _popcount(white_kings)
            )
            if lead > 0:
                score += buf[w + W_APPROACH] * _approach(black_kings, white)
                score -= buf[w + W_REFUGE] * _popcount(white_kings & _DOUBLE_CORNERS)
            elif lead < 0:
                score -= buf[w + W_APPROACH] * _approach(white_kings, black)
                score += buf[w + W_REFUGE] * _popcount(black_kings & _DOUBLE_CORNERS)
    mobility: int = buf[w + W_MOBILITY] * moves
    return score + mobility


@njit(cache=True)
def _neighbours(mask: int) -> int:
    return ((mask << 4) | (mask << 5) | (mask >> 4) | (mask >> 5)) & VALID


@njit(cache=True)
def _lead(black: int, white: int, kings: int) -> int:
    """Black's material lead (man 1, king 2) in endings, else 0 (checkers_endings._lead)."""
    if _popcount(black | white) > _ENDGAME_PIECES:
        return 0
    return _popcount(black) + _popcount(black & kings) - _popcount(white) - _popcount(white & kings)


@njit(cache=True)
def _ending_extra(buf: Buffer, black: int, white: int, kings: int) -> int:
    """The weighted ending features from Black's point of view (checkers_endings)."""
    lead = _lead(black, white, kings)
    if lead == 0:
        return 0
    if lead > 0:
        strong = black
        weak = white
        sign = 1
    else:
        strong = white
        weak = black
        sign = -1
    weak_kings = weak & kings
    strong_kings = strong & kings
    empty = VALID & ~(black | white)
    trade = _ENDGAME_PIECES + 1 - _popcount(black | white)
    corner = (
        2 * _popcount(weak_kings & _PLUS_2)
        + _popcount(weak_kings & _PLUS_1)
        - _popcount(weak_kings & _MINUS_1)
        - 2 * _popcount(weak_kings & _MINUS_2)
    )
    targets = empty & ~_neighbours(strong)
    mobility = (
        _popcount((weak_kings << 4) & targets)
        + _popcount((weak_kings << 5) & targets)
        + _popcount((weak_kings >> 4) & targets)
        + _popcount((weak_kings >> 5) & targets)
    )
    centre = _popcount(strong_kings & _CENTRE)
    pressure = 0
    prey = weak_kings
    while prey != 0:
        low = prey & -prey
        prey ^= low
        near = _neighbours(low)
        pressure += min(2, _popcount(strong_kings & (near | _neighbours(near))))
    w = WEIGHTS
    extra: int = sign * (
        buf[w + W_TRADE] * trade
        - buf[w + W_PREY_CORNER] * corner
        - buf[w + W_PREY_MOBILITY] * mobility
        + buf[w + W_HUNTER_CENTRE] * centre
        + buf[w + W_PRESSURE] * pressure
    )
    return extra


@njit(cache=True)
def _draw_value(black: int, white: int, kings: int, quiet: int, score: int) -> int:
    """checkers_endings.draw_value: the score as the rules will make of it."""
    men = (black | white) & ~kings
    lead = _lead(black, white, kings)
    if lead == 0:
        if men == 0 and _popcount(black | white) <= _ENDGAME_PIECES:
            return 0
        return score
    strong = black if lead > 0 else white
    if (strong & men) != 0:
        return score
    left = DRAW_PLIES - quiet
    if left >= _DRAW_WINDOW:
        return score
    pulled = abs(score) * max(left, 0) // _DRAW_WINDOW
    return pulled if score >= 0 else -pulled


@njit(cache=True)
def _free_men(men: int, enemy: int, down: int) -> int:
    """How many of `men` have no bit of `enemy` in their forward cone (checkers_engine)."""
    count = 0
    while men != 0:
        low = men & -men
        men ^= low
        reach = low
        cone = 0
        while reach != 0:
            if down != 0:
                reach = ((reach << 4) | (reach << 5)) & VALID
            else:
                reach = ((reach >> 4) | (reach >> 5)) & VALID
            cone |= reach
        if (cone & enemy) == 0:
            count += 1
    return count


@njit(cache=True)
def _can_capture(men: int, kings: int, enemy: int, empty: int, down: int) -> int:
    """1 if men (moving down if `down`) or kings (both ways) can jump a bit of `enemy`."""
    if down != 0:
        downward = men | kings
        upward = kings
    else:
        downward = kings
        upward = men | kings
    if (downward & (((enemy >> 4) & (empty >> 8)) | ((enemy >> 5) & (empty >> 10)))) != 0:
        return 1
    if (upward & (((enemy << 4) & (empty << 8)) | ((enemy << 5) & (empty << 10)))) != 0:
        return 1
    return 0


@njit(cache=True)
def _engine_extra(buf: Buffer, black: int, white: int, kings: int) -> int:
    """checkers_engine.engine_extra under the buffer's weights, from Black's point of view."""
    empty = VALID ^ (black | white)
    black_kings = black & kings
    white_kings = white & kings
    black_men = black ^ black_kings
    white_men = white ^ white_kings
    runaway = _free_men(black_men, white, 1) - _free_men(white_men, black, 0)
    guard = 0
    if white_kings == 0 and (black_men & _BLACK_BRIDGE) == _BLACK_BRIDGE:
        guard += 1
    if black_kings == 0 and (white_men & _WHITE_BRIDGE) == _WHITE_BRIDGE:
        guard -= 1
    lead = _popcount(black) + _popcount(black_kings) - _popcount(white) - _popcount(white_kings)
    off = _START_PIECES - _popcount(black | white)
    trade = 0
    if lead > 0:
        trade = off
    elif lead < 0:
        trade = -off
    threat = _can_capture(black_men, black_kings, white, empty, 1) - _can_capture(
        white_men, white_kings, black, empty, 0
    )
    w = WEIGHTS
    extra: int = (
        buf[w + W_RUNAWAY] * runaway
        + buf[w + W_BRIDGE] * guard
        + buf[w + W_EXCHANGE] * trade
        + buf[w + W_THREAT] * threat
        + buf[w + W_ROWS] * (_popcount(black_men & _B_ROW2) - _popcount(white_men & _W_ROW2))
        + buf[w + W_ROWS + 1] * (_popcount(black_men & _B_ROW3) - _popcount(white_men & _W_ROW3))
        + buf[w + W_ROWS + 2] * (_popcount(black_men & _B_ROW4) - _popcount(white_men & _W_ROW4))
        + buf[w + W_ROWS + 3] * (_popcount(black_men & _B_ROW5) - _popcount(white_men & _W_ROW5))
        + buf[w + W_ROWS + 4] * (_popcount(black_men & _B_ROW6) - _popcount(white_men & _W_ROW6))
        + buf[w + W_KING_CENTRE]
        * (_popcount(black_kings & _CENTRE) - _popcount(white_kings & _CENTRE))
    )
    holes = 0
    if (black_men & _B_DOG_A) != 0 and (white_men & _W_DOG_A) != 0:
        holes += 1
    if (black_men & _B_DOG_B) != 0 and (white_men & _W_DOG_B) != 0:
        holes += 1
    if (white_men & _W_DOG_C) != 0 and (black_men & _B_DOG_C) != 0:
        holes -= 1
    if (white_men & _W_DOG_D) != 0 and (black_men & _B_DOG_D) != 0:
        holes -= 1
    extra += buf[w + W_DOG_HOLES] * holes
    if _popcount(black_men | white_men) >= _CROWDED_MEN:
        advanced = (
            _popcount(black_men & _B1)
            - _popcount(white_men & _W1)
            + 2 * (_popcount(black_men & _B2) - _popcount(white_men & _W2))
            + 4 * (_popcount(black_men & _B4) - _popcount(white_men & _W4))
        )
        extra += buf[w + W_CROWDED] * advanced
    return extra


@njit(cache=True)
def evaluate(buf: Buffer, black: int, white: int, kings: int, turn: int, quiet: int) -> int:
    """Return the buffer's evaluation of a position, for the side to move."""
    kind = buf[WEIGHTS + W_KIND]
    if kind == 0:
        score: int = buf[WEIGHTS + W_MAN] * (_popcount(black) - _popcount(white)) + (
            buf[WEIGHTS + W_KING] - buf[WEIGHTS + W_MAN]
        ) * (_popcount(black & kings) - _popcount(white & kings))
        return score if turn == 0 else -score
    score = _positional(buf, black, white, kings)
    if kind == 3:
        score += _engine_extra(buf, black, white, kings)
    if turn != 0:
        score = -score
    if kind >= 2 and _popcount(black | white) <= _ENDGAME_PIECES:
        extra = _ending_extra(buf, black, white, kings)
        score += extra if turn == 0 else -extra
        return _draw_value(black, white, kings, quiet, score)
    return score


# -- the search ---------------------------------------------------------------------------------


@njit(cache=True)
def _bit(mask: int) -> int:
    return _popcount(mask - 1)


@njit(cache=True)
def _order(
    buf: Buffer, area: int, order: int, n: int, tt_move: int, turn: int, kings: int, ply: int
) -> None:
    """Write the search order of the area's `n` moves at `order`: the table move, then by
    static order, killers and history, ties in generation order (bots.engine.search._ordered)."""
    values = order + MAX_MOVES
    crown = BLACK_CROWN if turn == 0 else WHITE_CROWN
    killer_a = buf[KILLERS + 2 * ply]
    killer_b = buf[KILLERS + 2 * ply + 1]
    history = HISTORY + 4096 * turn
    for i in range(n):
        if i == tt_move:
            value = TT_MOVE_BONUS
        else:
            r = area + MAX_LANDINGS + i * REC
            frm = buf[r]
            to = buf[r + 1]
            captured = buf[r + 2]
            static = 100 * _popcount(captured)
            if (to & crown) != 0 and (kings & frm) == 0:
                static += 10
            value = static * STATIC_WEIGHT
            if captured == 0:
                code = 64 * _bit(frm) + _bit(to)
                if code in (killer_a, killer_b):
                    value += KILLER_BONUS
                value += buf[history + code]
        insert(buf, order, values, i, i, value)


@njit(cache=True, nogil=True)
def _is_quiet_move(
    buf: Buffer,
    r: int,
    black: int,
    white: int,
    kings: int,
    turn: int,
    before: int,
    crown: int,
    ply: int,
) -> bool:
    """Whether the move at record `r` may be reduced: no capture, no crowning, no killer, and
    the child (`turn` to move) has no capture pending."""
    frm = buf[r]
    to = buf[r + 1]
    if buf[r + 2] != 0 or ((to & crown) != 0 and (before & frm) == 0):
        return False
    code = 64 * _bit(frm) + _bit(to)
    if code == buf[KILLERS + 2 * ply] or code == buf[KILLERS + 2 * ply + 1]:
        return False
    if turn == 0:
        mine = black
        theirs = white
    else:
        mine = white
        theirs = black
    return _jumpers(mine, mine & kings, theirs, VALID ^ (black | white), turn) == 0


@njit(cache=True, nogil=True)
def _near_window(mine: int, theirs: int, kings: int, alpha: int, beta: int) -> bool:
    """Whether the material (man 100, king TRUNCATE_KING) lies within EXTEND_WINDOW of the
    window (alpha, beta)."""
    material = 100 * (_popcount(mine) - _popcount(theirs)) + (TRUNCATE_KING - 100) * (
        _popcount(mine & kings) - _popcount(theirs & kings)
    )
    return alpha - EXTEND_WINDOW <= material <= beta + EXTEND_WINDOW


@njit(i8(i8a, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8), cache=True, nogil=True)
def _negamax(
    buf: Buffer,
    black: int,
    white: int,
    kings: int,
    turn: int,
    quiet: int,
    base: int,
    top: int,
    left: int,
    alpha: int,
    beta: int,
    ply: int,
) -> int:
    """Search a node (bots.engine.search's negamax); this position is history slot `top`."""
    if enter(buf, CONTROL):
        return 0
    buf[PV_LENGTH + ply] = 0
    if is_drawn(buf, black, white, kings, quiet, base, top):
        return 0
    empty = VALID ^ (black | white)
    if turn == 0:
        mine = black
        theirs = white
    else:
        mine = white
        theirs = black
    my_kings = mine & kings
    jumpers = _jumpers(mine, my_kings, theirs, empty, turn)
    if jumpers == 0:
        if turn == 0:
            steps = ((mine << 4) | (mine << 5) | (my_kings >> 4) | (my_kings >> 5)) & empty
        else:
            steps = ((mine >> 4) | (mine >> 5) | (my_kings << 4) | (my_kings << 5)) & empty
        if steps == 0:
            return ply - WIN
    if left <= 0:
        if ply >= MAX_PLY or jumpers == 0:
            if (
                buf[EXTEND] != 0
                and ply < MAX_PLY
                and ply < 2 * buf[ROOT_DEPTH]
                and _jumpers(theirs, theirs & kings, mine, empty, 1 - turn) != 0
                and (buf[EXTEND] == 1 or _near_window(mine, theirs, kings, alpha, beta))
            ):
                left = 1
            else:
                buf[EVALUATIONS] += 1
                return evaluate(buf, black, white, kings, turn, quiet)
        else:
            left = 0
    elif (
        buf[TRUNCATE] != 0
        and ply > 0
        and jumpers == 0
        and left >= 2
        and _popcount(black | white) > _ENDGAME_PIECES
    ):
        material = 100 * (_popcount(mine) - _popcount(theirs)) + (TRUNCATE_KING - 100) * (
            _popcount(my_kings) - _popcount(theirs & kings)
        )
        if material < alpha - TRUNCATE_MARGIN or material > beta + TRUNCATE_MARGIN:
            left -= 1
    alpha_start = alpha
    tt_move = -1
    use_tt = buf[USE_TT] != 0
    slot = 0
    key_a = 0
    key_b = 0
    if use_tt:
        key_quiet_ = _table_quiet(black, white, kings, quiet)
        slot = TABLE + ENTRY * (key_hash(black, white, kings, turn, key_quiet_) & buf[TT_MASK])
        key_a = _squeeze(black) | (_squeeze(white) << 32)
        key_b = _key_word(kings, turn, key_quiet_)
        if buf[slot + 3] != 0 and buf[slot] == key_a and buf[slot + 1] == key_b:
            buf[TT_HITS] += 1
            data = buf[slot + 2]
            tt_move = entry_move(data)
            searched = entry_depth(data)
            if ply > 0 and (searched == left or (searched > left and buf[DEEPER] != 0)):
                score = table_cut(data, ply, alpha, beta)
                if score != NO_CUT:
                    return score
    area = MOVES + ply * AREA
    n = generate(buf, area, black, white, kings, turn)
    order = ORDER + ply * 2 * MAX_MOVES
    ordering = buf[ORDERING] != 0
    if ordering and n > 1:
        _order(buf, area, order, n, tt_move, turn, kings, ply)
    elif tt_move >= 0 and n > 1:
        buf[order] = tt_move
        j = 1
        for i in range(n):
            if i != tt_move:
                buf[order + j] = i
                j += 1
    else:
        for i in range(n):
            buf[order + i] = i
    buf[3 * top] = black
    buf[3 * top + 1] = white
    buf[3 * top + 2] = kings
    child_left = left - 1 if left > 0 else 0
    if n == 1 and left > 0 and ply > 0 and buf[SINGLE] != 0 and ply < 2 * buf[ROOT_DEPTH]:
        child_left = left
    child_top = top + 1
    child_ply = ply + 1
    other = 1 - turn
    best = -INF
    best_move = buf[order]
    pvs = buf[PVS] != 0
    reducible = buf[LMR] != 0 and jumpers == 0 and left >= LMR_DEPTH
    crown = BLACK_CROWN if turn == 0 else WHITE_CROWN
    for j in range(n):
        i = buf[order + j]
        r = area + MAX_LANDINGS + i * REC
        captured = buf[r + 2]
        b, w, k, child_quiet, child_base = _child(
            black, white, kings, turn, buf[r], buf[r + 1], captured, quiet, base, top
        )
        if pvs and j > 0:
            reduced = child_left
            if (
                reducible
                and j >= LMR_MOVES
                and _is_quiet_move(buf, r, b, w, k, other, kings, crown, ply)
            ):
                reduced = child_left - 1
            null = -alpha - 1
            score = -_negamax(
                buf, b, w, k, other, child_quiet, child_base, child_top, reduced, null, -alpha,
                child_ply,
            )  # fmt: skip
            if buf[ABORTED] != 0:
                return 0
            if score > alpha and reduced < child_left:
                score = -_negamax(
                    buf, b, w, k, other, child_quiet, child_base, child_top, child_left, null,
                    -alpha, child_ply,
                )  # fmt: skip
                if buf[ABORTED] != 0:
                    return 0
            if alpha < score < beta:
                score = -_negamax(
                    buf, b, w, k, other, child_quiet, child_base, child_top, child_left, -beta,
                    -alpha, child_ply,
                )  # fmt: skip
        else:
            score = -_negamax(
                buf, b, w, k, other, child_quiet, child_base, child_top, child_left, -beta,
                -alpha, child_ply,
            )  # fmt: skip
        if buf[ABORTED] != 0:
            return 0
        if score > best:
            best = score
            best_move = i
            if score > alpha:
                alpha = score
                if ply == 0:
                    buf[ROOT_MOVE] = i
                    buf[ROOT_SCORE] = score
                raise_pv(buf, PV, PV_LENGTH, PV_STRIDE, ply, i)
                if alpha >= beta:
                    buf[CUTOFFS] += 1
                    if ordering and captured == 0:
                        code = 64 * _bit(buf[r]) + _bit(buf[r + 1])
                        remember_killer(buf, KILLERS + 2 * ply, code)
                        buf[HISTORY + 4096 * turn + code] += left * left
                    break
    if use_tt and table_store(
        buf, slot + 2, buf[GENERATION], left, best, alpha_start, beta, ply, best_move
    ):
        buf[slot] = key_a
        buf[slot + 1] = key_b
    return best


@njit(i8(i8a, i8, i8, i8, i8, i8, i8, i8, i8, i8), cache=True, nogil=True)
def search_window(
    buf: Buffer,
    black: int,
    white: int,
    kings: int,
    turn: int,
    quiet: int,
    top: int,
    depth: int,
    alpha: int,
    beta: int,
) -> int:
    """`search` in the window (alpha, beta): an aspiration window; the score is a bound when it
    falls outside."""
    start_search(buf, CONTROL)
    buf[ROOT_MOVE] = -1
    buf[ROOT_DEPTH] = depth
    base = 0
    ply = 0
    score: int = _negamax(
        uncounted(buf), black, white, kings, turn, quiet, base, top, depth, alpha, beta, ply
    )
    return score


@njit(i8(i8a, i8, i8, i8, i8, i8, i8, i8), cache=True, nogil=True)
def search(
    buf: Buffer, black: int, white: int, kings: int, turn: int, quiet: int, top: int, depth: int
) -> int:
    """Search the root (history slot `top`, its history from slot 0) to `depth`; return its
    score. The counters start at 0; ABORTED says whether the stop or the node limit ended it."""
    alpha = -INF
    beta = INF
    return search_window(buf, black, white, kings, turn, quiet, top, depth, alpha, beta)


# -- from Python --------------------------------------------------------------------------------


def new_buffer(table_size: int) -> Buffer:
    """Return an engine's buffer with a table of `table_size` slots (a power of two; 0: no
    table) and empty killers, history and table."""
    buf = np.zeros(TABLE + ENTRY * max(table_size, 1), np.int64)
    buf[TT_MASK] = max(table_size, 1) - 1
    buf[KILLERS : KILLERS + 2 * (MAX_PLY + 1)] = -1
    return buf


def set_root(buf: Buffer, state: CheckersState) -> int:
    """Write the positions since the last capture or man move into the history slots; return
    the root's slot. Only the last DRAW_PLIES + 1 positions can matter to the draw rules."""
    chain = [state]
    node = state.prev
    while node is not None and len(chain) <= DRAW_PLIES:
        chain.append(node)
        node = node.prev
    chain.reverse()
    for slot, position in enumerate(chain):
        buf[3 * slot : 3 * slot + 3] = (position.black, position.white, position.kings)
    return len(chain) - 1


def set_weights(buf: Buffer, kind: int, weights: dict[str, int]) -> None:
    """Set the evaluation: `kind` (0 material, 1 positional, 2 endings, 3 engine) and its
    weights (every name of checkers.FEATURE_NAMES; for kind 3 also checkers_engine's
    EXTRA_NAMES)."""
    values = [
        weights[name]
        for name in (
            "men",
            "kings",
            "advancement",
            "back_rank",
            "centre",
            "mobility",
            "trapped_kings",
            "endgame_approach",
            "endgame_refuge",
        )
    ]
    ending = [
        endings.TRADE,
        endings.PREY_CORNER,
        endings.PREY_MOBILITY,
        endings.HUNTER_CENTRE,
        endings.PRESSURE,
    ]
    buf[WEIGHTS : WEIGHTS + 15] = [kind, *values, *ending]
    if kind == 3:
        names = engine_features.EXTRA_NAMES
        buf[WEIGHTS + W_RUNAWAY : WEIGHTS + W_RUNAWAY + len(names)] = [
            weights[name] for name in names
        ]


def principal_variation(buf: Buffer) -> list[int]:
    """The root's principal variation, as generation indexes of its moves ply by ply."""
    return shared.principal_variation(buf, PV_LENGTH, PV)


def root_order(buf: Buffer, state: CheckersState) -> list[int]:
    """The generation indexes of the root's moves in the order of bots.engine.search._ordered at
    ply 0 without a table move (iterative deepening's move when no iteration completed)."""
    area = MOVES
    n = int(generate(buf, area, state.black, state.white, state.kings, state.turn))
    _order(buf, area, ORDER, n, -1, state.turn, state.kings, 0)
    return [int(i) for i in buf[ORDER : ORDER + n]]


__all__ = [
    "INF",
    "MATE_ZONE",
    "new_buffer",
    "principal_variation",
    "root_order",
    "search",
    "search_window",
    "set_root",
    "set_weights",
]
