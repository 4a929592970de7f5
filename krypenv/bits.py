"""Bit tricks on 64-bit words (card sets, value keys), for CPU and CUDA threads alike: counts and positions of bits.

A *card set* is an int64 with bit ``c`` set for each card code ``c`` (0–51) it holds.  ``popcount(x)`` (the set
bits), ``trailing_zeros(x)`` and ``leading_zeros(x)`` (the zeros below the lowest and above the highest set bit of
a non-zero ``x``) are numba intrinsics, callable from compiled code only.  Each is one LLVM intrinsic
(``llvm.ctpop``, ``llvm.cttz``, ``llvm.ctlz``): a ``popcnt``, ``tzcnt`` or ``lzcnt`` instruction on the CPU,
``popc``, ``brev`` and ``clz`` on a GPU thread.  Picking the k-th legal card is then a handful of instructions
instead of a pass over 52 counts, and a value key's highest value is one instruction.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir
from numba.core import types
from numba.core.extending import intrinsic

from krypenv.jit import borrowing

__all__ = ["leading_zeros", "nth_set_bit", "popcount", "trailing_zeros"]


@intrinsic
def popcount(typingctx: Any, x: Any) -> Any:
    """The number of set bits of an integer (``llvm.ctpop``)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        return builder.ctpop(args[0])

    return x(x), codegen


@intrinsic
def trailing_zeros(typingctx: Any, x: Any) -> Any:
    """The number of zero bits below the lowest set bit of a non-zero integer (``llvm.cttz``; undefined for 0)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))

    return x(x), codegen


@intrinsic
def leading_zeros(typingctx: Any, x: Any) -> Any:
    """The number of zero bits above the highest set bit of a non-zero integer (``llvm.ctlz``; undefined for 0)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        return builder.ctlz(args[0], ir.Constant(ir.IntType(1), 1))

    return x(x), codegen


@borrowing
def nth_set_bit(bits: int, n: int) -> int:
    """The index of the ``n``-th (from 0) lowest set bit of ``bits`` ≥ 0; −1 if it has ``n`` or fewer set bits."""
    for _ in range(n):
        bits &= bits - 1  # clears the lowest set bit
    if bits == 0:
        return -1
    return trailing_zeros(bits)
