"""A loop bound that CUDA's compiler keeps rolled: ``for c in range(rolled(52))`` (issue 42).

NVVM unrolls every loop over a constant count of 52 or 13 completely.  On a GPU thread the
records are column-major (:mod:`krypenv.envs.cuda`), so the address of column ``c`` is
``c * N`` bytes from the env's first: an unrolled loop over 52 cards makes 52 such 64-bit
offsets, which the compiler hoists out of the kernel's loops and keeps in registers, and a
Krypkasino kernel ran out of its 255 (``python -m krypenv.eval.ptxas``).  :func:`rolled` is the
identity; compiled for CUDA it passes its value through an opaque ``mov`` (inline PTX), so the
count is unknown to NVVM and the loop stays a loop (one offset, stepped).  On the CPU it is the
plain constant: LLVM unrolls and vectorises as before, and the simulator runs the identity.
"""

from __future__ import annotations

from typing import Any

from numba.core import types
from numba.core.extending import intrinsic, overload

__all__ = ["rolled"]


def rolled(n: int) -> int:
    """``n``, a loop count the GPU's compiler cannot see (no unrolling there); ``n`` itself on the CPU."""
    return n


@intrinsic(target="cuda")
def _opaque(typingctx: Any, n: Any) -> Any:
    """``n`` as int64 through an inline-PTX ``mov``: a value NVVM cannot fold."""
    if not isinstance(n, types.Integer):
        return None

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        from llvmlite import ir

        i64 = ir.IntType(64)
        x = context.cast(builder, args[0], sig.args[0], types.int64)
        return builder.asm(ir.FunctionType(i64, [i64]), "mov.b64 $0, $1;", "=l,l", [x], side_effect=False)

    return types.int64(n), codegen


@overload(rolled, target="cpu")
def _rolled_cpu(n: Any) -> Any:
    """CPU: the constant itself."""
    def impl(n: Any) -> Any:
        return n
    return impl


@overload(rolled, target="cuda")
def _rolled_cuda(n: Any) -> Any:
    """CUDA: the opaque copy."""
    def impl(n: Any) -> Any:
        return _opaque(n)
    return impl


def fresh(i: int) -> int:
    """``i``, which the GPU's compiler must take for a new value at each call (no addresses hoisted); ``i`` on the
    CPU."""
    return i


@intrinsic(target="cuda")
def _volatile(typingctx: Any, n: Any) -> Any:
    """``n`` as int64 through a volatile inline-PTX ``mov``: neither folded, merged nor moved out of a loop."""
    if not isinstance(n, types.Integer):
        return None

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        from llvmlite import ir

        i64 = ir.IntType(64)
        x = context.cast(builder, args[0], sig.args[0], types.int64)
        return builder.asm(ir.FunctionType(i64, [i64]), "mov.b64 $0, $1;", "=l,l", [x], side_effect=True)

    return types.int64(n), codegen


@overload(fresh, target="cpu")
def _fresh_cpu(i: Any) -> Any:
    """CPU: ``i`` itself."""
    def impl(i: Any) -> Any:
        return i
    return impl


@overload(fresh, target="cuda")
def _fresh_cuda(i: Any) -> Any:
    """CUDA: the volatile copy."""
    def impl(i: Any) -> Any:
        return _volatile(i)
    return impl
