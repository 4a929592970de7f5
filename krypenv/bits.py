"""Bit tricks on 64-bit words (card sets, value keys), for CPU and CUDA threads alike: counts and positions of bits.

A *card set* is an int64 with bit ``c`` set for each card code ``c`` (0–51) it holds.  ``popcount(x)`` (the set
bits), ``trailing_zeros(x)`` and ``leading_zeros(x)`` (the zeros below the lowest and above the highest set bit of
a non-zero ``x``) are numba intrinsics, callable from compiled code only.  Each is one LLVM intrinsic
(``llvm.ctpop``, ``llvm.cttz``, ``llvm.ctlz``): a ``popcnt``, ``tzcnt`` or ``lzcnt`` instruction on the CPU,
``popc``, ``brev`` and ``clz`` on a GPU thread.  Picking the k-th legal card is then a handful of instructions
instead of a pass over 52 counts, and a value key's highest value is one instruction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llvmlite import ir
from numba.core import types
from numba.core.extending import intrinsic

from krypenv.jit import borrowing

__all__ = ["leading_zeros", "nth_set_bit", "popcount", "trailing_zeros"]


def _bit_intrinsic(name: str, emit: Callable[[Any, Any], Any], doc: str) -> Any:
    """A numba intrinsic ``name(x)`` on an integer, its code ``emit(builder, x)`` (one LLVM instruction)."""

    def typer(typingctx: Any, x: Any) -> Any:
        if not isinstance(x, types.Integer):
            return None
        return x(x), lambda context, builder, sig, args: emit(builder, args[0])

    typer.__name__ = typer.__qualname__ = name
    typer.__doc__ = doc
    return intrinsic(typer)


_NONZERO = ir.Constant(ir.IntType(1), 1)  # cttz/ctlz's flag: the operand is not 0 (the result for 0 is undefined)
popcount = _bit_intrinsic("popcount", lambda b, x: b.ctpop(x), "The number of set bits of an integer (llvm.ctpop).")
trailing_zeros = _bit_intrinsic("trailing_zeros", lambda b, x: b.cttz(x, _NONZERO),
                                "The zero bits below the lowest set bit of a non-zero integer (llvm.cttz).")
leading_zeros = _bit_intrinsic("leading_zeros", lambda b, x: b.ctlz(x, _NONZERO),
                               "The zero bits above the highest set bit of a non-zero integer (llvm.ctlz).")


@borrowing
def nth_set_bit(bits: int, n: int) -> int:
    """The index of the ``n``-th (from 0) lowest set bit of ``bits`` ≥ 0; −1 if it has ``n`` or fewer set bits."""
    for _ in range(n):
        bits &= bits - 1  # clears the lowest set bit
    if bits == 0:
        return -1
    return trailing_zeros(bits)
