"""Checkers evaluations: material, and material plus positional features.

Scale: every checkers evaluation is in hundredths of a man, so that all weights are integers
and the fused bitboard functions equal the weighted sums exactly. "material" is therefore
`100 * (my men - their men) + 200 * (my kings - their kings)`, the lectures' man 1 / king 2
count times 100. Values stay within a few thousand, far below bots.scoring.WIN.

Every feature is measured for the side to move, mine minus theirs, and is symmetric under the
180-degree rotation of the board that swaps the colours (square s <-> square 33 - s): the
rotated position with the other side to move has the same value, and with the same side to
move the negated value. No feature rewards having the move (no tempo term).

Each feature has a plain reference implementation on squares, rows and columns (what
`Evaluation.weighted_sum` and `explain` use) and the evaluations' `fast` functions compute the
same sums on the bitboards with shifts and `int.bit_count()`; the tests check that they agree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final, cast

from bots.evaluation import Evaluation, Feature, Knowledge, StateFunction
from games import State
from games.checkers import (
    BIT_OF_SQUARE,
    BLACK,
    BLACK_CROWN,
    VALID,
    WHITE_CROWN,
    CheckersMove,
    CheckersState,
    square_at,
    square_column,
    square_row,
)

# -- weights (hundredths of a man) -----------------------------------------------------------------

MAN: Final = 100
"""A man: the unit of the scale."""
KING: Final = 200
"""A king is worth two men, as in the lectures."""
ADVANCE: Final = 3
"""Per row a man has advanced: a man one row from crowning gets 18, well below the 100 a king
adds, so crowning still dominates; small enough that pushing men never outweighs a man."""
BACK_RANK: Final = 8
"""Per man still on its own king row, where it stops the opponent crowning: leaving the back
row costs 8 against the 3 one row of advancement earns, so back men move last."""
CENTRE: Final = 4
"""Per piece on the eight central squares (10, 11, 14, 15, 18, 19, 22, 23), which reach both
wings and control the most squares."""
MOBILITY: Final = 2
"""Per simple move available (compulsory captures ignored); a side with few moves is close to
being blocked, and having no move loses."""
TRAPPED_KING: Final = -30
"""Per king that can neither step nor jump: a boxed-in king is worth much less than a king
(but still more than a man, as it may be freed)."""
APPROACH: Final = 3
"""Endgame, for the side ahead: per king and per step that king is closer to the nearest enemy
piece (8 - distance, so 3 to 21 per king). The side ahead must go and catch the enemy; the side
behind, seeing the same term negated, keeps its pieces away (as the lecture's tips say)."""
REFUGE: Final = 12
"""Endgame, for the side behind: per king in a double corner (squares 1, 5, 28 and 32), the one
place where a lone king cannot be cornered quickly; the side ahead sees it negated and keeps
the enemy kings out of them."""

ENDGAME_PIECES: Final = 8
"""The endgame terms count when at most this many pieces remain and material is unequal. They
are never negative for the side ahead, so they also reward trading down when ahead, which is
sound checkers strategy."""

CENTRE_SQUARES: Final = (10, 11, 14, 15, 18, 19, 22, 23)
DOUBLE_CORNER_SQUARES: Final = (1, 5, 28, 32)
MAX_DISTANCE: Final = 7  # king steps between the two farthest dark squares


def _mask(squares: tuple[int, ...]) -> int:
    return sum(1 << BIT_OF_SQUARE[s] for s in squares)


def _rows_mask(rows: tuple[int, ...]) -> int:
    return _mask(tuple(s for s in range(1, 33) if square_row(s) in rows))


CENTRE_MASK: Final = _mask(CENTRE_SQUARES)
DOUBLE_CORNERS: Final = _mask(DOUBLE_CORNER_SQUARES)
# Advancement by binary digits: a Black man on row r has advanced r rows, a White man 7 - r,
# so summing 1, 2 and 4 times the men on the rows whose advancement has that bit set takes six
# popcounts instead of a loop over the men.
_BLACK_ADVANCE: Final = tuple(
    _rows_mask(tuple(r for r in range(8) if r & bit)) for bit in (1, 2, 4)
)
_WHITE_ADVANCE: Final = tuple(
    _rows_mask(tuple(r for r in range(8) if (7 - r) & bit)) for bit in (1, 2, 4)
)


def _for_checkers(function: Callable[[CheckersState], float]) -> StateFunction:
    """Type a checkers-only measure as a StateFunction: Knowledge only hands it checkers states."""
    return cast(StateFunction, function)


# -- reference features, on squares ----------------------------------------------------------------


def _pieces(state: CheckersState) -> list[tuple[int, int, bool]]:
    """Return (square, colour, is king) for every piece on the board."""
    pieces = []
    for square in range(1, 33):
        bit = 1 << BIT_OF_SQUARE[square]
        if state.black & bit:
            pieces.append((square, 0, bool(state.kings & bit)))
        elif state.white & bit:
            pieces.append((square, 1, bool(state.kings & bit)))
    return pieces


def _for_side_to_move(state: CheckersState, black: int, white: int) -> int:
    """Return black - white for Black to move, white - black for White."""
    return black - white if state.turn == BLACK else white - black


def _per_colour(state: CheckersState, value: Callable[[CheckersState, int, int, bool], int]) -> int:
    """Sum `value(state, square, colour, king)` per colour; return mine minus theirs."""
    totals = [0, 0]
    for square, colour, king in _pieces(state):
        totals[colour] += value(state, square, colour, king)
    return _for_side_to_move(state, totals[0], totals[1])


def _occupant(state: CheckersState, square: int) -> int | None:
    """Return the colour on `square`, or None when it is empty."""
    bit = 1 << BIT_OF_SQUARE[square]
    if state.black & bit:
        return 0
    if state.white & bit:
        return 1
    return None


def _steps(state: CheckersState, square: int, colour: int, king: bool) -> int:
    """Return how many empty diagonal neighbours the piece on `square` may step to."""
    forward = 1 if colour == 0 else -1
    count = 0
    for dr in (forward, -forward) if king else (forward,):
        for dc in (-1, 1):
            target = square_at(square_row(square) + dr, square_column(square) + dc)
            if target is not None and _occupant(state, target) is None:
                count += 1
    return count


def _can_jump(state: CheckersState, square: int, colour: int) -> bool:
    """Return True if a king on `square` can jump an enemy piece in some direction."""
    row, column = square_row(square), square_column(square)
    for dr in (-1, 1):
        for dc in (-1, 1):
            over = square_at(row + dr, column + dc)
            land = square_at(row + 2 * dr, column + 2 * dc)
            if (
                over is not None
                and land is not None
                and _occupant(state, over) == 1 - colour
                and _occupant(state, land) is None
            ):
                return True
    return False


def men(state: CheckersState) -> int:
    """My men minus their men."""
    return _per_colour(state, lambda _s, _sq, _c, king: int(not king))


def kings(state: CheckersState) -> int:
    """My kings minus their kings."""
    return _per_colour(state, lambda _s, _sq, _c, king: int(king))


def advancement(state: CheckersState) -> int:
    """Rows my men have advanced from my back row, minus theirs (kings do not count)."""

    def rows(_state: CheckersState, square: int, colour: int, king: bool) -> int:
        if king:
            return 0
        return square_row(square) if colour == 0 else 7 - square_row(square)

    return _per_colour(state, rows)


def back_rank(state: CheckersState) -> int:
    """My men on my own king row (the row the opponent crowns on), minus theirs."""

    def guard(_state: CheckersState, square: int, colour: int, king: bool) -> int:
        return int(not king and square_row(square) == (0 if colour == 0 else 7))

    return _per_colour(state, guard)


def centre(state: CheckersState) -> int:
    """My pieces on the eight central squares, minus theirs."""
    return _per_colour(state, lambda _s, square, _c, _k: int(square in CENTRE_SQUARES))


def mobility(state: CheckersState) -> int:
    """My simple moves (steps) minus theirs, for both sides as if each were to move.

    Compulsory captures are ignored: the evaluation is only used on quiet positions.
    """
    return _per_colour(state, _steps)


def trapped_kings(state: CheckersState) -> int:
    """My kings that can neither step nor jump, minus theirs (its weight is negative)."""

    def trapped(state: CheckersState, square: int, colour: int, king: bool) -> int:
        return int(
            king
            and _steps(state, square, colour, king) == 0
            and not _can_jump(state, square, colour)
        )

    return _per_colour(state, trapped)


def _distance(a: int, b: int) -> int:
    """Return the number of king steps between squares `a` and `b` on an empty board."""
    return max(abs(square_row(a) - square_row(b)), abs(square_column(a) - square_column(b)))


def _lead(pieces: list[tuple[int, int, bool]]) -> int:
    """Return Black's material lead in men (king 2), or 0 outside the endgame."""
    if len(pieces) > ENDGAME_PIECES:
        return 0
    return sum((2 if king else 1) * (1 if colour == 0 else -1) for _, colour, king in pieces)


def endgame_approach(state: CheckersState) -> int:
    """Endgame only: how close the kings of the side ahead are to the enemy.

    Each king of the side ahead scores 8 - (king steps to the nearest enemy piece); the sum
    counts for the side ahead and against the side behind; 0 when material is level or more
    than ENDGAME_PIECES pieces remain.
    """
    pieces = _pieces(state)
    lead = _lead(pieces)
    if lead == 0:
        return 0
    strong = 0 if lead > 0 else 1
    prey = [square for square, colour, _ in pieces if colour != strong]
    total = 0
    if prey:
        for square, colour, king in pieces:
            if king and colour == strong:
                total += MAX_DISTANCE + 1 - min(_distance(square, p) for p in prey)
    return _for_side_to_move(state, total, 0) if strong == 0 else _for_side_to_move(state, 0, total)


def endgame_refuge(state: CheckersState) -> int:
    """Endgame only: kings of the side behind in a double corner (good for that side).

    0 when material is level or more than ENDGAME_PIECES pieces remain.
    """
    pieces = _pieces(state)
    lead = _lead(pieces)
    if lead == 0:
        return 0
    weak = 1 if lead > 0 else 0
    count = sum(
        1
        for square, colour, king in pieces
        if king and colour == weak and square in DOUBLE_CORNER_SQUARES
    )
    return _for_side_to_move(state, count, 0) if weak == 0 else _for_side_to_move(state, 0, count)


# -- fused bitboard versions -----------------------------------------------------------------------


def _material_fast(state: CheckersState) -> int:
    """Return MAN * men + KING * kings (mine minus theirs) on the bitboards."""
    black = state.black
    white = state.white
    crowned = state.kings
    # MAN per piece plus (KING - MAN) per king.
    score = MAN * (black.bit_count() - white.bit_count()) + (KING - MAN) * (
        (black & crowned).bit_count() - (white & crowned).bit_count()
    )
    return score if state.turn == BLACK else -score


def _approach(hunters: int, prey: int) -> int:
    """Return the sum over `hunters` of 8 - king steps to the nearest bit of `prey`.

    Grows `prey` one king step at a time: after k steps it covers every square within k steps,
    and a hunter first covered at step d has been counted 8 - d times by the end.
    """
    if not hunters or not prey:
        return 0
    count = hunters.bit_count()
    reach = prey
    total = 0
    for step in range(1, MAX_DISTANCE + 1):
        reach = (reach | (reach << 4) | (reach << 5) | (reach >> 4) | (reach >> 5)) & VALID
        covered = (hunters & reach).bit_count()
        if covered == count:
            return total + count * (MAX_DISTANCE + 1 - step)
        total += covered
    return total


def positional_function(weights: Mapping[str, int]) -> Callable[[CheckersState], int]:
    """Return the fused bitboard function of the positional features under `weights`.

    `weights` maps every name of FEATURE_NAMES to an integer (hundredths of a man); the
    function equals `sum(weights[f] * f(state))` over the features exactly.
    """
    missing = [name for name in FEATURE_NAMES if name not in weights]
    if missing or len(weights) != len(FEATURE_NAMES):
        raise ValueError(
            f"checkers weights need exactly the features {', '.join(FEATURE_NAMES)}; "
            f"missing: {', '.join(missing) or 'none'}; "
            f"unknown: {', '.join(sorted(set(weights) - set(FEATURE_NAMES))) or 'none'}"
        )
    w_man = int(weights["men"])
    w_king = int(weights["kings"])
    w_advance = int(weights["advancement"])
    w_back = int(weights["back_rank"])
    w_centre = int(weights["centre"])
    w_mobility = int(weights["mobility"])
    w_trapped = int(weights["trapped_kings"])
    w_approach = int(weights["endgame_approach"])
    w_refuge = int(weights["endgame_refuge"])
    b1, b2, b4 = _BLACK_ADVANCE
    w1, w2, w4 = _WHITE_ADVANCE

    def positional(state: CheckersState) -> int:
        black = state.black
        white = state.white
        crowned = state.kings
        empty = VALID ^ (black | white)
        black_kings = black & crowned
        white_kings = white & crowned
        black_men = black ^ black_kings
        white_men = white ^ white_kings
        score = (
            w_man * (black_men.bit_count() - white_men.bit_count())
            + w_king * (black_kings.bit_count() - white_kings.bit_count())
            + w_advance
            * (
                (black_men & b1).bit_count()
                - (white_men & w1).bit_count()
                + 2 * ((black_men & b2).bit_count() - (white_men & w2).bit_count())
                + 4 * ((black_men & b4).bit_count() - (white_men & w4).bit_count())
            )
            + w_back
            * ((black_men & WHITE_CROWN).bit_count() - (white_men & BLACK_CROWN).bit_count())
            + w_centre * ((black & CENTRE_MASK).bit_count() - (white & CENTRE_MASK).bit_count())
        )
        # Black men step to +4/+5, White men to -4/-5 (off-board targets are not in `empty`).
        moves = (
            ((black << 4) & empty).bit_count()
            + ((black << 5) & empty).bit_count()
            - ((white >> 4) & empty).bit_count()
            - ((white >> 5) & empty).bit_count()
        )
        if crowned:
            # Bits next to an empty square: a king there has a step. Only boxed-in kings (rare)
            # need the jump test.
            free = (empty >> 4) | (empty >> 5) | (empty << 4) | (empty << 5)
            trapped = 0
            if black_kings:
                moves += ((black_kings >> 4) & empty).bit_count()
                moves += ((black_kings >> 5) & empty).bit_count()
                boxed = black_kings & ~free
                if boxed:
                    jumps = (
                        (white >> 4) & (empty >> 8)
                        | (white >> 5) & (empty >> 10)
                        | (white << 4) & (empty << 8)
                        | (white << 5) & (empty << 10)
                    )
                    trapped += (boxed & ~jumps).bit_count()
            if white_kings:
                moves -= ((white_kings << 4) & empty).bit_count()
                moves -= ((white_kings << 5) & empty).bit_count()
                boxed = white_kings & ~free
                if boxed:
                    jumps = (
                        (black >> 4) & (empty >> 8)
                        | (black >> 5) & (empty >> 10)
                        | (black << 4) & (empty << 8)
                        | (black << 5) & (empty << 10)
                    )
                    trapped -= (boxed & ~jumps).bit_count()
            score += w_trapped * trapped
            if (black | white).bit_count() <= ENDGAME_PIECES:
                lead = (
                    black.bit_count()
                    + black_kings.bit_count()
                    - white.bit_count()
                    - white_kings.bit_count()
                )
                if lead > 0:
                    score += w_approach * _approach(black_kings, white)
                    score -= w_refuge * (white_kings & DOUBLE_CORNERS).bit_count()
                elif lead < 0:
                    score -= w_approach * _approach(white_kings, black)
                    score += w_refuge * (black_kings & DOUBLE_CORNERS).bit_count()
        score += w_mobility * moves
        return score if state.turn == BLACK else -score

    return positional


# -- features, evaluations, knowledge --------------------------------------------------------------

FEATURE_MEASURES: Final = (
    ("men", _for_checkers(men), "my men minus their men"),
    ("kings", _for_checkers(kings), "my kings minus their kings"),
    (
        "advancement",
        _for_checkers(advancement),
        "rows my men have advanced toward crowning, minus theirs",
    ),
    ("back_rank", _for_checkers(back_rank), "my men still guarding my king row, minus theirs"),
    (
        "centre",
        _for_checkers(centre),
        "my pieces on squares 10, 11, 14, 15, 18, 19, 22, 23, minus theirs",
    ),
    ("mobility", _for_checkers(mobility), "my simple moves minus theirs (captures aside)"),
    (
        "trapped_kings",
        _for_checkers(trapped_kings),
        "my kings with no step or jump, minus theirs",
    ),
    (
        "endgame_approach",
        _for_checkers(endgame_approach),
        f"with <= {ENDGAME_PIECES} pieces: closeness of the leading side's kings to the enemy",
    ),
    (
        "endgame_refuge",
        _for_checkers(endgame_refuge),
        f"with <= {ENDGAME_PIECES} pieces: the trailing side's kings in double corners",
    ),
)
"""Every positional feature: (name, reference measure, description), in weight-table order."""
FEATURE_NAMES: Final = tuple(name for name, _, _ in FEATURE_MEASURES)

WEIGHTS_V1: Final[Mapping[str, int]] = MappingProxyType(
    {
        "men": MAN,
        "kings": KING,
        "advancement": ADVANCE,
        "back_rank": BACK_RANK,
        "centre": CENTRE,
        "mobility": MOBILITY,
        "trapped_kings": TRAPPED_KING,
        "endgame_approach": APPROACH,
        "endgame_refuge": REFUGE,
    }
)
"""The hand-set weights (the constants above, argued one by one): evaluation positional_v1."""


WEIGHTS_TUNED: Final[Mapping[str, int]] = MappingProxyType(
    {
        "men": 100,
        "kings": 123,
        "advancement": 8,
        "back_rank": 53,
        "centre": CENTRE,
        "mobility": MOBILITY,
        "trapped_kings": -50,
        "endgame_approach": APPROACH,
        "endgame_refuge": REFUGE,
    }
)
"""Texel-tuned weights (`python bench/texel.py --fixed
endgame_approach,endgame_refuge,centre,mobility`, seed 17: 624 self-play games of
alphabeta:depth=3..5 with positional_v1 from the 156 ACF openings, 64,036 quiet positions
labelled by result; mean log loss 0.5907 -> 0.5796 on them, 0.6075 -> 0.6005 on 14,912
held-out positions), rounded, a man kept at 100. Four weights stay hand-set: the two endgame
terms are plans (how to convert), not predictions, and centre and mobility also steer the
kings of an ending; fitted freely (mostly on middlegame positions) they turn against the
attacker (centre -18, mobility -1, approach -1) and two kings no longer beat one
(tests/bots/engine/test_play.py). The data value a king at about 1.25 men, and the back-rank guard,
advancement and a trapped king more than the hand-set guesses. Evaluation positional_tuned;
it did not beat the hand-set weights in play (docs/BOTS.md has the Elo), so the default
`positional` keeps those."""


def positional_features(weights: Mapping[str, int]) -> tuple[Feature, ...]:
    """Return the positional features with the weights of `weights` (a weight table)."""
    positional_function(weights)  # checks the table names every feature
    return tuple(
        Feature(name, int(weights[name]), measure, description)
        for name, measure, description in FEATURE_MEASURES
    )


def positional_evaluation(name: str, weights: Mapping[str, int], description: str) -> Evaluation:
    """Return the positional evaluation under the weight table `weights`, with its fused
    bitboard function (equal to the weighted sum of the reference features)."""
    return Evaluation(
        name,
        positional_features(weights),
        description,
        fast=_for_checkers(positional_function(weights)),
    )


FEATURES: Final = positional_features(WEIGHTS_V1)
MEN, KINGS = FEATURES[0], FEATURES[1]

MATERIAL = Evaluation(
    "material",
    (MEN, KINGS),
    "100 per man and 200 per king, mine minus theirs (the lectures' 1 and 2, times 100)",
    fast=_for_checkers(_material_fast),
)
POSITIONAL_V1 = positional_evaluation(
    "positional_v1",
    WEIGHTS_V1,
    "the hand-set weights: material plus advancement, back-rank guard, centre, mobility, "
    "trapped kings and endgame king activity, in hundredths of a man",
)
POSITIONAL_TUNED = positional_evaluation(
    "positional_tuned",
    WEIGHTS_TUNED,
    "the features of positional_v1 with weights tuned on self-play games (Texel's method), "
    "in hundredths of a man",
)
POSITIONAL = positional_evaluation(
    "positional",
    WEIGHTS_V1,
    "material plus advancement, back-rank guard, centre, mobility, trapped kings and endgame "
    "king activity, in hundredths of a man (the weights of positional_v1: the tuned ones did "
    "not beat them, docs/BOTS.md)",
)

CAPTURE_ORDER: Final = 100
"""Move-order score per captured piece: any capture outranks every step."""
CROWN_ORDER: Final = 10
"""Move-order bonus for crowning a man: ranks crowning steps first among steps, and breaks ties
between captures of as many pieces."""


def move_order(state: CheckersState, move: CheckersMove) -> int:
    """Return a static ordering score, higher first: captures by pieces taken, then crowning."""
    score = CAPTURE_ORDER * move.captured.bit_count()
    crown = BLACK_CROWN if state.turn == BLACK else WHITE_CROWN
    if move.to & crown and not state.kings & move.frm:
        score += CROWN_ORDER
    return score


def is_quiet(state: CheckersState) -> bool:
    """Return True when the side to move has no capture (a static evaluation is then sound)."""
    return not state.has_capture()


def is_capture(_state: State[Any], move: CheckersMove) -> bool:
    """Return True for a jump or multi-jump."""
    return move.is_capture


KNOWLEDGE: Final = Knowledge(
    game="checkers",
    evaluations={e.name: e for e in (MATERIAL, POSITIONAL, POSITIONAL_V1, POSITIONAL_TUNED)},
    default_evaluation=POSITIONAL.name,
    move_order=cast(Callable[[State[Any], Any], float], move_order),
    is_quiet=cast(Callable[[State[Any]], bool], is_quiet),
    canonical_key=None,
    is_capture=is_capture,
    notes={
        "scale": "hundredths of a man: man 100, king 200",
        "quiescence": "never evaluate while the side to move has a capture: extend instead",
        "symmetry": "the 180-degree rotation with colours swapped also swaps the side to move, "
        "so no canonical key is offered",
    },
)
