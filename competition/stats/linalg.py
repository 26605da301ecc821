"""The small dense linear algebra of the rating fits: products and Cholesky solves on lists."""

from __future__ import annotations

import math
from collections.abc import Sequence

from competition.stats.crosstable import StatsError


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    """Return the dot product of two vectors of the same length."""
    return sum(x * y for x, y in zip(a, b, strict=True))


def negated(matrix: Sequence[Sequence[float]]) -> list[list[float]]:
    """Return -matrix."""
    return [[-h for h in row] for row in matrix]


def solve(matrix: Sequence[Sequence[float]], rhs: Sequence[Sequence[float]]) -> list[list[float]]:
    """Solve matrix @ x = b for each b in `rhs`; `matrix` must be symmetric positive definite.

    By Cholesky factorisation: the matrices solved here are negative Hessians of a concave
    log-likelihood made strictly concave by the gauge penalty (and the prior). A pivot that is
    not positive means a parameter without information.
    """
    size = len(matrix)
    lower = [[0.0] * size for _ in range(size)]
    for i in range(size):
        row = lower[i]
        for j in range(i + 1):
            other = lower[j]
            rest = matrix[i][j] - sum(row[k] * other[k] for k in range(j))
            if i != j:
                row[j] = rest / other[j]
            elif rest > 0.0:
                row[i] = math.sqrt(rest)
            else:
                raise StatsError(
                    "the rating model is not identifiable from these games (a parameter has no "
                    "information); use prior_draws > 0 or first_move_advantage=False"
                )
    solutions = []
    for b in rhs:
        y = [0.0] * size
        for i in range(size):
            row = lower[i]
            y[i] = (b[i] - sum(row[k] * y[k] for k in range(i))) / row[i]
        x = [0.0] * size
        for i in reversed(range(size)):
            x[i] = (y[i] - sum(lower[k][i] * x[k] for k in range(i + 1, size))) / lower[i][i]
        solutions.append(x)
    return solutions


def quadratic(matrix: Sequence[Sequence[float]], a: Sequence[float], b: Sequence[float]) -> float:
    """Return a^T matrix b."""
    return sum(ai * dot(row, b) for ai, row in zip(a, matrix, strict=True) if ai != 0.0)


def product(matrix: Sequence[Sequence[float]], vector: Sequence[float]) -> list[float]:
    """Return matrix @ vector."""
    return [dot(row, vector) for row in matrix]
