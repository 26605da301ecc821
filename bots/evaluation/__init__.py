"""Evaluation functions and per-game search knowledge, one module per game.

An evaluation is a named, weighted sum of features (w1*f1 + ... + wn*fn, as the lectures
describe) that scores a non-terminal state from the point of view of its side to move.
`Knowledge` bundles what a game-independent search may ask of a game: its evaluations, a
static move order, whether a position is quiet enough to evaluate, and its symmetries.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

from games import State

StateFunction = Callable[[State[Any]], float]


@dataclass(frozen=True, slots=True)
class Feature:
    """One named feature of a position, measured for the side to move (mine minus theirs)."""

    name: str
    weight: float
    measure: StateFunction
    description: str = ""


class Evaluation:
    """A named evaluation: the weighted sum of its features, for the side to move.

    `function` is what searches call: the weighted sum, or a fused `fast` version that must
    return the same value (tests check this on random positions).
    """

    __slots__ = ("description", "features", "function", "name")

    def __init__(
        self,
        name: str,
        features: tuple[Feature, ...],
        description: str = "",
        fast: StateFunction | None = None,
    ) -> None:
        self.name = name
        self.features = features
        self.description = description
        self.function: StateFunction = fast if fast is not None else self.weighted_sum

    def __call__(self, state: State[Any]) -> float:
        return self.function(state)

    def weighted_sum(self, state: State[Any]) -> float:
        """Return sum(weight * feature) over the features."""
        return sum(f.weight * f.measure(state) for f in self.features)

    def explain(self, state: State[Any]) -> dict[str, tuple[float, float]]:
        """Return {feature name: (value, weight)} for the side to move."""
        return {f.name: (f.measure(state), f.weight) for f in self.features}

    def __repr__(self) -> str:
        terms = " + ".join(f"{f.weight:g}*{f.name}" for f in self.features)
        return f"<Evaluation {self.name}: {terms}>"


MoveOrder = Callable[[State[Any], Any], float]
"""A static move-ordering score: moves with higher scores are searched first."""


@dataclass(frozen=True, slots=True)
class Knowledge:
    """What search may know about one game beyond its rules.

    - `evaluations` by name, and the name of the default one.
    - `move_order(state, move)`: a static ordering score, higher first (captures, centre...).
    - `is_quiet(state)`: False where a static evaluation would be unreliable (checkers with a
      capture pending); the search then extends instead of evaluating.
    - `canonical_key(state)`: a key shared by all symmetric images of a position, for
      transposition tables (None: the state's own key).
    - `is_capture(state, move)`: True for moves that change material (for move ordering).
    """

    game: str
    evaluations: Mapping[str, Evaluation]
    default_evaluation: str
    move_order: MoveOrder | None = None
    is_quiet: Callable[[State[Any]], bool] | None = None
    canonical_key: Callable[[State[Any]], Hashable] | None = None
    is_capture: Callable[[State[Any], Any], bool] | None = None
    notes: Mapping[str, str] = field(default_factory=dict)

    def evaluation(self, name: str | None = None) -> Evaluation:
        """Return the named evaluation (the default for None); ValueError lists the names."""
        key = self.default_evaluation if name is None else name
        try:
            return self.evaluations[key]
        except KeyError:
            names = ", ".join(sorted(self.evaluations))
            raise ValueError(
                f"{self.game} has no evaluation {key!r} (evaluations: {names})"
            ) from None
