"""What the compilers must not see through in the per-deal functions shared by CPU and GPU (issue 42).

A GPU thread's registers bound how many threads an SM holds (:mod:`krypenv.eval.ptxas` measures them without a
GPU).  Three things in the shared rules code cost a Krypkasino kernel most of its 255 registers
(docs/results/gpu.md, "Registers and spills without a GPU"); the helpers for them are free on the CPU.  One
more, :func:`looped`, is for the CPU's vectoriser:

* :func:`rolled` -- a loop count NVVM cannot see: ``for c in range(rolled(52))``.  NVVM unrolls every loop of
  constant count completely; a record is column-major on the GPU (:mod:`krypenv.envs.cuda`), so card ``c``'s
  address is ``c * N`` bytes on and an unrolled loop over 52 cards makes and keeps 52 64-bit offsets.  Compiled
  for CUDA the count passes through an opaque inline-PTX ``mov`` and the loop stays a loop; on the CPU it is the
  constant itself (LLVM unrolls it, and vectorises it when it only loads or reduces).
* :func:`looped` -- a loop count that neither compiler can see, for a loop that stores into one array what it
  loads from another.  On the CPU LLVM unrolls a loop of constant count completely, and then cannot reorder its
  stores and loads (numba's arrays might overlap), so the copy stays one byte at a time; a loop of unseen count
  it vectorises, checking for overlap at run time (the observation's card blocks, docs/results/benchmark.md).  On
  CUDA it is :func:`rolled`.
* :func:`fresh` -- a value (a row index, an array) the GPU's compiler must take for new at each call, so that the
  addresses made from it are not hoisted out of a loop and held across it (a volatile inline-PTX ``mov``); ``x``
  itself on the CPU.
* :func:`divmod_small` -- division by 32-bit steps: a 64-bit ``div``/``rem`` is a subroutine call on a GPU thread,
  at which up to 253 registers were live in the env kernel's loop over built-in seats (144–192 around it).

In numba's CUDA simulator the kernels call these compiled for the CPU (the identity), except in a kernel's own
Python body, where an intrinsic cannot run (:mod:`krypenv.krypkasino.cuda_kernels` binds the identity there).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit
from numba.core import types
from numba.core.extending import intrinsic, overload

__all__ = ["divmod_small", "fresh", "looped", "rolled"]


def _asm_identity(target: str, template: str, constraints: str, doc: str) -> Any:
    """An intrinsic for ``target``: an integer ``n`` as int64 through an inline-assembly statement that gives it back
    unchanged, so that the compiler cannot fold the value (``template`` and ``constraints``: LLVM's)."""

    def typer(typingctx: Any, n: Any) -> Any:
        if not isinstance(n, types.Integer):
            return None

        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
            from llvmlite import ir

            i64 = ir.IntType(64)
            x = context.cast(builder, args[0], sig.args[0], types.int64)
            return builder.asm(ir.FunctionType(i64, [i64]), template, constraints, [x], side_effect=False)

        return types.int64(n), codegen

    typer.__doc__ = doc
    return intrinsic(target=target)(typer)


_opaque = _asm_identity("cuda", "mov.b64 $0, $1;", "=l,l", "``n`` through an inline-PTX ``mov``: NVVM cannot fold it.")
_unseen = _asm_identity("cpu", "", "=r,0", "``n`` through an empty statement whose output is tied to its input (any "
                        "CPU): LLVM cannot fold it.")


def _as_is(n: Any) -> Any:
    """The count itself."""
    return n


def _through_ptx(n: Any) -> Any:
    """The count through the inline-PTX ``mov``."""
    return _opaque(n)


def _through_empty_asm(n: Any) -> Any:
    """The count through the empty statement."""
    return _unseen(n)


def rolled(n: int) -> int:
    """``n``, a loop count the GPU's compiler cannot see (no unrolling there); ``n`` itself on the CPU."""
    return n


def looped(n: int) -> int:
    """``n``, a loop count that neither the CPU's compiler nor the GPU's can see (module docstring)."""
    return n


def _compiled_as(impl: Any) -> Any:
    """An overload's typer: every call compiles to ``impl``."""

    def typer(n: Any) -> Any:
        return impl

    return typer


for _count, _target, _impl in ((rolled, "cpu", _as_is), (rolled, "cuda", _through_ptx),
                                (looped, "cpu", _through_empty_asm), (looped, "cuda", _through_ptx)):
    overload(_count, target=_target)(_compiled_as(_impl))


def _launder(builder: Any, value: Any) -> Any:
    """``value`` (an i64) through a volatile inline-PTX ``mov``: neither folded, merged nor moved out of a loop."""
    from llvmlite import ir

    i64 = ir.IntType(64)
    return builder.asm(ir.FunctionType(i64, [i64]), "mov.b64 $0, $1;", "=l,l", [value], side_effect=True)


@intrinsic
def fresh(typingctx: Any, x: Any) -> Any:
    """``x`` (an int, as int64, or an array), which the GPU's compiler must take for a new value at each call:
    nothing computed from it (an address, a slice's bounds) is hoisted out of the loop that calls this.  On the
    CPU it is ``x`` itself.  (An intrinsic, not a per-target overload: an overload may not return an array that
    is not its argument; the target is told by the lowering context.)"""
    if not isinstance(x, (types.Integer, types.Array)):
        return None

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        from llvmlite import ir
        from numba.core import cgutils
        from numba.core.imputils import impl_ret_borrowed

        gpu = "cuda" in type(context).__module__  # numba-cuda's CUDATargetContext
        if isinstance(sig.args[0], types.Integer):
            value = context.cast(builder, args[0], sig.args[0], types.int64)
            return _launder(builder, value) if gpu else value
        if not gpu:
            return impl_ret_borrowed(context, builder, sig.return_type, args[0])
        ary = context.make_array(sig.args[0])(context, builder, value=args[0])
        ary.data = builder.inttoptr(_launder(builder, builder.ptrtoint(ary.data, ir.IntType(64))), ary.data.type)
        for field in ("shape", "strides"):
            laundered = [_launder(builder, v) for v in cgutils.unpack_tuple(builder, getattr(ary, field))]
            setattr(ary, field, cgutils.pack_array(builder, laundered))
        return ary._getvalue()

    return (types.int64 if isinstance(x, types.Integer) else x)(x), codegen


@njit(cache=True)
def divmod_small(x: int, n: int) -> tuple[int, int]:
    """``(x // n, x % n)`` for 0 ≤ x < 2**63 and 0 < n < 2**16 by 32-bit divisions only (a 64-bit one is a subroutine
    call on a GPU thread, module docstring): one division for x < 2**31, else long division by 16-bit digits."""
    if x < 0x80000000:
        q = np.int64(np.uint32(x) // np.uint32(n))
        return q, x - q * n
    q = np.int64(0)
    r = np.int64(0)
    for shift in range(48, -16, -16):  # digits of 16 bits, high first: r < n, so r·2**16 + digit < 2**32
        cur = (r << 16) | ((x >> shift) & 0xFFFF)
        d = np.int64(np.uint32(cur) // np.uint32(n))
        q = (q << 16) | d
        r = cur - d * n
    return q, r
