"""Checkers endings: score a position by what the rules will make of it, and convert wins.

The positional evaluation (bots.evaluation.checkers) counts material and position but knows
nothing of the 80-ply rule (80 plies without a capture or a man move draw the game): it scores
three kings against two at about +250 forever, and two kings against two above the draw's 0,
so the engine shuffles without a plan, then near the limit gives a king away to reach a
"better" level ending. This module wraps a base evaluation (by default the positional one,
whose weights it leaves alone) with two documented layers:

1. Ending features (five), added to the base sum only in endings (at most ENDGAME_PIECES pieces and
   unequal material), each measured for the side ahead (the side behind sees it negated):

   - `ending_trade`: ENDGAME_PIECES + 1 - pieces on the board. The side ahead gains by every
     exchange (3 kings against 2 becomes 2 against 1, a lead of one king over a smaller army);
     the side behind avoids them.
   - `ending_prey_corner`: the trailing side's kings on good and bad squares: +2 in a double
     corner (1, 5, 28, 32; the one place a lone king holds out), +1 next to it (6, 9, 24, 27),
     -1 on the other edge squares and -2 in a single corner (4, 29). Counted for the side
     behind: the side ahead drives its kings out of the double corners and toward an edge.
   - `ending_prey_mobility`: the trailing side's king steps to empty squares with no enemy
     piece next to them (a plain "is it next to an enemy" test, not a full capture test).
     Counted for the side behind: the side ahead takes the space away.
   - `ending_hunter_centre`: the leading side's kings on the eight central squares (10, 11,
     14, 15, 18, 19, 22, 23), from where they reach both wings.
   - `ending_pressure`: per trailing king, the leading kings within two king steps of it (at
     most two counted): the exchange that wins is a king offered next to the trailing king
     with a second king behind to recapture, so the side ahead brings two kings close.

   The weights were set by playing the fixed samples of bench/endings.py (seeds 17 and 18,
   24 placements each) against the engine defending; they are separate from the positional
   weights, which this module does not change.

2. The rules' verdict, applied to the sum:

   - with no men on the board and level material (1 king against 1, 2 against 2, ...), the
     score is 0: such endings are draws, so they must not look better than the draw the
     80-ply rule or repetition gives (`draw_value`);
   - when the side ahead has no men (so cannot reset the counter by moving one) and fewer
     than DRAW_WINDOW plies remain before the 80-ply draw, the score is pulled toward 0 in
     proportion: `score * plies_left // DRAW_WINDOW` (rounded toward zero, so the value
     stays antisymmetric). A lead about to be cancelled is worth little, which makes the
     engine capture early (a capture resets the counter) rather than shuffle.

Because the score now depends on `state.quiet` (the capture-free plies), KNOWLEDGE's
`canonical_key` adds it to the transposition-table key whenever it can matter (see
`table_key`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import replace
from typing import Any, Final, cast

from bots.evaluation import Evaluation, Feature, StateFunction, checkers_engine
from bots.evaluation import checkers as base
from games import State
from games.checkers import (
    BIT_OF_SQUARE,
    BLACK,
    DRAW_PLIES,
    VALID,
    CheckersState,
    square_column,
    square_row,
)

ENDGAME_PIECES: Final = base.ENDGAME_PIECES
"""The ending features count with at most this many pieces and unequal material (the same
threshold as the positional evaluation's endgame terms)."""

TRADE: Final = 30
"""Per piece fewer than ENDGAME_PIECES + 1, for the side ahead: an exchange gains 60 (two
pieces leave), about a quarter of a king, enough to prefer a trade to a quiet king move."""
PREY_CORNER: Final = 30
"""Per unit of the trailing kings' square table (+2 double corner ... -2 single corner),
counted for the side behind: a king in a double corner is worth 60 to its side, on top of
the positional evaluation's 12."""
PREY_MOBILITY: Final = 20
"""Per safe step of a trailing king (a step to a square with no enemy piece next to it),
counted for the side behind: a king with no safe step is about to be caught."""
HUNTER_CENTRE: Final = 10
"""Per king of the side ahead on a central square."""
PRESSURE: Final = 20
"""Per leading king within two steps of a trailing king (at most two counted per trailing
king): an exchange is offered next to the trailing king with a second king behind."""

DRAW_WINDOW: Final = 24
"""Plies before the 80-ply draw from which a lead of a side without men is pulled toward 0."""

DOUBLE_CORNER_SQUARES: Final = (1, 5, 28, 32)
NEAR_DOUBLE_CORNER_SQUARES: Final = (6, 9, 24, 27)
SINGLE_CORNER_SQUARES: Final = (4, 29)
CENTRE_SQUARES: Final = base.CENTRE_SQUARES


def _edge(square: int) -> bool:
    return square_row(square) in (0, 7) or square_column(square) in (0, 7)


def _prey_value(square: int) -> int:
    """The trailing side's value of a king on `square` (+2 best ... -2 worst)."""
    if square in DOUBLE_CORNER_SQUARES:
        return 2
    if square in NEAR_DOUBLE_CORNER_SQUARES:
        return 1
    if square in SINGLE_CORNER_SQUARES:
        return -2
    return -1 if _edge(square) else 0


def _mask(squares: tuple[int, ...] | list[int]) -> int:
    return sum(1 << BIT_OF_SQUARE[s] for s in squares)


PREY_PLUS_2: Final = _mask(DOUBLE_CORNER_SQUARES)
PREY_PLUS_1: Final = _mask(NEAR_DOUBLE_CORNER_SQUARES)
PREY_MINUS_2: Final = _mask(SINGLE_CORNER_SQUARES)
PREY_MINUS_1: Final = _mask([s for s in range(1, 33) if _prey_value(s) == -1])
CENTRE_MASK: Final = _mask(CENTRE_SQUARES)


def _for_checkers(function: Callable[[CheckersState], float]) -> StateFunction:
    return cast(StateFunction, function)


def _neighbours(mask: int) -> int:
    """The squares one diagonal step from any square of `mask`."""
    return ((mask << 4) | (mask << 5) | (mask >> 4) | (mask >> 5)) & VALID


def _safe_steps(kings: int, enemy: int, empty: int) -> int:
    """Steps of `kings` to empty squares with no piece of `enemy` next to them."""
    unsafe = _neighbours(enemy)
    targets = empty & ~unsafe
    return (
        ((kings << 4) & targets).bit_count()
        + ((kings << 5) & targets).bit_count()
        + ((kings >> 4) & targets).bit_count()
        + ((kings >> 5) & targets).bit_count()
    )


def _lead(state: CheckersState) -> int:
    """Black's material lead (man 1, king 2) in endings, else 0."""
    black, white, kings = state.black, state.white, state.kings
    if (black | white).bit_count() > ENDGAME_PIECES:
        return 0
    return (
        black.bit_count()
        + (black & kings).bit_count()
        - white.bit_count()
        - (white & kings).bit_count()
    )


def _for_side_to_move(state: CheckersState, black_value: int) -> int:
    return black_value if state.turn == BLACK else -black_value


def _pressure(prey: int, hunters: int) -> int:
    """Sum over the kings of `prey` of the `hunters` within two king steps, at most 2 each."""
    total = 0
    while prey:
        low = prey & -prey
        prey ^= low
        near = _neighbours(low)
        total += min(2, (hunters & (near | _neighbours(near))).bit_count())
    return total


def _ending_terms(state: CheckersState) -> tuple[int, int, int, int, int]:
    """Return the ending features (trade, prey corner, prey mobility, hunter centre,
    pressure), from Black's point of view; all 0 outside endings."""
    lead = _lead(state)
    if lead == 0:
        return 0, 0, 0, 0, 0
    black, white, kings = state.black, state.white, state.kings
    if lead > 0:
        strong, weak, sign = black, white, 1
    else:
        strong, weak, sign = white, black, -1
    weak_kings = weak & kings
    strong_kings = strong & kings
    empty = VALID & ~(black | white)
    trade = ENDGAME_PIECES + 1 - (black | white).bit_count()
    corner = (
        2 * (weak_kings & PREY_PLUS_2).bit_count()
        + (weak_kings & PREY_PLUS_1).bit_count()
        - (weak_kings & PREY_MINUS_1).bit_count()
        - 2 * (weak_kings & PREY_MINUS_2).bit_count()
    )
    mobility = _safe_steps(weak_kings, strong, empty)
    centre = (strong_kings & CENTRE_MASK).bit_count()
    pressure = _pressure(weak_kings, strong_kings)
    # Trade, centre and pressure count for the side ahead, corner and mobility for the side
    # behind.
    return sign * trade, -sign * corner, -sign * mobility, sign * centre, sign * pressure


def ending_trade(state: CheckersState) -> int:
    """Endings: ENDGAME_PIECES + 1 - pieces, for the side ahead (0 outside endings)."""
    return _for_side_to_move(state, _ending_terms(state)[0])


def ending_prey_corner(state: CheckersState) -> int:
    """Endings: the trailing kings' square table (+2 double corner .. -2 single corner), for
    the side behind."""
    return _for_side_to_move(state, _ending_terms(state)[1])


def ending_prey_mobility(state: CheckersState) -> int:
    """Endings: the trailing kings' steps to squares no enemy piece touches, for the side
    behind."""
    return _for_side_to_move(state, _ending_terms(state)[2])


def ending_hunter_centre(state: CheckersState) -> int:
    """Endings: the leading side's kings on the central squares, for the side ahead."""
    return _for_side_to_move(state, _ending_terms(state)[3])


def ending_pressure(state: CheckersState) -> int:
    """Endings: per trailing king, the leading kings within two steps of it (at most 2), for
    the side ahead."""
    return _for_side_to_move(state, _ending_terms(state)[4])


ENDING_FEATURES: Final = (
    Feature(
        "ending_trade",
        TRADE,
        _for_checkers(ending_trade),
        f"with <= {ENDGAME_PIECES} pieces, for the side ahead: pieces gone (trade when ahead)",
    ),
    Feature(
        "ending_prey_corner",
        PREY_CORNER,
        _for_checkers(ending_prey_corner),
        "for the side behind: its kings' squares, +2 double corner to -2 single corner",
    ),
    Feature(
        "ending_prey_mobility",
        PREY_MOBILITY,
        _for_checkers(ending_prey_mobility),
        "for the side behind: its kings' steps to squares no enemy piece touches",
    ),
    Feature(
        "ending_hunter_centre",
        HUNTER_CENTRE,
        _for_checkers(ending_hunter_centre),
        "for the side ahead: its kings on the eight central squares",
    ),
    Feature(
        "ending_pressure",
        PRESSURE,
        _for_checkers(ending_pressure),
        "for the side ahead: per trailing king, its kings within two steps (at most 2)",
    ),
)


def draw_value(state: CheckersState, score: int) -> int:
    """Return `score` as the rules will make of it.

    Kings only and level material: 0 (a draw). A side ahead with no men and fewer than
    DRAW_WINDOW plies before the 80-ply draw: the score pulled toward 0 in proportion to the
    plies left. Otherwise `score` unchanged.
    """
    black, white, kings = state.black, state.white, state.kings
    men = (black | white) & ~kings
    lead = _lead(state)
    if lead == 0:
        if not men and (black | white).bit_count() <= ENDGAME_PIECES:
            return 0
        return score
    strong = black if lead > 0 else white
    if strong & men:
        return score
    left = DRAW_PLIES - state.quiet
    if left >= DRAW_WINDOW:
        return score
    pulled = abs(score) * max(left, 0) // DRAW_WINDOW
    return pulled if score >= 0 else -pulled


class RuleAwareEvaluation(Evaluation):
    """A weighted sum of features passed through `draw_value` (the rules' verdict)."""

    __slots__ = ()

    def weighted_sum(self, state: State[Any]) -> float:
        """Return draw_value(sum(weight * feature)): the reference the fast path must equal."""
        total = sum(f.weight * f.measure(state) for f in self.features)
        return draw_value(cast(CheckersState, state), int(total))


def with_endings(evaluation: Evaluation, name: str, description: str) -> RuleAwareEvaluation:
    """Return `evaluation` plus the ending features, scored by the rules (`draw_value`)."""
    inner = evaluation.function

    def fast(state: CheckersState) -> int:
        score = int(inner(state))
        if (state.black | state.white).bit_count() <= ENDGAME_PIECES:
            trade, corner, mobility, centre, pressure = _ending_terms(state)
            extra = (
                TRADE * trade
                + PREY_CORNER * corner
                + PREY_MOBILITY * mobility
                + HUNTER_CENTRE * centre
                + PRESSURE * pressure
            )
            score += extra if state.turn == BLACK else -extra
            return draw_value(state, score)
        return score

    return RuleAwareEvaluation(
        name, evaluation.features + ENDING_FEATURES, description, fast=_for_checkers(fast)
    )


ENDINGS: Final = with_endings(
    base.POSITIONAL,
    "endings",
    "positional plus the ending features (trade when ahead, drive the trailing kings out of "
    "the double corners, take their safe squares, centralise the leading kings), scored by the "
    "rules: kings-only level endings 0, a lead pulled toward 0 as the 80-ply draw nears",
)

ENGINE_DESCRIPTION: Final = (
    "the engine's evaluation: positional with fitted weights, runaway men, the bridge, men by "
    "row, dog-holes, central kings, "
    "trading when ahead and capture threats, plus the ending features, scored by the rules "
    "as 'endings' is (bots.evaluation.checkers_engine)"
)

_ENGINE_VARIANTS: dict[tuple[str, tuple[tuple[str, int], ...]], RuleAwareEvaluation] = {}
_VARIANT_WEIGHTS: dict[Callable[[State[Any]], float], dict[str, int]] = {}


def engine_evaluation(
    name: str, weights: Mapping[str, int], description: str = ENGINE_DESCRIPTION
) -> RuleAwareEvaluation:
    """Return `engine` under another weight table (every name of checkers_engine.ENGINE_NAMES),
    e.g. for an A/B match of tuned weights. The same name and weights give the same object,
    whose function the compiled core knows (`engine_weights`)."""
    table = checkers_engine.check_engine_weights(weights)
    key = (name, tuple(table.items()))
    known = _ENGINE_VARIANTS.get(key)
    if known is not None:
        return known
    evaluation = with_endings(
        checkers_engine.engine_positional(f"{name}_positional", table, description),
        name,
        description,
    )
    _ENGINE_VARIANTS[key] = evaluation
    _VARIANT_WEIGHTS[evaluation.function] = table
    return evaluation


def engine_weights(function: Callable[[State[Any]], float]) -> dict[str, int] | None:
    """Return the weight table of an evaluation function `engine_evaluation` made, else None."""
    table = _VARIANT_WEIGHTS.get(function)
    return None if table is None else dict(table)


ENGINE: Final = engine_evaluation("engine", checkers_engine.ENGINE_WEIGHTS)

TABLE_QUIET_FROM: Final = DRAW_PLIES - DRAW_WINDOW - 32
"""From this many capture-free plies on, the table key includes the counter (see table_key)."""


def table_key(state: State[Any]) -> Hashable:
    """The transposition-table key: the position, plus the capture-free plies when they matter.

    A search's value depends on the counter when the 80-ply draw or the DRAW_WINDOW pull lies
    within its horizon. In kings-only positions every ply adds one to the counter, so the same
    position reached along different paths of the same length keeps the same counter and the
    counter costs no transpositions; the counter is part of the key there, and in every
    position with at least TABLE_QUIET_FROM capture-free plies (a horizon of 32 plies from
    below that cannot reach the pull).
    """
    checkers = cast(CheckersState, state)
    key = checkers.key()
    if (
        checkers.quiet >= TABLE_QUIET_FROM
        or not (checkers.black | checkers.white) & ~checkers.kings
    ):
        return (*key, checkers.quiet)
    return key


KNOWLEDGE: Final = replace(
    base.KNOWLEDGE,
    evaluations={**base.KNOWLEDGE.evaluations, ENDINGS.name: ENDINGS, ENGINE.name: ENGINE},
    default_evaluation=ENDINGS.name,
    canonical_key=table_key,
    notes={
        **base.KNOWLEDGE.notes,
        "endings": "the default 'endings' evaluation adds ending features to 'positional' and "
        "scores by the rules (bots.evaluation.checkers_endings); 'positional' is the old one",
        "table key": "includes the capture-free plies where the 80-ply rule can matter",
    },
)
"""Checkers knowledge with the ending-aware evaluation as the default."""
