"""The engine's checkers evaluation: the positional features plus classic checkers knowledge.

`ENGINE_POSITIONAL` is the positional evaluation (bots.evaluation.checkers) under the weights
of WEIGHTS_ENGINE, plus features that the positional one lacks:

- `runaway_men`: men with no enemy piece anywhere in their forward cone (the squares they could
  ever step to). An enemy man can never enter that cone (it moves the other way, and the cone
  narrows toward the man faster than a man can cross it), so against men alone such a man
  crowns; only an enemy king can stop it.
- `bridge`: the back-rank guard pair held (Black's squares 1 and 3, White's 30 and 32) while the
  opponent has no king yet: the two men that alone keep the opponent's men from crowning.
- `exchange`: for the side ahead in material (man 1, king 2), the pieces already off the board
  (24 - pieces): trading down when ahead, at every stage of the game.
- `capture_threat`: whether my pieces could capture if I were to move, minus the same for the
  opponent. The search only evaluates positions where the side to move has no capture, so in
  practice this is minus "a piece of mine hangs".
- `men_row_R` (R in MAN_ROWS): men R rows from their own back rank; with `men`, `advancement`
  and `back_rank` every row a man can stand on gets its own value.
- `dog_holes`: an enemy man on a dog-hole square held there by my man (DOG_HOLES).
- `king_centre`: kings on the centre squares.
- `crowded_advancement`: the rows my men advanced, counted again while 16 or more men are on
  the board (how far forward to be differs in the crowded early game).

All the weights are fitted (bench/texel_engine.py; docs/BENCHMARKS.md measures them).

Every feature is measured for the side to move, mine minus theirs, and is symmetric under the
180-degree rotation that swaps the colours (square s <-> 33 - s). The reference measures work on
squares, rows and columns; `engine_function` computes the same weighted sum on the bitboards (the
tests check that they agree, and the compiled core's kind 3 computes it again in integers).
checkers_endings wraps it with the ending features and the rules' draw scoring as `engine`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Final

from bots.evaluation import Evaluation, Feature
from bots.evaluation import checkers as base
from games.checkers import (
    BIT_OF_SQUARE,
    BLACK,
    VALID,
    CheckersState,
    square_at,
    square_column,
    square_row,
)

WEIGHTS_ENGINE: Final[Mapping[str, int]] = MappingProxyType(
    {
        "men": 100,
        "kings": 161,
        "advancement": 35,
        "back_rank": 40,
        "centre": 1,
        "mobility": 6,
        "trapped_kings": -5,
        "endgame_approach": base.APPROACH,
        "endgame_refuge": base.REFUGE,
    }
)
"""The positional weights of `engine`, fitted (bench/texel_engine.py: 936 self-play games of
the compiled engine at 4,000 nodes a move, every third quiet middle-game position labelled by
a 50,000-node search, a man anchored at 100; the two ending weights, which the middle game
never uses, kept). With the men_row_R weights a man is worth 140 on its own back rank, 135 a
row out, 125 to 131 in the middle and 141 a step from crowning; a king 161, about 1.25 men."""

RUNAWAY: Final = 21
"""Per man with a free path to the crown: against men alone it crowns (fitted; the search
sees most runaways through anyway)."""
BRIDGE: Final = 16
"""For holding both bridge squares while the opponent has no king (fitted)."""
EXCHANGE: Final = 1
"""Per piece off the board, for the side ahead: even trades favour it (fitted)."""
CAPTURE_THREAT: Final = 27
"""For being able to capture (for the opponent: a piece of mine hangs, and the side to move
must spend its move on it; fitted)."""
MEN_ROWS_WEIGHTS: Final = (-44, -77, -115, -144, -169)
"""The fitted men_row_R weights, R in MAN_ROWS: with `men` and `advancement` (35 a row) they
give each row a man can stand on its own value."""
DOG_HOLE: Final = 15
"""For an enemy man held in one of my dog-holes (fitted)."""
KING_CENTRE: Final = 1
"""For a king on a centre square (fitted)."""
CROWDED_ADVANCEMENT: Final = -4
"""Per row my men advanced while the board is crowded (fitted: not too far forward early)."""

MAN_ROWS: Final = (2, 3, 4, 5, 6)
"""The rows advanced (from the man's own back rank) that `men_row_R` counts; with `men` and
`advancement` they weigh every row a man can stand on separately."""
CROWDED_MEN: Final = 16
"""From this many men on the board on, `crowded_advancement` counts the advancement again."""

EXTRA_NAMES: Final = (
    "runaway_men",
    "bridge",
    "exchange",
    "capture_threat",
    *(f"men_row_{row}" for row in MAN_ROWS),
    "dog_holes",
    "king_centre",
    "crowded_advancement",
)
EXTRA_WEIGHTS: Final[Mapping[str, int]] = MappingProxyType(
    {
        "runaway_men": RUNAWAY,
        "bridge": BRIDGE,
        "exchange": EXCHANGE,
        "capture_threat": CAPTURE_THREAT,
        **{f"men_row_{row}": w for row, w in zip(MAN_ROWS, MEN_ROWS_WEIGHTS, strict=True)},
        "dog_holes": DOG_HOLE,
        "king_centre": KING_CENTRE,
        "crowded_advancement": CROWDED_ADVANCEMENT,
    }
)
"""The weights of the features `engine` adds, in the core's order."""

DOG_HOLES: Final = (((3, 12), (1, 5)), ((30, 21), (32, 28)))
"""Per colour, the (own man, enemy man) square pairs of its dog-holes: an enemy man on the
second square is held by my man on the first (Black's 3 and 12, 1 and 5; White's rotated)."""

BRIDGE_SQUARES: Final = ((1, 3), (30, 32))
"""Black's and White's bridge: the back-rank squares that guard their crowning row."""
START_PIECES: Final = 24


# -- reference features, on squares ---------------------------------------------------------------


def _forward_cone(square: int, colour: int) -> list[int]:
    """Every square a man of `colour` on `square` could ever step to (any number of rows)."""
    row, column = square_row(square), square_column(square)
    step = 1 if colour == 0 else -1
    cone = []
    for distance in range(1, 8):
        for offset in range(-distance, distance + 1):
            target = square_at(row + step * distance, column + offset)
            if target is not None:
                cone.append(target)
    return cone


def runaway_men(state: CheckersState) -> int:
    """My men with no enemy piece in their forward cone, minus theirs."""

    def free(state: CheckersState, square: int, colour: int, king: bool) -> int:
        if king:
            return 0
        return int(
            all(base._occupant(state, s) != 1 - colour for s in _forward_cone(square, colour))
        )

    return base._per_colour(state, free)


def bridge(state: CheckersState) -> int:
    """1 if my men hold both my bridge squares and the opponent has no king, minus theirs."""
    pieces = base._pieces(state)
    held = [0, 0]
    for colour in (0, 1):
        enemy_kings = any(king and c != colour for _, c, king in pieces)
        men_on = {square for square, c, king in pieces if c == colour and not king}
        held[colour] = int(not enemy_kings and set(BRIDGE_SQUARES[colour]) <= men_on)
    return base._for_side_to_move(state, held[0], held[1])


def exchange(state: CheckersState) -> int:
    """The pieces off the board (24 - pieces) if I am ahead (man 1, king 2), minus if behind."""
    pieces = base._pieces(state)
    lead = sum((2 if king else 1) * (1 if colour == 0 else -1) for _, colour, king in pieces)
    off = START_PIECES - len(pieces)
    black = off if lead > 0 else -off if lead < 0 else 0
    return black if state.turn == BLACK else -black


def _has_capture(state: CheckersState, colour: int) -> bool:
    """Whether a piece of `colour` could jump (men forward only), whoever is to move."""
    for square, c, king in base._pieces(state):
        if c != colour:
            continue
        row, column = square_row(square), square_column(square)
        forward = 1 if colour == 0 else -1
        for dr in (forward, -forward) if king else (forward,):
            for dc in (-1, 1):
                over = square_at(row + dr, column + dc)
                land = square_at(row + 2 * dr, column + 2 * dc)
                if (
                    over is not None
                    and land is not None
                    and base._occupant(state, over) == 1 - colour
                    and base._occupant(state, land) is None
                ):
                    return True
    return False


def capture_threat(state: CheckersState) -> int:
    """1 if I could capture, minus 1 if the opponent could (each as if to move)."""
    return base._for_side_to_move(state, int(_has_capture(state, 0)), int(_has_capture(state, 1)))


def _advanced(square: int, colour: int) -> int:
    """Rows a man of `colour` on `square` stands from its own back rank."""
    row = square_row(square)
    return row if colour == 0 else 7 - row


def _men_row(row: int) -> Callable[[CheckersState], int]:
    def measure(state: CheckersState) -> int:
        def on_row(state: CheckersState, square: int, colour: int, king: bool) -> int:
            return int(not king and _advanced(square, colour) == row)

        return base._per_colour(state, on_row)

    measure.__name__ = f"men_row_{row}"
    return measure


def dog_holes(state: CheckersState) -> int:
    """Enemy men held in my dog-holes (DOG_HOLES), minus mine held in theirs."""
    men = {square: colour for square, colour, king in base._pieces(state) if not king}
    held = [
        sum(men.get(own) == colour and men.get(enemy) == 1 - colour for own, enemy in pairs)
        for colour, pairs in enumerate(DOG_HOLES)
    ]
    return base._for_side_to_move(state, held[0], held[1])


def king_centre(state: CheckersState) -> int:
    """My kings on the centre squares, minus theirs."""

    def central(state: CheckersState, square: int, colour: int, king: bool) -> int:
        return int(king and square in base.CENTRE_SQUARES)

    return base._per_colour(state, central)


def crowded_advancement(state: CheckersState) -> int:
    """The rows my men have advanced minus theirs, while CROWDED_MEN men or more are on the
    board (else 0): how far forward to be differs in the crowded early game."""
    pieces = base._pieces(state)
    if sum(not king for _, _, king in pieces) < CROWDED_MEN:
        return 0

    def rows(state: CheckersState, square: int, colour: int, king: bool) -> int:
        return 0 if king else _advanced(square, colour)

    return base._per_colour(state, rows)


EXTRA_MEASURES: Final = (
    (runaway_men, "men with no enemy piece in their forward cone"),
    (bridge, "both bridge squares held while the opponent has no king"),
    (exchange, "pieces off the board, for the side ahead in material"),
    (capture_threat, "able to capture (as if to move), minus the opponent"),
    *((_men_row(row), f"men {row} rows from their own back rank") for row in MAN_ROWS),
    (dog_holes, "enemy men held in my dog-holes"),
    (king_centre, "kings on the centre squares"),
    (crowded_advancement, "rows my men advanced, while 16 or more men are on the board"),
)


# -- the fused bitboard version --------------------------------------------------------------------


def _mask(squares: tuple[int, ...]) -> int:
    return sum(1 << BIT_OF_SQUARE[s] for s in squares)


BLACK_BRIDGE: Final = _mask(BRIDGE_SQUARES[0])
WHITE_BRIDGE: Final = _mask(BRIDGE_SQUARES[1])
BLACK_ROWS: Final = tuple(base._rows_mask((row,)) for row in MAN_ROWS)
WHITE_ROWS: Final = tuple(base._rows_mask((7 - row,)) for row in MAN_ROWS)
DOG_HOLE_MASKS: Final = tuple(
    tuple((_mask((own,)), _mask((enemy,))) for own, enemy in pairs) for pairs in DOG_HOLES
)
"""Per colour, (own man's bit, enemy man's bit) of each dog-hole."""
_ADVANCE_BITS: Final = tuple(zip(base._BLACK_ADVANCE, base._WHITE_ADVANCE, (1, 2, 4), strict=True))


def _free_men(men: int, enemy: int, down: bool) -> int:
    """How many of `men` have no bit of `enemy` in their forward cone (down: Black's way)."""
    count = 0
    while men:
        low = men & -men
        men ^= low
        reach = low
        cone = 0
        while reach:
            reach = ((reach << 4) | (reach << 5)) if down else ((reach >> 4) | (reach >> 5))
            reach &= VALID
            cone |= reach
        if not cone & enemy:
            count += 1
    return count


def _can_capture(men: int, kings: int, enemy: int, empty: int, down: bool) -> bool:
    """Whether men (moving down if `down`) or kings (both ways) can jump a bit of `enemy`."""
    downward = men | kings if down else kings
    upward = kings if down else men | kings
    return bool(
        downward & (((enemy >> 4) & (empty >> 8)) | ((enemy >> 5) & (empty >> 10)))
        or upward & (((enemy << 4) & (empty << 8)) | ((enemy << 5) & (empty << 10)))
    )


def engine_extra(
    black: int, white: int, kings: int, weights: Mapping[str, int] = EXTRA_WEIGHTS
) -> int:
    """The weighted sum of the added features, from Black's point of view."""
    empty = VALID ^ (black | white)
    black_kings = black & kings
    white_kings = white & kings
    black_men = black ^ black_kings
    white_men = white ^ white_kings
    runaway = _free_men(black_men, white, True) - _free_men(white_men, black, False)
    guard = int(white_kings == 0 and black_men & BLACK_BRIDGE == BLACK_BRIDGE) - int(
        black_kings == 0 and white_men & WHITE_BRIDGE == WHITE_BRIDGE
    )
    lead = black.bit_count() + black_kings.bit_count() - white.bit_count() - white_kings.bit_count()
    off = START_PIECES - (black | white).bit_count()
    trade = off if lead > 0 else -off if lead < 0 else 0
    threat = int(_can_capture(black_men, black_kings, white, empty, True)) - int(
        _can_capture(white_men, white_kings, black, empty, False)
    )
    total = (
        weights["runaway_men"] * runaway
        + weights["bridge"] * guard
        + weights["exchange"] * trade
        + weights["capture_threat"] * threat
    )
    for row, black_row, white_row in zip(MAN_ROWS, BLACK_ROWS, WHITE_ROWS, strict=True):
        total += weights[f"men_row_{row}"] * (
            (black_men & black_row).bit_count() - (white_men & white_row).bit_count()
        )
    holes = 0
    for own, enemy in DOG_HOLE_MASKS[0]:
        holes += bool(black_men & own and white_men & enemy)
    for own, enemy in DOG_HOLE_MASKS[1]:
        holes -= bool(white_men & own and black_men & enemy)
    centre = (black_kings & base.CENTRE_MASK).bit_count() - (
        white_kings & base.CENTRE_MASK
    ).bit_count()
    crowded = 0
    if (black_men | white_men).bit_count() >= CROWDED_MEN:
        for black_bits, white_bits, value in _ADVANCE_BITS:
            crowded += value * (
                (black_men & black_bits).bit_count() - (white_men & white_bits).bit_count()
            )
    return (
        total
        + weights["dog_holes"] * holes
        + weights["king_centre"] * centre
        + weights["crowded_advancement"] * crowded
    )


ENGINE_WEIGHTS: Final[Mapping[str, int]] = MappingProxyType({**WEIGHTS_ENGINE, **EXTRA_WEIGHTS})
"""Every weight of `engine`, by feature name: the positional ones, then EXTRA_NAMES."""
ENGINE_NAMES: Final = (*base.FEATURE_NAMES, *EXTRA_NAMES)
"""The names a weight table of `engine_positional` holds, in the compiled core's order."""


def check_engine_weights(weights: Mapping[str, int]) -> dict[str, int]:
    """Return `weights` as a dict of ints; ValueError unless it names exactly ENGINE_NAMES."""
    missing = [name for name in ENGINE_NAMES if name not in weights]
    unknown = sorted(set(weights) - set(ENGINE_NAMES))
    if missing or unknown:
        raise ValueError(
            f"engine weights need exactly the features {', '.join(ENGINE_NAMES)}; "
            f"missing: {', '.join(missing) or 'none'}; unknown: {', '.join(unknown) or 'none'}"
        )
    return {name: int(weights[name]) for name in ENGINE_NAMES}


def engine_function(weights: Mapping[str, int]) -> Callable[[CheckersState], int]:
    """Return the fused bitboard function of every engine feature under `weights`."""
    table = check_engine_weights(weights)
    positional = base.positional_function({name: table[name] for name in base.FEATURE_NAMES})
    extra_weights = {name: table[name] for name in EXTRA_NAMES}

    def fast(state: CheckersState) -> int:
        extra = engine_extra(state.black, state.white, state.kings, extra_weights)
        return positional(state) + (extra if state.turn == BLACK else -extra)

    return fast


def engine_features(weights: Mapping[str, int]) -> tuple[Feature, ...]:
    """Return the engine's features (reference measures) under `weights`."""
    table = check_engine_weights(weights)
    return base.positional_features({name: table[name] for name in base.FEATURE_NAMES}) + tuple(
        Feature(name, table[name], base._for_checkers(measure), description)
        for name, (measure, description) in zip(EXTRA_NAMES, EXTRA_MEASURES, strict=True)
    )


def engine_positional(name: str, weights: Mapping[str, int], description: str) -> Evaluation:
    """Return the engine's middle-game evaluation under `weights` (every name of
    ENGINE_NAMES), its fused function equal to the weighted sum of the reference features."""
    return Evaluation(
        name,
        engine_features(weights),
        description,
        fast=base._for_checkers(engine_function(weights)),
    )


ENGINE_FEATURES: Final = engine_features(ENGINE_WEIGHTS)

ENGINE_POSITIONAL: Final = engine_positional(
    "engine_positional",
    ENGINE_WEIGHTS,
    "positional plus runaway men, the bridge, trading when ahead, capture threats, men by "
    "row, dog-holes, central kings and crowded advancement, fitted, in hundredths of a man",
)
"""The middle-game part of `engine` (checkers_endings adds the ending features)."""
