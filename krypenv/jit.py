"""How the rules' compiled functions are compiled for the CPU: :data:`borrowing`, without reference counting.

numba counts references to every array (its runtime, NRT): a compiled function that takes an array, or makes a view
of one, increments the array's count on entry and decrements it on exit, each an atomic instruction (``lock inc``,
``lock dec``) that the refcount pruning pass cannot remove across a loop.  In the Krypkasino engine's random play
they took 14.7% of the compiled code's time, 4.8% after this module's change (``python experiments/profile_jit.py
engine``, docs/results/benchmark.md, "Reference counting").

The engines' per-deal functions never allocate (the CUDA target cannot, ``../shared/ARCHITECTURE.md``) and only
borrow the arrays they are given, so they need no counting.  ``@borrowing`` compiles a function without it
(numba's ``_nrt=False``), under three rules that make it safe:

* the function allocates nothing: numba refuses to compile an allocation without its runtime (a compile error, not
  a wrong count), and so refuses a call to a function that allocates unless that one has its own runtime;
* it returns no array: a caller with the runtime would decrement a count that was never incremented;
* a callee that returns an array is inlined (``inline="always"``: a view into the state or the scratch, compiled
  into the caller), or keeps the runtime and is not called from a ``@borrowing`` function.

A function that needs the runtime (one that may allocate, as the capture search's overflow path on huge tables,
:func:`krypenv.krypkasino.engine.captures.overflow_maximal`, or one that returns an array) is ``@counted``: compiled
with the runtime even when a ``@borrowing`` function calls it (numba otherwise compiles a callee with its first
caller's setting).  Calling it from ``@borrowing`` code is safe when it returns no array, since it counts only its
own references.  A function of another module that ``@borrowing`` code calls (the streams of :mod:`krypenv.rng`)
states no setting and is compiled either way, by whichever caller compiles it first; it allocates nothing and
returns no array, so either is safe.  The CUDA target compiles the same Python functions as device functions, where
there is no runtime either.
"""

from __future__ import annotations

from numba import njit

__all__ = ["borrowing", "counted"]

#: Compile without numba's runtime (its option ``_nrt``): no reference counting; no allocation, no array returned.
borrowing = njit(cache=True, _nrt=False)
#: Compile with numba's runtime, whoever calls the function: it may allocate, or it returns an array.
counted = njit(cache=True, _nrt=True)
