"""Registers of the parts of Krypkasino's kernels, each compiled alone as a one-function kernel (no GPU needed).

    python experiments/register_parts.py [PART ...]

The pipeline of :mod:`krypenv.eval.ptxas` (numba-cuda's PTX for (9, 0, "a"), then ptxas -v for sm_90a) on small
kernels that each call one per-deal function of the engine on one thread's record and its scratch, a local array
emptied first as in the kernels (:mod:`krypenv.krypkasino.cuda_kernels`): the K13 sweep
test, the K11 maximal captures, the combinations, a random move (all of the capture search), ``apply_move``, the
deck's shuffle and the card-level expansion.  A part's registers bound what a kernel calling it needs.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from krypenv.eval.ptxas import CC, _hopper, assemble
from numba import cuda, typeof
from numba.core import types as nt

from krypenv.envs.cuda import no_fma
from krypenv.krypkasino.engine import captures as X
from krypenv.krypkasino.engine import kernels as K
from krypenv.rng import draw_deck_into


def _f(*shape: int, dtype: type = np.int64) -> object:
    """numba's type of a column-major array (as the device env passes them)."""
    return typeof(np.zeros(shape, dtype, order="F"))


ST, RNG, V = _f(4, 700, dtype=np.int8), typeof(np.zeros(4, np.uint64)), _f(4)
WORDS = X.SCRATCH_WORDS  # a thread's scratch (a module global: a constant for cuda.local.array)


def sweep(st, out):
    t = cuda.grid(1)
    scr = cuda.local.array(WORDS, np.int64)  # the thread's scratch, emptied, as in the kernels
    X.clear_scratch(scr)
    out[t] = X.hand_sweep_values_s(K.hand_of(st, t, 0), X.table_value_key(K.table_of(st, t)), scr)


def maximal(st, out):
    t = cuda.grid(1)
    scr = cuda.local.array(WORDS, np.int64)  # the thread's scratch, emptied, as in the kernels
    X.clear_scratch(scr)
    out[t] = X.maximal_captures_s(X.table_value_key(K.table_of(st, t)), out[t], scr).shape[0]


def combos(st, out):
    t = cuda.grid(1)
    scr = cuda.local.array(WORDS, np.int64)  # the thread's scratch, emptied, as in the kernels
    X.clear_scratch(scr)
    out[t] = X.combos_into(out[t], 7, scr[X.O_COMBOS:X.O_SEEN], scr[X.O_WORK:X.O_COMBOS])


def random_move(st, out):
    t = cuda.grid(1)
    scr = cuda.local.array(WORDS, np.int64)  # the thread's scratch, emptied, as in the kernels
    X.clear_scratch(scr)
    cap = cuda.local.array(52, np.int8)
    out[t] = K.random_move(st, t, 0.5, 0.25, cap, scr)


def apply_move(st, out):
    t = cuda.grid(1)
    cap = cuda.local.array(52, np.int8)
    for c in range(52):
        cap[c] = 0
    K.apply_move(st, t, 2, out[t], cap, out[0:2], out[2:4], False)


def shuffle(st, rng, out):
    t = cuda.grid(1)
    scr = cuda.local.array(WORDS, np.int64)  # the thread's scratch, emptied, as in the kernels
    X.clear_scratch(scr)
    draw_deck_into(rng, t, st[t, 0:104], 52, X.uniforms_of(scr))


def expansion(st, out):
    t = cuda.grid(1)
    scr = cuda.local.array(WORDS, np.int64)  # the thread's scratch, emptied, as in the kernels
    X.clear_scratch(scr)
    cap = cuda.local.array(52, np.int8)
    table, keys = K.table_of(st, t), scr[0:4]
    K.candidate_into(table, keys, min(out[t], K.n_candidates(table, keys) - 1), cap)
    out[t] = cap[3]


PARTS = {"sweep": (sweep, (ST, V)), "maximal": (maximal, (ST, V)), "combos": (combos, (ST, V)),
         "random_move": (random_move, (ST, V)), "apply_move": (apply_move, (ST, V)), "shuffle": (shuffle, (ST, RNG, V)),
         "expansion": (expansion, (ST, V))}


def main(names: list[str]) -> None:
    """Print each part's registers, stack and spills."""
    for name in names or list(PARTS):
        func, sig = PARTS[name]
        start = time.perf_counter()
        with _hopper(), no_fma():
            ptx, _ = cuda.compile_ptx(func, nt.void(*sig), cc=CC)
        r = assemble(ptx)
        print(f"{name:12} {r.registers:4d} registers, stack {r.stack_bytes:5d} B, spilled {r.spilled:5d} B "
              f"({time.perf_counter() - start:.1f} s)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
