"""krypenv.gpu_lean: the identity on the CPU, exact division by 32-bit steps, loops NVVM keeps rolled, and copies
the CPU's compiler vectorises."""

from __future__ import annotations

import importlib.util
import random
import re

import numpy as np
import pytest
from numba import njit

from krypenv.gpu_lean import divmod_small, fresh, looped, rolled

needs_numba_cuda = pytest.mark.skipif(importlib.util.find_spec("numba_cuda") is None,
                                      reason="numba-cuda is not installed (pip install 'krypenv[cuda]')")


@pytest.mark.parametrize("x", [0, 1, 65535, 65536, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**48 + 12345, 2**63 - 1])
@pytest.mark.parametrize("n", [1, 2, 3, 13, 19, 81, 65535])
def test_divmod_small_edges(x: int, n: int) -> None:
    """Both branches (one 32-bit division below 2**31, 16-bit long division above) at their edges."""
    assert divmod_small(x, n) == divmod(x, n)


def test_divmod_small_random() -> None:
    """Random operands over the whole domain: 0 ≤ x < 2**63, 0 < n < 2**16."""
    rng = random.Random(42)
    for _ in range(20_000):
        x = rng.choice([rng.randrange(2**31), rng.randrange(2**31, 2**34), rng.randrange(2**63)])
        n = rng.randrange(1, 2**16)
        assert divmod_small(x, n) == divmod(x, n), (x, n)


@njit(cache=True)
def _through(a: np.ndarray, k: int) -> int:
    """Count to rolled(k) and write through a fresh view of ``a``."""
    b = fresh(a)
    total = 0
    for c in range(rolled(k)):
        b[c] = c
        total += fresh(c)
    return total


def test_rolled_and_fresh_are_the_identity_on_the_cpu() -> None:
    """Compiled for the CPU, rolled(n) is n and fresh(x) is x (a view of the same array: writes land in it)."""
    a = np.zeros(8, np.int64)
    assert _through(a, 8) == 28
    assert a.tolist() == list(range(8))


def _ptx(body: object) -> str:
    """The PTX of a one-thread kernel for Hopper (no GPU needed)."""
    from krypenv.eval.ptxas import CC, _hopper
    from numba import cuda, typeof
    from numba.core import types as nt

    with _hopper():
        ptx, _ = cuda.compile_ptx(body, nt.void(typeof(np.zeros((4, 128), np.int8, order="F"))), cc=CC)
    return ptx


@njit(cache=True)
def _moved_constant(table: np.ndarray, pile: np.ndarray) -> None:
    """apply_move's kind of loop over 52 cards (a slice of a column-major record), with the constant bound."""
    for c in range(52):
        pile[c] += table[c]
        table[c] = 0


@njit(cache=True)
def _moved_rolled(table: np.ndarray, pile: np.ndarray) -> None:
    """The same loop with rolled(52)."""
    for c in range(rolled(52)):
        pile[c] += table[c]
        table[c] = 0


def _kernel_constant(st: np.ndarray) -> None:
    """Calls the constant loop on the record's first two card vectors."""
    _moved_constant(st[0, 0:52], st[0, 52:104])


def _kernel_rolled(st: np.ndarray) -> None:
    """Calls the rolled loop."""
    _moved_rolled(st[0, 0:52], st[0, 52:104])


@needs_numba_cuda
def test_rolled_hides_the_count_from_nvvm() -> None:
    """On the GPU the count passes through an inline-PTX mov (NVVM cannot fold it, so it cannot unroll the loop);
    the constant loop has none."""
    constant, hidden = (_ptx(f) for f in (_kernel_constant, _kernel_rolled))
    assert "begin inline asm" not in constant
    assert re.search(r"begin inline asm\s+mov\.b64 %rd\d+, %rd\d+;", hidden)


@njit  # no cache: a function loaded from numba's cache has no IR to read
def _copy_constant(src: np.ndarray, dst: np.ndarray) -> None:
    """The observation's kind of copy between two arrays, with the constant bound."""
    for c in range(52):
        dst[c] = src[c]


@njit
def _copy_looped(src: np.ndarray, dst: np.ndarray) -> None:
    """The same copy with looped(52)."""
    for c in range(looped(52)):
        dst[c] = src[c]


@njit(cache=True)
def _copy_first(src: np.ndarray, dst: np.ndarray, n: int) -> None:
    """Copy the first looped(n) elements."""
    for c in range(looped(n)):
        dst[c] = src[c]


@pytest.mark.parametrize("n", [0, 1, 51, 52, 53, 200])
def test_looped_is_the_count_on_the_cpu(n: int) -> None:
    """Compiled for the CPU, looped(n) is n: every one of n elements is copied, and none after them."""
    src, dst = np.arange(1, 201, dtype=np.int8), np.zeros(201, np.int8)
    _copy_first(src, dst, n)
    assert dst[:n].tolist() == src[:n].tolist() and not dst[n:].any()


def test_looped_lets_the_cpu_vectorise_a_copy() -> None:
    """The copy of constant count is unrolled into single bytes (its stores might alias its loads); with looped's
    count LLVM vectorises it (vector types of bytes in the optimised IR)."""
    src, dst = np.zeros(52, np.int8), np.zeros(52, np.int8)
    _copy_constant(src, dst)
    _copy_looped(src, dst)
    vectors = [len(re.findall(r"<\d+ x i8>", f.inspect_llvm(f.signatures[0]))) for f in (_copy_constant, _copy_looped)]
    assert vectors[0] == 0 and vectors[1] > 0, vectors


def _kernel_looped(st: np.ndarray) -> None:
    """Copies the record's first card vector into its second with looped's count."""
    _copy_looped(st[0, 0:52], st[0, 52:104])


@needs_numba_cuda
def test_looped_hides_the_count_from_nvvm_as_rolled() -> None:
    """On the GPU looped(n) is rolled(n): the count passes through an inline-PTX mov."""
    assert re.search(r"begin inline asm\s+mov\.b64 %rd\d+, %rd\d+;", _ptx(_kernel_looped))
