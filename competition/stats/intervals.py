"""Profile-likelihood intervals and LOS of a fit, and which interval ends no game can bound."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist

from competition.stats.crosstable import DRAW, LOSS, WIN
from competition.stats.linalg import dot, product, quadratic
from competition.stats.model import (
    MAX_ITERATIONS,
    MAX_NATURAL,
    TOLERANCE,
    Model,
    constrained_maximum,
)

Z95 = NormalDist().inv_cdf(0.975)


CHI2_95 = Z95 * Z95
"""The 95% quantile of chi-square with 1 degree of freedom: the likelihood-ratio cut."""


_ROOT_TOLERANCE = 1e-9  # of the signed root of the deviance: far below an Elo


@dataclass(frozen=True)
class Optimum:
    """The penalised fit: its model, maximiser, maximum, A^-1 and B (None: under two units)."""

    model: Model
    params: list[float]
    value: float
    inverse: list[list[float]]
    meat: list[list[float]] | None

    def sandwich(self) -> list[list[float]]:
        """Return A^-1 B A^-1, or A^-1 with fewer than two units."""
        if self.meat is None:
            return self.inverse
        left = [product(self.meat, column) for column in self.inverse]  # B A^-1, transposed
        return [product(self.inverse, row) for row in left]

    def design_effect(self, contrast: Sequence[float]) -> float:
        """Return the sandwich variance of contrast.params over the model's, at least 1."""
        if self.meat is None:
            return 1.0
        along = product(self.inverse, contrast)
        return max(1.0, quadratic(self.meat, along, along) / dot(contrast, along))

    def deviance(self, contrast: Sequence[float], target: float) -> float:
        """Return the profile deviance of contrast.params = target."""
        centre = dot(contrast, self.params)
        along = product(self.inverse, contrast)
        shift = (target - centre) / dot(contrast, along)
        start = [p + shift * a for p, a in zip(self.params, along, strict=True)]
        value = constrained_maximum(self.model, start, contrast)[1]
        return max(0.0, 2.0 * (self.value - value))

    def interval(
        self, contrast: Sequence[float], low_free: bool, high_free: bool
    ) -> tuple[float, float]:
        """Return the 95% interval of contrast.params (natural units); free ends are infinite."""
        centre = dot(contrast, self.params)
        if not any(contrast):
            return centre, centre
        cut = CHI2_95 * self.design_effect(contrast)
        low = -math.inf if low_free else self._bound(contrast, -1.0, cut)
        high = math.inf if high_free else self._bound(contrast, 1.0, cut)
        return low, high

    def superiority(self, difference: Sequence[float]) -> float:
        """Return Phi of the signed root of the deviance of difference.params = 0 over deff."""
        centre = dot(difference, self.params)
        root = math.sqrt(self.deviance(difference, 0.0) / self.design_effect(difference))
        return NormalDist().cdf(math.copysign(root, centre))

    def _bound(self, contrast: Sequence[float], side: float, cut: float) -> float:
        """Return where the profile deviance of contrast.params reaches `cut` on `side` (+-1).

        Newton steps on the signed root of the deviance, which is nearly linear in the
        contrast, safeguarded by bisection once the end is bracketed; each point is a
        constrained fit warm-started along the tangent of the profile path.
        """
        centre = dot(contrast, self.params)
        along = product(self.inverse, contrast)
        variance = dot(contrast, along)
        target = math.sqrt(cut)
        point, point_at = self.params, centre
        tangent = [a / variance for a in along]
        distance, below, above = target * math.sqrt(variance), 0.0, math.inf
        for _ in range(MAX_ITERATIONS):
            at = centre + side * distance
            start = [p + (at - point_at) * t for p, t in zip(point, tangent, strict=True)]
            point, value, slope, tangent = constrained_maximum(self.model, start, contrast)
            point_at = at
            root = math.sqrt(max(0.0, 2.0 * (self.value - value)))
            if abs(root - target) < _ROOT_TOLERANCE:
                return at
            if root < target:
                below = distance
            else:
                above = distance
            rate = -side * slope / root if root > 0.0 else 0.0  # d root / d distance
            guess = distance + (target - root) / rate if rate > 0.0 else math.inf
            if above < math.inf:
                distance = guess if below < guess < above else (below + above) / 2.0
                if above - below < TOLERANCE:
                    return at
            else:
                # Not bracketed yet: grow at most fourfold, and give up past MAX_NATURAL.
                distance = min(guess, 4.0 * distance) if guess > distance else 2.0 * distance
                if distance > MAX_NATURAL:
                    if below >= MAX_NATURAL:
                        return side * math.inf
                    distance = MAX_NATURAL
        return side * math.inf


# --- which interval ends the games cannot bound ------------------------------------------------


@dataclass
class Unbounded:
    """Directions in which the games' likelihood never falls (asymptotically).

    `rises[b][a]`: elo_a - elo_b can grow without bound; `centred_up[i]`/`centred_down[i]`:
    bot i's centred rating can rise/fall without bound; `advantage_up`/`advantage_down`: the
    first-move advantage can.
    """

    rises: list[list[bool]]
    centred_up: list[bool]
    centred_down: list[bool]
    advantage_up: bool = False
    advantage_down: bool = False

    def rating_ends(self, bot: int, anchor: int | None) -> tuple[bool, bool]:
        """Return whether the reported rating of `bot` can fall, and rise, without bound."""
        if anchor is None:
            return self.centred_down[bot], self.centred_up[bot]
        return self.rises[bot][anchor], self.rises[anchor][bot]


def unbounded_directions(
    n: int, outcomes: Mapping[tuple[int, int], set[int]], *, with_advantage: bool
) -> Unbounded:
    """Return which contrasts the real games cannot bound, by asymptotic slopes of the likelihood.

    Along a direction (d ratings, h advantage, k log nu), a game with x' = d_first - d_second + h
    has an asymptotic log-likelihood slope >= 0 exactly when: won, x' >= max(0, 2k); lost,
    x' <= -max(0, 2k); drawn, |x'| <= 2k. The likelihood is concave, so a direction in which
    every game's slope is >= 0 never lowers it, and a contrast that such a direction increases
    is unbounded above by the games (the profile deviance tends to 0), else bounded (it tends
    to infinity). With draws k >= 0; without, k can fall freely and only x' >= 0 (won) and
    x' <= 0 (lost) remain. The directions form a cone: its slice k = 0 for h in {-1, 0, 1}, and
    (with draws) its slice 2k = 1 at the vertices' h = p/q (a cycle of bounds +-1 fixes h, so
    |p| <= n, 1 <= q <= n). For fixed h and k the constraints are differences of ratings, and
    the largest d_a - d_b is the shortest path from b to a (Floyd-Warshall, exact integers).
    """
    result = Unbounded(
        rises=[[False] * n for _ in range(n)], centred_up=[False] * n, centred_down=[False] * n
    )
    slices = [(h, 0) for h in ((-1, 0, 1) if with_advantage else (0,))]
    has_draws = any(DRAW in seen for seen in outcomes.values())
    if has_draws and not any({WIN, LOSS} <= seen for seen in outcomes.values()):
        advantages = (
            sorted({Fraction(p, q) for q in range(1, n + 1) for p in range(-n, n + 1)})
            if with_advantage
            else [Fraction(0)]
        )
        # All weights times the denominator q: h = p/q becomes p and 2k = 1 becomes q.
        slices += [(h.numerator, h.denominator) for h in advantages]
    for numerator, margin in slices:
        distances = _shortest_paths(n, _difference_constraints(outcomes, numerator, margin))
        if distances is None:
            continue
        for a in range(n):
            for b in range(n):
                if distances[b][a] > 0:
                    result.rises[b][a] = True
            if sum(distances[u][a] for u in range(n)) > 0:
                result.centred_up[a] = True
            if sum(distances[a][u] for u in range(n)) > 0:
                result.centred_down[a] = True
        result.advantage_up |= numerator > 0
        result.advantage_down |= numerator < 0
    return result


def _difference_constraints(
    outcomes: Mapping[tuple[int, int], set[int]], h: int, margin: int
) -> list[tuple[int, int, int]]:
    """Return edges (u, v, w) meaning d_v - d_u <= w for x' = d_first - d_second + h."""
    edges = []
    for (first, second), seen in outcomes.items():
        if WIN in seen:  # x' >= margin
            edges.append((first, second, h - margin))
        if LOSS in seen:  # x' <= -margin
            edges.append((second, first, -h - margin))
        if DRAW in seen:  # -margin <= x' <= margin
            edges.append((second, first, margin - h))
            edges.append((first, second, margin + h))
    return edges


def _shortest_paths(n: int, edges: Iterable[tuple[int, int, int]]) -> list[list[float]] | None:
    """Return all shortest path lengths (inf: no path), or None when a cycle is negative."""
    distances: list[list[float]] = [
        [0.0 if i == j else math.inf for j in range(n)] for i in range(n)
    ]
    for u, v, w in edges:
        distances[u][v] = min(distances[u][v], w)
    for k in range(n):
        via = distances[k]
        for i in range(n):
            to_k = distances[i][k]
            if to_k == math.inf:
                continue
            row = distances[i]
            for j in range(n):
                row[j] = min(row[j], to_k + via[j])
    if any(distances[i][i] < 0 for i in range(n)):
        return None
    return distances
