"""Bit tricks the compiled modules share: counting the set bits of an int64 bitboard.

numba has no `int.bit_count`; LLVM's ctpop intrinsic is one instruction on current CPUs.
"""

from __future__ import annotations

from llvmlite import ir
from numba import njit
from numba.core.types import Integer
from numba.core.types import int64 as i8
from numba.extending import intrinsic


@intrinsic
def _ctpop(typing_context: object, x: Integer) -> tuple[object, object]:
    """LLVM's ctpop of an int64."""

    def codegen(
        context: object, builder: ir.IRBuilder, signature: object, args: list[ir.Value]
    ) -> ir.Value:
        return builder.ctpop(args[0])

    return i8(i8), codegen


@njit(cache=True)
def popcount(x: int) -> int:
    """Count the set bits of an int64."""
    count: int = _ctpop(x)  # type: ignore[call-arg]  # numba's typing counts the typing context
    return count
